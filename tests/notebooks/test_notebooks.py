"""The course notebooks: structure, committed outputs, exercises, and an nbval replay.

* Static checks on every course notebook (``notebooks/NN-*.ipynb``, and ``NNN-*`` for one
  placed between two, e.g. ``045-`` between 4 and 5): the Project Pythia
  sections, every code cell executed in one top-to-bottom run and carrying its outputs, no
  error outputs, no widget state, size < 1 MB.
* Exercises (every course notebook not in ``EXERCISE_EXEMPT``): each exercise is four code
  cells in a row -- the learner's cell (tagged ``exercise``, marked ✏️, holding a blank ``...``
  answer), a check cell (tagged ``check``) whose committed output is a hint for that blank
  answer, a collapsed solution (tagged ``solution``, ``jupyter.source_hidden``), and the same
  check again, whose committed output says ``✓ correct``.  Check cells print feedback (never a
  bare ``AssertionError``).  Each notebook also asks at least one predict-then-run question (a
  🔮 cell right before the cell that answers it) and one conceptual question (💭) followed by a
  collapsed model answer (``<details>``).  nbval replays all of it, so the hints and the ✓ are
  re-checked on every run; notebook 01 is also run with wrong answers in place of its
  solutions, which must produce hints, not ✓ and not errors.
* nbval replays every course notebook (and ``notebooks/app.ipynb`` when it is committed
  executed) in a fresh kernel and compares each checked cell's output with the committed
  one, through ``notebooks/nbval_sanitize.cfg``.  A notebook whose saved numbers are stale
  (re-executing changes a checked number) fails here; one saved without outputs fails the
  static checks (nbval alone does not compare cells that were never run).
* The staleness check is itself tested: a copy of a notebook with one printed number
  changed must fail nbval, and a copy with its outputs stripped must fail the static checks;
  so are the exercise checks (a pre-filled answer, an open solution, a check that asserts).

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

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
SANITIZE = NB_DIR / "nbval_sanitize.cfg"
APP = NB_DIR / "app.ipynb"
MAX_BYTES = 1_000_000
IGNORE_TAG = "nbval-ignore-output"
PRECOMPUTED_TAG = "precomputed-output"
"""A cell that only prints what committed files under ``notebooks/data`` hold (timings of the
precomputed full-size runs included): its output is the same on every machine, so nbval
checks it although it mentions seconds."""

EXPECTED = (
    "00-visual-explainer.ipynb",
    "01-hard-thresholding.ipynb",
    "02-svrght-vs-svrgsp.ipynb",
    "03-rgrasp-framework.ipynb",
    "04-tuning.ipynb",
    "045-variance-reduction.ipynb",
    "05-reproduce-figure1.ipynb",
    "06-real-data.ipynb",
)

COURSE = sorted(NB_DIR.glob("[0-9][0-9]*-*.ipynb"))
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


EXERCISE_TAG, CHECK_TAG, SOLUTION_TAG = "exercise", "check", "solution"
SOLUTION_HEAD = "# solution"  # the line a collapsed solution shows: it must not give it away
OK_MARK = "✓ correct"
HINT_MARK = "✗ not yet. Hint:"
PREDICT_MARK = "🔮 **Predict"
QUESTION_MARK = "💭 **Question"

EXERCISE_EXEMPT = {
    "00-visual-explainer.ipynb": "the one-page explainer of the site: one exercise in the "
                                 "format below, but no predict-then-run or conceptual "
                                 "questions (it is not a course unit)",
}
"""Course notebooks without exercises of the format checked here, and why."""


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _blank_answer(src):
    """Whether ``src`` holds a blank answer: an assignment of ``...`` or a function whose body
    is only ``...`` (the placeholder a learner replaces)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False

    def is_dots(node):
        return isinstance(node, ast.Constant) and node.value is Ellipsis

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and is_dots(node.value):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [b for b in node.body
                    if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                            and isinstance(b.value.value, str))]  # docstrings aside
            if len(body) == 1 and isinstance(body[0], ast.Expr) and is_dots(body[0].value):
                return True
    return False


def _asserts(src):
    try:
        return any(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(src)))
    except SyntaxError:
        return False


def exercise_problems(nb):
    """Why the exercises of ``nb`` do not follow the course's format (empty list: they do).

    An exercise is four consecutive code cells (markdown may sit between them): the learner's
    cell (``exercise``), a check showing a hint for the blank answer, a collapsed solution,
    the check again showing ✓."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    problems = []
    starts = [k for k, c in enumerate(code) if EXERCISE_TAG in _tags(c)]
    if not starts:
        problems.append("no exercise (a code cell tagged 'exercise')")
    owned = set()
    for k in starts:
        cells = code[k:k + 4]
        where = f"exercise {starts.index(k) + 1} (code cell {k})"
        if len(cells) < 4:
            problems.append(f"{where}: needs a check, a solution and a second check after it")
            continue
        learner, check, solution, recheck = cells
        owned.update(range(k, k + 4))
        if "✏️" not in _source(learner):
            problems.append(f"{where}: the learner's cell is not marked ✏️")
        if not _blank_answer(_source(learner)):
            problems.append(f"{where}: the learner's cell must hold a blank answer (`...`), "
                            f"not a solution:\n{_source(learner)[:200]}")
        for role, cell, mark in (("check", check, HINT_MARK), ("second check", recheck, OK_MARK)):
            if CHECK_TAG not in _tags(cell):
                problems.append(f"{where}: the {role} cell is not tagged '{CHECK_TAG}'")
            if IGNORE_TAG in _tags(cell):
                problems.append(f"{where}: the {role} cell must be checked by nbval")
            if _asserts(_source(cell)):
                problems.append(f"{where}: the {role} cell asserts; it must print a hint instead")
            text = _text_outputs(cell)
            if mark not in text:
                problems.append(f"{where}: the committed output of the {role} cell does not "
                                f"show {mark!r}: {text[:200]!r}")
            if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
                problems.append(f"{where}: the {role} cell has an error output")
        if OK_MARK in _text_outputs(check):
            problems.append(f"{where}: the first check says ✓ for the blank answer")
        if HINT_MARK in _text_outputs(recheck):
            problems.append(f"{where}: the check after the solution still gives a hint")
        if SOLUTION_TAG not in _tags(solution):
            problems.append(f"{where}: the third cell is not tagged '{SOLUTION_TAG}'")
        if not solution.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            problems.append(f"{where}: the solution is not collapsed (jupyter.source_hidden)")
        if "hide-input" not in _tags(solution):
            problems.append(f"{where}: the solution lacks the 'hide-input' tag (collapsed on "
                            "the static site)")
        if _blank_answer(_source(solution)) or not _source(solution).strip():
            problems.append(f"{where}: the solution cell is blank")
        elif _source(solution).splitlines()[0].strip() != SOLUTION_HEAD:
            problems.append(f"{where}: a collapsed cell still shows its first line; make it "
                            f"{SOLUTION_HEAD!r}, not {_source(solution).splitlines()[0]!r}")
    for k, c in enumerate(code):
        if k not in owned and ({CHECK_TAG, SOLUTION_TAG} & set(_tags(c))):
            problems.append(f"code cell {k}: a {sorted(set(_tags(c)))} cell outside an exercise")
    return problems


def discussion_problems(nb):
    """At least one predict-then-run question (🔮, right before the code cell that answers
    it) and one conceptual question (💭, followed by a collapsed model answer)."""
    cells = nb["cells"]
    problems = []
    predicts = [i for i, c in enumerate(cells)
                if c["cell_type"] == "markdown" and PREDICT_MARK in _source(c)]
    if not predicts:
        problems.append(f"no predict-then-run question ({PREDICT_MARK!r})")
    for i in predicts:
        if i + 1 >= len(cells) or cells[i + 1]["cell_type"] != "code":
            problems.append(f"cell {i}: a prediction must be asked right before the code cell "
                            "that reveals the answer")
    questions = [i for i, c in enumerate(cells)
                 if c["cell_type"] == "markdown" and QUESTION_MARK in _source(c)]
    if not questions:
        problems.append(f"no conceptual question ({QUESTION_MARK!r})")
    for i in questions:
        answer = _source(cells[i + 1]) if i + 1 < len(cells) else ""
        m = re.search(r"<details>\s*<summary>.*?Model answer.*?</summary>(.*?)</details>",
                      answer, flags=re.DOTALL)
        if cells[i + 1]["cell_type"] != "markdown" or not m:
            problems.append(f"cell {i}: the question needs a collapsed model answer right "
                            "after it (<details><summary>Model answer ...)")
        elif len(m.group(1).split()) < 40:
            problems.append(f"cell {i}: the model answer is a stub ({len(m.group(1).split())} "
                            "words)")
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


EXERCISE_NOTEBOOKS = [p for p in COURSE if p.name not in EXERCISE_EXEMPT]


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_are_blank_with_hints_and_collapsed_solutions(path):
    assert exercise_problems(_load(path)) == []


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=lambda p: p.stem)
def test_predictions_and_conceptual_questions(path):
    assert discussion_problems(_load(path)) == []


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
        if PRECOMPUTED_TAG in c.get("metadata", {}).get("tags", []):
            src = _source(c)
            # it reads precomputed results and solves nothing, so its timings are fixed
            assert "pre." in src and "solve(" not in src and "run_all(" not in src, src[:300]
            continue
        assert not re.search(r"\d\s?(ms|µs)\b|\bseconds?\b", text), (
            f"{path.name}: a checked cell prints a timing:\n{text[:300]}")


def _array(v):
    """A Plotly array as saved in a notebook: a list (None for gaps) or a binary
    ``{"dtype", "bdata"}`` spec."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float)
    return np.array([np.nan if e is None else float(e) for e in (v or [])])


def _gap_traces(path):
    """``(cell index, trace)`` for every gap curve of every Plotly figure a notebook shows."""
    for k, c in enumerate(_load(path)["cells"]):
        for out in c.get("outputs", []):
            fig = out.get("data", {}).get("application/vnd.plotly.v1+json")
            if not fig:
                continue
            for tr in fig.get("data", []):
                meta = tr.get("meta") or {}
                if isinstance(meta, dict) and meta.get("role") == "gap":
                    yield k, tr


@pytest.mark.parametrize("path", [*COURSE, APP], ids=lambda p: p.stem)
def test_gap_curves_have_no_hole_and_no_dip_to_the_floor(path):
    """Every gap curve a notebook draws is measured against an F* below it: no point at or
    below zero (a hole: log axes drop it), no missing point between drawn ones, and no "V"
    (a fall to the floor followed by a rise: the signature of an F* defined by the run's own
    best value). A diverged run is drawn until it leaves the plot, so only its tail may end."""
    checked = 0
    for k, tr in _gap_traces(path):
        y = _array(tr.get("y"))
        if y.size == 0:
            continue
        finite = np.flatnonzero(np.isfinite(y))
        assert finite.size, f"{path.name} cell {k}: {tr.get('name')} draws nothing"
        span = y[finite[0]:finite[-1] + 1]
        assert np.isfinite(span).all(), f"{path.name} cell {k}: {tr.get('name')} has a hole"
        assert (span > 0).all(), f"{path.name} cell {k}: {tr.get('name')} touches zero"
        low = int(np.argmin(span))
        later = span[low:]
        dip = span[low] < 1e-9 * span[0] and later.max() > 1e3 * span[low]
        assert not dip, (f"{path.name} cell {k}: {tr.get('name')} dips to "
                         f"{span[low]:.1e} and rises again to {later.max():.1e}")
        checked += 1
    if path.stem in {"01-hard-thresholding", "04-tuning", "05-reproduce-figure1",
                     "06-real-data"}:
        assert checked, f"{path.name}: no gap curve found (the test would check nothing)"


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


def _exercise_cells(nb, k=0):
    """The four code cells of exercise ``k`` of ``nb``."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    start = [i for i, c in enumerate(code) if EXERCISE_TAG in _tags(c)][k]
    return code[start:start + 4]


def test_static_checks_catch_broken_exercises():
    """A pre-filled answer, an open solution, an asserting check, a missing ✓ or a model
    answer left open are all flagged."""
    nb = _load(NB_DIR / "01-hard-thresholding.ipynb")
    assert exercise_problems(nb) == [] and discussion_problems(nb) == []

    prefilled = copy.deepcopy(nb)
    learner, _, solution, _ = _exercise_cells(prefilled)
    learner["source"] = _source(learner).replace("...", _source(solution).splitlines()[-1]
                                                 .split("=", 1)[1].strip())
    assert any("blank answer" in p for p in exercise_problems(prefilled))

    opened = copy.deepcopy(nb)
    opened_solution = _exercise_cells(opened)[2]
    del opened_solution["metadata"]["jupyter"]
    assert any("not collapsed" in p for p in exercise_problems(opened))

    revealing = copy.deepcopy(nb)
    revealing_solution = _exercise_cells(revealing)[2]
    revealing_solution["source"] = "# solution: keep -1.2 and 1.5\n" + _source(revealing_solution)
    assert any("first line" in p for p in exercise_problems(revealing))

    asserting = copy.deepcopy(nb)
    check = _exercise_cells(asserting)[1]
    check["source"] = _source(check) + "\nassert my_H2 is not ..., 'fill it in'\n"
    assert any("asserts" in p for p in exercise_problems(asserting))

    unverified = copy.deepcopy(nb)
    recheck = _exercise_cells(unverified)[3]
    for out in recheck["outputs"]:
        out["text"] = HINT_MARK + " keep the 2 entries largest in magnitude\n"
    problems = exercise_problems(unverified)
    assert any("'✓ correct'" in p for p in problems)
    assert any("still gives a hint" in p for p in problems)

    no_hint = copy.deepcopy(nb)
    _exercise_cells(no_hint)[1]["outputs"] = []
    assert any("does not show '✗ not yet. Hint:'" in p for p in exercise_problems(no_hint))

    open_answer = copy.deepcopy(nb)
    for c in open_answer["cells"]:
        if c["cell_type"] == "markdown" and "<details>" in _source(c):
            c["source"] = _source(c).replace("<details>", "").replace("</details>", "")
    assert any("model answer" in p for p in discussion_problems(open_answer))

    no_predict = copy.deepcopy(nb)
    for c in no_predict["cells"]:
        if c["cell_type"] == "markdown":
            c["source"] = _source(c).replace(PREDICT_MARK, "**Think")
    assert any("predict-then-run" in p for p in discussion_problems(no_predict))


WRONG_ANSWERS = {
    # variable -> (a wrong answer, a phrase the hint must contain)
    "my_H2": ("np.array([0.0, 1.2, 0.0, 1.5, 0.0])", "signs"),
    "my_s": ("4", "finds only 4 of the 8"),
}


def test_wrong_answers_get_hints_not_errors(tmp_path):
    """Notebook 01 run with wrong answers in place of its solutions: every second check
    prints a hint naming the mistake (no ✓, no traceback) and the notebook runs to the end."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    path = NB_DIR / "01-hard-thresholding.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    starts = [i for i, c in enumerate(code) if EXERCISE_TAG in _tags(c)]
    assert len(starts) == len(WRONG_ANSWERS)
    rechecks = []
    for k in starts:
        solution, recheck = code[k + 2], code[k + 3]
        name = next(n for n in WRONG_ANSWERS if re.search(rf"^{n} =", solution.source, re.M))
        solution.source = f"{name} = {WRONG_ANSWERS[name][0]}\n"
        rechecks.append((recheck, WRONG_ANSWERS[name][1]))
    env = dict(os.environ, RGRASP_VIZ_STANDIN="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    old = dict(os.environ)
    os.environ.update(env)
    try:
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": str(tmp_path)}})
        client.execute()  # raises CellExecutionError on any error output
    finally:
        os.environ.clear()
        os.environ.update(old)
    for cell, phrase in rechecks:
        text = _text_outputs(cell)
        assert HINT_MARK in text and OK_MARK not in text, text
        assert phrase in text, text
