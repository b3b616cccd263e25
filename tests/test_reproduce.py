"""The ``reproduce`` package: claims logic, F*'s reference, quick runs end to end, data
fallbacks, step sizes.  Output-folder safety: ``test_reproduce_output.py``; the command
line's argument checks: ``test_cli.py``."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import Trace, cli, datasets
from rgrasp_viz import reproduce as R
from rgrasp_viz.solvers.registry import get_method, method_label, method_names
from rgrasp_viz.trace import TraceBuilder

pytest.importorskip("plotly")


# -- hand-built traces ----------------------------------------------------------------------


def fake_trace(method, passes, objective, time=None, rel_error=None, thresholds=None,
               supports=None, inner=None):
    """A real :class:`Trace` with the given per-iteration curves (d = 4)."""
    k = len(passes)
    time = np.linspace(0, 1, k) if time is None else time
    truth = None if rel_error is None else np.array([1.0, 0, 0, 0])
    thresholds = np.arange(k) if thresholds is None else thresholds
    b = TraceBuilder(4, truth, False, 0)
    for i in range(k):
        x = np.zeros(4)
        x[[0] if supports is None else supports[i]] = 1.0
        b.add_iteration(iteration=i, passes=float(passes[i]), time=float(time[i]),
                        objective=float(objective[i]),
                        rel_error=math.nan if rel_error is None else float(rel_error[i]),
                        x=x, n_thresholds=int(thresholds[i]))
    meta = {"method": method, "n": 10, "d": 4}
    if inner is not None:
        meta["inner"] = inner
    return b.finish(meta)


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


def test_claim_groups_come_from_the_registry():
    assert R.METHODS == method_names(paper_only=True)
    assert set(R.OURS) == {m for m in R.METHODS if get_method(m).readings}
    assert set(R.OURS) | set(R.BASELINES) == set(R.METHODS)
    assert set(R.VR_METHODS) | set(R.OTHER_METHODS) == set(R.METHODS)
    assert not set(R.VR_METHODS) & set(R.OTHER_METHODS)


def test_identical_iterates_need_same_supports_not_equal_floats():
    passes = np.arange(6, dtype=float)
    obj = geometric(0.1, 6)
    a = fake_trace("svrgsp", passes, obj)
    b = fake_trace("svrgsp+", passes, obj * (1 + 1e-14))  # lazy updates: 1e-16-level noise
    assert not np.array_equal(a.objective, b.objective)
    assert R.same_iterates(a, b)
    rows = by_id(R.evaluate_claims({"svrgsp": a, "svrgsp+": b}))
    assert rows["P3"]["verdict"] == "no" and "identical iterates" in rows["P3"]["numbers"]
    # same objectives, one support differs at one iteration: not the same iterates
    sup = [[0]] * 6
    c = fake_trace("svrgsp+", passes, obj, supports=sup[:3] + [[1]] + sup[4:])
    assert not R.same_iterates(a, c)
    # same supports, objectives further apart than the tolerance: not the same either
    d = fake_trace("svrgsp+", passes, obj * (1 + 1e-6))
    assert not R.same_iterates(a, d)
    assert "identical" not in by_id(R.evaluate_claims({"svrgsp": a, "svrgsp+": d}))["P3"][
        "numbers"]


def test_claims_name_our_variant_as_ours():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    on_t = {m: fake_trace(m, t.passes, t.objective, t.time, inner="on_T")
            for m, t in traces.items()}
    rows = by_id(R.evaluate_claims(on_t))
    assert rows["P1"]["claim"].startswith("SVRGSP (on T) reaches")
    assert "SVRGSP+ (on T)" in rows["P3"]["claim"] and "SVRGSP (on T)" in rows["P3"]["numbers"]
    assert "FG-HT (on T)" not in rows["A1"]["claim"]  # baselines have one reading
    paper = by_id(R.evaluate_claims({m: fake_trace(m, t.passes, t.objective, t.time,
                                                   inner="paper")
                                     for m, t in traces.items()}))
    assert "(on T)" not in paper["P1"]["claim"] + paper["P1"]["numbers"]


def test_given_reference_sets_the_targets():
    passes = np.arange(11, dtype=float)
    traces = {"svrgsp": fake_trace("svrgsp", passes, geometric(1e-2, floor=1e-3)),
              "svrght": fake_trace("svrght", passes, geometric(0.5, floor=1e-3))}
    # the runs' own best as F*: SVRGSP reaches the target by definition
    assert by_id(R.evaluate_claims(traces))["P1"]["verdict"] == "yes"
    # a reference 2e-3 below both floors: the target (1e-4 * F(x0) - F*) is out of reach
    ref = R.Reference(-1e-3, "a hand-made reference")
    rows = by_id(R.evaluate_claims(traces, reference=ref))
    assert rows["P1"]["verdict"] == "no"
    assert "SVRGSP never" in rows["P1"]["numbers"]
    text = R.targets_text(traces, ref)
    assert "from a hand-made reference" in text
    assert f"= {1e-4 * (1 + 1e-3 + 1e-3):.4g}" in text  # the target in absolute terms


# -- a quick synthetic run, end to end ------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1") / "run"
    return R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=30)


def _load_all(out):
    return {m: Trace.load(out / "traces" / f"{m.replace('+', 'plus')}.npz") for m in R.METHODS}


def test_quick_run_writes_everything(quick_run):
    out = quick_run.out
    for name in ("passes.html", "time.html", "claims.md", "run.json"):
        assert (out / name).is_file(), name
    npz = sorted(p.name for p in (out / "traces").glob("*.npz"))
    assert npz == sorted(m.replace("+", "plus") + ".npz" for m in R.METHODS)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["passes.html", "time.html", "claims.md", "run.json", "traces"])
    assert len(quick_run.files) == 10 and all(p.is_file() for p in quick_run.files)
    html = (out / "passes.html").read_text()
    assert "plotly" in html and "SVRGSP+" in html and "Figure 1(a)" in html
    assert "(on T)" not in html  # the paper's reading ran
    settings = json.loads((out / "run.json").read_text())
    assert settings["s"] == 60 and settings["quick"] is True
    assert settings["budget_passes"] == 30
    assert settings["n"] == 500 and settings["d"] == 1000
    assert settings["inner"] == "paper" and "paper's Algorithm 2" in settings["inner_is"]
    assert [r["method"] for r in settings["methods"]] == list(R.METHODS)
    assert "PNG export skipped (--no-png)" in quick_run.notes
    # nothing left beside the output folder but its (released) lock file: no temporary folder
    assert sorted(p.name for p in out.parent.iterdir()) == [".run.lock", "run"]


def test_quick_run_settings(quick_run):
    prob, info = R.build_problem("fig1-setting1", quick=True, progress=False)
    for m, tr in quick_run.traces.items():
        assert tr.meta["s"] == 60 and tr.meta["J"] == 1000
        assert tr.meta["m"] == 6 and tr.meta["random_state"] == 0
        assert tr.meta["inner"] == "paper"  # passed explicitly, whatever solve's default
        assert tr.support(0).size == 0  # x0 = 0
        assert tr.passes[-1] >= 30 or tr.meta["status"] == 0, m
        assert tr.passes[-2] < 30, m  # stops at the first iteration past the budget
        factor = R.tuned_factor("fig1-setting1", True, m, "paper")[0] \
            if get_method(m).has_step else 1.0
        assert tr.meta["eta"] == pytest.approx(
            factor * rv.default_eta(prob, m, info.s, inner="paper"))


def test_traces_load_back_equal(quick_run):
    for m, tr in _load_all(quick_run.out).items():
        assert tr.equals(quick_run.traces[m]), m
        np.testing.assert_array_equal(tr.time, quick_run.traces[m].time)


def test_fstar_comes_from_a_reference_below_every_run(quick_run):
    ref = quick_run.reference
    prob, _ = R.build_problem("fig1-setting1", quick=True, progress=False)
    for m, tr in quick_run.traces.items():
        best = float(np.nanmin(tr.objective))
        assert ref.fstar <= best, m
        # least squares: at most the exact fit on the support of the run's best iterate
        # (NumPy reference: lstsq on those columns)
        k = int(np.nanargmin(tr.objective))
        supp = tr.support(k)
        coef = np.linalg.lstsq(prob.W[:, supp], prob.y, rcond=None)[0]
        fit = 0.5 * np.mean((prob.W[:, supp] @ coef - prob.y) ** 2)
        assert ref.fstar <= fit * (1 + 1e-12), m
    assert ref.fstar < min(float(np.nanmin(t.objective)) for t in quick_run.traces.values())
    assert ref.fstar == min(c["objective"] for c in ref.candidates)
    assert any("10x the budget" in c["source"] for c in ref.candidates)
    assert ref.run["budget_passes"] == 10 * 30 and ref.run["tol"] == 0.0
    assert ref.run["method"] in R.METHODS
    # the oracle error: least-squares fit on the true support
    true = np.flatnonzero(prob.x_true)
    coef = np.linalg.lstsq(prob.W[:, true], prob.y, rcond=None)[0]
    x = np.zeros(prob.d)
    x[true] = coef
    assert ref.err_ref == pytest.approx(np.linalg.norm(x - prob.x_true)
                                        / np.linalg.norm(prob.x_true))
    # recorded with its source in run.json and claims.md
    settings = json.loads((quick_run.out / "run.json").read_text())
    assert settings["fstar"] == ref.fstar and settings["fstar_source"] == ref.source
    assert settings["reference"]["candidates"] == ref.candidates
    assert settings["fstar_below_every_run_by"] > 0
    md = (quick_run.out / "claims.md").read_text()
    assert f"F* = {ref.fstar:.12g}, from {ref.source}." in md
    assert "i.e. F <= " in md  # the target in absolute terms


def test_claims_md_matches_traces(quick_run):
    md = (quick_run.out / "claims.md").read_text()
    table = [line for line in md.splitlines() if line.startswith("| ") and
             line.split("|")[1].strip() in {c[0] for c in R.CLAIMS}]
    assert len(table) == len(R.CLAIMS)
    saved = json.loads((quick_run.out / "run.json").read_text())["reference"]
    ref = R.Reference(saved["fstar"], saved["source"], saved["candidates"],
                      saved["error_reference"], saved["error_source"])
    again = R.evaluate_claims(_load_all(quick_run.out), reference=ref)
    assert [r["verdict"] for r in again] == [r["verdict"] for r in quick_run.claims]
    for line, row in zip(table, again, strict=True):
        assert f"**{row['verdict']}**" in line
    assert all(r["verdict"] in ("yes", "no") for r in again)  # synthetic: all judged


def test_three_pass_budget_reaches_no_target(tmp_path):
    rep = R.run("fig1-setting1", quick=True, out=tmp_path / "out", png=False, progress=False,
                budget=3)
    rows = by_id(rep.claims)
    for cid in ("P1", "P2", "T1", "T2", "P3", "T3", "A1", "A2", "E1", "V1"):
        assert rows[cid]["verdict"] == "no", rows[cid]
    for m, tr in rep.traces.items():
        gap = np.asarray(tr.objective) - rep.reference.fstar
        level = R.TARGET_GAP * (tr.objective[0] - rep.reference.fstar)
        assert R.reach(tr.passes, gap, level) == math.inf, m
        assert f"{method_label(m)} never" in rows["A1"]["numbers"]


def test_on_T_reading_is_labelled_ours_everywhere(tmp_path, capsys):
    code = cli.main(["reproduce", "fig1-setting1", "--quick", "--no-png", "--inner", "on_T",
                     "--budget", "6", "--out", str(tmp_path / "out")])
    assert code == 0
    printed = capsys.readouterr()
    assert "P3  SVRGSP+ (on T) reaches" in printed.out
    assert "inner = on_T (our variant" in printed.out
    out = tmp_path / "out"
    settings = json.loads((out / "run.json").read_text())
    assert settings["inner"] == "on_T" and "our variant" in settings["inner_is"]
    labels = {r["method"]: r["label"] for r in settings["methods"]}
    assert labels["svrgsp+"] == "SVRGSP+ (on T)" and labels["fght"] == "FG-HT"
    md = (out / "claims.md").read_text()
    assert "inner = on_T (our variant: z on the merged support T, labelled (on T))" in md
    assert "| SVRGSP (on T) |" in md
    assert "SVRGSP+ (on T)" in (out / "passes.html").read_text()
    for m in ("svrgsp", "svrgsp+"):
        tr = Trace.load(out / "traces" / f"{m.replace('+', 'plus')}.npz")
        assert tr.meta["inner"] == "on_T"
        factor = R.tuned_factor("fig1-setting1", True, m, "on_T")[0]
        assert labels[m].endswith("(on T)")
        assert [r["factor"] for r in settings["methods"] if r["method"] == m] == [factor]


def test_quick_command_end_to_end(tmp_path):
    """``python -m rgrasp_viz reproduce fig1-setting1 --quick`` as a user types it."""
    r = subprocess.run([sys.executable, "-m", "rgrasp_viz", "reproduce", "fig1-setting1",
                        "--quick", "--no-png"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    # stderr is a pipe, not a terminal: no progress bar, only the notes (one line each)
    assert r.stderr.splitlines() == ["note: PNG export skipped (--no-png)"]
    assert sum(line.startswith("[") for line in r.stdout.splitlines()) == len(R.CLAIMS)
    assert "F* = " in r.stdout and "i.e. F <= " in r.stdout
    out = tmp_path / "rgrasp-reproduce" / "fig1-setting1-quick"
    assert f"Wrote 10 files to {out}" in r.stdout
    settings = json.loads((out / "run.json").read_text())
    assert settings["budget_passes"] == R.PASS_BUDGET["synthetic"]
    assert settings["inner"] == "paper" and settings["fstar_source"] in r.stdout
    # the run's folder and its (released) lock file, nothing else
    assert sorted(p.name for p in out.parent.iterdir()) == [".fig1-setting1-quick.lock",
                                                            "fig1-setting1-quick"]


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
    assert printed.err.splitlines() == ["note: PNG export skipped (--no-png)"]  # no bar
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
    f, src = R.tuned_factor("fig1-setting1", True, "svrgsp", "paper")
    assert f in R.TUNE_GRID and "seeds 1000-1001" in src
    f_on_t, _ = R.tuned_factor("fig1-setting1", True, "svrgsp", inner="on_T")
    assert f_on_t in R.TUNE_GRID
    f, src = R.tuned_factor("fig2-rcv1", False, "svrgsp", "paper")  # no full-scale entry
    assert f == R.TUNED_FACTORS[("fig2-rcv1", True)]["svrgsp|paper"]
    assert "stand-in" in src and "quick-scale factor used" in src
    assert R.tuned_factor("fig2-rcv1", True, "grasp")[0] == 1.0  # GraSP: no step size


def test_tuned_factors_keyed_by_reading():
    assert R.factor_key("svrgsp", "paper") == "svrgsp|paper"
    assert R.factor_key("SVRGSP+", "restricted") == "svrgsp+|on_T"  # old names accepted
    assert R.factor_key("fght", "on_T") == "fght"
    # the recorded values kept under their new keys ("svrgsp" was on T, "|full" the paper's)
    t = R.TUNED_FACTORS[("fig1-setting1", True)]
    assert (t["svrgsp|on_T"], t["svrgsp+|on_T"], t["svrgsp|paper"], t["svrgsp+|paper"]) == \
        (1.0, 1.0, 1.0, 2.0)
    t = R.TUNED_FACTORS[("fig1-setting2", False)]
    assert (t["svrgsp|on_T"], t["svrgsp+|on_T"], t["svrgsp|paper"], t["svrgsp+|paper"]) == \
        (4.0, 4.0, 1.0, 1.0)
    for table in R.TUNED_FACTORS.values():
        for m in R.METHODS:
            spec = get_method(m)
            if spec.readings:
                assert {f"{m}|paper", f"{m}|on_T"} <= set(table) and m not in table
            elif spec.has_step:
                assert m in table
    assert R.tuned_factor("fig1-setting1", True, "svrgsp+", "full")[0] == 2.0
    # without a reading: the one solve() uses by default, so the factor matches that run
    import inspect

    default = inspect.signature(rv.solve).parameters["inner"].default
    assert R.tuned_factor("fig1-setting1", True, "svrgsp+") == \
        R.tuned_factor("fig1-setting1", True, "svrgsp+", default)
