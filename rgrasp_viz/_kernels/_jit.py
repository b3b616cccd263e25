"""The one place that imports numba.

When numba is missing (e.g. in JupyterLite) ``njit`` becomes the identity, so every kernel
still runs as plain Python -- slowly, but with identical results.

Kernels are compiled with ``cache=True``: numba stores the machine code in ``__pycache__``
next to the source, else in the user cache folder (``~/.cache/numba``).  When neither is
writable (a read-only install and no writable home, e.g. a locked-down container), numba
refuses to decorate the function at all ("cannot cache function ...: no locator
available").  :func:`njit` then falls back, with one warning, to a private folder in the
temporary directory, or to no on-disk cache if that is not writable either: the package
always imports and runs.
"""

from __future__ import annotations

import os
import tempfile
import warnings

try:  # pragma: no cover - exercised by the "no numba" subprocess test
    import numba as _numba
    from numba import njit as _numba_njit

    HAVE_NUMBA = True
    NUMBA_VERSION = _numba.__version__
except ImportError:  # pragma: no cover
    _numba_njit = None
    HAVE_NUMBA = False
    NUMBA_VERSION = None


_INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
"""Options for kernels only ever called from other kernels: no Python / C entry points to
generate, which shortens compilation on a cold cache.

Small helpers called inside the epoch loops are also declared ``inline="always"`` (inlined
in Numba IR, so they are typed and lowered as part of their caller instead of as separate
functions), with the same iterates bit for bit (benchmarks/bench_core.py (d) measures the
first solve on a cold cache)."""

_UNSET = object()
_fallback_dir = _UNSET  # the fallback cache folder once chosen (None: no on-disk cache)


def njit(*args, **kwargs):
    """``numba.njit`` when available, otherwise a no-op decorator.

    With ``cache=True`` and no place numba can write its cache to, the cache goes to the
    fallback folder of :func:`_fallback_cache_dir` instead (or is turned off).
    """
    if HAVE_NUMBA:
        if not kwargs.get("cache"):
            return _numba_njit(*args, **kwargs)
        if len(args) == 1 and callable(args[0]):
            return _cached_njit(args[0], (), kwargs)
        return lambda func: _cached_njit(func, args, kwargs)
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda func: func


def _cached_njit(func, args, kwargs):
    """``numba.njit(*args, **kwargs)(func)``, with a fallback when numba cannot cache."""
    try:
        return _numba_njit(*args, **kwargs)(func)
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
    folder = _fallback_cache_dir()
    if folder is None:
        return _numba_njit(*args, **dict(kwargs, cache=False))(func)
    # numba's locator reads config.CACHE_DIR when the function is decorated and keeps the
    # path; restoring the setting afterwards leaves numba's other users untouched.
    saved = _numba.config.CACHE_DIR
    _numba.config.CACHE_DIR = folder
    try:
        return _numba_njit(*args, **kwargs)(func)
    finally:
        _numba.config.CACHE_DIR = saved


def _private_dir(path):
    """Whether ``path`` is a folder of ours that only we can write to (POSIX) and writable."""
    st = os.stat(path)
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return False
    with tempfile.TemporaryFile(dir=path):
        pass
    return True


def _fallback_cache_dir():
    """The folder for numba's cache when the usual ones are not writable (chosen once).

    A per-user folder ``rgrasp_viz-numba-<user>`` in the temporary directory, created
    private (mode 0700) so that compiled code is reused by later sessions; a fresh private
    folder if that one is not ours; None (no on-disk cache: kernels compile in every
    session) if the temporary directory is not writable either.  Warns once.
    """
    global _fallback_dir
    if _fallback_dir is not _UNSET:
        return _fallback_dir
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    folder = None
    try:
        folder = os.path.join(tempfile.gettempdir(), f"rgrasp_viz-numba-{user}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not _private_dir(folder):
            folder = tempfile.mkdtemp(prefix="rgrasp_viz-numba-")
    except OSError:
        try:
            folder = tempfile.mkdtemp(prefix="rgrasp_viz-numba-")
        except OSError:
            folder = None
    _fallback_dir = folder
    where = (f"in {folder} instead" if folder is not None
             else "nowhere (the temporary directory is not writable either): kernels are "
                  "compiled again in every session")
    warnings.warn(
        "rgrasp_viz: numba cannot write its cache next to the package or in the user cache "
        f"folder (read-only install, no writable home); compiled kernels are cached {where}. "
        "Set NUMBA_CACHE_DIR to choose the folder.",
        RuntimeWarning,
        stacklevel=4,
    )
    return folder
