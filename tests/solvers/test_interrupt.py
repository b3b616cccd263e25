"""Ctrl-C inside a long SVRG epoch, and the bound on J.

A long epoch runs its Numba kernel in a worker thread (``_common.run_interruptibly``); the
kernel reads a stop flag every ``STOP_EVERY`` steps.  These tests check that Ctrl-C stops a
solve promptly (a subprocess given SIGINT), that the threaded path gives the same iterates
bit for bit as the direct call, and that ``J`` is bounded at parameter checking.
"""

import _thread
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import _kernels as K
from rgrasp_viz.solvers import _common
from rgrasp_viz.solvers._params import J_CAP, J_FLOOR, check_params, max_inner_steps

ROOT = str(Path(__file__).resolve().parents[2])


# -- the bound on J -------------------------------------------------------------------------


def test_max_inner_steps_formula():
    assert max_inner_steps(10) == J_FLOOR  # small problems may still run long epochs
    assert max_inner_steps(20_242) == 100 * 20_242  # rcv1: 50 times the paper's 2n
    assert max_inner_steps(1_000_000) == J_CAP
    assert max_inner_steps(10 * J_CAP) == 20 * J_CAP  # never below the default J = 2n


def test_huge_J_is_rejected_before_any_work():
    prob = rv.make_regression(n=50, d=20, s_star=3, random_state=0)
    limit = max_inner_steps(50)
    assert check_params(prob, "svrgsp+", s=3, J=limit).J == limit
    with pytest.raises(ValueError, match=rf"J must be <= {limit} for n = 50 samples.*got 10+"):
        check_params(prob, "svrgsp+", s=3, J=10**12)
    with pytest.raises(ValueError, match="J must be <="):
        rv.solve(prob, method="svrght", s=3, J=limit + 1)


# -- the stop flag and the worker thread ---------------------------------------------------


def _epoch_args(dense):
    prob = rv.make_classification(n=40, d=30, s_star=3, sparse_density=None if dense else 0.3,
                                  random_state=1)
    W = prob.W
    X = np.ascontiguousarray(W) if dense else _common.csr_arrays(W)
    ws = _common.Workspace(prob.d, 600, 0)
    z = np.zeros(prob.d)
    g = np.full(prob.d, 0.01)
    snap = np.zeros(prob.n)
    idx = np.random.default_rng(0).integers(0, prob.n, size=600)
    common = (prob.y, 1, z, g, snap, idx, 0.05, 0.0, 0, 3, ws.keep_idx, ws.prev_idx, 0,
              ws.cand, ws.mags, ws.vbuf, ws.ev_step, ws.ev_in, ws.ev_out, True, 0, ws.rec_loss,
              ws.snap_buffer(prob.d, False), ws.stop, _common.NO_FORCED)
    return (X, *common) if dense else (*X, *common), ws


@pytest.mark.parametrize("dense", [True, False])
def test_kernel_returns_when_the_stop_flag_is_set(dense):
    args, ws = _epoch_args(dense)
    kernel = K.svrg_epoch_dense if dense else K.svrg_epoch_csr
    steps, _, _, _, status = kernel(*args)
    assert (int(steps), int(status)) == (600, 0)
    args, ws = _epoch_args(dense)
    ws.stop[0] = 1
    steps, _, _, _, status = kernel(*args)
    assert (int(steps), int(status)) == (0, 2)  # stopped at the first read of the flag


def test_run_interruptibly_sets_the_flag_and_reraises(monkeypatch):
    """Ctrl-C (simulated with _thread.interrupt_main) while waiting for a worker: the flag is
    set, the worker returns, and KeyboardInterrupt reaches the caller."""
    stop = np.zeros(1, dtype=np.int64)
    seen = []

    def kernel():  # stands in for a nogil kernel that polls its flag
        while stop[0] == 0:
            time.sleep(0.01)
        seen.append(threading.current_thread().name)
        return 0, 0, 0, 0, 2

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _common.run_interruptibly(kernel, (), stop, work=_common.EPOCH_THREAD_WORK)
    finally:
        timer.cancel()
    assert seen == ["rgrasp_viz-epoch"]  # ran in the worker and ended because of the flag
    assert stop[0] == 0  # reset for the next epoch
    assert not any(t.name == "rgrasp_viz-epoch" for t in threading.enumerate())


def test_run_interruptibly_passes_worker_errors_on():
    def kernel():
        raise ZeroDivisionError("inside the kernel")

    with pytest.raises(ZeroDivisionError, match="inside the kernel"):
        _common.run_interruptibly(kernel, (), np.zeros(1, dtype=np.int64), work=10**12)


def _fingerprint(res):
    """The iterate and every recorded array but wall-clock times."""
    arrays = sorted((k, v) for k, v in res.trace.arrays.items() if "time" not in k)
    assert len(arrays) > 5
    return [res.x, *(np.asarray(v) for _, v in arrays)]


@pytest.mark.parametrize(("method", "inner", "sparse"), [
    ("svrgsp+", "paper", False),
    ("svrgsp+", "on_T", True),
    ("svrgsp", "paper", True),
    ("svrght", "paper", False),
])
def test_threaded_epochs_give_bit_identical_traces(monkeypatch, method, inner, sparse):
    prob = rv.make_classification(n=120, d=60, s_star=5, signal=3.0,
                                  sparse_density=0.3 if sparse else None, random_state=4)
    kw = dict(method=method, s=6, random_state=7, max_iter=6, record_iterates=True,
              warn=False)
    if method != "svrght":
        kw["inner"] = inner
    direct = rv.solve(prob, **kw)
    calls = []
    real = _common.run_interruptibly

    def spy(kernel, args, stop, work):
        calls.append(work)
        return real(kernel, args, stop, work)

    monkeypatch.setattr(_common, "EPOCH_THREAD_WORK", 0)  # every epoch in the worker thread
    monkeypatch.setattr(_common, "run_interruptibly", spy)
    threaded = rv.solve(prob, **kw)
    assert calls  # the threaded path was taken
    a, b = _fingerprint(direct), _fingerprint(threaded)
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
        assert u.tobytes() == v.tobytes()  # bit for bit (NaN patterns and signed zeros too)


# -- Ctrl-C in a subprocess -----------------------------------------------------------------

_LONG_SOLVE = textwrap.dedent("""
    import sys, time
    import numpy as np
    import rgrasp_viz as rv
    from rgrasp_viz.solvers import _params as params
    params.J_FLOOR = 10**6  # allow a minute-long epoch on 10 samples
    rng = np.random.default_rng(0)
    warm = rv.make_regression(n=20, d=30, s_star=3, random_state=0)
    rv.solve(warm, method="svrght", s=3, max_iter=2, warn=False)  # compiled before the clock
    W = rng.standard_normal((10, 200_000))
    prob = rv.Problem(W, W[:, :5].sum(axis=1))
    print("solving", flush=True)
    t0 = time.perf_counter()
    try:
        # one SVRGHT epoch: 10^6 steps, each thresholding 200,000 coordinates (about 50 s)
        rv.solve(prob, method="svrght", s=5, J=10**6, eta=1e-8, max_iter=50, warn=False)
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - t0:.1f} s", flush=True)
        raise
    print("finished", flush=True)
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform.startswith("win"), reason="SIGINT to a child process")
def test_ctrl_c_stops_a_long_epoch():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", _LONG_SOLVE], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        line = proc.stdout.readline()  # blocks until the warm-up (and compilation) is done
        assert line.strip() == "solving", proc.stderr.read()
        time.sleep(1.5)
        assert proc.poll() is None, "the solve ended before Ctrl-C: make it longer"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)  # liveness: without the stop flag, the
        # epoch runs to its end (about a minute on an idle machine)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0
    assert "interrupted after" in out and "finished" not in out
    assert "KeyboardInterrupt" in err
