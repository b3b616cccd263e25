"""The fused full-gradient kernels (dense / CSR), their chunking and their threads.

* values: ``g = W^T f'(W x) / n (+ lam x)`` and the stored ``f'(W x)`` agree with NumPy to
  1e-12 (relative), for both losses, on one chunk and on many (the chunk thresholds are
  lowered so small data is split), including CSR data with empty rows and columns, an empty
  ``x`` and more chunks than rows would allow;
* determinism: repeated calls and every thread count give the same bits (the chunks depend
  on the shape only, partial vectors are added in chunk order), also when a chunk a worker
  claimed is computed again by the calling thread ("stolen");
* ``lam``: on dense data only the support moves; ``lam = 0`` is the plain gradient, bit for
  bit;
* the thread-count control: explicit numbers, ``"auto"``, the environment variable, errors.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from rgrasp_viz import _kernels as K
from rgrasp_viz._kernels import gradient as G
from rgrasp_viz._kernels import threads as TH
from rgrasp_viz.solvers._common import csr_arrays

LOSSES = {"squares": 0, "logistic": 1}


def _reference(W, y, x, loss, lam=0.0):
    a = W @ x
    r = a - y if loss == "squares" else -y * expit(-y * a)
    return np.asarray(W.T @ r).ravel() / W.shape[0] + lam * x, r


def _data(n, d, loss, seed, density=None, x_nnz=None):
    rng = np.random.default_rng(seed)
    if density is None:
        W = rng.standard_normal((n, d))
    else:
        W = sp.random(n, d, density=density, format="csr", random_state=rng,
                      data_rvs=rng.standard_normal)
    y = rng.standard_normal(n) if loss == "squares" else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = np.zeros(d)
    k = d // 10 if x_nnz is None else x_nnz
    x[rng.choice(d, k, replace=False)] = rng.standard_normal(k)
    return W, y, x


def _dense(W, y, x, loss, lam=0.0, n_threads=None):
    n, d = W.shape
    g, r = np.full(d, np.nan), np.full(n, np.nan)
    sup = np.flatnonzero(x)
    K.full_gradient_dense(np.ascontiguousarray(W), y, LOSSES[loss], sup, x[sup], r, g, lam=lam,
                          n_threads=n_threads)
    return g, r


def _csr(W, y, x, loss, lam=0.0, n_threads=None):
    n, d = W.shape
    g, r = np.full(d, np.nan), np.full(n, np.nan)
    K.full_gradient_csr(*csr_arrays(W), y, LOSSES[loss], x, r, g, lam=lam, n_threads=n_threads)
    return g, r


def _close(got, want, rtol=1e-12):
    scale = max(np.abs(want).max(), 1e-300)
    assert np.abs(got - want).max() <= rtol * scale


@pytest.fixture
def small_chunks(monkeypatch):
    """Split even small data into many chunks, so the threaded path runs in the tests."""
    monkeypatch.setattr(G, "PARALLEL_WORK", 64)
    monkeypatch.setattr(G, "CHUNK_WORK", 16)
    monkeypatch.setattr(G, "MAX_CHUNKS", 7)


def _sparse_with_holes(n, d, seed):
    rng = np.random.default_rng(seed)
    W = sp.random(n, d, density=0.15, format="lil", random_state=rng,
                  data_rvs=rng.standard_normal)
    for i in (0, 5, n - 1):  # empty rows, among them the first and the last
        W[i, :] = 0
    for j in (2, d - 1):  # empty columns
        W[:, j] = 0
    W = sp.csr_matrix(W)
    W.eliminate_zeros()
    return W


# -- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("chunked", [False, True], ids=["one-chunk", "chunks"])
@pytest.mark.parametrize("shape", [(61, 37), (40, 9), (200, 13)])
def test_dense_matches_numpy(request, loss, chunked, shape):
    if chunked:
        request.getfixturevalue("small_chunks")
    W, y, x = _data(*shape, loss, seed=shape[0])
    assert (G.row_chunks(shape[0], shape[1], W.size) > 1) == chunked
    g, r = _dense(W, y, x, loss, n_threads=3)
    g_ref, r_ref = _reference(W, y, x, loss)
    _close(g, g_ref)
    _close(r, r_ref)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("chunked", [False, True], ids=["one-chunk", "chunks"])
def test_csr_matches_numpy_with_empty_rows_and_columns(request, loss, chunked):
    if chunked:
        request.getfixturevalue("small_chunks")
    W = _sparse_with_holes(300, 45, seed=3)
    _, y, x = _data(300, 45, loss, seed=4, x_nnz=45)  # dense x, as the CSR kernel takes it
    assert (G.row_chunks(300, 45, W.nnz) > 1) == chunked
    g, r = _csr(W, y, x, loss, n_threads=2)
    g_ref, r_ref = _reference(W, y, x, loss)
    _close(g, g_ref)
    _close(r, r_ref)
    assert g[2] == 0.0 and g[44] == 0.0  # empty columns get exactly nothing
    assert r[0] == dict(squares=-y[0], logistic=-y[0] * 0.5)[loss]  # empty row: margin 0


@pytest.mark.parametrize("loss", LOSSES)
def test_csr_unsorted_indices(small_chunks, loss):
    W = _sparse_with_holes(40, 30, seed=5)
    data, indices, indptr = (a.copy() for a in csr_arrays(W))
    rng = np.random.default_rng(0)
    for i in range(40):  # shuffle the entries inside each row
        p = indptr[i] + rng.permutation(indptr[i + 1] - indptr[i])
        data[indptr[i]:indptr[i + 1]], indices[indptr[i]:indptr[i + 1]] = data[p], indices[p]
    _, y, x = _data(40, 30, loss, seed=6, x_nnz=30)
    g, r = np.empty(30), np.empty(40)
    K.full_gradient_csr(data, indices, indptr, y, LOSSES[loss], x, r, g)
    _close(g, _reference(W, y, x, loss)[0])


def test_empty_support_and_tiny_shapes(small_chunks):
    W, y, x = _data(3, 4, "squares", seed=1, x_nnz=0)
    g, r = _dense(W, y, x, "squares")
    np.testing.assert_allclose(r, -y, rtol=0, atol=0)
    _close(g, -W.T @ y / 3)
    g1, r1 = _dense(W[:1], y[:1], x, "squares")  # one row: one chunk whatever the thresholds
    _close(g1, -W[0] * y[0])


def test_csr_chunks_follow_the_nonzeros(small_chunks):
    """Chunks are cut at equal numbers of nonzeros (here all in the last quarter of the rows):
    a long run of empty rows is one chunk's business, no row is lost or counted twice."""
    counts = np.r_[np.zeros(150, dtype=np.int64), np.full(50, 2)]
    indptr = np.r_[0, np.cumsum(counts)]
    indices = np.tile([1, 3], 50)
    W = sp.csr_matrix((np.linspace(-2, 2, 100), indices, indptr), shape=(200, 4))
    assert G.row_chunks(200, 4, W.nnz) > 1
    y = np.linspace(-1, 1, 200)
    x = np.array([0.5, 2.0, 0.0, -1.0])
    g, r = _csr(W, y, x, "squares", n_threads=4)
    g_ref, r_ref = _reference(W, y, x, "squares")
    _close(g, g_ref)
    _close(r, r_ref)


# -- determinism ------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_bit_identical_for_every_thread_count(small_chunks, loss, sparse):
    W, y, x = _data(301, 57, loss, seed=7, density=0.2 if sparse else None)
    fn = _csr if sparse else _dense
    g0, r0 = fn(W, y, x, loss, n_threads=1)
    for t in (1, 2, 3, 4, 8):
        for _ in range(3):
            g, r = fn(W, y, x, loss, n_threads=t)
            np.testing.assert_array_equal(g, g0)
            np.testing.assert_array_equal(r, r0)


def test_default_thread_count_gives_the_same_bits(small_chunks):
    W, y, x = _data(150, 40, "logistic", seed=8)
    previous = TH.set_num_threads(1)
    try:
        g1, r1 = _dense(W, y, x, "logistic")
        TH.set_num_threads(3)
        g3, r3 = _dense(W, y, x, "logistic")
        TH.set_num_threads("auto")
        ga, ra = _dense(W, y, x, "logistic")
    finally:
        TH.set_num_threads(previous)
    np.testing.assert_array_equal(g1, g3)
    np.testing.assert_array_equal(g1, ga)
    np.testing.assert_array_equal(r1, r3)
    np.testing.assert_array_equal(r1, ra)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_stolen_and_worker_chunks_give_the_same_bits(small_chunks, monkeypatch, sparse):
    """Whoever computes a chunk (calling thread, worker, or the calling thread again after a
    worker was overtaken), the gradient and the stored derivatives are the same."""
    W, y, x = _data(120, 33, "logistic", seed=9, density=0.3 if sparse else None)
    fn = _csr if sparse else _dense
    g0, r0 = fn(W, y, x, "logistic", n_threads=1)

    def scripted(compute, n_chunks, n_threads, on_workers_done=None):
        modes = []
        for c in range(n_chunks):
            if c == 2:  # a worker half-wrote it, then the calling thread redid it
                # (at most one per worker: a worker holds one unfinished chunk at a time)
                compute(c, TH.WORKER)
                compute(c, TH.STOLEN)
                modes.append(TH.STOLEN)
            elif c % 3 != 0:  # a worker finished it
                compute(c, TH.WORKER)
                modes.append(TH.WORKER)
            else:
                compute(c, TH.MAIN)
                modes.append(TH.MAIN)
        assert modes.count(TH.WORKER) >= 1
        on_workers_done()
        return modes

    monkeypatch.setattr(G, "run_chunks", scripted)
    g, r = fn(W, y, x, "logistic", n_threads=2)
    np.testing.assert_array_equal(g, g0)
    np.testing.assert_array_equal(r, r0)


def test_run_chunks_overtakes_a_stalled_worker():
    """A worker that does not come back in time is overtaken; every chunk counts once."""
    release, claimed, worker_back = threading.Event(), threading.Event(), threading.Event()
    done = []

    def compute(c, mode):
        if mode == TH.WORKER:
            claimed.set()
            release.wait(120.0)  # a worker the OS does not schedule
            worker_back.set()
        elif mode == TH.MAIN:
            claimed.wait(120.0)  # let the worker claim a chunk first
        done.append((c, mode))

    modes = TH.run_chunks(compute, 6, 2)
    overtaken = not worker_back.is_set()  # returned while the worker was still stalled
    release.set()
    assert overtaken  # it did not wait for the stalled worker (no clock involved)
    assert modes.count(TH.STOLEN) == 1 and TH.WORKER not in modes
    assert sorted(c for c, m in done if m != TH.WORKER) == list(range(6))


def test_run_chunks_reraises_a_chunk_error():
    def compute(c, mode):
        if c == 3:
            raise ZeroDivisionError("chunk 3")

    with pytest.raises(ZeroDivisionError, match="chunk 3"):
        TH.run_chunks(compute, 5, 1)
    with pytest.raises(ZeroDivisionError, match="chunk 3"):
        TH.run_chunks(compute, 5, 2)


# -- lam --------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_ridge_term(small_chunks, loss, sparse):
    W, y, x = _data(80, 30, loss, seed=10, density=0.3 if sparse else None)
    fn = _csr if sparse else _dense
    g_plain, r_plain = fn(W, y, x, loss)
    g0, r0 = fn(W, y, x, loss, lam=0.0)
    np.testing.assert_array_equal(g0, g_plain)  # lam = 0: the plain gradient, bit for bit
    np.testing.assert_array_equal(r0, r_plain)
    g, r = fn(W, y, x, loss, lam=0.37)
    _close(g, _reference(W, y, x, loss, lam=0.37)[0])
    np.testing.assert_array_equal(r, r_plain)  # the derivatives are the loss's alone
    off = x == 0
    np.testing.assert_array_equal(g[off], g_plain[off])  # only the support moves


# -- the thread-count control -----------------------------------------------------------------


def test_set_num_threads_validates_and_returns_previous():
    previous = TH.set_num_threads(3)
    try:
        assert TH.get_num_threads() == 3
        assert TH.set_num_threads(2) == 3
        assert TH.set_num_threads("auto") == 2
        assert 1 <= TH.get_num_threads() <= max(1, os.cpu_count() or 1)
        for bad in (0, -2, "two", 1.5, "0", True):
            with pytest.raises(ValueError, match="positive integer"):
                TH.set_num_threads(bad)
    finally:
        TH.set_num_threads(previous)


def test_environment_variable_sets_the_thread_count():
    code = ("from rgrasp_viz._kernels import threads as T; "
            "print(T.get_num_threads(), T.set_num_threads(1))")
    env = dict(os.environ, RGRASP_VIZ_NUM_THREADS="5")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["5", "5"]
    env["RGRASP_VIZ_NUM_THREADS"] = "zero"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and "RGRASP_VIZ_NUM_THREADS must be a positive integer" in (
        proc.stderr)


def test_chunks_depend_on_the_shape_only():
    assert G.row_chunks(500, 1000, 500 * 1000) == 1  # the classroom problem: one thread
    c = G.row_chunks(2500, 5000, 2500 * 5000)
    assert 1 < c <= G.MAX_CHUNKS
    assert G.row_chunks(20242, 47236, 1_530_000) * 47236 * 8 <= 1_530_000  # partials <= work / 8
    assert G.row_chunks(3, 10**6, 3 * 10**6) <= 3


def test_blas_threads_limits_blas_inside_the_block_and_restores_it():
    """BlasThreads sets BLAS to the kernels' count (or a smaller limit) inside the block
    only; the exact least squares passes limit=1 below BLAS_THREADED_COLUMNS."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from rgrasp_viz._kernels.threads import BlasThreads, set_num_threads

    def blas_threads():
        return {i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"}

    before = blas_threads()
    set_num_threads(2)
    try:
        with BlasThreads():
            assert blas_threads() == {min(2, max(before))}
        with BlasThreads(1):
            assert blas_threads() == {1}
        assert blas_threads() == before
    finally:
        set_num_threads(None)
