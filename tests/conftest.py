"""Shared fixtures: where a test needs something the machine may lack (a Chromium, the network),
it is skipped with a visible reason -- except under CI (env ``CI`` set), where it fails instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: drives a real Chromium (Voila, JupyterLab, the site, kaleido)"
    )
    config.addinivalue_line(
        "markers", "slow: takes seconds to minutes (notebooks, subprocess runs, browsers); "
                   "`pytest -m 'not slow'` is the quick loop"
    )


SLOW_DIRS = {"browser", "notebooks", "integration"}
"""Folders of tests/ whose tests are slow as a whole (browsers, notebooks, fresh installs)."""

SLOW_FILES = {"test_animate.py", "test_output.py", "test_cli.py", "test_recovery.py"}
"""Test files whose tests are slow as a whole (kernels, subprocess runs)."""

SLOW_TESTS = {"test_status.py::test_a_converged_run_ends_within"}
"""Single slow tests, by ``file::name prefix``."""


def pytest_collection_modifyitems(config, items):
    """Markers from one table: ``browser`` for every test that needs Chromium, ``slow`` for
    the files and tests listed above (so ``-m "not slow"`` is a quick loop)."""
    for item in items:
        path = Path(str(item.fspath))
        file = path.name
        folder = path.relative_to(Path(__file__).parent).parts[0]
        if "chromium_path" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)
        if folder in SLOW_DIRS or file in SLOW_FILES or any(
                f"{file}::{item.name}".startswith(t) for t in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def unavailable():
    """``unavailable(reason)``: skip with ``reason``, or fail when ``CI`` is set."""
    return _unavailable


def find_chromium() -> str | None:
    """A Chromium executable: ``$RGRASP_CHROMIUM``, else what the package's PNG export finds,
    else /usr/bin/chromium.  An explicit ``$RGRASP_CHROMIUM`` that is not a file means "none"
    (how a run checks the skip / CI-failure path)."""
    explicit = os.environ.get("RGRASP_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    from rgrasp_viz.viz.figures import find_chromium as package_find_chromium

    found = package_find_chromium()
    if found is None and Path("/usr/bin/chromium").is_file():
        found = "/usr/bin/chromium"
    return found


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        _unavailable(
            "no Chromium found (/usr/bin/chromium, chromium, google-chrome on PATH, or "
            "$RGRASP_CHROMIUM); `make test` installs it with apt-get when run as root"
        )
    return path


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if anything is computed or any output folder is opened: an argument
    check of the command line or of ``reproduce`` must stop before any work."""
    from rgrasp_viz import _cli as cli
    from rgrasp_viz.reproduce import _command as command
    from rgrasp_viz.reproduce import _experiments as experiments
    from rgrasp_viz.reproduce import _tuning as tuning
    from rgrasp_viz.reproduce._output import OutputFolder

    def forbidden(*args, **kwargs):
        raise AssertionError("work started although an argument was bad")

    for module, name in ((cli, "solve"), (cli, "make_regression"), (experiments, "solve"),
                         (command, "build_train_heldout"), (command, "run_tasks"),
                         (tuning, "build_train_heldout")):
        monkeypatch.setattr(module, name, forbidden)
    monkeypatch.setattr(OutputFolder, "__enter__", forbidden)
