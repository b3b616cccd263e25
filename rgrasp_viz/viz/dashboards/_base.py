"""What every dashboard shares: the busy and error lines, waiting for the worker, closing,
and the display next to the live widget of a static copy for pages without a kernel."""

from __future__ import annotations

import ipywidgets as widgets

from .. import _static as static
from ._widgets import busy_text, esc, status_box

__all__ = ["Dashboard"]


class Dashboard(widgets.VBox):
    """Base of :class:`~._explorer.Explorer`, :class:`~._comparison.Comparison` and
    :class:`~._player.Player`.

    A dashboard that re-solves when a control changes sets :attr:`status` (an
    ``ipywidgets.HTML``) and :attr:`debouncer` (a :class:`~._debounce.Debouncer` whose
    ``on_busy`` and error callbacks are :meth:`_on_busy` and :meth:`_on_error`).  Every
    dashboard says what its static copy shows with :meth:`static_figures`; the display
    (:meth:`_repr_mimebundle_`) reads nothing else.

    Attributes
    ----------
    error : str or None
        The message of the last failed (re-)solve, else None.
    """

    _busy_what = "solving"  # what the busy line says is running
    _wait_timeout = 30.0  # seconds wait() waits by default

    error = None
    debouncer = None

    # -- the worker's callbacks (called in the kernel's thread) ------------------------------
    def _on_busy(self, seconds):
        """The solve of the latest change is still running after ``seconds``."""
        self.status.value = status_box(busy_text(self._busy_what, seconds), "busy")

    def _error_hint(self):
        """The sentence after an error message: what the figures show now (HTML)."""
        return "The plots show the last runs that were solved."

    def _on_error(self, exc):
        """A (re-)solve failed: keep its message in :attr:`error` and show it."""
        self.error = f"{type(exc).__name__}: {exc}"
        self.status.value = status_box(
            f"✖ <b>Error</b>: {esc(self.error)}. {self._error_hint()}", "error")

    # -- public -------------------------------------------------------------------------------
    def wait(self, timeout=None):
        """Block until the latest change of a control has been solved and drawn.

        Parameters
        ----------
        timeout : float, optional
            Seconds (default: 30 for the explorer, 60 for the comparison).

        Returns
        -------
        bool
            False on timeout; True at once for a dashboard that never re-solves.
        """
        if self.debouncer is None:
            return True
        return self.debouncer.wait(self._wait_timeout if timeout is None else timeout)

    def close(self):
        """Stop the background worker (if any) and close the widgets."""
        if self.debouncer is not None:  # None as well when __init__ failed before it
            self.debouncer.close()
        super().close()

    def static_figures(self):
        """What a page without a Python kernel shows in place of this dashboard.

        Returns
        -------
        title : str
            One line: which dashboard, on what (plain text; the page escapes it).
        figures : list of dict
            Figure specs (``{"data": [...], "layout": {...}}``) in display order, as the
            dashboard shows them now (new dicts: changing them changes no figure shown).
        """
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static copy of :meth:`static_figures` for pages without a
        kernel (:func:`rgrasp_viz.viz._static.dashboard_bundle`)."""
        return static.dashboard_bundle(self, super()._repr_mimebundle_(**kwargs))
