"""The benchopt benchmark (benchmarks/benchopt) runs offline on a tiny configuration and
writes a result with a curve for each of our methods and the installed peers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "benchopt"
OURS = ("fght", "sght", "svrght", "grasp", "svrgsp", "svrgsp+")


def test_benchopt_benchmark_runs_on_a_tiny_configuration(tmp_path, unavailable):
    try:
        import benchopt  # noqa: F401
        import pandas as pd
    except ImportError:
        unavailable("benchopt is not installed (it is in the `test` and `bench` extras)")
    out = tmp_path / "result"
    before = sorted(BENCH.rglob("*"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.run(
        [sys.executable, "-m", "benchopt", "run", str(BENCH), "--no-plot", "--no-display",
         "-n", "4", "-r", "1", "--no-cache", "--timeout", "300",
         "-d", "synthetic[setting=1,size=tiny]", "-d", "breast_cancer[loss=logistic]",
         "--output", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    df = pd.read_parquet(out.with_suffix(".parquet"))
    syn = df[df.dataset_name.str.startswith("synthetic")]
    real = df[df.dataset_name.str.startswith("breast_cancer")]
    for part in (syn, real):
        methods = set(part.loc[part.solver_name.str.startswith("rgrasp_viz"),
                               "p_solver_method"])
        assert methods == set(OURS)
        assert np.isfinite(part.objective_value).all()
        assert np.isfinite(part.objective_relative_gap).all()
        # the relative gap starts at 1 (x0 = 0) and our methods go below it
        for m in OURS:
            gaps = part.loc[part.p_solver_method == m, "objective_relative_gap"]
            assert gaps.iloc[0] == pytest.approx(1.0) and gaps.min() < 0.5, m
    # the estimation error is known on synthetic data only
    assert np.isfinite(syn.objective_estimation_error).all()
    assert real.objective_estimation_error.isna().all()
    assert (syn.objective_support_size <= 6).all()  # s = 1.2 s* = 6 on the tiny setting
    assert (real.objective_support_size <= 5).all()
    # the installed peers ran; OMP (least squares only) on the synthetic data only
    import importlib.util

    if importlib.util.find_spec("sklearn") is not None:
        assert "sklearn-OMP" in set(syn.solver_name)
        assert "sklearn-OMP" not in set(real.solver_name)
    if importlib.util.find_spec("abess") is not None:
        assert "abess" in set(syn.solver_name) and "abess" in set(real.solver_name)
    # --no-cache and --output elsewhere: nothing written into the checkout
    assert sorted(p for p in BENCH.rglob("*") if "__pycache__" not in p.parts) == [
        p for p in before if "__pycache__" not in p.parts]
