"""The one place that imports numba.

When numba is missing (e.g. in JupyterLite) ``njit`` becomes the identity, so every kernel
still runs as plain Python -- slowly, but with identical results.
"""

from __future__ import annotations

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
generate, which shortens compilation on a cold cache (about 10 % for a first solve).

Small helpers called inside the epoch loops are also declared ``inline="always"`` (inlined
in Numba IR, so they are typed and lowered as part of their caller instead of as separate
functions), with the same iterates bit for bit.  On a cold cache the first SVRGSP+ solve
went from a median of 5.6 s to 4.7 s in one series of 6 alternating runs; a later series
(with ``_after_step`` also inlined) was within the machine's noise, so the gain is at most
that size."""


def njit(*args, **kwargs):
    """``numba.njit`` when available, otherwise a no-op decorator."""
    if HAVE_NUMBA:
        return _numba_njit(*args, **kwargs)
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda func: func
