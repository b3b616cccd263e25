"""The condition map (``reproduce condition-map``): scoring, winners, the constants, the
command's arguments, and one small end-to-end run (serial and parallel give the same map)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz.reproduce import _condition_map as cm
from rgrasp_viz.reproduce._command import add_parser


def _rec(method, objective, passes=None, diverged=False):
    objective = np.asarray(objective, dtype=float)
    passes = np.arange(len(objective), dtype=float) if passes is None else np.asarray(passes)
    return {"method": method, "factor": 1.0, "eta": 0.1, "status": "CALLBACK",
            "diverged": diverged, "passes_used": float(passes[-1]), "objective": objective,
            "passes": passes, "time": passes * 0.01}


def _cell(seed, runs, rho=0.0, shape="paper"):
    return {"shape": shape, "rho": rho, "seed": seed, "n": 10, "d": 20, "s": 2, "s_star": 2,
            "f0": 1.0, "fstar": 0.0, "fstar_source": "given", "runs": runs,
            "constants": {"L": 2.0, "Lmax": 20.0, "Lmean": 19.0, "n": 10, "ratio": 1.0}}


def _geometric(rate, k=40):
    """F = rate^t from F0 = 1 to F* = 0: the fraction is rate^t exactly."""
    return rate ** np.arange(k, dtype=float)


def test_rows_count_passes_to_each_level_and_take_the_median_over_seeds():
    # fght: fraction 0.5^t reaches 1e-4 after log(1e-4)/log(0.5) = 13.29 passes (interpolated
    # in log: exact for a geometric curve); svrgsp+: 0.1^t reaches it at 4 exactly
    cells = [_cell(s, [_rec("fght", _geometric(0.5)), _rec("svrgsp+", _geometric(0.1))])
             for s in (0, 1, 2)]
    cells[2]["runs"][1] = _rec("svrgsp+", _geometric(0.2))  # one slower seed: 5.72 passes
    for c in cells:
        c["runs"][0]["factor"] = 2.0  # fght's tuned multiplier
    rows = cm.map_rows(cells, {("paper", 0.0, "fght"): 2.0})
    by = {r["method"]: r for r in rows}
    assert by["fght"]["passes"] == pytest.approx(math.log(1e-4) / math.log(0.5))
    assert by["fght"]["factor"] == 2.0 and by["svrgsp+"]["factor"] == 1.0
    assert by["svrgsp+"]["passes"] == pytest.approx(4.0)  # median of 4, 4, 5.72
    assert by["svrgsp+"]["levels"]["1e-05"]["per_seed"] == pytest.approx(
        [5.0, 5.0, math.log(1e-5) / math.log(0.2)])
    assert by["fght"]["seconds"] == pytest.approx(0.01 * by["fght"]["passes"])
    assert all(r["reached"] for r in rows) and by["fght"]["seeds"] == [0, 1, 2]
    (win,) = cm.winners(rows)
    assert (win["method"], win["runner_up"], win["variance_reduced"]) == (
        "svrgsp+", "fght", True)
    assert not win["tie"]
    # the runner-up within 5 % of the winner's passes: a tie, said so
    cells = [_cell(0, [_rec("fght", _geometric(0.1)),
                       _rec("sght", _geometric(0.1), passes=np.arange(40) * 1.04)])]
    (win,) = cm.winners(cm.map_rows(cells, {}))
    assert (win["method"], win["runner_up"], win["tie"]) == ("fght", "sght", True)


def test_rows_take_the_runs_of_one_step_multiplier_and_the_paper_steps_are_a_second_view():
    # a cell holds each method with its tuned multiplier and with the paper's (1): the map
    # takes the tuned runs, the paper-steps view the others, never a mix of the two
    cells = []
    for s in (0, 1, 2):
        tuned = _rec("sght", _geometric(0.1))
        tuned["factor"] = 4.0
        cells.append(_cell(s, [_rec("fght", _geometric(0.5)), tuned,
                               _rec("sght", np.maximum(_geometric(0.5), 1e-3)),
                               _rec("svrgsp+", _geometric(0.3))], rho=0.1))
    factors = {("paper", 0.1, "sght"): 4.0}
    by = {r["method"]: r for r in cm.map_rows(cells, factors)}
    assert by["sght"]["factor"] == 4.0 and by["sght"]["passes"] == pytest.approx(4.0)
    paper = cm.map_rows(cells, {})
    bp = {r["method"]: r for r in paper}
    assert len(paper) == 3 and bp["sght"]["factor"] == 1.0 and not bp["sght"]["reached"]
    (won,) = cm.winners(cm.map_rows(cells, factors))
    (won_paper,) = cm.winners(paper)
    assert (won["method"], won_paper["method"]) == ("sght", "svrgsp+")
    text = cm.paper_steps_paragraph([won_paper], [won])
    assert "SVRGSP+ (variance-reduced, 8 passes vs FG-HT 13)" in text
    assert "tuning changes the winner at rho = 0.1 (tuned: SG-HT)" in text
    out = cm.summarize(cm.map_rows(cells, factors), cm._constants(cells), paper)
    assert out["winner_paper_steps"] == [won_paper] and text in out["claims"]
    # the curves drawn are the tuned runs'
    curves = cm._curves(cells, 0, factors)
    assert sorted(c["method"] for c in curves) == ["fght", "sght", "svrgsp+"]


def test_a_method_not_reached_on_every_seed_cannot_win():
    slow = _geometric(0.5)
    fast = _geometric(0.01)
    stuck = np.maximum(_geometric(0.01), 1e-3)  # plateaus above 1e-4
    cells = [_cell(0, [_rec("fght", slow), _rec("sght", fast)]),
             _cell(1, [_rec("fght", slow), _rec("sght", stuck)]),
             _cell(2, [_rec("fght", slow), _rec("sght", stuck)])]
    rows = cm.map_rows(cells, {})
    by = {r["method"]: r for r in rows}
    assert by["sght"]["passes"] is None and not by["sght"]["reached"]
    assert by["sght"]["levels"]["0.0001"]["reached_seeds"] == 1
    assert by["sght"]["levels"]["0.001"]["reached"]  # the plateau is at 1e-3: reached
    (win,) = cm.winners(rows)
    assert win["method"] == "fght" and win["runner_up"] is None
    assert not win["variance_reduced"]
    # a diverged run never reaches anything
    cells = [_cell(0, [_rec("fght", slow, diverged=True)])]
    (row,) = cm.map_rows(cells, {})
    assert row["passes"] is None and cm.winners([row])[0]["method"] is None


def test_the_paragraph_names_the_winner_of_each_rho_with_numbers():
    cells = []
    for rho, (a, b) in {0.0: (0.1, 0.5), 0.1: (0.5, 0.1)}.items():
        cells.append(_cell(0, [_rec("fght", _geometric(a)), _rec("svrgsp+", _geometric(b))],
                           rho=rho))
        cells[-1]["constants"]["ratio"] = 1.5 if rho == 0 else 0.2
    rows = cm.map_rows(cells, {})
    won = cm.winners(rows)
    assert [(w["rho"], w["method"]) for w in won] == [(0.0, "fght"), (0.1, "svrgsp+")]
    text = cm.claims_paragraph(rows, won, cm._constants(cells))
    assert "FG-HT (without variance reduction) wins at rho = 0 (rho = 0: 4 passes vs " \
           "SVRGSP+ 13)" in text
    assert "SVRGSP+ (variance-reduced) wins at rho = 0.1" in text
    assert "1.5 at rho = 0, 0.2 at rho = 0.1" in text
    assert "grows from 2 to 2 (x1)" in text and "stays at 19 to 19 on average (d = 20)" in text


def test_smoothness_constants_against_numpy():
    prob = rv.make_regression(n=200, d=80, s_star=4, correlation=0.3, random_state=0)
    c = cm.smoothness(prob, 5)
    W = np.asarray(prob.W)
    assert c["Lmax"] == pytest.approx(float(np.max(np.sum(W * W, axis=1))))
    assert c["Lmean"] == pytest.approx(float(np.mean(np.sum(W * W, axis=1))))
    S = np.argsort(-np.abs(W.T @ prob.y), kind="stable")[:10]
    lam = np.linalg.eigvalsh(W[:, S].T @ W[:, S] / prob.n)[-1]
    assert c["L"] == pytest.approx(lam, rel=1e-3)
    assert c["ratio"] == pytest.approx(c["Lmax"] / (prob.n * c["L"]))
    # correlation raises L (about 1 + 2s rho), not the row norms (about d)
    c0 = cm.smoothness(rv.make_regression(n=200, d=80, s_star=4, random_state=0), 5)
    assert c["L"] > 2 * c0["L"] and c["Lmean"] == pytest.approx(c0["Lmean"], rel=0.2)


def test_the_stall_rule_stops_a_run_only_once_it_has_stopped_improving():
    class Info:
        def __init__(self, passes, fun):
            self.passes, self.fun = passes, fun

    stop = cm._Stop(budget=100.0, f0=1.0)
    for p in range(30):  # halving every pass: never stalls
        stop(Info(float(p), 0.5 ** p))
    stop = cm._Stop(budget=100.0, f0=1.0)
    with pytest.raises(StopIteration):
        for p in range(40):
            stop(Info(float(p), max(0.5 ** p, 1e-3)))  # flat at 1e-3 from pass 10
    assert 29 <= p <= 31
    with pytest.raises(StopIteration):
        cm._Stop(budget=3.0, f0=1.0)(Info(3.0, 0.1))


def test_bad_arguments_are_refused_before_any_work(tmp_path):
    for seeds, msg in (((), "non-negative"), ((0, 0), "repeat"), ((-1,), "non-negative"),
                       ((1000,), "tuning seeds")):
        with pytest.raises(ValueError, match=msg):
            cm.check_map_args(seeds)
    with pytest.raises(ValueError, match="jobs"):
        cm.check_map_args(jobs=0)
    with pytest.raises(ValueError, match="budget"):
        cm.check_map_args(budget=-1)
    with pytest.raises(ValueError, match="unknown shape"):
        cm.run_condition_map(quick=True, out=tmp_path / "x", shapes=("wide",))
    with pytest.raises(ValueError, match="rho"):
        cm.run_condition_map(quick=True, out=tmp_path / "x", rhos=(1.0,))
    assert not (tmp_path / "x").exists()


def test_command_line_arguments():
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    rep = add_parser(sub)
    args = parser.parse_args(["reproduce", "condition-map", "--quick", "--jobs", "2",
                              "--seeds", "0,3"])
    assert (args.experiment, args.jobs, args.quick) == ("condition-map", 2, True)
    assert args.seeds == [0, 3]
    for bad in (["--jobs", "0"], ["--seeds", "1,1"], ["--seeds", "a"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["reproduce", "condition-map", *bad])
    args = parser.parse_args(["reproduce", "condition-map", "--seeds", "0-1", "--seed", "2"])
    with pytest.raises(SystemExit):
        args.check(args, rep)  # one or the other


@pytest.fixture(scope="module")
def small_map(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmap") / "map"
    data = cm.run_condition_map(quick=True, out=out, seeds=(0, 1), rhos=(0.0, 0.3),
                                shapes=("tall",), budget=20, png=False, progress=False)
    return out, data


def test_a_small_map_end_to_end(small_map):
    out, data = small_map
    saved = json.loads((out / "run.json").read_text())
    assert {p.name for p in out.iterdir()} == {"run.json", "claims.md", "map.html"}
    assert len(saved["map"]) == 2 * 6  # two rho, six methods
    assert {(r["rho"], r["shape"]) for r in saved["map"]} == {(0.0, "tall"), (0.3, "tall")}
    for r in saved["map"]:
        assert set(r) >= {"rho", "shape", "method", "passes", "seconds", "reached", "levels"}
        assert set(r["levels"]) == {"0.001", "0.0001", "1e-05"}
        assert r["seeds"] == [0, 1]
    assert [(w["rho"], w["shape"]) for w in saved["winner"]] == [(0.0, "tall"), (0.3, "tall")]
    assert set(saved["winner_by_level"]) == {"0.001", "0.0001", "1e-05"}
    assert saved["winner_by_level"]["0.0001"] == saved["winner"]
    assert [c["rho"] for c in saved["constants"]] == [0.0, 0.3]
    assert saved["constants"][1]["L"] > saved["constants"][0]["L"]
    assert saved["tuning_seeds"] == [1000]
    picked = [t for t in saved["step_tuning"]["table"] if t["picked"]]
    assert len(picked) == 2 * 5  # one factor per (rho, stepped method)
    # every crossing is a pass count within the budget (the iteration crossing it completes)
    assert all(p is None or 0 <= p <= 30 for r in saved["map"]
               for p in r["levels"]["0.001"]["per_seed"])
    # F* is the shared reference (never above a run): every curve stays >= 0
    assert all(v is None or v >= 0 for c in saved["curves"] for v in c["fraction"])
    assert saved["claims"] in (out / "claims.md").read_text()
    # the paper's own steps: the same map from the runs with multiplier 1
    assert len(saved["map_paper_steps"]) == 2 * 6
    assert all(r["factor"] == 1.0 for r in saved["map_paper_steps"])
    assert [(w["rho"], w["shape"]) for w in saved["winner_paper_steps"]] == [
        (0.0, "tall"), (0.3, "tall")]
    assert "With the paper's own steps" in saved["claims"]


def test_parallel_gives_the_serial_map(small_map, tmp_path):
    _, serial = small_map
    par = cm.run_condition_map(quick=True, out=tmp_path / "p", seeds=(0, 1), rhos=(0.0, 0.3),
                               shapes=("tall",), budget=20, png=False, progress=False, jobs=2)

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "seconds" and k != "levels"}
                | {"levels": {lv: {k: x for k, x in d.items() if k != "seconds"}
                              for lv, d in r["levels"].items()}} for r in rows]

    assert strip(par["map"]) == strip(serial["map"])
    assert par["winner"] == serial["winner"] and par["constants"] == serial["constants"]


def test_the_command_passes_its_arguments_and_prints_the_winners(monkeypatch, capsys, tmp_path):
    import argparse

    from rgrasp_viz.reproduce import _command as command

    seen = {}

    def fake(**kw):
        seen.update(kw)
        w = {"rho": 0.0, "shape": "paper", "method": "fght", "label": "FG-HT"}
        return {"claims": "FG-HT wins.", "speed_target": 1e-4, "wall_seconds": 1.0,
                "winner": [w], "winner_by_level": {"0.001": [w], "0.0001": [w],
                                                   "1e-05": [dict(w, label=None)]}}

    monkeypatch.setattr(command, "run_condition_map", fake)
    parser = argparse.ArgumentParser()
    rep = add_parser(parser.add_subparsers(dest="command"))
    out = tmp_path / "m"
    args = parser.parse_args(["reproduce", "condition-map", "--quick", "--seeds", "3-5",
                              "--jobs", "2", "--budget", "50", "--no-png", "--out", str(out)])
    args.check(args, rep)
    assert command.main(args) == 0
    assert seen == {"quick": True, "out": str(out), "seeds": [3, 4, 5], "jobs": 2,
                    "scheduler": None, "budget": 50.0, "png": False}
    text = capsys.readouterr().out
    assert "FG-HT wins." in text and "to 1e-05: none" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["reproduce", "condition-map", "--seeds", "1000"])  # a tuning seed
    assert "tuning seeds" in capsys.readouterr().err


def test_the_committed_map_says_what_its_numbers_say():
    """The course's full-size record (notebooks/data/condition-map.json): its winners and
    paragraph follow from its rows, and it shows what notebook 4½ states: with the paper's
    own steps a method without variance reduction wins at rho = 0 and a variance-reduced one
    at rho = 0.1 on the paper's shape; with tuned steps SVRGSP+ wins at rho = 0.3."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "notebooks" / "data" / "condition-map.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    again = cm.summarize(record["map"], record["constants"], record["map_paper_steps"])
    for key in ("winner", "winner_by_level", "winner_paper_steps", "claims"):
        assert again[key] == record[key], key
    paper = {w["rho"]: w for w in record["winner_paper_steps"] if w["shape"] == "paper"}
    assert paper[0.0]["method"] == "fght" and not paper[0.0]["variance_reduced"]
    assert paper[0.1]["method"] == "svrgsp+" and paper[0.1]["variance_reduced"]
    tuned = {w["rho"]: w for w in record["winner"] if w["shape"] == "paper"}
    assert tuned[0.3]["method"] == "svrgsp+" and tuned[0.1]["method"] == "sght"
    assert all(r["factor"] == 1.0 for r in record["map_paper_steps"])
