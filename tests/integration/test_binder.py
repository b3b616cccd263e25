"""binder/ builds the environment mybinder.org (repo2docker) will run: Python 3.11, this package
with its `lab` extra (JupyterLab, Voila, scikit-learn, ...).  Checked without Docker:
repo2docker writes the Dockerfile it would build, and pip resolves the requirements against
the package index."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
README = ROOT / "README.md"
NETWORK_ERRORS = re.compile(
    r"NewConnectionError|Max retries exceeded|Temporary failure in name resolution|"
    r"Network is unreachable|Connection refused|Failed to establish|ProxyError|"
    r"No matching distribution found|Could not find a version"
)


def _requirements() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


def _extra(name) -> set[str]:
    """Distribution names of an optional-dependency group of pyproject.toml."""
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower()
            for r in project["optional-dependencies"][name]}


def test_binder_files_pin_python_and_install_the_package():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    reqs = _requirements()
    # "." is resolved against pip's working directory, which repo2docker sets to the repo root;
    # its `lab` extra is the course's JupyterLab, Voila and the notebooks' run-time imports
    assert ".[lab]" in reqs
    names = {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower() for r in reqs
             if not r.startswith(".")}
    assert "scikit-learn" in names  # notebook 06's LIBSVM parser
    assert {"jupyterlab", "voila", "scikit-learn"} <= _extra("lab")
    # an environment.yml would make repo2docker ignore runtime.txt + requirements.txt
    assert not (BINDER / "environment.yml").exists()


def _repo2docker() -> list[str]:
    exe = Path(sys.executable).with_name("repo2docker")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("repo2docker")
    if found:
        return [found]
    return [sys.executable, "-m", "repo2docker"]


def test_repo2docker_generates_python311_dockerfile_installing_requirements(unavailable):
    if importlib.util.find_spec("repo2docker") is None:
        unavailable("jupyter-repo2docker is not installed (it is in the `test` extra)")
    proc = subprocess.run(
        [*_repo2docker(), "--no-build", "--debug", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    dockerfile, log = proc.stdout, proc.stderr
    assert dockerfile.lstrip().startswith("FROM "), dockerfile[:500]
    # the Python build pack read binder/runtime.txt ...
    assert "Building conda environment for python=3.11" in log, log[-2000:]
    # build-script files are COPY'd under escaped names ("/" -> "-2f", "." -> "-2e", ...)
    # followed by a short hash ("-3774b5"); drop the hash before decoding, or a hash that
    # starts with e.g. "-20" decodes to a space (it depends on the checkout's path)
    copies = [
        re.sub(r"-([0-9a-f]{2})", lambda m: chr(int(m[1], 16)),
               re.sub(r"-[0-9a-f]{6}(?= )", "", line, count=1))
        for line in dockerfile.splitlines()
        if line.startswith("COPY ")
    ]
    lock = re.compile(r"/conda/environment\.py-3\.11-linux-64\.lock\S* /tmp/env/environment\.lock$")
    assert any(lock.search(line) for line in copies), copies
    # ... and, because the requirements reference the repository itself ("."), installs them
    # in the assemble stage: after the whole repository has been copied into the image.
    copy_repo = dockerfile.find("COPY --chown=")
    copy_all = re.search(r"^COPY .*\bsrc/ \$\{REPO_DIR\}/\s*$", dockerfile, re.M)
    pip_line = re.search(
        r"^RUN \$\{KERNEL_PYTHON_PREFIX\}/bin/pip install --no-cache-dir "
        r'-r "binder/requirements.txt"',
        dockerfile,
        re.M,
    )
    assert copy_repo >= 0 and copy_all and pip_line, dockerfile
    assert copy_all.start() < pip_line.start(), "requirements installed before the repo is copied"
    # the binder/ directory takes precedence: no implicit `pip install .` of the root on top
    assert "pip install --no-cache-dir .\n" not in dockerfile


def test_binder_requirements_resolve_with_pip(tmp_path, unavailable):
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
            "--disable-pip-version-check", "--quiet", "--report", str(report),
            "-r", str(BINDER / "requirements.txt"),
        ],
        cwd=ROOT,  # as in repo2docker: "." is the repository root
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 and NETWORK_ERRORS.search(proc.stdout + proc.stderr):
        unavailable(f"package index unreachable, cannot resolve binder/requirements.txt: "
                    f"{proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    installed = {
        item["metadata"]["name"].lower().replace("_", "-"): item
        for item in json.loads(report.read_text())["install"]
    }
    for name in ("rgrasp-viz", "jupyterlab", "voila", "scikit-learn", "anywidget", "numba",
                 "plotly", "ipywidgets"):
        assert name in installed, f"{name} missing from the resolved set: {sorted(installed)}"
    # the package itself comes from the local checkout, not from an index
    assert installed["rgrasp-viz"]["download_info"]["url"].startswith("file://")
    assert Path(installed["rgrasp-viz"]["download_info"]["url"][len("file://"):]) == ROOT


def test_readme_links_binder_for_lab_and_voila():
    text = README.read_text()
    links = re.findall(r"https://mybinder\.org/v2/gh/[^)\s\]]+", text)
    lab = [u for u in links if "urlpath=lab" in u]
    voila = [u for u in links if "urlpath=voila" in u]
    assert lab and voila, links
    assert any("lab/tree/notebooks" in u for u in lab), lab
    assert any("voila/render/notebooks/app.ipynb" in u for u in voila), voila
    assert (ROOT / "notebooks" / "app.ipynb").is_file()
    # every badge points at the same repository and branch
    assert len({u.split("?", 1)[0] for u in links}) == 1, links
