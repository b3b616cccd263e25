"""Progress bars of long jobs (``reproduce``, :func:`rgrasp_viz.animate`): ``tqdm.auto``.

One policy for every bar: with ``enabled`` (the ``progress=True`` of the public functions) a
bar is drawn where someone watches it — a widget in a Jupyter notebook, a bar on stderr in a
terminal — and nothing is written when stderr is not a terminal outside a notebook (a pipe,
a log file, CI); ``enabled=False`` draws nothing anywhere.  Notes (what the user must know,
e.g. that a run used a synthetic stand-in) are one line on stderr whenever ``enabled``,
written above a bar that is being drawn rather than through it.
"""

from __future__ import annotations

import sys

__all__ = ["bar", "note"]


def bar(total, desc, enabled=True, unit="it", **options):
    """A ``tqdm.auto`` bar of ``total`` steps (see the module's policy).

    Parameters
    ----------
    total : int or None
        None: unknown (a download without a Content-Length).
    desc : str
        Shown before the bar.
    enabled : bool
        False: a disabled bar (every call is a no-op).
    unit : str
    **options
        More ``tqdm`` options (e.g. ``unit_scale=True`` for bytes).

    Returns
    -------
    tqdm.auto.tqdm
        Use it as a context manager; ``update()`` after each step, ``set_postfix_str`` for
        what is being done.
    """
    from tqdm.auto import tqdm  # lazy: tqdm.auto imports IPython when present

    # disable=None: tqdm's own test, off when the stream is not a terminal (the notebook
    # widget treats None as enabled)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=True,
                dynamic_ncols=True, disable=None if enabled else True, **options)


def note(enabled, msg):
    """Write ``msg`` as one line on stderr when ``enabled`` (above any bar being drawn)."""
    if enabled:
        from tqdm.auto import tqdm  # lazy: tqdm.auto imports IPython when present

        tqdm.write(msg, file=sys.stderr)
