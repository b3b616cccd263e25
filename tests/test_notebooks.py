"""The course notebooks: structure, committed outputs, and an nbval replay.

* Static checks on every course notebook (``notebooks/NN-*.ipynb``): the Project Pythia
  sections, every code cell executed in one top-to-bottom run and carrying its outputs, no
  error outputs, no widget state, an exercise with a passing check, size < 1 MB.
* nbval replays every course notebook (and ``notebooks/app.ipynb`` when it is committed
  executed) in a fresh kernel and compares each checked cell's output with the committed
  one, through ``notebooks/nbval_sanitize.cfg``.  A notebook whose saved numbers are stale
  (re-executing changes a checked number) fails here; one saved without outputs fails the
  static checks (nbval alone does not compare cells that were never run).
* The staleness check is itself tested: a copy of a notebook with one printed number
  changed must fail nbval, and a copy with its outputs stripped must fail the static checks.

Refresh the notebooks after a package change with ``python scripts/execute_notebooks.py``.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
SANITIZE = NB_DIR / "nbval_sanitize.cfg"
APP = NB_DIR / "app.ipynb"
MAX_BYTES = 1_000_000
IGNORE_TAG = "nbval-ignore-output"

EXPECTED = (
    "00-visual-explainer.ipynb",
    "01-hard-thresholding.ipynb",
    "02-svrght-vs-svrgsp.ipynb",
    "03-rgrasp-framework.ipynb",
    "04-tuning.ipynb",
    "05-reproduce-figure1.ipynb",
    "06-real-data.ipynb",
)

COURSE = sorted(NB_DIR.glob("[0-9][0-9]-*.ipynb"))
PYTHIA = ("## Overview", "## Prerequisites", "## Imports", "## Summary", "### What's next?",
          "## Resources and references")


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _text_outputs(cell):
    """All stdout text and text/plain data of a cell, concatenated."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        for key in ("text/plain",):
            val = out.get("data", {}).get(key)
            if val is not None:
                parts.append("".join(val) if isinstance(val, list) else val)
    return "".join(parts)


def _prints(src):
    """Whether running ``src`` calls ``print`` (outside function and class bodies).

    Cells that display a figure or a widget are tagged ``nbval-ignore-output`` and checked
    for outputs through the tag."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "print"):
            return True
        return any(visit(child) for child in ast.iter_child_nodes(node))

    return any(visit(node) for node in tree.body)


def _is_executed(nb):
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return bool(code) and all(c.get("execution_count") is not None for c in code)


# -- static checks (also applied to doctored copies below) ----------------------------------


def structure_problems(nb):
    """Why ``nb`` does not follow the Project Pythia template (empty list: it does)."""
    problems = []
    md = [_source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
    headings = [line.strip() for text in md for line in text.splitlines()
                if line.startswith("#")]
    titles = [h for h in headings if re.match(r"^# \S", h)]
    if len(titles) != 1:
        problems.append(f"expected exactly one '# ' title, found {titles}")
    if not md or not md[0].lstrip().startswith("# "):
        problems.append("the first cell must be the '# ' title")
    pos = {}
    for key in PYTHIA:
        hits = [i for i, h in enumerate(headings) if h == key or h.startswith(key + " ")]
        if not hits:
            problems.append(f"missing section {key!r}")
        else:
            pos[key] = hits[0]
    order = [pos[k] for k in PYTHIA if k in pos]
    if order != sorted(order):
        problems.append(f"sections out of order: {[k for k in PYTHIA if k in pos]}")
    if "## Imports" in pos and "## Summary" in pos:
        body = [h for h in headings[pos["## Imports"] + 1: pos["## Summary"]]
                if h.startswith("## ")]
        if len(body) < 2:
            problems.append(f"need at least two content sections, found {body}")
    prereq = next((t for t in md if "## Prerequisites" in t), "")
    if "| Concepts | Importance | Notes |" not in prereq:
        problems.append("the prerequisites need the concepts table")
    if not re.search(r"\*\*Time to learn\*\*: \d+ minutes", prereq):
        problems.append("the prerequisites need a 'Time to learn: N minutes' estimate")
    overview = next((t for t in md if "## Overview" in t), "")
    if not re.search(r"^1\. ", overview, flags=re.MULTILINE):
        problems.append("the overview needs a numbered list of topics")
    if not any("$" in t for t in md):
        problems.append("no LaTeX math in the markdown")
    return problems


def execution_problems(nb):
    """Why ``nb`` is not committed as one complete top-to-bottom run (empty: it is)."""
    problems = []
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in code]
    if any(n is None for n in counts):
        missing = sum(n is None for n in counts)
        problems.append(f"{missing} of {len(code)} code cells were not executed")
    elif counts != list(range(1, len(code) + 1)):
        problems.append(f"execution counts are not 1..{len(code)} in order: {counts}")
    for i, c in enumerate(code):
        src = _source(c)
        outs = c.get("outputs", [])
        for out in outs:
            if out.get("output_type") == "error":
                problems.append(f"code cell {i} has an error output: {out.get('ename')}")
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                problems.append(f"code cell {i} writes to stderr")
            for key in out.get("data", {}):
                if key == "application/vnd.jupyter.widget-state+json":
                    problems.append(f"code cell {i} stores widget state")
            if out.get("execution_count") not in (None, c.get("execution_count")):
                problems.append(f"code cell {i}: output from another execution")
        tags = c.get("metadata", {}).get("tags", [])
        if (_prints(src) or IGNORE_TAG in tags) and not outs:
            problems.append(f"code cell {i} has no outputs:\n{src[:200]}")
    if "widgets" in nb.get("metadata", {}):
        problems.append("notebook metadata holds widget state")
    return problems


def exercise_problems(nb):
    """An exercise cell (✏️) followed by a check cell whose saved output says ✓ correct."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    learner = [i for i, c in enumerate(code) if "✏️" in _source(c)]
    checks = [i for i, c in enumerate(code)
              if "# check" in _source(c) and "assert" in _source(c)]
    problems = []
    if not learner:
        problems.append("no exercise cell (marked ✏️)")
    if not checks:
        problems.append("no check cell ('# check' with asserts)")
    for i in learner:
        if i + 1 not in checks:
            problems.append(f"exercise cell {i} is not followed by a check cell")
    for i in checks:
        if "✓ correct" not in _text_outputs(code[i]):
            problems.append(f"check cell {i} did not print '✓ correct'")
        if IGNORE_TAG in code[i].get("metadata", {}).get("tags", []):
            problems.append(f"check cell {i} must be checked by nbval")
    return problems


# -- the committed notebooks -------------------------------------------------------------------


def test_the_course_is_complete():
    assert tuple(p.name for p in COURSE) == EXPECTED
    assert SANITIZE.is_file()


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.stem)
def test_pythia_structure(path):
    assert structure_problems(_load(path)) == []


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.stem)
def test_committed_executed_with_outputs(path):
    assert execution_problems(_load(path)) == []


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.stem)
def test_exercises_are_checked(path):
    assert exercise_problems(_load(path)) == []


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.stem)
def test_small_and_without_widget_state(path):
    size = path.stat().st_size
    assert size < MAX_BYTES, f"{path.name} is {size:,} bytes"
    raw = path.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in raw


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.stem)
def test_volatile_output_is_not_checked(path):
    """Figures, widgets and timings live only in cells tagged nbval-ignore-output."""
    for c in _load(path)["cells"]:
        if c["cell_type"] != "code" or IGNORE_TAG in c.get("metadata", {}).get("tags", []):
            continue
        for out in c.get("outputs", []):
            kinds = set(out.get("data", {}))
            assert not kinds & {"application/vnd.plotly.v1+json",
                                "application/vnd.jupyter.widget-view+json", "text/html"}, (
                f"{path.name}: untagged cell shows {kinds}:\n{_source(c)[:200]}")
        text = _text_outputs(c)
        assert not re.search(r"\d\s?(ms|µs)\b|\bseconds?\b", text), (
            f"{path.name}: a checked cell prints a timing:\n{text[:300]}")


# -- nbval ------------------------------------------------------------------------------------


def _nbval(paths, cwd=ROOT):
    cmd = [sys.executable, "-m", "pytest", "--nbval", *map(str, paths),
           "--nbval-sanitize-with", str(SANITIZE), "-p", "no:cacheprovider", "-q",
           "-o", "addopts=", "--rootdir", str(cwd)]
    env = dict(os.environ, RGRASP_VIZ_STANDIN="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1800)


def _nbval_targets():
    targets = list(COURSE)
    if APP.is_file() and _is_executed(_load(APP)):
        targets.append(APP)  # the app is replayed only when it is committed executed
    return targets


def test_nbval_replays_every_notebook():
    """Re-executing the notebooks reproduces every checked output (``make test`` runs this)."""
    proc = _nbval(_nbval_targets())
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, (
        f"nbval failed -- refresh with scripts/execute_notebooks.py\n{tail}")
    assert re.search(r"\d+ passed", proc.stdout), tail


def _first_checked_number(nb):
    """(cell, output, old, new): a printed number in a checked cell, and a changed copy."""
    for c in nb["cells"]:
        if c["cell_type"] != "code" or IGNORE_TAG in c.get("metadata", {}).get("tags", []):
            continue
        for out in c.get("outputs", []):
            if out.get("output_type") != "stream":
                continue
            text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
            m = re.search(r"\d+\.\d{3}", text)
            if m:
                old = m.group(0)
                new = old[:-1] + str((int(old[-1]) + 1) % 10)
                return c, out, old, new
    raise AssertionError("no printed number in a checked cell")


def test_nbval_catches_a_stale_number(tmp_path):
    """Change one printed number in a copy of notebook 01: nbval must fail on that cell."""
    src = NB_DIR / "01-hard-thresholding.ipynb"
    nb = _load(src)
    stale = copy.deepcopy(nb)
    cell, out, old, new = _first_checked_number(stale)
    text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
    out["text"] = text.replace(old, new, 1)
    path = tmp_path / src.name
    path.write_text(json.dumps(stale, ensure_ascii=False, indent=1), encoding="utf-8")

    proc = _nbval([path], cwd=tmp_path)
    report = proc.stdout + proc.stderr
    assert proc.returncode != 0, (
        f"nbval accepted a stale number ({old} -> {new}):\n{report[-3000:]}")
    assert "1 failed" in report, report[-3000:]
    assert new in report and old in report, report[-3000:]  # the diff names both values


def test_static_checks_catch_missing_outputs():
    """A notebook saved without outputs (or half-executed) is flagged without running it."""
    nb = _load(NB_DIR / "01-hard-thresholding.ipynb")
    assert execution_problems(nb) == []
    stripped = copy.deepcopy(nb)
    for c in stripped["cells"]:
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    assert any("not executed" in p for p in execution_problems(stripped))
    partial = copy.deepcopy(nb)
    code = [c for c in partial["cells"] if c["cell_type"] == "code"]
    code[3]["outputs"] = []
    assert any("no outputs" in p for p in execution_problems(partial))
    reordered = copy.deepcopy(nb)
    code = [c for c in reordered["cells"] if c["cell_type"] == "code"]
    code[0]["execution_count"], code[1]["execution_count"] = 2, 1
    assert any("in order" in p for p in execution_problems(reordered))
    widgety = copy.deepcopy(nb)
    widgety["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    assert any("widget state" in p for p in execution_problems(widgety))


def test_static_checks_catch_a_broken_template():
    nb = _load(NB_DIR / "01-hard-thresholding.ipynb")
    assert structure_problems(nb) == []
    broken = copy.deepcopy(nb)
    for c in broken["cells"]:
        if c["cell_type"] == "markdown":
            c["source"] = _source(c).replace("## Summary", "## Wrap-up").replace(
                "**Time to learn**", "**Duration**")
    problems = structure_problems(broken)
    assert any("'## Summary'" in p for p in problems)
    assert any("Time to learn" in p for p in problems)
