"""Shared fixtures: where a test needs something the machine may lack (a Chromium, the network),
it is skipped with a visible reason -- except under CI (env ``CI`` set), where it fails instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: drives a real Chromium (Voila / JupyterLab) with Playwright"
    )


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def unavailable():
    """``unavailable(reason)``: skip with ``reason``, or fail when ``CI`` is set."""
    return _unavailable


def find_chromium() -> str | None:
    """A Chromium executable: ``$RGRASP_CHROMIUM``, else /usr/bin/chromium or one on PATH."""
    explicit = os.environ.get("RGRASP_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        _unavailable(
            "no Chromium found (/usr/bin/chromium, chromium, google-chrome on PATH, or "
            "$RGRASP_CHROMIUM); `make test` installs it with apt-get when run as root"
        )
    return path
