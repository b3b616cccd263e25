"""The result of :func:`rgrasp_viz.solve`, in the style of ``scipy.optimize.OptimizeResult``."""

from __future__ import annotations

import warnings

from scipy.optimize import OptimizeResult

from .exceptions import ConvergenceWarning


class SolveResult(OptimizeResult):
    """``OptimizeResult`` with the run's :class:`~rgrasp_viz._trace.Trace`.

    Attributes
    ----------
    x : ndarray
        Final iterate (s-sparse).  For a diverged run, the last finite iterate.
    fun : float
        Objective at ``x``.
    nit : int
        Outer iterations performed.
    success : bool
        True for ``Status.CONVERGED`` only.
    status : Status
        Why the run stopped (:class:`~rgrasp_viz.Status`; one message table in
        :mod:`rgrasp_viz.solvers._status`).
    message : str
        Human-readable reason for stopping.
    trace : Trace
        Everything recorded along the way.
    passes, time, rel_error : float
        Effective passes, solver seconds and relative estimation error at the end.
    x_best, fun_best, nit_best : ndarray, float, int
        The iterate of lowest objective the run visited, its objective and iteration (ours:
        stochastic methods' last iterate is not always their best; ``x`` stays the paper's
        output, the last iterate).
    method : str
    """

    def __repr__(self):
        return (
            f"SolveResult(method={self.get('method')!r}, success={self.get('success')}, "
            f"status={self.get('status')}, nit={self.get('nit')}, fun={self.get('fun'):.6g}, "
            f"passes={self.get('passes'):.3g}, rel_error={self.get('rel_error'):.3g}, "
            f"message={self.get('message')!r})"
        )


def warn_max_iter(method, max_iter, hint=""):
    """Emit the standard warning for a run that hit ``max_iter`` (``hint``: the tiny-step
    hint, appended when the run hardly moved the objective)."""
    warnings.warn(
        f"{method}: maximum number of iterations ({max_iter}) reached before the tolerance "
        f"was met; increase max_iter or loosen tol{hint}.",
        ConvergenceWarning,
        stacklevel=4,  # warn_max_iter <- _solve <- solve <- the caller
    )


def warn_status(method, status_name, message):
    """Emit the warning for a run that diverged, stalled, made no progress, stopped at a
    fixed point of hard thresholding or hardly moved: the status and its message."""
    warnings.warn(f"{method}: {status_name}: {message}", ConvergenceWarning,
                  stacklevel=4)  # warn_status <- _solve <- solve <- the caller
