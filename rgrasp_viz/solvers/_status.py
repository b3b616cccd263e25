"""Named run statuses and their messages: one table, read by the driver and the result."""

from __future__ import annotations

import enum

__all__ = ["DESCRIPTIONS", "MESSAGES", "Status"]


class Status(enum.IntEnum):
    """Why a run stopped (``SolveResult.status``; ``success`` is ``status == CONVERGED``).

    Every status but ``CONVERGED``, ``MAX_PASSES`` and ``CALLBACK`` is reported with a
    :class:`~rgrasp_viz.exceptions.ConvergenceWarning` (``solve(..., warn=False)`` silences
    it), and so
    is a ``MAX_PASSES`` run whose objective hardly moved (the step size is the likely cause).
    """

    CONVERGED = 0
    """The iterates reached a fixed point (``tol``) or the objective stagnated (``ftol``)."""
    MAX_ITER = 1
    """``max_iter`` outer iterations were done before a tolerance was met."""
    DIVERGED = 2
    """The objective blew up, became non-finite, or ended above ``F(x0)``."""
    NO_PROGRESS = 3
    """The run stopped where it started: the objective hardly moved from ``F(x0)``."""
    MAX_PASSES = 4
    """The pass budget ``max_passes`` was used up before a tolerance was met."""
    STALLED = 5
    """The best objective stopped improving while the objective kept moving: not converged."""
    HT_FIXED_POINT = 6
    """The iterates stopped at a fixed point of hard thresholding that is not a minimiser
    (least squares): one GraSP step from the end point (the ``2s`` largest gradient entries
    merged with the support, an exact fit, pruned to ``s``, refit) finds a support whose fit
    is more than 1.2x lower, or the exact fit on the run's own support is more than 2x lower.
    Not a success."""
    CALLBACK = 99
    """The callback raised ``StopIteration``."""

    @property
    def success(self):
        """bool: True for :attr:`CONVERGED` only."""
        return self is Status.CONVERGED

    @property
    def description(self):
        """str: what the status means, in one sentence (for tables and dashboards)."""
        return DESCRIPTIONS[self]


DESCRIPTIONS = {
    Status.CONVERGED: "the iterates reached a fixed point, or the objective stopped improving "
                      "and settled (same support, steady within 1 %)",
    Status.MAX_ITER: "max_iter outer iterations were done before a stopping rule was met",
    Status.DIVERGED: "the objective blew up, became non-finite or ended above F(x0)",
    Status.NO_PROGRESS: "the run stopped where it started: the objective hardly moved",
    Status.MAX_PASSES: "the pass budget max_passes was used up before a stopping rule was met",
    Status.STALLED: "the best objective stopped improving while the objective or the support "
                    "kept moving: not converged",
    Status.HT_FIXED_POINT: "the iterates stopped at a fixed point of hard thresholding, not "
                           "at a minimiser: one GraSP step from the end point (2s gradient "
                           "entries merged with the support, exact fits) lowers the "
                           "objective materially",
    Status.CALLBACK: "the callback raised StopIteration",
}
"""One sentence per status (the attribute docstrings above are not reachable at run time)."""


MESSAGES = {
    "fixed_point": "converged: relative change {change:.2e} <= tol",
    "stagnated": ("converged: objective stagnated (no relative improvement > ftol={ftol:g} "
                  "in {patience} iterations, and steady)"),
    Status.MAX_ITER: "maximum number of iterations ({max_iter}) reached",
    Status.STALLED: ("stalled: no relative improvement > ftol={ftol:g} in {k} iterations, "
                     "while the objective still moves by {spread:.1%} or the support still "
                     "changes: not converged ({advice})"),
    Status.MAX_PASSES: "pass budget reached ({passes:.4g} >= max_passes={max_passes:g})",
    Status.NO_PROGRESS: ("no progress: the objective moved from {F0:.6g} only to {F:.6g} "
                         "(relative {rel:.1e}); {cause}"),
    "diverged_at": "diverged at iteration {t}: objective {F:.3g} (started at {F0:.3g}); {cause}",
    "diverged_rose": ("diverged: the objective rose from {F0:.3g} to {F:.3g} and did not come "
                      "back down; {cause}"),
    Status.HT_FIXED_POINT: ("fixed point of hard thresholding, not a minimiser: the iterates "
                            "stopped moving (F = {F:.6g}), but {how}; {cause}"),
    "probe_support": ("one GraSP step from them (the 2s largest gradient entries merged with "
                      "the support, an exact least-squares fit, pruned to s and refit; "
                      "{passes:.3g} passes, checked once at the end) reaches F = {F_probe:.6g} "
                      "on a support sharing {kept} of its {s} columns, {ratio:.3g}x below the "
                      "exact fit on the run's own support (F = {F_own:.6g})"),
    "probe_fit": ("the exact least-squares fit on their own support reaches F = {F_own:.6g} "
                  "({ratio:.3g}x lower)"),
    "slow": ("; the objective moved by only {moved:.2%} of F(x0) over the whole run, so the "
             "step size eta={eta:.3g} is likely too small (or x0 is already near a solution)"),
    Status.CALLBACK: "stopped by the callback (StopIteration)",
}
"""Message templates, keyed by status (or by the reason, for statuses with several)."""
