"""The ``reproduce`` command: quick runs end to end, outputs, claims logic, data fallbacks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import Trace, cli, datasets
from rgrasp_viz import reproduce as R
from rgrasp_viz.trace import TraceBuilder

pytest.importorskip("plotly")


# -- hand-built traces ----------------------------------------------------------------------


def fake_trace(method, passes, objective, time=None, rel_error=None, thresholds=None):
    """A real :class:`Trace` with the given per-iteration curves (d = 4)."""
    k = len(passes)
    time = np.linspace(0, 1, k) if time is None else time
    truth = None if rel_error is None else np.array([1.0, 0, 0, 0])
    thresholds = np.arange(k) if thresholds is None else thresholds
    b = TraceBuilder(4, truth, False, 0)
    for i in range(k):
        b.add_iteration(iteration=i, passes=float(passes[i]), time=float(time[i]),
                        objective=float(objective[i]),
                        rel_error=math.nan if rel_error is None else float(rel_error[i]),
                        x=np.array([1.0, 0, 0, 0]), n_thresholds=int(thresholds[i]))
    return b.finish({"method": method, "n": 10, "d": 4})


def geometric(rate, k=11, start=1.0, floor=0.0):
    """Objective curve ``floor + start * rate**t``."""
    return floor + start * rate ** np.arange(k)


def by_id(rows):
    return {r["id"]: r for r in rows}


def six(fast, slow, k=11):
    """All six methods; ``fast`` converge at rate 1e-2 per iteration, the others at 0.5."""
    passes = np.arange(k, dtype=float) * 3
    return {m: fake_trace(m, passes, geometric(1e-2 if m in fast else 0.5, k),
                          time=passes * (0.1 if m in fast else 1.0) * (0.5 if m == "svrgsp+"
                                                                       else 1.0))
            for m in slow + fast}


def test_reach_interpolates_log_linearly():
    assert R.reach([0, 1, 2], [1.0, 1e-2, 1e-6], 1e-4) == pytest.approx(1.5)
    assert R.reach([0, 1, 2], [1.0, 1e-2, 1e-6], 1e-6) == pytest.approx(2.0)
    assert R.reach([5, 6], [1e-9, 1e-10], 1e-4) == 5.0
    assert R.reach([0, 1], [1.0, 0.5], 1e-4) == math.inf
    assert R.reach([0, 1, 2], [1.0, np.nan, 1e-8], 1e-4) == 2.0  # no log through a NaN


def test_claims_hold_when_ours_are_faster():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    rows = by_id(R.evaluate_claims(traces))
    assert [r["id"] for r in R.evaluate_claims(traces)] == [c[0] for c in R.CLAIMS]
    for cid in ("P1", "P2", "T1", "T2", "A1", "A2"):
        assert rows[cid]["verdict"] == "yes", rows[cid]
    # target gap 1e-4 * (1 - 0): rate 1e-2 crosses at t = 2 -> 6 passes, 0.6 s
    assert "SVRGSP 6 passes" in rows["P1"]["numbers"]
    assert "SVRGSP 0.6 s" in rows["T1"]["numbers"]
    assert "SVRGSP+ 0.3 s" in rows["T2"]["numbers"]
    # SVRGSP+ and SVRGSP have identical curves: "faster" is strict, so no
    assert rows["P3"]["verdict"] == "no" and "identical" in rows["P3"]["numbers"]
    assert rows["T3"]["verdict"] == "no" and "identical" in rows["T3"]["numbers"]
    # no ground truth in these traces
    assert rows["E1"]["verdict"] == "n/a"


def test_claims_fail_when_svrght_is_faster():
    traces = six(fast=["svrght"], slow=["fght", "grasp", "sght", "svrgsp", "svrgsp+"])
    rows = by_id(R.evaluate_claims(traces))
    for cid in ("P1", "P2", "T1", "T2", "A1", "A2", "V1"):
        assert rows[cid]["verdict"] == "no", rows[cid]


def test_never_reaching_is_slower_than_reaching():
    passes = np.arange(6, dtype=float)
    flat = np.full(6, 0.5)
    flat[0] = 1.0
    traces = {"svrgsp": fake_trace("svrgsp", passes, geometric(1e-3, 6)),
              "svrght": fake_trace("svrght", passes, flat)}
    rows = by_id(R.evaluate_claims(traces))
    assert rows["P1"]["verdict"] == "yes"
    assert "SVRGHT never" in rows["P1"]["numbers"]
    assert rows["P2"]["verdict"] == "n/a"  # SVRGSP+ missing
    traces = {"svrgsp": fake_trace("svrgsp", passes, flat),
              "svrght": fake_trace("svrght", passes, flat)}
    assert by_id(R.evaluate_claims(traces))["P1"]["verdict"] == "no"  # neither reaches


def test_error_claim_better_solutions_and_cost():
    k = 8
    passes = np.arange(k, dtype=float)
    fast_err, slow_err = geometric(0.1, k), geometric(0.9, k)
    traces = {}
    for m in R.METHODS:
        ours = m in R.OURS
        obj = geometric(0.1 if ours else 0.9, k, floor=0.0 if m in R.VR_METHODS else 1e-3)
        traces[m] = fake_trace(m, passes, obj, time=passes * (1.0 if m != "grasp" else 5.0),
                               rel_error=fast_err if ours else slow_err,
                               thresholds=np.arange(k) * (100 if m == "svrght" else 1))
    rows = by_id(R.evaluate_claims(traces))
    assert rows["E1"]["verdict"] == "yes"
    assert rows["V2"]["verdict"] == "yes"  # VR methods go below the others' floor
    assert rows["C2"]["verdict"] == "yes"  # GraSP: 5 s per pass, FG-HT 1 s per pass
    assert rows["C1"]["verdict"] == "no"  # equal seconds per pass: not cheaper
    assert "100 thresholdings/iter" in rows["C1"]["numbers"]
    # the error target is 2 x the best error reached by any run
    best = min(float(t.rel_error.min()) for t in traces.values())
    assert f"{R.TARGET_ERR_FACTOR * best:.3e}" in R.targets_text(traces)


def test_format_claims_one_row_per_claim():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    rows = R.evaluate_claims(traces)
    md = R.format_claims(rows, markdown=True).splitlines()
    assert len(md) == 2 + len(R.CLAIMS)
    text = R.format_claims(rows).splitlines()
    assert sum(line.startswith("[") for line in text) == len(R.CLAIMS)


# -- a quick synthetic run, end to end ------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1")
    return R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=30)


def test_quick_run_writes_everything(quick_run):
    out = quick_run.out
    for name in ("passes.html", "time.html", "claims.md", "run.json"):
        assert (out / name).is_file(), name
    npz = sorted(p.name for p in (out / "traces").glob("*.npz"))
    assert npz == sorted(m.replace("+", "plus") + ".npz" for m in R.METHODS)
    html = (out / "passes.html").read_text()
    assert "plotly" in html and "SVRGSP+" in html and "Figure 1(a)" in html
    settings = json.loads((out / "run.json").read_text())
    assert settings["s"] == 60 and settings["quick"] is True
    assert settings["budget_passes"] == 30
    assert settings["n"] == 500 and settings["d"] == 1000
    assert [r["method"] for r in settings["methods"]] == list(R.METHODS)
    assert "PNG export skipped (--no-png)" in quick_run.notes


def test_quick_run_settings(quick_run):
    prob, info = R.build_problem("fig1-setting1", quick=True, progress=False)
    for m, tr in quick_run.traces.items():
        assert tr.meta["s"] == 60 and tr.meta["J"] == 1000
        assert tr.meta["m"] == 6 and tr.meta["random_state"] == 0
        assert tr.support(0).size == 0  # x0 = 0
        assert tr.passes[-1] >= 30 or tr.meta["status"] == 0, m
        assert tr.passes[-2] < 30, m  # stops at the first iteration past the budget
        factor = R.tuned_factor("fig1-setting1", True, m)[0] if m != "grasp" else 1.0
        assert tr.meta["eta"] == pytest.approx(
            factor * rv.default_eta(prob, m, info.s, inner=tr.meta["inner"]))


def test_traces_load_back_equal(quick_run):
    for m, tr in quick_run.traces.items():
        back = Trace.load(quick_run.out / "traces" / f"{m.replace('+', 'plus')}.npz")
        assert back.equals(tr), m
        np.testing.assert_array_equal(back.time, tr.time)


def test_claims_md_matches_traces(quick_run):
    md = (quick_run.out / "claims.md").read_text()
    table = [line for line in md.splitlines() if line.startswith("| ") and
             line.split("|")[1].strip() in {c[0] for c in R.CLAIMS}]
    assert len(table) == len(R.CLAIMS)
    loaded = {m: Trace.load(quick_run.out / "traces" / f"{m.replace('+', 'plus')}.npz")
              for m in R.METHODS}
    again = R.evaluate_claims(loaded)
    assert [r["verdict"] for r in again] == [r["verdict"] for r in quick_run.claims]
    for line, row in zip(table, again, strict=True):
        assert f"**{row['verdict']}**" in line
    assert all(r["verdict"] in ("yes", "no") for r in again)  # synthetic: all judged


# -- real data: a tiny local file, the stand-in, the missing-file message ---------------------


def _tiny_spec(monkeypatch, name, n, d):
    spec = datasets.RemoteDataset(
        name=name, url="http://127.0.0.1:9/unused", filename=datasets.DATASETS[name].filename,
        n_samples=n, n_features=d)
    monkeypatch.setitem(datasets.DATASETS, name, spec)
    return spec


def _write_svmlight(path, n, d, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(d)
    lines = []
    for _ in range(n):
        cols = np.sort(rng.choice(d, size=12, replace=False))
        vals = rng.random(12)
        label = 1 if vals @ v[cols] >= 0 else -1
        feats = " ".join(f"{c + 1}:{x:.4f}" for c, x in zip(cols, vals, strict=True))
        lines.append(f"{label} {feats}")
    path.write_text("\n".join(lines) + "\n")


def test_quick_real_data_from_a_local_file(tmp_path, monkeypatch, capsys):
    spec = _tiny_spec(monkeypatch, "rcv1", 300, 400)
    data = tmp_path / "data"
    data.mkdir()
    _write_svmlight(data / spec.decompressed_filename, 300, 400)
    out = tmp_path / "out"
    code = cli.main(["reproduce", "fig3-rcv1", "--quick", "--no-png", "--data-dir",
                     str(data), "--out", str(out), "--budget", "12"])
    assert code == 0
    printed = capsys.readouterr()
    assert "rcv1, quick: 200 random of 300 rows, the 100 most frequent" in printed.out
    assert "STAND-IN" not in printed.out
    assert sum(line.startswith("[") for line in printed.out.splitlines()) == len(R.CLAIMS)
    assert printed.err.count("/6] ") == 6  # one progress line per method
    settings = json.loads((out / "run.json").read_text())
    assert settings["loss"] == "squares" and settings["s"] == 10
    assert not settings["stand_in"]
    assert "| E1 |" in (out / "claims.md").read_text()
    assert len(list((out / "traces").glob("*.npz"))) == 6


def test_quick_real_data_stand_in_when_missing(tmp_path, monkeypatch):
    _tiny_spec(monkeypatch, "rcv1", 2000, 3000)
    rep = R.run("fig2-rcv1", quick=True, out=tmp_path / "out", data_dir=tmp_path / "empty",
                png=False, progress=False, budget=12)
    assert rep.info.stand_in
    prob, info = R.build_problem("fig2-rcv1", quick=True, data_dir=tmp_path / "empty",
                                 progress=False)
    assert (prob.n, prob.d, info.s) == (200, 300, 20)
    assert prob.is_sparse and prob.loss == "logistic" and prob.x_true is None
    assert set(np.unique(prob.y)) == {-1.0, 1.0}
    per_row = prob.nnz / prob.n
    assert per_row == pytest.approx(R.PAPER_DENSITY["rcv1"] * 3000, rel=0.2)
    md = (tmp_path / "out" / "claims.md").read_text()
    assert "SYNTHETIC STAND-IN, NOT THE REAL DATA" in md
    assert "STAND-IN" in (tmp_path / "out" / "passes.html").read_text()
    assert json.loads((tmp_path / "out" / "run.json").read_text())["stand_in"] is True


def test_full_run_without_the_file_says_where_to_put_it(tmp_path, capsys):
    code = cli.main(["reproduce", "fig2-realsim", "--no-download", "--data-dir",
                     str(tmp_path), "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "save it as" in err and str(tmp_path / "real-sim.bz2") in err
    assert not (tmp_path / "out").exists()


def test_unknown_experiment_is_rejected():
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "fig9"])
    with pytest.raises(ValueError, match="unknown experiment"):
        R.build_problem("fig9")


# -- step sizes -----------------------------------------------------------------------------


def test_tune_picks_the_fastest_non_diverged_factor():
    factors, rows = R.tune("fig1-setting1", quick=True, methods=("fght",),
                           grid=(0.5, 1.0, 2.0, 8.0), budget=20, progress=False)
    ok = [r for r in rows if r["status"] == "ok"]
    assert any(r["status"] == "diverged" for r in rows)  # 8 x the default step diverges
    best = min(ok, key=lambda r: (r["passes"], r["best_gap"]))
    assert factors == {"fght": best["factor"]}


def test_tuned_factor_fallbacks():
    f, src = R.tuned_factor("fig1-setting1", True, "svrgsp")
    assert f in R.TUNE_GRID and "seeds 1000-1001" in src
    f_full, _ = R.tuned_factor("fig1-setting1", True, "svrgsp", inner="full")
    assert f_full in R.TUNE_GRID
    f, src = R.tuned_factor("fig2-rcv1", False, "svrgsp")  # no full-scale entry
    assert f == R.TUNED_FACTORS[("fig2-rcv1", True)]["svrgsp"]
    assert "stand-in" in src and "quick-scale factor used" in src
    assert R.tuned_factor("fig2-rcv1", True, "grasp")[0] == 1.0  # GraSP: no step size
