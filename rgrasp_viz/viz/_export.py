"""Figures to files: standalone HTML, or PNG through kaleido and a local Chromium.

Files are written atomically (:mod:`rgrasp_viz._io`): a reader never sees half a file, and a
failed export leaves an earlier file untouched.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import plotly.graph_objects as go

from .._io import atomic_path, write_text

__all__ = ["export", "find_chromium"]

_CHROME_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
                 "chrome", "headless_shell")


def find_chromium():
    """Locate a Chromium/Chrome executable for PNG export.

    Looks at ``$RGRASP_VIZ_CHROMIUM``, ``$RGRASP_CHROMIUM`` (the browser tests' variable),
    ``$BROWSER_PATH`` (kaleido's own), then ``chromium``, ``chromium-browser``,
    ``google-chrome``, ... on ``PATH``.

    Returns
    -------
    str or None
        The path, or None when nothing executable was found.
    """
    for var in ("RGRASP_VIZ_CHROMIUM", "RGRASP_CHROMIUM", "BROWSER_PATH"):
        p = os.environ.get(var)
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    for name in _CHROME_NAMES:
        p = shutil.which(name)
        if p:
            return p
    return None


_KALEIDO_LOCK = threading.Lock()
_KALEIDO_STARTED = {"path": None}
PNG_TIMEOUT = 120.0
"""Seconds to wait for kaleido/Chromium to render one PNG."""


def _write_png(fig, path, width, height, scale):
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError(
            "PNG export needs Chromium or Chrome and none was found (looked at "
            "$RGRASP_VIZ_CHROMIUM, $RGRASP_CHROMIUM, $BROWSER_PATH and chromium/google-chrome "
            "on PATH). "
            "Install one (e.g. `apt-get install chromium`) or set RGRASP_VIZ_CHROMIUM="
            "/path/to/chrome; HTML export works without a browser.")
    try:
        import kaleido  # optional: the animate extra
    except ImportError as exc:  # pragma: no cover - kaleido is a dependency of the viz layer
        raise RuntimeError("PNG export needs the kaleido package (>= 1.0)") from exc
    opts = {"format": "png", "width": int(width), "height": int(height), "scale": scale}
    result = {}

    def run():
        try:
            with _KALEIDO_LOCK:
                if _KALEIDO_STARTED["path"] is None:
                    kaleido.start_sync_server(path=chromium, mathjax=False,
                                              silence_warnings=True)
                    _KALEIDO_STARTED["path"] = chromium
                kaleido.write_fig_sync(fig, path=str(path), opts=opts)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(PNG_TIMEOUT)
    if worker.is_alive():
        raise RuntimeError(f"kaleido did not render the PNG within {PNG_TIMEOUT:.0f} s "
                           f"(browser: {chromium}); the browser may fail to start here")
    if "error" in result:
        raise RuntimeError(f"PNG export with kaleido and {chromium} failed: "
                           f"{result['error']}") from result["error"]


def export(fig, path, *, width=None, height=None, scale=1.0):
    """Write a figure to a standalone ``.html`` file or a ``.png`` image.

    Parameters
    ----------
    fig : plotly Figure or FigureWidget
    path : str or path-like
        ``*.html`` / ``*.htm``: one self-contained file (plotly.js embedded, works offline).
        ``*.png``: rendered by kaleido with a local Chromium (see :func:`find_chromium`).
    width, height : int, optional
        Image size in CSS pixels for PNG (default: the figure's layout size, else
        1000 x its height or 500).
    scale : float, default 1.0
        PNG pixel density multiplier.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For another file extension.
    RuntimeError
        For PNG when no Chromium is found or rendering fails.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".png"):
        raise ValueError(f"export writes .html or .png files, got {path.name!r}")
    fig = go.Figure(fig) if not isinstance(fig, go.Figure) else fig
    if suffix == ".png":
        w = width or fig.layout.width or 1000
        h = height or fig.layout.height or 500
        with atomic_path(path) as tmp:
            _write_png(fig, tmp, w, h, scale)
    else:
        write_text(path, fig.to_html(include_plotlyjs=True, full_html=True))
    return path
