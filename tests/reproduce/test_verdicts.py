"""Verdicts of the claims: per seed (supported, contradicted, tie, not shown, n/a; speed and
quality targets) and over seeds (agreement, mixed), on hand-built traces (nothing solved)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rgrasp_viz import reference as REF
from rgrasp_viz import reproduce as R
from rgrasp_viz._trace import TraceBuilder
from rgrasp_viz.reproduce import _claims as RC
from rgrasp_viz.reproduce import _experiments as RE
from rgrasp_viz.solvers import method_label

pytest.importorskip("plotly")


def trace(method, passes, objective, time=None, rel_error=None, supports=None, d=6):
    """A real Trace with the given curves; ``supports`` per iteration (default ``[0]``)."""
    k = len(passes)
    time = np.asarray(passes, dtype=float) if time is None else time
    truth = None if rel_error is None else np.eye(d)[0]
    b = TraceBuilder(d, truth, False, 0)
    for i in range(k):
        x = np.zeros(d)
        x[[0] if supports is None else supports[i]] = 1.0
        b.add_iteration(iteration=i, passes=float(passes[i]), time=float(time[i]),
                        objective=float(objective[i]),
                        rel_error=math.nan if rel_error is None else float(rel_error[i]),
                        x=x, n_thresholds=i)
    return b.finish({"method": method, "n": 10, "d": d})


def by_id(rows):
    return {r["id"]: r for r in rows}


# F* = 0, F(x0) = 1: the speed gap is F itself; the target is F <= 1e-4
ZERO = REF.Reference(0.0, "a hand-made reference", err_ref=0.01, err_source="hand-made")
ALT = [[0], [1]] * 10  # another support at every other iteration: never identical iterates


def p1(reach_sp, reach_ht, k=12):
    """SVRGSP and SVRGHT whose speed gaps cross 1e-4 at the given passes (None: never)."""
    passes = np.arange(k, dtype=float)

    def curve(at):
        if at is None:  # from F(x0) = 1 down to 1e-2, never 1e-4
            return np.r_[1.0, np.full(k - 1, 1e-2)]
        # geometric through 1e-4 at `at`: log-linear interpolation puts the crossing there
        return 10.0 ** (-4.0 * passes / at)

    return {"svrgsp": trace("svrgsp", passes, curve(reach_sp)),
            "svrght": trace("svrght", passes, curve(reach_ht), supports=ALT[:k])}


@pytest.mark.parametrize("reach_sp, reach_ht, verdict, margin", [
    (4.0, 8.0, R.SUPPORTED, 1.0),             # SVRGHT needs twice the passes
    (8.0, 4.0, R.CONTRADICTED, -0.5),         # SVRGSP needs twice the passes
    (5.0, 5.2, R.TIE, 0.04),                  # 4 % apart: within the 5 % pass tolerance
    (5.2, 5.0, R.TIE, 5.0 / 5.2 - 1),
    (5.0, 5.5, R.SUPPORTED, 0.1),             # 10 %: beyond it
    (4.0, None, R.SUPPORTED, math.inf),       # only the claimed-faster side gets there
    (None, 4.0, R.CONTRADICTED, -math.inf),   # only the other side does
    (None, None, R.NOT_SHOWN, math.nan),      # neither: not shown, with a lean
])
def test_each_verdict_of_one_seed(reach_sp, reach_ht, verdict, margin):
    row = by_id(R.evaluate_claims(p1(reach_sp, reach_ht), reference=ZERO))["P1"]
    assert row["verdict"] == verdict, row
    assert row["tie_tolerance"] == RC.TIE_TOLERANCE["passes"] == 0.05
    if math.isnan(margin):
        assert math.isnan(row["margin"]) and row["lean"] is not None
    else:
        assert row["margin"] == pytest.approx(margin, rel=1e-9)
        assert row["lean"] is None
    if reach_sp is not None:
        assert row["numbers"]["reach"]["SVRGSP"] == pytest.approx(reach_sp)


def test_missing_run_is_na():
    runs = p1(4.0, 8.0)
    del runs["svrght"]
    row = by_id(R.evaluate_claims(runs, reference=ZERO))["P1"]
    assert row["verdict"] == R.NA and row["numbers"] == {"missing": ["svrght"]}
    assert math.isnan(row["margin"])


def test_speed_target_is_on_the_optimisation_scale():
    # F* = 1e-3 (the noise floor), F(x0) = 1: a run at 1.5 F* has relative gap 0.5 (far from
    # the old 0.1 level: "another local minimum") but speed gap 5e-4 / (1 - 1e-3) ~ 5e-4;
    # at F* + 5e-5 it has reached the speed target 1e-4 while its relative gap is 0.05
    passes = np.arange(4.0)
    obj = np.array([1.0, 1.5e-3, 1e-3 + 5e-5, 1e-3 + 5e-5])
    runs = {"svrgsp": trace("svrgsp", passes, obj),
            "svrght": trace("svrght", passes, np.array([1.0, 0.5, 0.4, 0.3]),
                            supports=ALT[:4])}
    ref = REF.Reference(1e-3, "floor")
    row = by_id(R.evaluate_claims(runs, reference=ref))["P1"]
    assert row["verdict"] == R.SUPPORTED
    np.testing.assert_allclose(RC.speed_gap(obj, 1e-3, 1.0), (obj - 1e-3) / (1.0 - 1e-3))
    table = {r["method"]: r for r in RC.target_table(runs, reference=ref)}
    assert table["svrgsp"]["passes"]["0.0001"] is not None
    assert table["svrgsp"]["which_local_minimum"]["final"] == pytest.approx(0.05)
    assert table["svrght"]["passes"]["0.001"] is None  # "never"


def _quality_runs(err, recovered, strong=10):
    """All six methods, final errors ``err[m]``, ``recovered[m]`` strong coordinates."""
    passes = np.arange(3.0)
    runs, quality = {}, {}
    for m in RE.METHODS:
        runs[m] = trace(m, passes, np.array([1.0, 0.5, 0.25]),
                        rel_error=np.array([1.0, 0.5, err[m]]))
        quality[m] = {"final_error": err[m], "strong": strong, "recovered": recovered[m],
                      "heldout_loss": None}
    return runs, quality


@pytest.mark.parametrize("vr_err, other_err, verdict", [
    (0.010, 0.020, R.SUPPORTED),      # the VR methods end with half the error
    (0.020, 0.010, R.CONTRADICTED),
    (0.0100, 0.0101, R.TIE),          # 1 % apart: within the 2 % quality tolerance
])
def test_quality_claim_compares_final_estimation_error(vr_err, other_err, verdict):
    err = {m: vr_err if m in RC.VR_METHODS else other_err for m in RE.METHODS}
    runs, quality = _quality_runs(err, {m: 10 for m in RE.METHODS})
    row = by_id(R.evaluate_claims(runs, reference=ZERO, quality=quality))["V2"]
    assert row["verdict"] == verdict
    assert row["margin"] == pytest.approx(other_err / vr_err - 1)
    assert row["numbers"]["metric"] == "final_error"
    # the old relative gap survives only as the labelled "which local minimum" numbers
    assert "which local minimum" in row["text"]
    assert set(row["numbers"]["which_local_minimum"]) == {
        method_label(m) for m in RE.METHODS}


@pytest.mark.parametrize("vr, other, verdict, margin", [
    (10, 10, R.TIE, 0.0),          # every run holds every strong coordinate
    (10, 9, R.SUPPORTED, 1.0),
    (8, 10, R.CONTRADICTED, -2.0),
])
def test_recovery_claim_counts_strong_coordinates(vr, other, verdict, margin):
    rec = {m: vr if m in RC.VR_METHODS else other for m in RE.METHODS}
    runs, quality = _quality_runs({m: 0.01 for m in RE.METHODS}, rec)
    row = by_id(R.evaluate_claims(runs, reference=ZERO, quality=quality))["V3"]
    assert (row["verdict"], row["margin"]) == (verdict, margin)
    assert row["margin_unit"] == "coordinates"


def test_quality_of_counts_strong_true_coordinates():
    # n = 100, sigma = 0.1: strong means |x*_j| > 3 * 0.1 / 10 = 0.03
    x_true = np.array([1.0, -0.5, 0.02, 0.0, 0.04, 0.0])
    assert RC.strong_threshold(100, 0.1) == pytest.approx(0.03)
    tr = trace("fght", [0.0, 1.0], [1.0, 0.5], rel_error=[1.0, 0.2], supports=[[0], [0, 2, 4]])
    q = RC.quality_of(tr, x_true, 0.1, 100)
    # strong: 0, 1, 4; the final support {0, 2, 4} holds 0 and 4
    assert (q["strong"], q["recovered"], q["final_error"]) == (3, 2, 0.2)
    assert RC.quality_of(tr)["strong"] is None  # real data: no truth


def test_quality_claims_without_truth_are_na():
    passes = np.arange(3.0)
    runs = {m: trace(m, passes, [1.0, 0.5, 0.25]) for m in RE.METHODS}
    rows = by_id(R.evaluate_claims(runs, reference=ZERO))
    assert rows["V2"]["verdict"] == R.NA and "held-out" in rows["V2"]["text"]
    assert rows["V3"]["verdict"] == R.NA
    # a held-out loss per method (real data) is what V2 then compares
    quality = {m: {"heldout_loss": 0.3 if m in RC.VR_METHODS else 0.4} for m in RE.METHODS}
    v2 = by_id(R.evaluate_claims(runs, reference=ZERO, quality=quality))["V2"]
    assert v2["verdict"] == R.SUPPORTED and v2["numbers"]["metric"] == "heldout_loss"
    assert v2["margin"] == pytest.approx(0.4 / 0.3 - 1)


# -- over seeds ---------------------------------------------------------------------------------


def seeds_of(verdicts, margins=None):
    margins = margins or [0.5] * len(verdicts)
    return [(k, [{"id": "P1", "claim": "c", "level": "l", "verdict": v, "margin": mg,
                  "margin_unit": "relative", "tie_tolerance": 0.05,
                  "lean": "leans towards the claim" if v == R.NOT_SHOWN else None,
                  "text": f"seed {k}", "numbers": {"k": k}}])
            for k, (v, mg) in enumerate(zip(verdicts, margins, strict=True))]


S, C, T, N, A = R.SUPPORTED, R.CONTRADICTED, R.TIE, R.NOT_SHOWN, R.NA


@pytest.mark.parametrize("verdicts, overall, agreement", [
    ([S] * 5, S, "5/5"),
    ([S, S, S, S, C], S, "4/5"),                 # 80 %: supported
    ([C, C, C, C, S], C, "4/5"),
    ([S, S, S, C, C], R.MIXED, "3/5"),           # 60 %: mixed
    ([S, S, S, T, T], R.MIXED, "3/5"),
    ([T, T, T, T, S], T, "4/5"),                 # a tie over seeds
    ([N] * 5, N, "5/5"),
    ([A] * 5, A, "5/5"),
    ([S, C], R.MIXED, "1/2"),
    ([S, S], S, "2/2"),
    ([S] * 8 + [C] * 2, S, "8/10"),              # the rule is 80 %, not "4 of 5"
    ([S] * 7 + [C] * 3, R.MIXED, "7/10"),
    ([C], C, "1/1"),
])
def test_verdict_over_seeds_needs_80_percent(verdicts, overall, agreement):
    row = R.aggregate_claims(seeds_of(verdicts))[0]
    assert (row["verdict"], row["agreement"]) == (overall, agreement)
    assert [p["verdict"] for p in row["per_seed"]] == verdicts
    assert [p["seed"] for p in row["per_seed"]] == list(range(len(verdicts)))
    assert sum(row["counts"].values()) == len(verdicts)
    assert (row["lean"] is not None) == (overall == N)


def test_margins_over_seeds_give_the_spread():
    row = R.aggregate_claims(seeds_of([S, S, T, S, S], [0.3, math.inf, 0.01, 0.2, 0.5]))[0]
    assert row["margin"] == {"min": 0.01, "median": 0.25, "max": 0.5}  # infinities left out
    assert [p["margin"] for p in row["per_seed"]] == [0.3, math.inf, 0.01, 0.2, 0.5]
    assert "4/5 seeds supported" in row["text"] and "+1.0 %" in row["text"]
    text = R.format_claims([row])
    assert "[supported (4/5)]" in text.replace(" ", "").replace("supported(", "supported (")
    assert "per seed: 0: supported +30.0 %, 1: supported +inf, 2: tie +1.0 %" in text
    md = R.format_claims([row], markdown=True)
    assert "**supported (4/5)**" in md
    assert RC.verdict_counts([row])[R.SUPPORTED] == 1


def test_aggregate_rejects_nothing_and_mismatched_claims():
    with pytest.raises(ValueError, match="at least one seed"):
        R.aggregate_claims([])
    a, b = seeds_of([S, S])
    b[1][0]["id"] = "P2"
    with pytest.raises(ValueError, match="seed 1 has other claims"):
        R.aggregate_claims([a, b])


def test_every_claim_over_seeds_on_real_traces():
    """evaluate_claims per seed, then aggregate: the verdict over seeds is the 80 % one."""
    per_seed = []
    for k, (sp, ht) in enumerate([(4.0, 8.0)] * 4 + [(8.0, 4.0)]):
        per_seed.append((k, R.evaluate_claims(p1(sp, ht), reference=ZERO)))
    rows = by_id(R.aggregate_claims(per_seed))
    assert rows["P1"]["verdict"] == R.SUPPORTED and rows["P1"]["agreement"] == "4/5"
    assert rows["P1"]["counts"] == {R.SUPPORTED: 4, R.CONTRADICTED: 1}
    assert rows["P1"]["margin"]["min"] == pytest.approx(-0.5)
    assert rows["P2"]["verdict"] == R.NA  # SVRGSP+ missing on every seed
