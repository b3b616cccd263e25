"""The public ``rv.solve`` API: results, traces, persistence, determinism, events, callbacks
and divergence handling.

Expected values come from the documented contract (the ``solve`` docstring, the ``Trace``
module docstring) and from independent NumPy formulas, never from the solver's own output.
"""

from __future__ import annotations

import doctest
import math
import re
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

import rgrasp_viz as rv
from rgrasp_viz.exceptions import ConvergenceWarning

ALL = ("fght", "grasp", "sght", "svrght", "svrgsp", "svrgsp+")
STOCHASTIC = ("sght", "svrght", "svrgsp", "svrgsp+")

RECORD_KEYS = {"iteration", "passes", "time", "objective", "rel_error", "support_size",
               "n_thresholds"}
EVENT_KEYS = {"iteration", "step", "kind", "entered", "left", "passes", "method"}
CHECKPOINT_KEYS = {"iteration", "step", "passes", "proxy", "objective", "method"}


# -- helpers ------------------------------------------------------------------------------------


def small(seed=0, n=80, d=60, s_star=5, **kw):
    return rv.make_regression(n=n, d=d, s_star=s_star, random_state=seed, **kw)


def as_csr(prob):
    return rv.Problem(sp.csr_matrix(prob.W), prob.y, loss=prob.loss, x_true=prob.x_true)


def dense(W):
    return W.toarray() if sp.issparse(W) else np.asarray(W)


def objective_np(prob, x):
    """Independent F(x) = mean f_i(w_i^T x)."""
    a = dense(prob.W) @ x
    if prob.loss == "squares":
        return 0.5 * float(np.mean((a - prob.y) ** 2))
    return float(np.mean(np.logaddexp(0.0, -prob.y * a)))


def rel_error_np(x, x_true):
    return float(np.linalg.norm(x - x_true) / np.linalg.norm(x_true))


def run(prob, method, **kw):
    kw.setdefault("random_state", 0)
    kw.setdefault("warn", False)
    return rv.solve(prob, method=method, **kw)


def bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_arrays_identical(ta, tb, skip=("time",)):
    assert set(ta.arrays) == set(tb.arrays)
    for k in ta.arrays:
        if k in skip:
            continue
        assert bits_equal(ta.arrays[k], tb.arrays[k]), k


@pytest.fixture(scope="module")
def classroom():
    return rv.make_regression("classroom", random_state=0)


# -- documented examples and result object ------------------------------------------------------


def test_package_docstring_example_holds():
    """The example in ``rgrasp_viz.__doc__`` must produce what it claims."""
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder(recurse=False).find(rv, "rgrasp_viz")
    assert tests and tests[0].examples, "the package docstring has no example"
    report = []
    for t in tests:
        runner.run(t, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_make_regression_classroom_preset(classroom):
    assert (classroom.n, classroom.d) == (500, 1000)
    assert np.count_nonzero(classroom.x_true) == 20
    assert classroom.loss == "squares"


@pytest.mark.parametrize("method", ALL)
def test_every_method_returns_documented_result(classroom, method):
    s = 24
    res = rv.solve(classroom, method=method, s=s, random_state=0, max_iter=4, warn=False)
    assert isinstance(res, rv.SolveResult) and isinstance(res, OptimizeResult)
    for attr in ("x", "fun", "nit", "success", "status", "message", "trace", "passes",
                 "time", "rel_error"):
        assert hasattr(res, attr), attr
    assert res.x.shape == (classroom.d,) and res.x.dtype == np.float64
    assert np.all(np.isfinite(res.x))
    assert 1 <= np.count_nonzero(res.x) <= s
    assert res.fun == classroom.objective(res.x)
    assert res.fun == pytest.approx(objective_np(classroom, res.x), rel=1e-10)
    # a few iterations from x = 0 must lower the objective
    assert res.fun < objective_np(classroom, np.zeros(classroom.d))
    assert isinstance(res.nit, int) and 1 <= res.nit <= 4
    assert res.status in (0, 1)
    assert bool(res.success) == (res.status == 0)
    assert isinstance(res.message, str) and res.message
    assert isinstance(res.trace, rv.Trace)
    assert res.trace.n_iter == res.nit
    assert res.trace.method == method
    np.testing.assert_array_equal(res.trace.x(-1), res.x)
    assert res.rel_error == pytest.approx(rel_error_np(res.x, classroom.x_true), rel=1e-12)
    assert res.passes == res.trace.passes[-1] and res.passes > 0
    assert res.time >= 0


@pytest.mark.parametrize("method", ALL)
def test_problem_from_raw_arrays(method):
    rng = np.random.default_rng(3)
    W = rng.standard_normal((50, 30))
    x_star = np.zeros(30)
    x_star[[2, 11, 25]] = [1.0, -2.0, 1.5]
    y = W @ x_star
    prob = rv.Problem(W, y, loss="squares", x_true=None)
    res = run(prob, method, s=3, max_iter=3)
    assert res.fun == prob.objective(res.x)
    assert math.isnan(res.rel_error)
    assert np.all(np.isnan(res.trace.rel_error))


def test_raw_arrays_logistic():
    prob = rv.make_classification(n=200, d=40, s_star=4, signal=2.0, random_state=1)
    res = rv.solve((prob.W, prob.y), loss="logistic", method="svrgsp", s=5, random_state=0,
                   max_iter=5, warn=False)
    assert res.trace.meta["loss"] == "logistic"
    assert np.count_nonzero(res.x) <= 5
    assert res.fun == pytest.approx(objective_np(prob, res.x), rel=1e-10)
    assert res.fun < math.log(2.0)  # F(0) = log 2 for the logistic loss
    assert math.isnan(res.rel_error)
    # labels in {0, 1} are accepted and give exactly the same run
    y01 = (prob.y > 0).astype(float)
    res01 = rv.solve((prob.W, y01), loss="logistic", method="svrgsp", s=5, random_state=0,
                     max_iter=5, warn=False)
    np.testing.assert_array_equal(res01.x, res.x)


def test_raw_arrays_with_x_true():
    prob = small()
    res = rv.solve((prob.W, prob.y), x_true=prob.x_true, method="fght", max_iter=3, warn=False)
    assert res.rel_error == pytest.approx(rel_error_np(res.x, prob.x_true), rel=1e-12)


@pytest.mark.parametrize(("alias", "name"), [("FG-HT", "fght"), ("SVRGSP+", "svrgsp+"),
                                             ("SG-HT", "sght"), ("GraSP", "grasp"),
                                             ("SVRG-HT", "svrght"), ("svrgsp_plus", "svrgsp+")])
def test_method_aliases(alias, name):
    prob = small()
    a = run(prob, alias, s=6, max_iter=3)
    b = run(prob, name, s=6, max_iter=3)
    assert a.trace.method == name
    assert a.trace.equals(b.trace)


def test_default_s_is_1_2_s_star(classroom):
    res = rv.solve(classroom, method="fght", random_state=0, max_iter=2, warn=False)
    assert res.trace.meta["s"] == 24  # round(1.2 * 20)
    assert np.count_nonzero(res.x) <= 24
    prob = small(s_star=7)  # round(8.4) = 8
    res = run(prob, "svrgsp+", max_iter=2)
    assert res.trace.meta["s"] == 8
    assert np.count_nonzero(res.x) <= 8


def test_default_s_requires_x_true():
    prob = small()
    with pytest.raises(ValueError, match="s"):
        rv.solve(rv.Problem(prob.W, prob.y), method="fght")
    with pytest.raises(ValueError, match="s"):
        rv.solve((prob.W, prob.y), method="svrgsp+")


# -- trace records ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ALL)
def test_records_one_per_iteration(method):
    prob = small()
    s = 6
    res = run(prob, method, s=s, max_iter=6, tol=0.0)
    tr = res.trace
    recs = tr.records()
    assert len(recs) == res.nit + 1 == len(tr)
    for r in recs:
        assert RECORD_KEYS <= set(r)
    assert [r["iteration"] for r in recs] == list(range(res.nit + 1))

    passes = np.array([r["passes"] for r in recs])
    # row 0 sits after the work of attempts the default-step safeguard abandoned (if any)
    assert passes[0] == tr.meta["safeguard_passes"] and np.all(np.diff(passes) > 0)
    times = np.array([r["time"] for r in recs])
    assert np.all(times >= 0) and np.all(np.diff(times) >= 0)
    nthr = np.array([r["n_thresholds"] for r in recs])
    assert nthr[0] == 0 and np.all(np.diff(nthr) >= 0) and nthr[-1] >= res.nit
    assert all(isinstance(r["n_thresholds"], int) for r in recs)

    for t, r in enumerate(recs):
        x = tr.x(t)
        assert r["rel_error"] == pytest.approx(rel_error_np(x, prob.x_true), rel=1e-12,
                                               abs=1e-15)
        assert r["objective"] == pytest.approx(objective_np(prob, x), rel=1e-10)
        assert r["support_size"] == np.count_nonzero(x) <= s
    assert recs[0]["rel_error"] == 1.0  # x^0 = 0


def test_records_rel_error_nan_without_x_true():
    prob = small()
    res = run(rv.Problem(prob.W, prob.y), "svrgsp+", s=6, max_iter=3)
    recs = res.trace.records()
    assert all(math.isnan(r["rel_error"]) for r in recs)
    assert all(math.isfinite(r["objective"]) for r in recs)


# -- persistence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("record_iterates", [False, True])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", ["svrgsp+", "grasp", "svrght"])
def test_trace_round_trip(tmp_path, method, sparse, record_iterates):
    prob = small()
    if sparse:
        prob = as_csr(prob)
    res = run(prob, method, s=6, max_iter=4, record_iterates=record_iterates)
    tr = res.trace
    path = tmp_path / "run.npz"
    tr.save(path)
    loaded = rv.Trace.load(path)
    assert set(loaded.arrays) == set(tr.arrays)
    for k, v in tr.arrays.items():  # every array, time included, bit for bit
        assert bits_equal(loaded.arrays[k], v), k
    assert loaded.meta == tr.meta
    assert loaded.equals(tr)
    assert loaded.meta["sparse"] is sparse
    for t in range(len(tr)):
        np.testing.assert_array_equal(loaded.x(t), tr.x(t))
    # the file is plain arrays: readable without pickle
    with np.load(path, allow_pickle=False) as f:
        assert {k for k in f.files if k != "__meta__"} <= set(tr.arrays) | {"__meta__"}
        for k in f.files:
            f[k]  # noqa: B018 - loading must not need pickle
    # string paths work too
    loaded2 = rv.Trace.load(str(path))
    assert loaded2.equals(tr)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("method", "inner"), [("svrgsp+", "restricted"), ("svrgsp+", "full"),
                                               ("svrght", "restricted"),
                                               ("sght", "restricted")])
def test_record_iterates_snapshots(method, inner, sparse):
    prob = small()
    if sparse:
        prob = as_csr(prob)
    s = 6
    res = run(prob, method, s=s, max_iter=3, record_iterates=True, inner=inner, J=40,
              record_every=5)
    tr = res.trace
    assert tr.has_iterates
    n_ck = len(tr.ck_iter)
    assert n_ck > 0
    assert tr.ck_x.shape == (n_ck, prob.d)
    assert np.all(tr.ck_step % 5 == 0)
    for i in range(n_ck):
        z = tr.ck_x[i]
        assert tr.ck_objective[i] == pytest.approx(objective_np(prob, z), rel=1e-10)
        if method in ("svrght", "sght"):  # H_s after every inner step
            assert np.count_nonzero(z) <= s
        if method == "svrgsp+" and inner == "restricted":  # z lives on T
            T = tr.T(int(tr.ck_iter[i]))
            assert set(np.flatnonzero(z)) <= set(T.tolist())
    # without record_iterates: no snapshots, objective unknown
    res2 = run(prob, method, s=s, max_iter=3, inner=inner, J=40, record_every=5)
    assert not res2.trace.has_iterates
    assert res2.trace.ck_x.shape[0] == 0
    assert np.all(np.isnan(res2.trace.ck_objective))
    # recording iterates never changes the run
    np.testing.assert_array_equal(res2.trace.objective, tr.objective)
    np.testing.assert_array_equal(res2.x, res.x)


def test_load_rejects_non_trace_npz(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, a=np.arange(3), b=np.ones(2))
    with pytest.raises(ValueError, match="trace"):
        rv.Trace.load(path)


def test_load_rejects_incomplete_trace(tmp_path):
    tr = run(small(), "fght", s=6, max_iter=2).trace
    path = tmp_path / "run.npz"
    tr.save(path)
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k != "objective"}
    bad = tmp_path / "incomplete.npz"
    np.savez_compressed(bad, **arrays)
    with pytest.raises(ValueError, match="objective"):
        rv.Trace.load(bad)


def test_load_rejects_garbage_file(tmp_path):
    path = tmp_path / "garbage.npz"
    path.write_bytes(b"this is not a zip archive at all\n" * 20)
    with pytest.raises(ValueError):
        rv.Trace.load(path)


def test_load_rejects_truncated_file(tmp_path):
    """A half-written trace (e.g. interrupted download) must give a clear ValueError."""
    tr = run(small(), "svrgsp+", s=6, max_iter=3).trace
    path = tmp_path / "run.npz"
    tr.save(path)
    raw = path.read_bytes()
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="truncated.npz"):
        rv.Trace.load(bad)


def test_load_rejects_corrupted_payload(tmp_path):
    """Bytes flipped inside the compressed data must give a clear ValueError."""
    tr = run(small(), "svrgsp+", s=6, max_iter=3).trace
    path = tmp_path / "run.npz"
    tr.save(path)
    with zipfile.ZipFile(path) as zf:  # flip bytes inside the largest member's data
        info = max(zf.infolist(), key=lambda i: i.compress_size)
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    start += info.compress_size // 2
    for i in range(start, start + min(16, info.compress_size // 4)):
        raw[i] ^= 0xA5
    bad = tmp_path / "corrupted.npz"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="corrupted.npz"):
        rv.Trace.load(bad)


# -- determinism ------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", STOCHASTIC)
def test_same_seed_bit_identical(method, sparse):
    prob = small()
    if sparse:
        prob = as_csr(prob)
    kw = dict(s=6, max_iter=4, record_iterates=True, random_state=123)
    a = run(prob, method, **kw).trace
    b = run(prob, method, **kw).trace
    assert a.equals(b)
    assert_arrays_identical(a, b)
    assert a.meta["random_state"] == 123
    # a different seed gives a different path
    c = run(prob, method, **dict(kw, random_state=124)).trace
    assert not a.equals(c)
    assert not bits_equal(a.objective[:2], c.objective[:2])


@pytest.mark.parametrize("method", STOCHASTIC)
def test_generator_random_state(method):
    prob = small()
    gen = np.random.default_rng(5)
    a = run(prob, method, s=6, max_iter=3, random_state=gen).trace
    b = run(prob, method, s=6, max_iter=3, random_state=5).trace
    # protocol: the index sequence is drawn from the generator, so the runs agree
    assert_arrays_identical(a, b)
    # the caller's generator was used (and advanced)
    assert gen.bit_generator.state != np.random.default_rng(5).bit_generator.state


@pytest.mark.parametrize("method", ["fght", "grasp"])
def test_deterministic_methods_ignore_seed(method):
    prob = small()
    a = run(prob, method, s=6, max_iter=3, random_state=1).trace
    b = run(prob, method, s=6, max_iter=3, random_state=2).trace
    assert_arrays_identical(a, b)


def test_dense_and_csr_agree():
    prob = small()
    a = run(prob, "svrgsp+", s=6, max_iter=3)
    b = run(as_csr(prob), "svrgsp+", s=6, max_iter=3)
    np.testing.assert_allclose(b.trace.objective, a.trace.objective, rtol=1e-9)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-8, atol=1e-12)


# -- thresholding events --------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", ALL)
def test_event_count_equals_thresholds(method, sparse):
    prob = small()
    if sparse:
        prob = as_csr(prob)
    res = run(prob, method, s=6, max_iter=4, tol=0.0, J=40, m=4)
    tr = res.trace
    assert len(tr.ev_iter) == tr.n_thresholds[-1]
    assert not tr.meta["events_truncated"]
    per_iter = np.diff(tr.n_thresholds)
    for t in range(1, res.nit + 1):
        assert np.count_nonzero(tr.ev_iter == t) == per_iter[t - 1]
        assert tr.inner_entered[t] == tr.ev_in[(tr.ev_iter == t) & (tr.ev_kind == 0)].sum()
        assert tr.inner_left[t] == tr.ev_out[(tr.ev_iter == t) & (tr.ev_kind == 0)].sum()
    if method in ("fght", "grasp", "svrgsp"):
        # exactly one outer H_s per iteration, and it reports the support change
        assert np.all(per_iter == 1)
        assert np.all(tr.ev_kind == 1)
        np.testing.assert_array_equal(tr.ev_iter, np.arange(1, res.nit + 1))
        np.testing.assert_array_equal(tr.ev_in, tr.n_entered[1:])
        np.testing.assert_array_equal(tr.ev_out, tr.n_left[1:])
    if method == "svrgsp+":
        assert np.all(per_iter == 4 + 1)  # m inner H_|T| (J divisible by m) + the outer H_s


def test_svrght_event_at_every_inner_step():
    prob = small()
    J = 30
    res = run(prob, "svrght", s=6, max_iter=3, tol=0.0, J=J)
    tr = res.trace
    assert np.all(tr.ev_kind == 0)
    for t in range(1, res.nit + 1):
        steps = tr.ev_step[tr.ev_iter == t]
        np.testing.assert_array_equal(steps, np.arange(1, J + 1))
        # the support changes of the inner events telescope to the iteration's net change
        sel = tr.ev_iter == t
        net = int(tr.ev_in[sel].sum()) - int(tr.ev_out[sel].sum())
        assert net == tr.support_size[t] - tr.support_size[t - 1]
    assert tr.n_thresholds[-1] == J * res.nit


@pytest.mark.parametrize("inner", ["restricted", "full"])
@pytest.mark.parametrize(("J", "m"), [(60, 6), (50, 6), (7, 7), (10, 1)])
def test_svrgsp_plus_inner_events_at_multiples(inner, J, m):
    prob = small()
    res = run(prob, "svrgsp+", s=6, max_iter=3, tol=0.0, J=J, m=m, inner=inner)
    tr = res.trace
    period = math.ceil(J / m)
    expected = np.arange(period, J + 1, period)
    for t in range(1, res.nit + 1):
        sel = tr.ev_iter == t
        np.testing.assert_array_equal(tr.ev_step[sel & (tr.ev_kind == 0)], expected)
        assert np.count_nonzero(sel & (tr.ev_kind == 1)) == 1
    if inner == "restricted":
        # H_|T| on the |T| working coordinates keeps everything
        assert np.all(tr.ev_in[tr.ev_kind == 0] == 0)
        assert np.all(tr.ev_out[tr.ev_kind == 0] == 0)


def test_svrgsp_has_no_inner_events():
    res = run(small(), "svrgsp", s=6, max_iter=3, J=40)
    assert np.all(res.trace.ev_kind == 1)


@pytest.mark.parametrize("method", ALL)
def test_events_and_checkpoints_tidy_views(method):
    prob = small()
    res = run(prob, method, s=6, max_iter=3, tol=0.0, J=40, record_every=7)
    tr = res.trace
    ev = tr.events()
    assert len(ev) == len(tr.ev_iter) > 0
    P = tr.passes
    eps = 1e-12
    for e in ev:
        assert set(e) == EVENT_KEYS
        t = e["iteration"]
        assert 1 <= t <= res.nit
        assert e["kind"] in ("inner", "outer")
        assert e["method"] == method
        assert P[t - 1] - eps <= e["passes"] <= P[t] + eps
        assert e["entered"] >= 0 and e["left"] >= 0
        if e["kind"] == "outer":
            assert e["passes"] == pytest.approx(P[t])
    # events are ordered in time
    pos = np.array([e["passes"] for e in ev])
    assert np.all(np.diff(pos) >= -eps)
    cks = tr.checkpoints()
    if method in STOCHASTIC:
        assert len(cks) > 0
    else:
        assert cks == []
    for c in cks:
        assert set(c) == CHECKPOINT_KEYS
        t = c["iteration"]
        assert P[t - 1] - eps <= c["passes"] <= P[t] + eps
        assert c["step"] % 7 == 0 and c["step"] >= 7
        assert math.isfinite(c["proxy"]) and c["proxy"] >= 0
    if method in ("svrght", "svrgsp", "svrgsp+"):
        for t in range(1, res.nit + 1):  # floor(J / record_every) checkpoints per epoch
            assert np.count_nonzero(tr.ck_iter == t) == 40 // 7


def test_max_events_truncation():
    prob = small()
    J = 50
    full = run(prob, "svrght", s=6, max_iter=3, tol=0.0, J=J)
    capped = run(prob, "svrght", s=6, max_iter=3, tol=0.0, J=J, max_events=70)
    assert not full.trace.meta["events_truncated"]
    assert len(full.trace.ev_iter) == full.trace.n_thresholds[-1] == J * full.nit
    tr = capped.trace
    assert tr.meta["events_truncated"] is True
    assert len(tr.ev_iter) == 70 == len(tr.events())
    # the per-iteration counts stay exact and the run itself is unchanged
    np.testing.assert_array_equal(tr.n_thresholds, full.trace.n_thresholds)
    np.testing.assert_array_equal(capped.x, full.x)
    # the stored events are the first 70
    np.testing.assert_array_equal(tr.ev_step, full.trace.ev_step[:70])
    np.testing.assert_array_equal(tr.ev_iter, full.trace.ev_iter[:70])
    none = run(prob, "svrght", s=6, max_iter=2, tol=0.0, J=J, max_events=0)
    assert len(none.trace.ev_iter) == 0 and none.trace.meta["events_truncated"] is True
    assert none.trace.n_thresholds[-1] == 2 * J


@pytest.mark.parametrize("method", STOCHASTIC)
def test_record_false_stores_no_inner_events(method):
    prob = small()
    kw = dict(s=6, max_iter=3, tol=0.0, J=40, m=4)
    on = run(prob, method, **kw)
    off = run(prob, method, record=False, **kw)
    assert np.count_nonzero(on.trace.ev_kind == 0) > 0 or method == "svrgsp"
    assert np.count_nonzero(off.trace.ev_kind == 0) == 0
    # thresholding counts stay exact; the iterates do not depend on recording
    np.testing.assert_array_equal(off.trace.n_thresholds, on.trace.n_thresholds)
    np.testing.assert_array_equal(off.trace.objective, on.trace.objective)
    np.testing.assert_array_equal(off.x, on.x)


def test_svrght_large_run_keeps_trace_small(tmp_path):
    prob = rv.make_regression(n=500, d=1000, s_star=50, random_state=0)
    res = rv.solve(prob, method="svrght", s=60, random_state=0, max_iter=10, tol=0.0,
                   ftol=0.0, warn=False)
    tr = res.trace
    assert res.nit == 10
    assert tr.meta["J"] == 1000
    assert len(tr.ev_iter) == tr.n_thresholds[-1] == 10_000
    path = tmp_path / "big.npz"
    tr.save(path)
    assert path.stat().st_size < 1_000_000


# -- callback and stopping --------------------------------------------------------------------


@pytest.mark.parametrize("method", ALL)
def test_callback_receives_intermediate_results(method):
    prob = small()
    seen = []

    def cb(info):
        assert isinstance(info, OptimizeResult)
        seen.append((info.nit, info.fun, info.passes, np.array(info.x, copy=True)))

    res = run(prob, method, s=6, max_iter=5, tol=0.0, callback=cb)
    assert [s[0] for s in seen] == list(range(1, res.nit + 1))
    passes = [s[2] for s in seen]
    assert np.all(np.diff(passes) > 0)
    for nit, fun, p, x in seen:
        assert fun == pytest.approx(objective_np(prob, x), rel=1e-10)
        assert fun == res.trace.objective[nit]
        assert p == res.trace.passes[nit]
        np.testing.assert_array_equal(x, res.trace.x(nit))


@pytest.mark.parametrize("method", ALL)
def test_callback_stop_iteration(method):
    prob = small()

    def cb(info):
        if info.nit == 3:
            raise StopIteration

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = rv.solve(prob, method=method, s=6, random_state=0, max_iter=50, tol=0.0,
                       callback=cb)
    assert res.status == 99
    assert not res.success
    assert res.nit == 3
    assert res.trace.n_iter == 3
    assert len(res.trace.records()) == 4
    assert res.trace.meta["status"] == 99
    np.testing.assert_array_equal(res.trace.x(-1), res.x)


def test_callback_must_be_callable():
    with pytest.raises(TypeError, match="callback"):
        rv.solve(small(), method="fght", s=6, callback=42)


@pytest.mark.parametrize("method", ["fght", "svrgsp+"])
def test_max_iter_warns(method):
    prob = small()
    with pytest.warns(ConvergenceWarning, match="max"):
        res = rv.solve(prob, method=method, s=6, random_state=0, max_iter=2, tol=0.0)
    assert res.status == 1
    assert not res.success
    assert res.nit == 2
    assert res.trace.n_iter == 2


def test_warn_false_silences_convergence_warning():
    prob = small()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = rv.solve(prob, method="fght", s=6, random_state=0, max_iter=2, tol=0.0,
                       warn=False)
    assert res.status == 1 and not res.success


# -- divergence -------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", ["fght", "sght", "svrght", "svrgsp", "svrgsp+"])
def test_huge_step_diverges_gracefully(method, sparse):
    prob = small()
    if sparse:
        prob = as_csr(prob)
    s = 6
    eta = 1e3 * rv.default_eta(prob, method, s)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(ConvergenceWarning,
                          match=re.escape(f"{method}: DIVERGED: diverged")):
            res = rv.solve(prob, method=method, s=s, eta=eta, random_state=0)
    assert res.status == 2
    assert not res.success
    assert "diverged" in res.message
    last = res.trace.objective[-1]
    F0 = objective_np(prob, np.zeros(prob.d))
    assert (not np.isfinite(last)) or last > 1e3 * F0
    assert np.all(np.isfinite(res.x))
    assert math.isfinite(res.fun)
    assert res.fun == prob.objective(res.x)
    assert res.trace.meta["status"] == 2
    assert res.trace.n_iter == res.nit


@pytest.mark.parametrize("factor", [6, 8, 10])
def test_bounded_blow_up_is_divergence_not_convergence(factor):
    # A step a few times too large makes SVRGSP+ jump far above F(x0) and then sit there:
    # the stagnation rule must not call that converged.
    prob = rv.make_regression(n=200, d=300, s_star=10, random_state=0)
    eta = factor * rv.default_eta(prob, "svrgsp+", 12, inner="on_T")
    res = rv.solve(prob, method="svrgsp+", s=12, eta=eta, random_state=0, warn=False,
                   inner="on_T")
    assert res.trace.objective[-1] > res.trace.objective[0]
    assert res.status == 2 and not res.success
    # it ends above F(x0) ("rose") or blows up further on the way ("at iteration")
    assert res.message.startswith("diverged")


def _stagnation_stop(objective, ftol, patience):
    """The documented ``ftol`` rule replayed on recorded objectives: the first iteration at
    which the best objective has not improved by more than ``ftol`` for ``patience``
    iterations in a row (None if it never happens)."""
    best, since = objective[0], 0
    for t in range(1, len(objective)):
        if objective[t] < best * (1 - ftol):
            best, since = objective[t], 0
        else:
            since += 1
            if since >= patience:
                return t
    return None


@pytest.mark.parametrize("patience", [1, 3, 6])
def test_patience_is_the_stagnation_window(patience):
    prob = rv.make_regression("classroom", random_state=0)
    long = rv.solve(prob, method="svrgsp+", random_state=1, tol=0, ftol=0, max_iter=40,
                    warn=False)
    stop = _stagnation_stop(long.trace.objective, 1e-3, patience)
    assert stop is not None
    res = rv.solve(prob, method="svrgsp+", random_state=1, tol=0, ftol=1e-3,
                   patience=patience, max_iter=40)
    assert res.nit == stop and res.status == 0
    assert f"in {patience} iterations" in res.message
    assert res.trace.meta["patience"] == patience
    # same index sequence: the shorter run is a prefix of the long one
    np.testing.assert_array_equal(res.trace.objective, long.trace.objective[: stop + 1])


@pytest.mark.parametrize("method, expected", [("svrgsp", 4), ("svrgsp+", 4), ("svrght", 5),
                                              ("sght", 8), ("fght", 5), ("grasp", 5)])
def test_default_patience_per_method(method, expected):
    # the registry's defaults
    res = rv.solve(small(), method=method, random_state=0, tol=0, max_iter=3, warn=False)
    assert res.trace.meta["patience"] == expected


def _separable_logistic(seed=0, n=30, d=40):
    # labels are the signs of a 3-sparse linear function: separable on any T holding those 3
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, d))
    y = np.sign(W[:, :3] @ np.ones(3))
    return rv.Problem(W, y, loss="logistic")


def test_grasp_separable_logistic_subproblem_is_reported():
    prob = _separable_logistic()
    with pytest.warns(ConvergenceWarning, match="grasp: DIVERGED: .*separable"):
        res = rv.solve(prob, method="grasp", s=2, random_state=0)
    assert res.status == 2 and not res.success
    assert "separable" in res.message and "no finite minimiser" in res.message
    assert "eta" not in res.message  # GraSP has no step size to blame
    tr, t = res.trace, res.nit
    # the step that met the separable sub-problem is in the trace; b classifies every sample
    # with a positive margin on T (the condition the message states), and is huge
    T = tr.T(t)
    assert set(range(3)) <= set(T)
    margins = prob.y * (prob.W[:, T] @ tr.b(t)[T])
    assert margins.min() > 0
    assert np.linalg.norm(tr.b(t)) > 10 * np.linalg.norm(tr.x(t - 1))
    # the result is the iterate before that step
    np.testing.assert_array_equal(res.x, tr.x(t - 1))
    assert res.fun == tr.objective[t - 1]


def test_grasp_rise_message_names_no_step_size():
    # n < d logistic data on which GraSP's exact fit on T does not survive the pruning
    prob = rv.make_classification(n=500, d=1000, s_star=20, random_state=1)
    res = rv.solve(prob, method="grasp", random_state=0, ftol=0, warn=False)
    assert res.status == 2 and "rose" in res.message
    assert "GraSP has no step size" in res.message and "eta=" not in res.message
    # by default it stops while it still jumps around: stalled, and no eta is blamed
    with pytest.warns(ConvergenceWarning, match="grasp: STALLED"):
        early = rv.solve(prob, method="grasp", random_state=0)
    assert early.status == rv.Status.STALLED and "eta" not in early.message
    assert "GraSP has no step size" in early.message


@pytest.mark.parametrize("inner, factor", [("on_T", 4), ("paper", 2)])
def test_moderate_step_does_not_diverge(inner, factor):
    prob = rv.make_regression(n=200, d=300, s_star=10, random_state=0)
    eta = factor * rv.default_eta(prob, "svrgsp+", 12, inner=inner)
    res = rv.solve(prob, method="svrgsp+", s=12, eta=eta, random_state=0, warn=False,
                   inner=inner)
    # a larger step hovers more: the run may end "stalled", but it does reach the noise floor
    assert res.status in (rv.Status.CONVERGED, rv.Status.STALLED), res.message
    assert res.fun < 0.01 * res.trace.objective[0] and res.rel_error < 0.05
