"""Without Numba (e.g. JupyterLite) the kernels run as plain Python with identical results."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import _kernels

ROOT = Path(__file__).resolve().parents[2]
CASES = [("svrgsp+", "restricted"), ("svrgsp+", "full"), ("svrght", "restricted")]
SPARSE = [False, True]

CHILD = textwrap.dedent(
    """
    import json
    import sys

    sys.modules["numba"] = None  # any `import numba` now raises ImportError

    import numpy as np
    import scipy.sparse as sp

    import rgrasp_viz as rv
    from rgrasp_viz import _kernels

    out_dir = sys.argv[1]
    cases = json.loads(sys.argv[2])
    report = {
        "have_numba": bool(_kernels.HAVE_NUMBA),
        "numba_version": _kernels.NUMBA_VERSION,
        "numba_loaded": sys.modules.get("numba") is not None,
        "kernel_type": type(_kernels.svrg_epoch_dense).__name__,
    }
    prob = rv.make_regression(n=40, d=30, s_star=3, random_state=0)
    for k, (method, inner, sparse) in enumerate(cases):
        p = rv.Problem(sp.csr_matrix(prob.W), prob.y, x_true=prob.x_true) if sparse else prob
        res = rv.solve(p, method=method, s=4, inner=inner, random_state=0, max_iter=2,
                       tol=0.0, warn=False, record_iterates=True)
        res.trace.save(f"{out_dir}/run{k}.npz")
    report["numba_loaded_after"] = sys.modules.get("numba") is not None
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def child_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("nonumba")
    cases = [(m, inner, sparse) for m, inner in CASES for sparse in SPARSE]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(out), json.dumps(cases)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    traces = {tuple(c): rv.Trace.load(out / f"run{k}.npz") for k, c in enumerate(cases)}
    return report, traces


def parent_run(method, inner, sparse):
    prob = rv.make_regression(n=40, d=30, s_star=3, random_state=0)
    if sparse:
        import scipy.sparse as sp

        prob = rv.Problem(sp.csr_matrix(prob.W), prob.y, x_true=prob.x_true)
    return rv.solve(prob, method=method, s=4, inner=inner, random_state=0, max_iter=2,
                    tol=0.0, warn=False, record_iterates=True)


def test_numba_is_really_absent(child_runs):
    report, _ = child_runs
    assert report["have_numba"] is False
    assert report["numba_version"] is None
    assert report["numba_loaded"] is False and report["numba_loaded_after"] is False
    # the kernels are the undecorated Python functions
    assert report["kernel_type"] == "function"


def test_parent_uses_numba():
    assert _kernels.HAVE_NUMBA is True


@pytest.mark.parametrize("sparse", SPARSE, ids=["dense", "csr"])
@pytest.mark.parametrize(("method", "inner"), CASES)
def test_fallback_matches_numba(child_runs, method, inner, sparse):
    _, traces = child_runs
    py = traces[(method, inner, sparse)]
    jit = parent_run(method, inner, sparse).trace
    assert py.n_iter == jit.n_iter == 2
    for t in range(len(jit)):
        np.testing.assert_allclose(py.x(t), jit.x(t), rtol=0, atol=1e-10)
    np.testing.assert_allclose(py.objective, jit.objective, rtol=1e-10, atol=0)
    np.testing.assert_allclose(py.ck_x, jit.ck_x, rtol=0, atol=1e-10)
    np.testing.assert_allclose(py.ck_proxy, jit.ck_proxy, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(py.passes, jit.passes, rtol=0, atol=0)
    # same thresholding decisions
    for k in ("ev_iter", "ev_step", "ev_kind", "ev_in", "ev_out", "n_thresholds",
              "support_idx", "support_ptr"):
        np.testing.assert_array_equal(py.arrays[k], jit.arrays[k], err_msg=k)
    assert py.meta["versions"]["numba"] is None
    assert jit.meta["versions"]["numba"] is not None
