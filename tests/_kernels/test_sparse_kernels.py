"""Sparse-data kernels: the CSR column gather and the lazy ("just-in-time") SVRG epoch.

* ``gather_columns_csc`` gives exactly ``W[:, T]``; on dense data ``WorkingColumns`` keeps a
  permutation of ``W[:, T]`` up to date in place, copying (``copy_columns``) only the
  columns that entered;
* ``svrg_epoch_csr`` applies the dense drift ``-eta * g`` lazily unless it thresholds after
  every step; it must produce the same iterate, events, checkpoint losses and snapshots as
  the eager dense kernel (its twin) and as a plain loop, including the synchronisations
  at thresholding events, a divergence stop and the end of the epoch, and snapshots
  materialised without disturbing the lazy state (recording never changes the run);
* whole solves on genuinely sparse CSR data (rows with few nonzeros, so coordinates really
  lag behind) match the pure-NumPy reference to 1e-10 for both inner readings.
"""

from __future__ import annotations

import math

import numpy as np
import numpy_reference as ref
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz import _kernels as K
from rgrasp_viz._problems import Problem, make_classification, make_regression
from rgrasp_viz.solvers._common import (
    NO_FORCED,
    WorkingColumns,
    Workspace,
    csc_arrays,
    csr_arrays,
)

ATOL = 1e-10


def _sparse_matrix(n, d, density, seed, empty_rows=(), empty_cols=()):
    rng = np.random.default_rng(seed)
    W = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    W = W.tolil()
    for i in empty_rows:
        W[i, :] = 0
    for j in empty_cols:
        W[:, j] = 0
    W = sp.csr_matrix(W)
    W.eliminate_zeros()
    W.sort_indices()
    return W


# -- W[:, T] ----------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [[0], [3, 4, 5], [0, 7, 19, 20, 39], list(range(40)), []])
def test_gather_columns_csc_is_canonical_w_T(T):
    W = _sparse_matrix(30, 40, 0.15, seed=1, empty_rows=(2, 11), empty_cols=(4, 20))
    T = np.asarray(T, dtype=np.int64)
    data, indices, indptr = K.gather_columns_csc(*csc_arrays(W), W.shape[0], T)
    expected = sp.csr_matrix(W[:, T])
    expected.sort_indices()
    assert indptr.dtype == np.int64 and indices.dtype == np.int64
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices, expected.indices)
    np.testing.assert_array_equal(data, expected.data)


def test_gather_columns_csc_unsorted_csc_rows():
    """Row indices inside a CSC column need not be sorted: the output is still canonical."""
    W = _sparse_matrix(25, 12, 0.3, seed=2)
    cdata, cind, cptr = csc_arrays(W)
    rng = np.random.default_rng(0)
    for c in range(12):  # shuffle each column's entries
        perm = cptr[c] + rng.permutation(cptr[c + 1] - cptr[c])
        cdata[cptr[c]:cptr[c + 1]] = cdata[perm].copy()
        cind[cptr[c]:cptr[c + 1]] = cind[perm].copy()
    T = np.array([1, 2, 5, 11])
    data, indices, indptr = K.gather_columns_csc(cdata, cind, cptr, 25, T)
    got = sp.csr_matrix((data, indices, indptr), shape=(25, 4))
    assert got.has_sorted_indices
    np.testing.assert_array_equal(got.toarray(), W[:, T].toarray())


def test_copy_columns():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((7, 15))
    B = np.full((7, 6), np.nan)
    K.copy_columns(X, np.array([14, 0, 4]), B, np.array([1, 5, 2]))
    np.testing.assert_array_equal(B[:, [1, 5, 2]], X[:, [14, 0, 4]])
    assert np.all(np.isnan(B[:, [0, 3, 4]]))  # other columns untouched
    K.copy_columns(B, np.array([5]), B, np.array([0]))  # within one buffer
    np.testing.assert_array_equal(B[:, 0], X[:, 0])


@pytest.mark.parametrize("seed", range(6))
def test_working_columns_track_a_sequence_of_supports(seed):
    # T grows, shrinks, keeps its size, changes completely and not at all
    rng = np.random.default_rng(seed)
    n, d, cap = 9, 40, 12
    X = rng.standard_normal((n, d))
    cols = WorkingColumns(X, cap)
    T_prev = np.array([], dtype=np.int64)
    slot_prev = {}
    for size in [5, 8, 12, 12, 7, 3, 12, 12, 1, 10]:
        if rng.random() < 0.2 and len(T_prev) == size:
            T = T_prev  # unchanged
        else:  # keep a random part of the previous T, add fresh columns
            keep = rng.permutation(T_prev)[: rng.integers(0, min(len(T_prev), size) + 1)]
            fresh = rng.permutation(np.setdiff1d(np.arange(d), keep))[: size - len(keep)]
            T = np.sort(np.concatenate([keep, fresh])).astype(np.int64)
        B, order = cols.update(T)
        m = len(T)
        assert B.shape == (n, cap) and B.flags.c_contiguous
        assert sorted(order) == list(T)  # a permutation of T
        np.testing.assert_array_equal(B[:, :m], X[:, order])  # exact copies
        slot = {int(c): k for k, c in enumerate(order)}
        if m >= len(T_prev):  # nothing had to move down: staying columns kept their slot
            assert all(slot[c] == k for c, k in slot_prev.items() if c in slot)
        T_prev, slot_prev = T, slot


def test_working_columns_read_only_entering_columns():
    # columns that stay are not re-read from W: poison W's copy of them after the first call
    X = np.random.default_rng(3).standard_normal((7, 15))
    cols = WorkingColumns(X, 6)
    cols.update(np.array([0, 3, 4, 14]))
    X[:, [0, 3, 4, 14]] = np.nan
    T = np.array([0, 2, 4, 9, 14])
    B, order = cols.update(T)
    assert np.all(np.isfinite(B[:, :5]))
    fresh = np.random.default_rng(3).standard_normal((7, 15))  # the values before poisoning
    np.testing.assert_array_equal(B[:, :5], fresh[:, order])


# -- the lazy CSR epoch against the eager dense twin ------------------------------------------


def _run_epoch(X, y, loss, z0, g, snap_dl, idx, eta, thr_every, s_keep, rec_every, snap,
               prev=None):
    p = z0.shape[0]
    ws = Workspace(p, len(idx), rec_every)
    n_prev = ws.set_prev(np.arange(p) if prev is None else prev)
    snaps = ws.snap_buffer(p, snap)
    z = z0.copy()
    common = (y, loss, z, g, snap_dl, idx, eta, 0.0, thr_every, s_keep, ws.keep_idx, ws.prev_idx,
              n_prev, ws.cand, ws.mags, ws.vbuf, ws.ev_step, ws.ev_in, ws.ev_out, True,
              rec_every, ws.rec_loss, snaps, ws.stop,
              NO_FORCED)
    if sp.issparse(X):
        out = K.svrg_epoch_csr(*csr_arrays(X), *common)
    else:
        out = K.svrg_epoch_dense(np.ascontiguousarray(X), *common)
    steps, n_ev, n_rec, n_prev, status = (int(v) for v in out)
    return {"z": z, "steps": steps, "status": status, "n_prev": n_prev,
            "events": np.stack([ws.ev_step[:n_ev], ws.ev_in[:n_ev], ws.ev_out[:n_ev]]),
            "rec": ws.rec_loss[:n_rec].copy(), "snaps": snaps[:n_rec].copy(),
            "keep": ws.prev_idx[:n_prev].copy()}


def _epoch_inputs(loss, n=50, d=80, density=0.06, seed=0, J=300):
    W = _sparse_matrix(n, d, density, seed)
    rng = np.random.default_rng(seed + 100)
    if loss == 0:
        y = rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = np.zeros(d)
    x[rng.choice(d, 6, replace=False)] = rng.standard_normal(6)
    lname = "squares" if loss == 0 else "logistic"
    g = ref.grad(W.toarray(), y, x, lname)
    snap_dl = ref.dl(W @ x, y, lname)  # f_i'(w_i^T x~): the kernels' snapshot terms
    idx = rng.integers(0, n, size=J)
    eta = 0.3 / np.max(np.asarray(W.multiply(W).sum(axis=1)).ravel())
    return W, y, x, g, snap_dl, idx, eta


def _assert_same(a, b, atol=1e-12):
    assert a["steps"] == b["steps"] and a["status"] == b["status"]
    np.testing.assert_allclose(a["z"], b["z"], atol=atol, rtol=0)
    np.testing.assert_array_equal(a["events"], b["events"])
    np.testing.assert_array_equal(a["keep"], b["keep"])
    np.testing.assert_allclose(a["rec"], b["rec"], atol=atol, rtol=1e-12)
    np.testing.assert_allclose(a["snaps"], b["snaps"], atol=atol, rtol=0)


@pytest.mark.parametrize("loss", [0, 1], ids=["squares", "logistic"])
@pytest.mark.parametrize(
    "thr_every, s_keep, rec_every, snap",
    [
        (0, 12, 0, False),     # SVRGSP: no events, no checkpoints (pure lazy + final flush)
        (0, 12, 7, False),     # loss checkpoints do not read z (no synchronisation)
        (0, 12, 7, True),      # snapshots: synchronise every 7 steps
        (50, 12, 0, False),    # SVRGSP+ (full reading): H_12 every 50 steps, flush first
        (37, 12, 10, True),    # events and snapshots at unrelated periods
        (1, 12, 10, True),     # SVRGHT: the eager branch
        (60, 80, 25, True),    # H keeping everything (restricted reading of SVRGSP+)
    ],
)
def test_lazy_csr_epoch_matches_eager_dense(loss, thr_every, s_keep, rec_every, snap):
    W, y, x, g, snap_dl, idx, eta = _epoch_inputs(loss)
    prev = np.flatnonzero(x)
    a = _run_epoch(W, y, loss, x, g, snap_dl, idx, eta, thr_every, s_keep, rec_every, snap,
                   prev)
    b = _run_epoch(W.toarray(), y, loss, x, g, snap_dl, idx, eta, thr_every, s_keep,
                   rec_every, snap, prev)
    _assert_same(a, b)
    assert a["status"] == 0 and a["steps"] == len(idx)
    if snap:  # snapshots are read-only: bit-identical iterate and events without them
        c = _run_epoch(W, y, loss, x, g, snap_dl, idx, eta, thr_every, s_keep, rec_every,
                       False, prev)
        np.testing.assert_array_equal(c["z"], a["z"])
        np.testing.assert_array_equal(c["events"], a["events"])
        np.testing.assert_array_equal(c["rec"], a["rec"])
    if thr_every > 1 and s_keep < W.shape[1]:
        assert a["events"].shape[1] == len(idx) // thr_every
        if len(idx) % thr_every:  # steps after the last event: their drift is applied
            assert np.count_nonzero(a["z"]) > s_keep


def test_lazy_csr_epoch_matches_plain_loop():
    """A literal transcription of the eager SVRG step, H_k every `every` steps."""
    loss, every, k = 0, 40, 10
    W, y, x, g, snap_dl, idx, eta = _epoch_inputs(loss, J=200, seed=4)
    got = _run_epoch(W, y, loss, x, g, snap_dl, idx, eta, every, k, 0, False)
    Wd = W.toarray()
    z = x.copy()
    for j, i in enumerate(idx):
        c = (Wd[i] @ z - y[i]) - snap_dl[i]
        z = z - eta * (c * Wd[i] + g)
        if (j + 1) % every == 0:
            z = ref.hard_threshold_ref(z, k)
    np.testing.assert_allclose(got["z"], z, atol=ATOL, rtol=0)


def test_lazy_csr_epoch_duplicates():
    """A non-canonical CSR (duplicate entries) still means the sum of the duplicates."""
    W, y, x, g, snap_dl, idx, eta = _epoch_inputs(0, J=120, seed=5)
    coo = W.tocoo()  # every entry split in two halves, stored twice in its row
    rows = np.concatenate([coo.row, coo.row])
    order = np.argsort(rows, kind="stable")
    data = np.concatenate([coo.data / 2, coo.data / 2])[order]
    indices = np.concatenate([coo.col, coo.col])[order].astype(np.int64)
    indptr = np.zeros(W.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=W.shape[0]), out=indptr[1:])
    ws = Workspace(W.shape[1], len(idx), 0)
    z = x.copy()
    K.svrg_epoch_csr(data, indices, indptr, y, 0, z, g, snap_dl, idx, eta, 0.0, 0, 5, ws.keep_idx,
                     ws.prev_idx, 0, ws.cand, ws.mags, ws.vbuf, ws.ev_step, ws.ev_in,
                     ws.ev_out, True, 0, ws.rec_loss, np.zeros((0, W.shape[1])), ws.stop,
                     NO_FORCED)
    want = _run_epoch(W.toarray(), y, 0, x, g, snap_dl, idx, eta, 0, 5, 0, False)["z"]
    np.testing.assert_allclose(z, want, atol=1e-12, rtol=0)


def test_lazy_csr_epoch_divergence_stop_materialises_the_iterate():
    """A non-finite margin stops at step j with z equal to the eager iterate after j steps."""
    W, y, x, g, snap_dl, idx, _ = _epoch_inputs(0, J=5000, seed=6)
    eta = 1000.0 / np.max(np.asarray(W.multiply(W).sum(axis=1)).ravel())  # far too large
    a = _run_epoch(W, y, 0, x, g, snap_dl, idx, eta, 0, 5, 0, False)
    b = _run_epoch(W.toarray(), y, 0, x, g, snap_dl, idx, eta, 0, 5, 0, False)
    assert a["status"] == 1 and b["status"] == 1
    assert 0 < a["steps"] == b["steps"] < len(idx)
    np.testing.assert_allclose(a["z"], b["z"], rtol=1e-9, atol=0)
    # the drift of the coordinates no sampled row touched is applied too
    untouched = np.setdiff1d(np.arange(W.shape[1]), W[idx[: a["steps"]]].indices)
    assert untouched.size
    np.testing.assert_allclose(a["z"][untouched], x[untouched] - a["steps"] * eta * g[untouched],
                               rtol=1e-9, atol=0)


def test_lazy_csr_epoch_long_epoch_accuracy():
    """J = 20 000 lazy steps on d = 2000 (most coordinates lag for thousands of steps)."""
    W, y, x, g, snap_dl, idx, eta = _epoch_inputs(1, n=400, d=2000, density=0.005, seed=7,
                                                  J=20_000)
    a = _run_epoch(W, y, 1, x, g, snap_dl, idx, eta, 0, 30, 0, False)
    b = _run_epoch(W.toarray(), y, 1, x, g, snap_dl, idx, eta, 0, 30, 0, False)
    np.testing.assert_allclose(a["z"], b["z"], atol=1e-11, rtol=0)


# -- whole solves on genuinely sparse data against the reference --------------------------------


def _sparse_problem(loss, seed, n=80, d=120, density=0.06):
    if loss == "squares":
        p = make_regression(n=n, d=d, s_star=4, noise_var=0.01, sparse_density=density,
                            random_state=seed)
    else:
        p = make_classification(n=n, d=d, s_star=4, signal=1.0, sparse_density=density,
                                random_state=seed)
    assert sp.issparse(p.W)
    return p


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("method, inner", [("svrgsp", "restricted"), ("svrgsp", "full"),
                                           ("svrgsp+", "restricted"), ("svrgsp+", "full"),
                                           ("svrght", "restricted")])
@pytest.mark.parametrize("record_iterates", [False, True], ids=["plain", "snapshots"])
def test_sparse_solve_matches_reference(method, inner, loss, record_iterates):
    prob = _sparse_problem(loss, seed=11)
    W, y = prob.W, prob.y
    s, J, m, n_iter = 5, 400, 6, 4
    eta = 0.5 / np.max(np.asarray(W.multiply(W).sum(axis=1)).ravel())
    res = rv.solve(prob, method=method, s=s, eta=eta, J=J, m=m, max_iter=n_iter, tol=0,
                   ftol=0, random_state=3, inner=inner, warn=False,
                   record_iterates=record_iterates, record_every=13)
    assert res.nit == n_iter, res.message
    out = ref.run(method, W, y, loss, s=s, eta=eta, n_iter=n_iter, J=J, m=m, random_state=3,
                  inner=inner)
    for t in range(n_iter + 1):
        np.testing.assert_allclose(res.trace.x(t), out["x"][t], atol=ATOL, rtol=0,
                                   err_msg=f"x^{t}")
    if method != "svrght":
        for t in range(1, n_iter + 1):
            np.testing.assert_array_equal(res.trace.T(t), out["T"][t - 1])
            np.testing.assert_allclose(res.trace.b(t), out["b"][t - 1], atol=ATOL, rtol=0)
    assert np.count_nonzero(out["x"][n_iter]) > 0
    # same run on the dense copy of the data: identical events and checkpoints
    dense = Problem(W.toarray(), y, loss=loss)
    res_d = rv.solve(dense, method=method, s=s, eta=eta, J=J, m=m, max_iter=n_iter, tol=0,
                     ftol=0, random_state=3, inner=inner, warn=False,
                     record_iterates=record_iterates, record_every=13)
    a, b = res.trace.arrays, res_d.trace.arrays
    for key in ("ev_iter", "ev_step", "ev_kind", "ev_in", "ev_out", "ck_iter", "ck_step"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    np.testing.assert_allclose(a["ck_proxy"], b["ck_proxy"], rtol=1e-9, atol=1e-12)
    if record_iterates:
        np.testing.assert_allclose(a["ck_objective"], b["ck_objective"], rtol=1e-9)
        assert len(res.trace.checkpoints()) == n_iter * (J // 13)


def test_sparse_rows_really_lag():
    """The data of the solve tests leaves most coordinates untouched by most steps."""
    prob = _sparse_problem("squares", seed=11)
    assert prob.W.nnz / prob.n < 0.1 * prob.d
    assert math.isclose(prob.density, 0.06, rel_tol=0.05)


def test_loss_and_dloss_is_the_pair():
    """The fused per-sample loss and derivative equal the separate kernels bit for bit."""
    from rgrasp_viz._kernels._jit import njit
    from rgrasp_viz._kernels.epochs import dloss, sample_loss
    from rgrasp_viz._kernels.epochs import loss_and_dloss as internal

    loss_and_dloss = njit(lambda a, y, loss: internal(a, y, loss))  # no Python entry point
    for loss in (0, 1):
        for a in (-800.0, -3.5, -1e-3, 0.0, 2e-9, 0.7, 40.0, 1e5):
            for y in (-1.0, 1.0, 0.3):
                if loss == 1 and y == 0.3:
                    continue
                f, df = loss_and_dloss(a, y, loss)
                assert f == sample_loss(a, y, loss) and df == dloss(a, y, loss)


# -- the fused full gradient (dense / CSR pair) -------------------------------------------------


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("x_nnz", [0, 1, 7, 40])
def test_full_gradient_pair_matches_numpy(loss, x_nnz):
    from rgrasp_viz import losses

    W = _sparse_matrix(35, 40, 0.2, seed=8, empty_rows=(3,), empty_cols=(5,))
    rng = np.random.default_rng(x_nnz)
    y = rng.standard_normal(35) if loss == "squares" else np.where(rng.random(35) < 0.5, -1.0, 1.0)
    x = np.zeros(40)
    x[rng.choice(40, x_nnz, replace=False)] = rng.standard_normal(x_nnz)
    g_ref, m_ref = losses.gradient(W.toarray(), y, x, loss)
    m_ref = losses.loss_derivative(m_ref, y, loss)  # the kernels store f'(margins)
    code = losses.LOSS_CODES[loss]
    g, m = np.full(40, np.nan), np.full(35, np.nan)
    sup = np.flatnonzero(x)
    K.full_gradient_dense(np.ascontiguousarray(W.toarray()), y, code, sup, x[sup], m, g)
    np.testing.assert_allclose(m, m_ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g, g_ref, rtol=1e-13, atol=1e-15)
    g2, m2 = np.full(40, np.nan), np.full(35, np.nan)
    K.full_gradient_csr(*csr_arrays(W), y, code, x, m2, g2)
    np.testing.assert_allclose(m2, m_ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g2, g_ref, rtol=1e-13, atol=1e-15)


def test_row_dot():
    from rgrasp_viz._kernels._jit import njit
    from rgrasp_viz._kernels.epochs import row_dot as internal

    row_dot = njit(lambda X, i, z: internal(X, i, z))  # no Python entry point

    X = np.random.default_rng(9).standard_normal((3, 11))
    for p in range(12):
        Xp = np.ascontiguousarray(X[:, :p])
        z = np.arange(p, dtype=float) - 3.0
        assert row_dot(Xp, 1, z) == pytest.approx(Xp[1] @ z, rel=1e-14, abs=1e-14)
