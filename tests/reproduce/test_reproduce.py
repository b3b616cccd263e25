"""The ``reproduce`` package: claims logic, F*'s reference, quick runs end to end, data
fallbacks, step sizes.  Output-folder safety: ``tests/reproduce/test_output.py``; the command
line's argument checks: ``test_cli.py``."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import Trace, datasets
from rgrasp_viz import _cli as cli
from rgrasp_viz import analysis as A
from rgrasp_viz import reproduce as R
from rgrasp_viz._trace import TraceBuilder
from rgrasp_viz.analysis import FStar, first_crossing
from rgrasp_viz.reproduce import _claims as RC
from rgrasp_viz.reproduce import _experiments as RE
from rgrasp_viz.reproduce import _tuning as RT
from rgrasp_viz.solvers._registry import get_method, method_label, method_names

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
    assert first_crossing([0, 1, 2], [1.0, 1e-2, 1e-6], 1e-4) == pytest.approx(1.5)
    assert first_crossing([0, 1, 2], [1.0, 1e-2, 1e-6], 1e-6) == pytest.approx(2.0)
    assert first_crossing([5, 6], [1e-9, 1e-10], 1e-4) == 5.0
    assert first_crossing([0, 1], [1.0, 0.5], 1e-4) == math.inf
    assert first_crossing([0, 1, 2], [1.0, np.nan, 1e-8], 1e-4) == 2.0  # no log through a NaN


def test_claims_hold_when_ours_are_faster():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    rows = by_id(R.evaluate_claims(traces))
    assert [r["id"] for r in R.evaluate_claims(traces)] == [c[0] for c in R.CLAIMS]
    for cid in ("P1", "P2", "T1", "T2", "A1", "A2"):
        assert rows[cid]["verdict"] == R.SUPPORTED, rows[cid]
        assert rows[cid]["level"] == "speed gap <= 0.0001" and rows[cid]["lean"] is None
        assert rows[cid]["margin"] == math.inf  # only the claimed-faster side gets there
    # F* = the runs' own best ~ 1e-20, F(x0) = 1: the speed target is F <= 1e-4, which rate
    # 1e-2 reaches at t = 2 -> 6 passes, 0.6 s (SVRGSP+ runs at half the time)
    assert "SVRGSP 6 passes" in rows["P1"]["text"]
    assert rows["P1"]["numbers"]["reach"] == {"SVRGSP": pytest.approx(6.0), "SVRGHT": None}
    assert "SVRGSP 0.6 s" in rows["T1"]["text"]
    assert "SVRGSP+ 0.3 s" in rows["T2"]["text"]
    # SVRGSP+ and SVRGSP have identical iterates and both reach: a tie (margin 0), even in
    # time, where the difference is only timing noise
    assert rows["P3"]["verdict"] == R.TIE and "identical" in rows["P3"]["text"]
    assert rows["T3"]["verdict"] == R.TIE and "identical" in rows["T3"]["text"]
    assert rows["P3"]["margin"] == 0.0 and rows["T3"]["margin"] == 0.0
    assert rows["P3"]["numbers"]["identical_iterates"] is True
    # no ground truth in these traces
    assert rows["E1"]["verdict"] == R.NA


def test_claims_contradicted_when_svrght_is_faster():
    traces = six(fast=["svrght"], slow=["fght", "grasp", "sght", "svrgsp", "svrgsp+"])
    rows = by_id(R.evaluate_claims(traces))
    for cid in ("P1", "P2", "T1", "T2", "A1", "A2"):
        assert rows[cid]["verdict"] == R.CONTRADICTED, rows[cid]
        assert rows[cid]["margin"] == -math.inf
    assert "the claimed-faster side never reaches" in rows["P1"]["text"]
    # V1: SVRGSP(+) (variance-reduced) never reach it, and neither do FG-HT, GraSP, SG-HT
    assert rows["V1"]["verdict"] == R.NOT_SHOWN


# F* = 1 given, F(x0) = 1001: the speed gap of 1 + 1000 r^t is r^t, at the 1e-4 level when
# r^t = 1e-4
ONE = FStar(1.0, "F* = a hand-made reference", "reference")


def _pair(rate_sp, rate_ht, k=11, time_ht=None):
    passes = np.arange(k, dtype=float)
    return {"svrgsp": fake_trace("svrgsp", passes, 1 + geometric(rate_sp, k, start=1e3),
                                 time=passes),
            "svrght": fake_trace("svrght", passes, 1 + geometric(rate_ht, k, start=1e3),
                                 time=passes if time_ht is None else time_ht)}


@pytest.mark.parametrize("rate_sp, rate_ht, verdict, reach_sp, reach_ht", [
    (1e-2, 0.1, R.SUPPORTED, 2.0, 4.0),          # both reach, SVRGSP first: ratio 2
    (1e-2, 0.5, R.SUPPORTED, 2.0, None),         # only the claimed-faster side reaches
    (0.1, 1e-2, R.CONTRADICTED, 4.0, 2.0),       # both reach, SVRGHT first
    (0.5, 1e-2, R.CONTRADICTED, None, 2.0),      # only the claimed-slower side reaches
    (1e-2, 1e-2, R.TIE, 2.0, 2.0),               # the same passes: margin 0, a tie
    (0.6, 0.8, R.NOT_SHOWN, None, None),         # neither reaches
])
def test_each_verdict_on_constructed_traces(rate_sp, rate_ht, verdict, reach_sp, reach_ht):
    supp = [[0], [1], [0], [1], [0], [1], [0], [1], [0], [1], [0]]
    traces = _pair(rate_sp, rate_ht)
    # different supports: never "identical iterates" even when the curves are equal
    traces["svrght"] = fake_trace("svrght", traces["svrght"].passes,
                                  traces["svrght"].objective, supports=supp)
    row = by_id(R.evaluate_claims(traces, reference=ONE))["P1"]
    assert row["verdict"] == verdict, row
    reach = row["numbers"]["reach"]
    assert reach["SVRGSP"] == (None if reach_sp is None else pytest.approx(reach_sp))
    assert reach["SVRGHT"] == (None if reach_ht is None else pytest.approx(reach_ht))
    if reach_sp and reach_ht:
        assert row["numbers"]["ratio"] == pytest.approx(reach_ht / reach_sp)
        assert f"ratio {reach_ht / reach_sp:.2f}x" in row["text"]
    assert (row["lean"] is None) == (verdict != R.NOT_SHOWN)


def test_not_shown_says_which_way_the_evidence_leans():
    # neither reaches 1e-4; SVRGSP's speed gap ends at 0.6^10 = 6.0e-3, SVRGHT's at
    # 0.8^10 = 0.107
    rows = by_id(R.evaluate_claims(_pair(0.6, 0.8), reference=ONE))
    p1 = rows["P1"]
    assert p1["verdict"] == R.NOT_SHOWN and p1["lean"] == "leans towards the claim"
    assert math.isnan(p1["margin"])
    n = p1["numbers"]
    assert n["matched_at"] == 10.0
    assert n["at_budget"]["speed_gap"]["SVRGSP"] == pytest.approx(0.6 ** 10)
    assert n["at_matched"]["speed_gap"]["SVRGHT"] == pytest.approx(0.8 ** 10)
    assert "best speed gap at the budget: SVRGSP 6.05e-03, SVRGHT 1.07e-01" in p1["text"]
    rows = by_id(R.evaluate_claims(_pair(0.8, 0.6), reference=ONE))
    assert rows["P1"]["verdict"] == R.NOT_SHOWN
    assert rows["P1"]["lean"] == "leans against the claim"
    # matched passes: SVRGHT's run is shorter; SVRGSP is compared at SVRGHT's last pass count
    traces = _pair(0.6, 0.8)
    traces["svrght"] = fake_trace("svrght", np.arange(6.0), 1 + geometric(0.3, 6, start=1e3))
    p1 = by_id(R.evaluate_claims(traces, reference=ONE))["P1"]
    assert p1["numbers"]["matched_at"] == 5.0
    assert p1["numbers"]["at_matched"]["speed_gap"]["SVRGSP"] == pytest.approx(0.6 ** 5)
    assert p1["numbers"]["at_budget"]["speed_gap"]["SVRGSP"] == pytest.approx(0.6 ** 10)
    assert p1["lean"] == "leans against the claim"  # 0.6^5 = 7.8e-2 > 0.3^5 = 2.4e-3
    # ... unless SVRGHT stopped at a fixed point: it stays there, the match is at 10 passes
    traces["svrght"].meta["status"] = 0  # Status.CONVERGED
    p1 = by_id(R.evaluate_claims(traces, reference=ONE))["P1"]
    assert p1["numbers"]["matched_at"] == 10.0


def test_time_claims_need_the_margin():
    # SVRGSP reaches at 2 s, SVRGHT at 2.1 s (5 % later): within timing noise, a tie
    traces = _pair(1e-2, 1e-2, time_ht=np.arange(11.0) * 1.05)
    supp = [[0], [1]] * 5 + [[0]]
    traces["svrght"] = fake_trace("svrght", traces["svrght"].passes,
                                  traces["svrght"].objective, time=traces["svrght"].time,
                                  supports=supp)
    row = by_id(R.evaluate_claims(traces, reference=ONE))["T1"]
    assert row["verdict"] == R.TIE and row["margin"] == pytest.approx(0.05)
    assert row["tie_tolerance"] == RC.TIE_TOLERANCE["time"]
    # ... and 5 % the other way is a tie too
    traces["svrgsp"] = fake_trace("svrgsp", traces["svrgsp"].passes,
                                  traces["svrgsp"].objective, time=np.arange(11.0) * 1.1025)
    assert by_id(R.evaluate_claims(traces, reference=ONE))["T1"]["verdict"] == R.TIE
    traces["svrgsp"] = fake_trace("svrgsp", traces["svrgsp"].passes,
                                  traces["svrgsp"].objective, time=np.arange(11.0) * 1.3)
    assert by_id(R.evaluate_claims(traces, reference=ONE))["T1"]["verdict"] == R.CONTRADICTED
    traces = _pair(1e-2, 1e-2)
    traces["svrght"] = fake_trace("svrght", traces["svrght"].passes,
                                  traces["svrght"].objective, time=np.arange(11.0) * 1.2,
                                  supports=supp)
    assert by_id(R.evaluate_claims(traces, reference=ONE))["T1"]["verdict"] == R.SUPPORTED


def test_never_reaching_is_slower_than_reaching():
    passes = np.arange(6, dtype=float)
    flat = np.full(6, 0.5)
    flat[0] = 1.0
    traces = {"svrgsp": fake_trace("svrgsp", passes, geometric(1e-3, 6)),
              "svrght": fake_trace("svrght", passes, flat)}
    rows = by_id(R.evaluate_claims(traces))
    assert rows["P1"]["verdict"] == R.SUPPORTED
    assert "SVRGHT never" in rows["P1"]["text"]
    assert rows["P2"]["verdict"] == R.NA  # SVRGSP+ missing
    assert rows["P2"]["numbers"] == {"missing": ["svrgsp+"]}
    traces = {"svrgsp": fake_trace("svrgsp", passes, flat),
              "svrght": fake_trace("svrght", passes, flat)}
    # the same curve, the same supports: identical iterates; both reach F* = 0.5 (their own
    # best) at the same pass: a tie
    assert by_id(R.evaluate_claims(traces))["P1"]["verdict"] == R.TIE
    # measured against a lower F*, neither reaches: not shown, leaning against (identical)
    row = by_id(R.evaluate_claims(traces, reference=FStar(0.1, "F* = lower", "reference")))["P1"]
    assert row["verdict"] == R.NOT_SHOWN and row["lean"] == "leans against the claim"
    assert "identical iterates" in row["text"]


def test_error_claim_better_solutions_and_cost():
    k = 8
    passes = np.arange(k, dtype=float)
    fast_err, mid_err, slow_err = geometric(0.1, k), geometric(0.5, k), geometric(0.9, k)
    traces = {}
    for m in RE.METHODS:
        ours = m in RC.OURS
        obj = geometric(0.1 if ours else 0.9, k, floor=0.0 if m in RC.VR_METHODS else 1e-3)
        err = fast_err if ours else (mid_err if m == "svrght" else slow_err)
        traces[m] = fake_trace(m, passes, obj, time=passes * (1.0 if m != "grasp" else 5.0),
                               rel_error=err,
                               thresholds=np.arange(k) * (100 if m == "svrght" else 1))
    rows = by_id(R.evaluate_claims(traces))
    assert rows["E1"]["verdict"] == R.SUPPORTED
    assert rows["E1"]["level"] == f"error <= {RC.TARGET_ERR_FACTOR:g} x oracle"
    # quality: the VR methods end with a lower estimation error (worst 0.5^7) than the others
    # (best 0.9^7), whatever the objective
    assert rows["V2"]["verdict"] == R.SUPPORTED
    assert rows["V2"]["margin"] == pytest.approx(0.9 ** 7 / 0.5 ** 7 - 1)
    assert rows["V2"]["numbers"]["metric"] == "final_error"
    # GraSP: 5 s per outer iteration, FG-HT 1 s (C2 compares per iteration: the pass rule
    # charges an exact solve what an iterative solver would spend, so per pass says nothing)
    assert rows["C2"]["verdict"] == R.SUPPORTED
    assert rows["C2"]["numbers"]["seconds_per_iteration"]["GraSP"] == 5.0
    assert rows["C2"]["level"] == "solver seconds per outer iteration"
    assert rows["C1"]["verdict"] == R.TIE  # equal seconds per pass: a tie, not cheaper
    assert "100 thresholdings/iter" in rows["C1"]["text"]
    assert rows["C1"]["numbers"]["thresholdings_per_iteration"]["SVRGHT"] == 100
    # the error target is 2 x the best error reached by any run
    best = min(float(t.rel_error.min()) for t in traces.values())
    assert f"{RC.TARGET_ERR_FACTOR * best:.3e}" in RC.targets_text(traces)
    counts = RC.verdict_counts(R.evaluate_claims(traces))
    assert sum(counts.values()) == len(R.CLAIMS) and set(counts) == set(R.VERDICTS)


def test_format_claims_one_row_per_claim():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    rows = R.evaluate_claims(traces)
    md = R.format_claims(rows, markdown=True).splitlines()
    assert len(md) == 2 + len(R.CLAIMS)
    assert "| P1 | SVRGSP reaches" in md[2]
    assert f"| speed gap <= {RC.TARGET_LEVEL:g} | **supported** |" in md[2]
    text = R.format_claims(rows).splitlines()
    assert sum(line.startswith("[") for line in text) == len(R.CLAIMS)
    # P1-T2, A1, A2, C1 supported; P3, T3 (identical), C2 (equal seconds) ties; V1: SVRGHT
    # is slow like the others (nobody reaches); E1, V2, V3: no ground truth
    assert R.verdict_summary(rows) == (f"{len(R.CLAIMS)} claims: 7 supported, 0 contradicted, "
                                       "3 tie, 0 mixed, 1 not shown within the budget, 3 n/a.")
    # over seeds: the agreement beside each verdict, the per-seed verdicts and margins
    agg = R.aggregate_claims([(k, rows) for k in range(5)])
    md = R.format_claims(agg, markdown=True).splitlines()
    assert "| **supported (5/5)** | 0: supported +inf, 1: supported +inf," in md[2]
    text = R.format_claims(agg)
    assert "[supported (5/5)] P1" in text.replace("  ", "").replace("[ ", "[")


def test_claim_groups_come_from_the_registry():
    assert RE.METHODS == method_names(paper_only=True)
    assert set(RC.OURS) == {m for m in RE.METHODS if get_method(m).readings}
    assert set(RC.OURS) | set(RC.BASELINES) == set(RE.METHODS)
    assert set(RC.VR_METHODS) | set(RC.OTHER_METHODS) == set(RE.METHODS)
    assert not set(RC.VR_METHODS) & set(RC.OTHER_METHODS)


def test_identical_iterates_need_same_supports_not_equal_floats():
    passes = np.arange(6, dtype=float)
    obj = geometric(0.1, 6)
    a = fake_trace("svrgsp", passes, obj)
    b = fake_trace("svrgsp+", passes, obj * (1 + 1e-14))  # lazy updates: 1e-16-level noise
    assert not np.array_equal(a.objective, b.objective)
    assert A.same_iterates(a, b)
    rows = by_id(R.evaluate_claims({"svrgsp": a, "svrgsp+": b}))
    assert rows["P3"]["verdict"] == R.TIE  # both reach, at the same passes
    assert "identical iterates" in rows["P3"]["text"]
    # same objectives, one support differs at one iteration: not the same iterates
    sup = [[0]] * 6
    c = fake_trace("svrgsp+", passes, obj, supports=sup[:3] + [[1]] + sup[4:])
    assert not A.same_iterates(a, c)
    # same supports, objectives further apart than the tolerance: not the same either
    d = fake_trace("svrgsp+", passes, obj * (1 + 1e-6))
    assert not A.same_iterates(a, d)
    assert "identical" not in by_id(R.evaluate_claims({"svrgsp": a, "svrgsp+": d}))["P3"][
        "text"]


def test_claims_name_our_variant_as_ours():
    traces = six(fast=["svrgsp", "svrgsp+"], slow=["fght", "grasp", "sght", "svrght"])
    on_t = {m: fake_trace(m, t.passes, t.objective, t.time, inner="on_T")
            for m, t in traces.items()}
    rows = by_id(R.evaluate_claims(on_t))
    assert rows["P1"]["claim"].startswith("SVRGSP (on T) reaches")
    assert "SVRGSP+ (on T)" in rows["P3"]["claim"] and "SVRGSP (on T)" in rows["P3"]["text"]
    assert "FG-HT (on T)" not in rows["A1"]["claim"]  # baselines have one reading
    paper = by_id(R.evaluate_claims({m: fake_trace(m, t.passes, t.objective, t.time,
                                                   inner="paper")
                                     for m, t in traces.items()}))
    assert "(on T)" not in paper["P1"]["claim"] + paper["P1"]["text"]


def test_given_reference_sets_the_targets():
    passes = np.arange(11, dtype=float)
    traces = {"svrgsp": fake_trace("svrgsp", passes, geometric(1e-2, floor=1e-3)),
              "svrght": fake_trace("svrght", passes, geometric(0.5, floor=1e-3))}
    # the runs' own best as F*: SVRGSP reaches the target by definition
    assert by_id(R.evaluate_claims(traces))["P1"]["verdict"] == R.SUPPORTED
    # a reference 2e-3 below both floors (F* < 0: the denominator is 1e-6 (F(x0) - F*)):
    # relative gap >= 2e-3 / 1e-6, out of reach
    ref = FStar(-1e-3, "F* = a hand-made reference", "reference")
    rows = by_id(R.evaluate_claims(traces, reference=ref))
    assert rows["P1"]["verdict"] == R.NOT_SHOWN
    assert "SVRGSP never" in rows["P1"]["text"]
    # F* = 1e-3, F(x0) = 1 + 1e-3: the speed target is F <= F* + 1e-4 (F(x0) - F*) = 1.1e-3
    ref = FStar(1e-3, "F* = a hand-made reference", "reference")
    text = RC.targets_text(traces, ref)
    assert "from a hand-made reference" in text
    assert "speed gap = (F - F*) / (F(x0) - F*) <= 0.0001, i.e. F <= 0.0011 " in text
    assert "'which local minimum' column, not a target" in text
    # the speed gap: (F - F*) / (F(x0) - F*), a NumPy reference
    assert RC.speed_gap([3.0, 2.0, 1.5], 1.0, 3.0) == pytest.approx([1.0, 0.5, 0.25])
    # the "which local minimum" relative gap (F - F*) / F*, guarded for F* ~ 0
    assert RC.relative_gap([1.0, 1e-7], 0.0, 1.0) == pytest.approx([1e6, 0.1])
    assert RC.relative_gap([2.0], 1.0, 3.0) == pytest.approx([1.0])


# -- a quick synthetic run, end to end ------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1") / "run"
    return R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=30,
                 seeds="0-1")


def _load_all(out, seed=None):
    tail = "" if seed is None else f"-seed{seed}"
    return {m: Trace.load(out / "traces" / f"{m.replace('+', 'plus')}{tail}.npz")
            for m in RE.METHODS}


def test_quick_run_writes_everything(quick_run):
    out = quick_run.out
    for name in ("passes.html", "time.html", "steps.html", "claims.md", "run.json"):
        assert (out / name).is_file(), name
    npz = sorted(p.name for p in (out / "traces").glob("*.npz"))
    # the first seed's traces under the method's name, the second seed's marked
    stems = [m.replace("+", "plus") for m in RE.METHODS]
    assert npz == sorted([f"{s}.npz" for s in stems] + [f"{s}-seed1.npz" for s in stems])
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["passes.html", "time.html", "steps.html", "claims.md", "run.json", "traces"])
    assert len(quick_run.files) == 17 and all(p.is_file() for p in quick_run.files)
    html = (out / "passes.html").read_text()
    assert "plotly" in html and "SVRGSP+" in html and "Figure 1(a)" in html
    assert "(on T)" not in html  # the paper's reading ran
    settings = json.loads((out / "run.json").read_text())
    assert settings["s"] == 60 and settings["quick"] is True
    assert settings["budget_passes"] == 30
    assert settings["n"] == 500 and settings["d"] == 1000
    assert settings["seeds"] == [0, 1] and settings["seed"] == 0
    assert settings["inner"] == "paper" and "paper's Algorithm 2" in settings["inner_is"]
    assert [r["method"] for r in settings["methods"]] == list(RE.METHODS)
    assert "PNG export skipped (--no-png)" in quick_run.notes
    # nothing left beside the output folder but its (released) lock file: no temporary folder
    assert sorted(p.name for p in out.parent.iterdir()) == [".run.lock", "run"]


def test_quick_run_settings(quick_run):
    settings = quick_run.settings
    for seed in (0, 1):
        prob, info = RE.build_problem("fig1-setting1", quick=True, seed=seed, progress=False)
        traces = [p for p in quick_run.per_seed if p["seed"] == seed][0]["traces"]
        for m, tr in traces.items():
            assert tr.meta["s"] == 60 and tr.meta["J"] == 1000
            assert tr.meta["m"] == 6 and tr.meta["random_state"] == seed
            assert tr.meta["inner"] == "paper"  # passed explicitly, whatever solve's default
            assert tr.support(0).size == 0  # x0 = 0
            assert tr.passes[-1] >= 30 or tr.meta["status"] == 0, m
            assert tr.passes[-2] < 30, m  # stops at the first iteration past the budget
            # the step: the factor chosen by this run's tuning, on the tuning seeds
            if get_method(m).has_step:
                factor = settings["step_sensitivity"]["methods"][RT.factor_key(m, "paper")][
                    "chosen"]
            else:
                factor = 1.0
            row = [r for r in settings["methods"] if r["method"] == m][0]
            assert row["factor"] == (factor if get_method(m).has_step else None)
            assert tr.meta["eta"] == pytest.approx(
                factor * rv.default_eta(prob, m, info.s, inner="paper"))
    # the data are redrawn per seed
    a = RE.build_problem("fig1-setting1", quick=True, seed=0, progress=False)[0]
    b = RE.build_problem("fig1-setting1", quick=True, seed=1, progress=False)[0]
    assert not np.array_equal(a.y, b.y)


def test_traces_load_back_equal(quick_run):
    for seed, saved in ((None, 0), (1, 1)):
        runs = [p for p in quick_run.per_seed if p["seed"] == saved][0]["traces"]
        for m, tr in _load_all(quick_run.out, seed).items():
            assert tr.equals(runs[m]), m
            np.testing.assert_array_equal(tr.time, runs[m].time)


def test_fstar_comes_from_a_reference_below_every_run(quick_run):
    ref = quick_run.reference
    prob, _ = RE.build_problem("fig1-setting1", quick=True, progress=False)
    for m, tr in quick_run.traces.items():
        best = float(np.nanmin(tr.objective))
        assert ref.value <= best, m
        # least squares: at most the exact fit on the support of the run's best iterate
        # (NumPy reference: lstsq on those columns)
        k = int(np.nanargmin(tr.objective))
        supp = tr.support(k)
        coef = np.linalg.lstsq(prob.W[:, supp], prob.y, rcond=None)[0]
        fit = 0.5 * np.mean((prob.W[:, supp] @ coef - prob.y) ** 2)
        assert ref.value <= fit * (1 + 1e-12), m
    assert ref.value < min(float(np.nanmin(t.objective)) for t in quick_run.traces.values())
    assert ref.value == min(c["objective"] for c in ref.candidates)
    assert any("10x the budget" in c["source"] for c in ref.candidates)
    assert ref.reference_run["budget_passes"] == 10 * 30 and ref.reference_run["tol"] == 0.0
    assert ref.reference_run["method"] in RE.METHODS
    # the oracle error: least-squares fit on the true support
    true = np.flatnonzero(prob.x_true)
    coef = np.linalg.lstsq(prob.W[:, true], prob.y, rcond=None)[0]
    x = np.zeros(prob.d)
    x[true] = coef
    assert ref.err_ref == pytest.approx(np.linalg.norm(x - prob.x_true)
                                        / np.linalg.norm(prob.x_true))
    # recorded with its source in run.json and claims.md, per seed
    settings = json.loads((quick_run.out / "run.json").read_text())
    assert settings["fstar"] == ref.value and settings["fstar_source"] == ref.where
    assert settings["reference"]["candidates"] == list(ref.candidates)
    assert settings["fstar_below_every_run_by"] > 0
    assert [r["seed"] for r in settings["runs_per_seed"]] == [0, 1]
    assert settings["runs_per_seed"][0]["fstar"] == ref.value
    md = (quick_run.out / "claims.md").read_text()
    assert f"F* = {ref.value:.12g}, from {ref.where}." in md
    for r in settings["runs_per_seed"]:
        assert f"* seed {r['seed']}: F* = {r['fstar']:.12g}" in md
    assert "i.e. F <= " in md  # the target in absolute terms


def test_claims_md_matches_traces(quick_run):
    md = (quick_run.out / "claims.md").read_text()
    table = [line for line in md.splitlines() if line.startswith("| ") and
             line.split("|")[1].strip() in {c[0] for c in R.CLAIMS}]
    assert len(table) == len(R.CLAIMS)
    saved = json.loads((quick_run.out / "run.json").read_text())
    # every seed's verdicts again from the saved traces, F* and quality (nothing re-solved)
    per_seed = []
    for r, tail in zip(saved["runs_per_seed"], (None, 1), strict=True):
        ref = FStar(r["fstar"], "F* = " + r["fstar_source"], "reference",
                    err_ref=r["error_reference"], err_source=r["error_source"])
        per_seed.append((r["seed"], R.evaluate_claims(_load_all(quick_run.out, tail),
                                                      reference=ref, quality=r["quality"])))
    again = R.aggregate_claims(per_seed)
    assert [r["verdict"] for r in again] == [r["verdict"] for r in quick_run.claims]
    for line, row in zip(table, again, strict=True):
        assert f"**{row['verdict']} ({row['agreement']})**" in line
        assert f"| {row['level']} |" in line
    judged = (R.SUPPORTED, R.CONTRADICTED, R.TIE, R.MIXED, R.NOT_SHOWN)
    assert all(r["verdict"] in judged for r in again)  # synthetic: none n/a
    assert "Verdicts over seeds: " + R.verdict_summary(again) in md
    assert R.PASS_RULE in md
    # the claims as a list in run.json: the verdict over seeds, its agreement, per seed
    assert [c["id"] for c in saved["claims"]] == [c[0] for c in R.CLAIMS]
    for c, row in zip(saved["claims"], again, strict=True):
        assert {"id", "claim", "verdict", "level", "lean", "text", "agreement", "counts",
                "per_seed", "margin", "margin_unit", "tie_tolerance"} == set(c)
        assert (c["verdict"], c["level"], c["agreement"]) == (row["verdict"], row["level"],
                                                              row["agreement"])
        assert [p["seed"] for p in c["per_seed"]] == [0, 1]
        for p, q in zip(c["per_seed"], row["per_seed"], strict=True):
            assert p["verdict"] == q["verdict"] and isinstance(p["numbers"], dict)
    p1 = saved["claims"][0]["per_seed"][0]["numbers"]
    assert set(p1["reach"]) == {"SVRGSP", "SVRGHT"} and p1["axis"] == "passes"
    assert p1["level"] == R.SPEED_LEVEL
    assert saved["verdict_counts"] == RC.verdict_counts(again)
    t = saved["targets"]
    assert t["speed"]["metric"] == "(F - F*)/(F0 - F*)" and t["speed"]["level"] == 1e-4
    assert t["speed"]["levels_tabulated"] == [1e-3, 1e-4, 1e-5]
    assert t["quality"]["sigma"] == pytest.approx(0.1)
    assert t["quality"]["strong_threshold"] == pytest.approx(3 * 0.1 / math.sqrt(500))
    assert t["which_local_minimum"]["levels"] == list(RC.GAP_LEVELS)
    assert [b["seed"] for b in saved["targets_reached"]] == [0, 1]
    assert [r["method"] for r in saved["targets_reached"][0]["rows"]] == list(RE.METHODS)
    # GraSP: no step size anywhere
    grasp = [r for r in saved["methods"] if r["method"] == "grasp"][0]
    assert grasp["eta"] is None and grasp["factor"] is None
    assert "| GraSP | none (no step size) |" in md


def test_three_pass_budget_reaches_no_target(tmp_path):
    rep = R.run("fig1-setting1", quick=True, out=tmp_path / "out", png=False, progress=False,
                budget=3, seeds="0,1", tune_steps=False)
    rows = by_id(rep.claims)
    assert set(RC.TARGET_CLAIMS) == {"P1", "P2", "T1", "T2", "P3", "T3", "A1", "A2", "E1",
                                    "V1"}
    for cid in RC.TARGET_CLAIMS:
        assert rows[cid]["verdict"] == R.NOT_SHOWN, rows[cid]
        assert rows[cid]["agreement"] == "2/2"
        assert rows[cid]["lean"] in ("leans towards the claim", "leans against the claim")
    for run in rep.per_seed:
        fs = run["reference"].value
        for m, tr in run["traces"].items():
            # NumPy reference: (F - F*) / (F(x0) - F*) never gets to the speed level within 3
            # passes, nor the error to its target
            obj = np.asarray(tr.objective)
            assert np.min((obj - fs) / (obj[0] - fs)) > R.SPEED_LEVEL, m
            assert np.min(tr.rel_error) > RC.TARGET_ERR_FACTOR * run["reference"].err_ref, m
        a1 = by_id(run["claims"])["A1"]["text"]
        assert all(f"{method_label(m)} never" in a1 for m in RE.METHODS)
    # recorded factors, no tuning: no step sensitivity
    assert rep.settings["step_sensitivity"] is None
    assert "Not tuned in this run" in (tmp_path / "out" / "claims.md").read_text()


def test_on_T_reading_is_labelled_ours_everywhere(tmp_path, capsys):
    code = cli.main(["reproduce", "fig1-setting1", "--quick", "--no-png", "--inner", "on_T",
                     "--budget", "6", "--seeds", "0", "--no-tune", "--out",
                     str(tmp_path / "out")])
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
    """``python -m rgrasp_viz reproduce fig1-setting1 --quick`` as a user types it (two seeds
    and a shorter budget, to keep it short; tuning included)."""
    r = subprocess.run([sys.executable, "-m", "rgrasp_viz", "reproduce", "fig1-setting1",
                        "--quick", "--no-png", "--seeds", "0-1", "--budget", "30"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    # stderr is a pipe, not a terminal: no progress bar, only the notes (one line each)
    assert r.stderr.splitlines() == ["note: PNG export skipped (--no-png)"]
    assert sum(line.startswith("[") for line in r.stdout.splitlines()) == len(R.CLAIMS)
    assert "F* = " in r.stdout and "i.e. F <= " in r.stdout
    assert f"Verdicts over seeds 0, 1: {len(R.CLAIMS)} claims: " in r.stdout
    assert "per seed: 0: " in r.stdout
    out = tmp_path / "rgrasp-reproduce" / "fig1-setting1-quick"
    assert f"Wrote 17 files to {out}" in r.stdout
    settings = json.loads((out / "run.json").read_text())
    assert settings["budget_passes"] == 30 and settings["seeds"] == [0, 1]
    assert set(settings["step_sensitivity"]["methods"]) == {
        RT.factor_key(m, "paper") for m in RE.METHODS if get_method(m).has_step}
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
                     str(data), "--out", str(out), "--budget", "12", "--seeds", "0",
                     "--no-tune"])
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
                png=False, progress=False, budget=12, seeds="0-1")
    # no ground truth: the quality claims compare the held-out loss (our split)
    rows = by_id(rep.claims)
    assert rows["V2"]["verdict"] != R.NA and rows["V3"]["verdict"] != R.NA
    assert "held-out loss" in rows["V2"]["per_seed"][0]["text"]
    assert rep.info.stand_in
    prob, info = RE.build_problem("fig2-rcv1", quick=True, data_dir=tmp_path / "empty",
                                 progress=False)
    assert (prob.n, prob.d, info.s) == (200, 300, 20)
    assert prob.is_sparse and prob.loss == "logistic" and prob.x_true is None
    assert set(np.unique(prob.y)) == {-1.0, 1.0}
    per_row = prob.nnz / prob.n
    assert per_row == pytest.approx(RE.PAPER_DENSITY["rcv1"] * 3000, rel=0.2)
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


@pytest.mark.parametrize(("dataset", "name", "content"), [
    ("realsim", "real-sim", b"1 1:0.5 3:1\n-1 2:abc\n"),  # malformed line
    ("realsim", "real-sim", b"1 1:0.5\n-1 2:0.25\n"),  # truncated: 2 of 72,309 rows
    ("rcv1", "rcv1_train.binary.bz2", b"<html>a captive portal page</html>\n"),  # not bzip2
])
@pytest.mark.parametrize("quick", [False, True])
def test_damaged_data_file_is_one_line_without_traceback(tmp_path, capsys, dataset, name,
                                                         content, quick):
    (tmp_path / name).write_bytes(content)
    args = ["reproduce", f"fig2-{dataset}", "--no-download", "--no-png", "--data-dir",
            str(tmp_path), "--out", str(tmp_path / "out")]
    code = cli.main(args + (["--quick"] if quick else []))
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert [line for line in lines if "error" in line] == lines[-1:]  # one line, the last
    assert lines[-1].startswith("rgrasp-viz reproduce: error: the ")
    assert str(tmp_path / name) in lines[-1]  # which file
    assert (tmp_path / name).read_bytes() == content  # the user's file is left alone
    assert not (tmp_path / "out").exists()


def test_unknown_experiment_is_rejected():
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "fig9"])
    with pytest.raises(ValueError, match="unknown experiment"):
        RE.build_problem("fig9")


# -- step sizes -----------------------------------------------------------------------------


def test_tuned_factor_fallbacks():
    f, src = R.tuned_factor("fig1-setting1", True, "svrgsp", "paper")
    assert f in RT.RECORDED_GRID and "seeds 1000-1001" in src
    f_on_t, _ = R.tuned_factor("fig1-setting1", True, "svrgsp", inner="on_T")
    assert f_on_t in RT.RECORDED_GRID
    f, src = R.tuned_factor("fig2-rcv1", False, "svrgsp", "paper")  # no full-scale entry
    assert f == R.TUNED_FACTORS[("fig2-rcv1", True)]["svrgsp|paper"]
    assert "stand-in" in src and "quick-scale factor used" in src
    assert R.tuned_factor("fig2-rcv1", True, "grasp")[0] == 1.0  # GraSP: no step size


def test_tuned_factors_keyed_by_reading():
    assert RT.factor_key("svrgsp", "paper") == "svrgsp|paper"
    assert RT.factor_key("SVRGSP+", "restricted") == "svrgsp+|on_T"  # old names accepted
    assert RT.factor_key("fght", "on_T") == "fght"
    # the recorded values kept under their new keys ("svrgsp" was on T, "|full" the paper's)
    t = R.TUNED_FACTORS[("fig1-setting1", True)]
    assert (t["svrgsp|on_T"], t["svrgsp+|on_T"], t["svrgsp|paper"], t["svrgsp+|paper"]) == \
        (1.0, 1.0, 1.0, 2.0)
    t = R.TUNED_FACTORS[("fig1-setting2", False)]
    assert (t["svrgsp|on_T"], t["svrgsp+|on_T"], t["svrgsp|paper"], t["svrgsp+|paper"]) == \
        (4.0, 4.0, 1.0, 1.0)
    for table in R.TUNED_FACTORS.values():
        for m in RE.METHODS:
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
