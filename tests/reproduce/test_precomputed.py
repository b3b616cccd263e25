"""Precomputed Figure 1 runs for the course: ``scripts/precompute_fig1.py`` and
``rgrasp_viz.reproduce._precomputed`` (compact copies round-trip what ``reproduce`` wrote)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from rgrasp_viz._trace import Trace
from rgrasp_viz.reproduce import _precomputed as P
from rgrasp_viz.reproduce._experiments import METHODS
from rgrasp_viz.reproduce._report import trace_filename
from rgrasp_viz.viz import figures as F

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("precompute_fig1",
                                                  ROOT / "scripts" / "precompute_fig1.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    base = tmp_path_factory.mktemp("fig1")
    out, work = base / "data", base / "work"
    files = _script().main(["--quick", "--budget", "3", "--out", str(out), "--work",
                            str(work), "--max-supports", "5", "--seeds", "0-1"])
    return files, out, work / "fig1-setting1-quick"


def test_script_writes_a_small_npz_and_json(written):
    files, out, _ = written
    assert sorted(f.name for f in files) == ["fig1-setting1-quick.json",
                                             "fig1-setting1-quick.npz"]
    assert all(f.parent == out and f.is_file() for f in files)
    assert sum(f.stat().st_size for f in files) < 300_000
    with np.load(out / "fig1-setting1-quick.npz", allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)  # no pickle needed


def test_loader_round_trips_what_reproduce_wrote(written):
    _, out, work = written
    pre = P.load(out / "fig1-setting1-quick.npz")
    run_json = json.loads((work / "run.json").read_text())
    assert pre.name == "fig1-setting1-quick"
    assert list(pre.traces) == list(METHODS)  # the paper's order
    assert pre.fstar.value == run_json["fstar"] and pre.fstar.origin == "reference"
    assert run_json["fstar_source"] in pre.fstar.source
    claims_md = (work / "claims.md").read_text()
    assert pre.claims and all(c["id"] in claims_md and c["claim"] in claims_md
                              for c in pre.claims)
    if isinstance(run_json.get("claims"), list):  # run.json lists them (issue 18)
        assert pre.claims == run_json["claims"]
    assert pre.settings["budget_passes"] == 3 and pre.settings["quick"] is True
    assert "1/n" in pre.pass_rule
    for m, tr in pre.traces.items():
        full = Trace.load(work / "traces" / trace_filename(m))
        for k in ("passes", "time", "objective", "rel_error", "support_size",
                  "n_thresholds"):
            np.testing.assert_array_equal(getattr(tr, k), getattr(full, k), err_msg=k)
        rows = tr.meta["support_rows"]
        assert rows[0] == 0 and rows[-1] == len(full) - 1 and len(rows) <= 5
        for t in rows:
            np.testing.assert_array_equal(tr.support(t), full.support(t))
            np.testing.assert_array_equal(tr.x(t), full.x(t))
        assert tr.meta["compact"] is True and tr.method == m
        np.testing.assert_array_equal(tr.x_true, full.x_true)


def test_loaded_runs_draw_gaps_against_the_verdicts_fstar(written):
    _, out, _ = written
    pre = P.load(out / "fig1-setting1-quick")
    fig = F.convergence(list(pre.traces.values()), fstar=pre.fstar)
    assert fig.layout.meta["fstar"] == pre.fstar.value
    for g in fig.data:
        if g.meta["role"] == "gap":
            y = np.asarray(g.y, dtype=float)
            assert np.isfinite(y).all() and (y > 0).all(), g.name


def test_loader_names_missing_or_mismatched_files(written, tmp_path):
    _, out, _ = written
    with pytest.raises(FileNotFoundError, match="precompute_fig1.py"):
        P.load(tmp_path / "nothing.npz")
    (tmp_path / "x.json").write_text((out / "fig1-setting1-quick.json").read_text())
    np.savez_compressed(tmp_path / "x.npz", x_true=np.zeros(3))
    with pytest.raises(ValueError, match="do not belong together"):
        P.load(tmp_path / "x.json")


def test_script_refuses_bad_arguments_before_any_work(tmp_path, capsys):
    mod = _script()
    for argv in (["fig2-rcv1"], ["--budget", "0"], ["--max-supports", "1"]):
        with pytest.raises(SystemExit):
            mod.main([*argv, "--out", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="at least 2"):
        P.compact_arrays(None, max_supports=1)


def test_notebook_5_cells_draw_the_precomputed_runs(written, tmp_path, monkeypatch, capsys):
    """Notebook 5's section 5 (its sources, not its outputs): loads what the script wrote,
    draws it against the verdicts' F*, prints every claim with its verdict; a missing
    setting is said in one line."""
    import nbformat
    import plotly.io as pio

    _, out, _ = written
    data = tmp_path / "data"
    data.mkdir()
    for suffix in (".npz", ".json"):  # the quick run stands for the full-size one here
        (data / f"fig1-setting1{suffix}").write_bytes(
            (out / f"fig1-setting1-quick{suffix}").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pio, "show", lambda *a, **k: None)
    nb = nbformat.read(ROOT / "notebooks" / "05-reproduce-figure1.ipynb", 4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    ns = {}
    exec(code[0], ns)  # imports
    section = [s for s in code if "precomputed" in s or "pre.traces" in s or
               "format_claims" in s]
    assert len(section) == 3
    for src in section:
        exec(src, ns)
    printed = capsys.readouterr().out
    assert list(ns["full"]) == ["fig1-setting1"]
    assert "fig1-setting2: not precomputed here" in printed
    assert "Passes: A pass is one evaluation" in printed
    pre = ns["full"]["fig1-setting1"]
    for c in pre.claims:
        assert c["id"] in printed and c["claim"] in printed and c["verdict"] in printed
    assert ns["fig"].layout.meta["fstar"] == pre.fstar.value
