"""A lean install: ``pip install .`` without extras gives the solvers, the figures and the
dashboards, and no JupyterLab (that is the ``lab`` extra).

Builds a fresh virtual environment (``python -m venv``) and installs the checkout into it
from the package index (pip's cache makes repeated runs quick); slow, and skipped (failed
under CI) when the index cannot be reached.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NETWORK_ERRORS = re.compile(
    r"NewConnectionError|Max retries exceeded|Temporary failure in name resolution|"
    r"Network is unreachable|Connection refused|Failed to establish|ProxyError|"
    r"No matching distribution found|Could not find a version"
)

CHECK = textwrap.dedent("""
    import importlib.util, json, sys
    import rgrasp_viz as rv
    from rgrasp_viz.viz import figures

    prob = rv.make_regression(n=80, d=40, s_star=4, random_state=0)
    res = rv.solve(prob, "svrgsp+", s=4, random_state=0, warn=False)
    fig = figures.convergence(res.trace)
    dash = rv.explore(prob)
    print(json.dumps({
        "rel_error": res.rel_error, "n_iter": res.trace.n_iter,
        "figure_traces": len(fig.data), "explorer": type(dash).__name__,
        "lab": importlib.util.find_spec("jupyterlab") is not None,
        "voila": importlib.util.find_spec("voila") is not None,
        "jupyter_server": importlib.util.find_spec("jupyter_server") is not None,
        "heavy_imports": sorted(m for m in ("jupyterlab", "notebook", "voila", "sklearn")
                                if m in sys.modules),
    }))
""")


def test_pip_install_without_extras_is_lean_and_works(tmp_path, unavailable):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check",
                           "--quiet", str(ROOT)], capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0 and NETWORK_ERRORS.search(proc.stdout + proc.stderr):
        unavailable("package index unreachable, cannot build a fresh venv: "
                    f"{proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    listed = subprocess.run([str(py), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True, timeout=300)
    names = {p["name"].lower().replace("_", "-") for p in json.loads(listed.stdout)}
    assert {"rgrasp-viz", "numpy", "scipy", "numba", "plotly", "ipywidgets", "anywidget",
            "filelock", "tqdm"} <= names
    assert not names & {"jupyterlab", "voila", "notebook", "jupyter-server"}, names
    # run it from elsewhere, so the checkout is not on the path: the installed copy is used
    run = subprocess.run([str(py), "-c", CHECK], capture_output=True, text=True,
                         cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["n_iter"] > 0 and 0 <= got["rel_error"] < 1
    assert got["figure_traces"] > 0 and got["explorer"]
    assert not (got["lab"] or got["voila"] or got["jupyter_server"]), got
    assert got["heavy_imports"] == [], got
