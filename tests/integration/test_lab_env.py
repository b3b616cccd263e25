"""The course runs clean in the environment ``make lab`` creates (issue 19).

``make lab`` installs the package with ``pip install -e .`` (``-e ".[lab]"`` once the
``lab`` extra exists) -- not the test extras, so no Pillow, kaleido or Sphinx unless the
course's own dependencies bring them.  The notebooks must run top to bottom there with no
error cell, on a machine with Chromium on ``PATH`` and on one without (``rv.animate`` and
PNG export then have to say so, not raise).  nbval (tests/notebooks/test_notebooks.py) cannot
see this: it runs in the test environment.

This test builds that environment once in ``build/lab-venv`` (``python -m venv`` + ``pip
install -e``, through pip's cache and the machine's configured indexes; rebuilt when
``pyproject.toml`` changes), registers a kernel spec of its Python there, and executes
copies of the notebooks with nbclient -- itself run by the lab environment's Python, so the
kernel is that environment's.  Two passes:

* with Chromium: ``PATH`` as the machine has it (skipped, or failed under CI, when the
  machine has no Chromium);
* without Chromium: ``PATH`` rebuilt from the same folders minus every Chromium/Chrome
  executable, and the package's browser variables unset.  Only the notebooks that draw
  with a browser (``rv.animate``, ``export``) run in this pass: the others never look for
  one, and the pass would double the test's run time for nothing.

Each pass first asks the kernel what it sees (its Python, Chromium found or not), so the
test cannot pass by running somewhere else.  ``RGRASP_LAB_NOTEBOOKS`` (comma-separated name
prefixes, e.g. ``00,02``) restricts the notebooks, for a quick local check.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
LAB_VENV = ROOT / "build" / "lab-venv"
STAMP = LAB_VENV / "rgrasp-lab-env.json"
KERNEL = "rgrasp-lab-env"
BROWSER_VARS = ("RGRASP_VIZ_CHROMIUM", "RGRASP_CHROMIUM", "BROWSER_PATH")
CHROME_NAMES = re.compile(r"^(chromium|chromium-browser|google-chrome|google-chrome-stable|"
                          r"chrome|chromium\.[a-z]+|headless_shell)$")
BROWSER_CALLS = re.compile(r"\brv\.animate\(|\banimate\(|\bexport\(|\.export\(")

pytestmark = pytest.mark.slow


def _extras():
    """The extras of pyproject.toml (``lab`` is used when it exists)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return set(re.findall(r"^([A-Za-z0-9_-]+)\s*=\s*\[", text.split(
            "[project.optional-dependencies]", 1)[-1].split("\n[", 1)[0], re.M))
    return set(tomllib.loads(text)["project"].get("optional-dependencies", {}))


def install_spec():
    """What ``make lab`` installs: ``.[lab]`` when pyproject has that extra, else ``.``."""
    return f"{ROOT}[lab]" if "lab" in _extras() else str(ROOT)


def _python(venv):
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def lab_venv(unavailable):
    """``build/lab-venv`` with the package installed as ``make lab`` does (built once)."""
    spec = install_spec()
    want = {"pyproject": hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest(),
            "spec": spec, "python": sys.version, "kernel": KERNEL}
    py = _python(LAB_VENV)
    if STAMP.is_file() and py.is_file():
        try:
            if json.loads(STAMP.read_text(encoding="utf-8")) == want:
                return py
        except ValueError:
            pass
    if LAB_VENV.exists():
        if not (LAB_VENV / "pyvenv.cfg").is_file():
            pytest.fail(f"{LAB_VENV} exists and is not a virtual environment: not touching it")
        shutil.rmtree(LAB_VENV)
    base = getattr(sys, "_base_executable", sys.executable)
    for cmd in ([base, "-m", "venv", str(LAB_VENV)],
                [str(py), "-m", "pip", "install", "--quiet", "-e", spec],
                [str(py), "-m", "ipykernel", "install", "--prefix", str(LAB_VENV),
                 "--name", KERNEL, "--display-name", "rgrasp_viz (make lab)"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=ROOT)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-3000:]
            if "pip" in cmd and re.search(r"No matching distribution|Could not find a "
                                          r"version|connection|resolve", tail, re.I):
                unavailable(f"cannot install the lab environment (no package index?):\n{tail}")
            pytest.fail(f"`{' '.join(cmd)}` failed:\n{tail}")
    STAMP.write_text(json.dumps(want), encoding="utf-8")
    return py


def path_without_chromium(tmp_path):
    """A ``PATH`` with the same programs as this one, except Chromium/Chrome."""
    shim = tmp_path / "bin-no-chromium"
    shim.mkdir()
    seen = set()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            if entry.name in seen or CHROME_NAMES.match(entry.name):
                continue
            seen.add(entry.name)
            try:
                os.symlink(entry.path, shim / entry.name)
            except OSError:
                continue
    return str(shim)


RUNNER = textwrap.dedent('''
    """Execute notebooks with nbclient in this environment's kernel; print a JSON report."""
    import json, sys, time
    from pathlib import Path
    import nbclient, nbformat

    kernel, folder, names = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    probe = nbformat.v4.new_notebook()
    probe.cells = [nbformat.v4.new_code_cell(
        "import sys, json\\n"
        "from rgrasp_viz.viz._export import find_chromium\\n"
        "print(json.dumps({'python': sys.executable, 'chromium': find_chromium()}))")]
    nbclient.NotebookClient(probe, kernel_name=kernel, timeout=300).execute()
    report = {"kernel": json.loads(probe.cells[0].outputs[0]["text"]), "notebooks": {}}
    for name in names:
        nb = nbformat.read(folder / name, as_version=4)
        t0 = time.perf_counter()
        client = nbclient.NotebookClient(nb, kernel_name=kernel, timeout=900,
                                         allow_errors=True,
                                         resources={"metadata": {"path": str(folder)}})
        client.execute()
        errors = [{"cell": i, "ename": o.get("ename"), "evalue": str(o.get("evalue"))[:500],
                   "source": "".join(c.source)[:300]}
                  for i, c in enumerate(nb.cells) if c.cell_type == "code"
                  for o in c.get("outputs", []) if o.get("output_type") == "error"]
        unexecuted = [i for i, c in enumerate(nb.cells)
                      if c.cell_type == "code" and c.source.strip()
                      and c.get("execution_count") is None]
        report["notebooks"][name] = {"errors": errors, "unexecuted": unexecuted,
                                     "seconds": round(time.perf_counter() - t0, 1)}
    print("REPORT " + json.dumps(report))
''')


def _notebooks():
    names = sorted(p.name for p in NB_DIR.glob("[0-9][0-9]*-*.ipynb"))
    only = os.environ.get("RGRASP_LAB_NOTEBOOKS")
    if only:
        prefixes = tuple(p.strip() for p in only.split(",") if p.strip())
        names = [n for n in names if n.startswith(prefixes)]
    return names


def _uses_a_browser(name):
    nb = json.loads((NB_DIR / name).read_text(encoding="utf-8"))
    return any(BROWSER_CALLS.search("".join(c.get("source", "")))
               for c in nb["cells"] if c["cell_type"] == "code")


def _run(py, names, env, tmp_path):
    work = tmp_path / "notebooks"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(NB_DIR, work)  # notebooks write files (GIFs) next to themselves
    runner = tmp_path / "run_notebooks.py"
    runner.write_text(RUNNER, encoding="utf-8")
    proc = subprocess.run([str(py), str(runner), KERNEL, str(work), *names], env=env,
                          capture_output=True, text=True, timeout=3600, cwd=work)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")]
    assert proc.returncode == 0 and lines, (proc.returncode, proc.stdout[-2000:],
                                            proc.stderr[-4000:])
    return json.loads(lines[-1][len("REPORT "):])


def _env(py, path):
    env = {k: v for k, v in os.environ.items() if k not in BROWSER_VARS
           and k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(py.parent), path])
    env["JUPYTER_PATH"] = str(LAB_VENV / "share" / "jupyter")  # the kernel spec registered
    env["VIRTUAL_ENV"] = str(LAB_VENV)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env


def _check(report, py, names, chromium):
    assert Path(report["kernel"]["python"]).resolve().parent == py.resolve().parent, report
    assert (report["kernel"]["chromium"] is not None) == chromium, report["kernel"]
    assert sorted(report["notebooks"]) == sorted(names)
    bad = {n: r for n, r in report["notebooks"].items() if r["errors"] or r["unexecuted"]}
    assert bad == {}, json.dumps(bad, indent=1, ensure_ascii=False)


@pytest.fixture(scope="module")
def lab_python(unavailable):
    return lab_venv(unavailable)


def test_lab_env_is_what_make_lab_installs(lab_python):
    """The environment holds the course's dependencies and not the test extras."""
    proc = subprocess.run(
        [str(lab_python), "-c", "import importlib.util as u, json; print(json.dumps({m: "
         "u.find_spec(m) is not None for m in ('rgrasp_viz', 'jupyterlab', 'ipykernel', "
         "'nbclient', 'pytest', 'nbval', 'sphinx', 'hypothesis')}))"],
        capture_output=True, text=True, timeout=120, env=_env(lab_python, os.environ["PATH"]))
    found = json.loads(proc.stdout)
    assert found["rgrasp_viz"] and found["jupyterlab"] and found["ipykernel"], found
    assert found["nbclient"], found  # jupyterlab -> jupyter_server -> nbconvert -> nbclient
    assert not (found["pytest"] or found["nbval"] or found["hypothesis"]), (
        f"the lab environment has test extras: {found}")
    editable = subprocess.run([str(lab_python), "-c", "import rgrasp_viz; "
                               "print(rgrasp_viz.__file__)"], capture_output=True, text=True,
                              timeout=120, cwd="/", env=_env(lab_python, os.environ["PATH"]))
    assert Path(editable.stdout.strip()).resolve().is_relative_to(ROOT.resolve())


def test_notebooks_run_clean_with_chromium_on_path(lab_python, tmp_path, chromium_path):
    names = _notebooks()
    assert names, "no notebooks selected"
    env = _env(lab_python, os.environ.get("PATH", ""))
    if not any(shutil.which(n, path=env["PATH"]) for n in ("chromium", "chromium-browser",
                                                            "google-chrome")):
        # the machine's Chromium is not on PATH (found through a variable): put it there
        env["PATH"] = os.pathsep.join([env["PATH"], str(Path(chromium_path).parent)])
    _check(_run(lab_python, names, env, tmp_path), lab_python, names, chromium=True)


def test_notebooks_that_draw_with_a_browser_run_clean_without_chromium(lab_python, tmp_path):
    names = [n for n in _notebooks() if _uses_a_browser(n)]
    if not names:
        pytest.skip("no selected notebook draws with a browser")
    env = _env(lab_python, path_without_chromium(tmp_path))
    _check(_run(lab_python, names, env, tmp_path), lab_python, names, chromium=False)
