"""The browser tests' fixtures: one Chromium per module, a fresh page per test (its console
and page errors printed), Voila serving ``notebooks/app.ipynb``.  The helpers they use live in
``tests/_support/browser_pages.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_pages import APP, CHROMIUM_ARGS, voila_server


@pytest.fixture(scope="module")
def app_notebook() -> Path:
    assert APP.is_file(), APP
    return APP


@pytest.fixture(scope="module")
def voila(app_notebook, tmp_path_factory, chromium_path):
    with voila_server(app_notebook, tmp_path_factory.mktemp("voila")) as server:
        yield server


@pytest.fixture(scope="module")
def browser(chromium_path, unavailable):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (it is in the `test` extra)")

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, tmp_path):
    """A fresh page; its console and page errors are printed (pytest shows them on failure)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    pg = context.new_page()
    pg.console_lines, pg.page_errors = [], []
    pg.on("console", lambda m: pg.console_lines.append(f"[{m.type}] {m.text}"))
    pg.on("pageerror", lambda e: pg.page_errors.append(str(e)))
    yield pg
    print(f"\nscreenshots: {sorted(str(p) for p in tmp_path.glob('*.png'))}")
    print("page errors:", *pg.page_errors, sep="\n  ")
    print("console:", *pg.console_lines[-40:], sep="\n  ")
    context.close()
