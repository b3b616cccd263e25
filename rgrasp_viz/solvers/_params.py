"""The parameters of one solve, checked once and carried as a typed, frozen object.

:func:`check_params` is the single place where ``solve``'s arguments are validated (the
dashboards call it too, so a slider value and a keyword argument fail the same way); the
methods read the resulting :class:`SolveParams` and never re-check.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from ._registry import get_method, normalize_reading
from ._steps import default_eta

__all__ = ["SolveParams", "check_always_select", "check_flag", "check_int", "check_nonneg",
           "check_params", "cuts_per_epoch", "max_inner_steps"]

#: Bounds on ``J``, the inner steps of one SVRG epoch (see :func:`max_inner_steps`).
J_PER_SAMPLE = 100
J_FLOOR = 100_000
J_CAP = 10_000_000


def cuts_per_epoch(J, m):
    """How many ``H_|T|`` cuts SVRGSP+ makes in one epoch of ``J`` inner steps with ``m``.

    The cut comes every ``ceil(J/m)`` inner steps (after steps ``ceil(J/m)``,
    ``2 ceil(J/m)``, ...), so an epoch has ``floor(J / ceil(J/m))`` of them: ``m`` when ``m``
    divides ``J``, fewer otherwise (``J = 1000, m = 6``: every 167 steps, 5 cuts).  With
    Algorithm 1's closing ``H_s`` an outer iteration thresholds one more time.  This is the
    count the epoch kernels make (:attr:`SolveParams.thr_every`), and the one every table and
    text of the package states.

    Parameters
    ----------
    J : int
        Inner steps per epoch, ``>= 1``.
    m : int
        SVRGSP+'s ``m``, ``1 <= m <= J``.

    Returns
    -------
    int

    Examples
    --------
    >>> from rgrasp_viz.solvers import cuts_per_epoch
    >>> cuts_per_epoch(60, 6), cuts_per_epoch(1000, 6), cuts_per_epoch(1000, 12)
    (6, 5, 11)
    """
    J = check_int("J", J, 1)
    m = check_int("m", m, 1, J)
    return J // math.ceil(J / m)


def max_inner_steps(n):
    """The largest ``J`` a solve accepts for ``n`` samples.

    ``J_PER_SAMPLE * n`` (50 times the paper's ``J = 2n``), but at least ``J_FLOOR`` (small
    problems may want long epochs) and at most ``J_CAP``; never below the default ``2n``.
    Why a bound: an epoch holds ``J`` sampled indices and up to ``J`` events (32 bytes a
    step), so an unbounded ``J`` asks for gigabytes of buffers before the first step.
    """
    return max(2 * n, min(max(J_PER_SAMPLE * n, J_FLOOR), J_CAP))


@dataclasses.dataclass(frozen=True)
class SolveParams:
    """Validated parameters of one run (see :func:`rgrasp_viz.solve` for their meaning)."""

    method: str
    s: int
    eta: float
    eta_rule: str  # "user" or "default"
    J: int
    m: int
    inner: str  # "paper" or "on_T"
    batch_size: int
    max_iter: int
    max_passes: float
    tol: float
    ftol: float
    patience: int
    record_every: int
    record: bool
    record_iterates: bool
    max_events: int
    sub_maxiter: int = 500
    always_select: tuple = ()  # coordinates kept in every support, not counted in s

    @property
    def forced(self):
        """ndarray of int64: :attr:`always_select` as the kernels take it (ascending)."""
        return np.asarray(self.always_select, dtype=np.int64)

    @property
    def s_total(self):
        """int: the support size of an iterate, ``s + len(always_select)``."""
        return self.s + len(self.always_select)

    @property
    def spec(self):
        """MethodSpec: the registry entry of :attr:`method`."""
        return get_method(self.method)

    @property
    def thr_every(self):
        """int: SVRGSP+'s period ``ceil(J/m)`` of ``H_|T|`` inside an epoch (0: never)."""
        return math.ceil(self.J / self.m) if self.spec.uses_m else 0

    def replace(self, **changes):
        """A copy with some fields changed (e.g. a halved default step)."""
        return dataclasses.replace(self, **changes)


def check_int(name, value, lo, hi=None):
    """``value`` as an int in ``[lo, hi]`` (``hi`` None: no upper bound); TypeError naming
    ``name`` unless it is an integer (bools refused), ValueError when out of range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return value


def _check_positive_float(name, value, allow_inf=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not (value > 0 and (math.isfinite(value) or (allow_inf and value == math.inf))):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return value


def check_nonneg(name, value):
    """``value`` as a finite float >= 0 (a tolerance: ``inf`` would stop every run at once);
    ValueError naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return float(value)


def check_flag(name, value):
    """``value`` as a bool; TypeError unless it is True or False (``warn="no"`` would
    otherwise count as True)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_params(problem, method, *, s=None, eta=None, J=None, m=None, inner="paper",
                 max_iter=None, max_passes=None, tol=1e-7, ftol=1e-6, patience=None,
                 batch_size=None, record_every=None, record=True, record_iterates=False,
                 max_events=1_000_000, always_select=None):
    """Check every parameter of a solve of ``problem`` and fill in the defaults.

    Parameters
    ----------
    problem : Problem
        Already validated.
    method : str
        Any registered method name or alias.
    **params
        As in :func:`rgrasp_viz.solve`.

    Returns
    -------
    SolveParams

    Raises
    ------
    TypeError, ValueError
        Naming the first invalid parameter; before any work is done.
    """
    spec = get_method(method)
    n, d = problem.n, problem.d
    forced = check_always_select(always_select, d)
    if s is None:
        s = problem.default_s
        if s is None:
            raise ValueError("s is required when the problem has no x_true")
    if forced and isinstance(s, numbers.Integral) and not isinstance(s, bool) \
            and s > d - len(forced):
        raise ValueError(f"s must be <= d - len(always_select) = {d - len(forced)} (s counts "
                         f"only the coordinates not in always_select), got {s}")
    s = check_int("s", s, 1, d)
    inner = normalize_reading(inner)
    J = 2 * n if J is None else check_int("J", J, 1)
    if J > max_inner_steps(n):
        raise ValueError(
            f"J must be <= {max_inner_steps(n)} for n = {n} samples "
            f"(max(min(max({J_PER_SAMPLE} n, {J_FLOOR}), {J_CAP}), 2 n); the paper uses "
            f"J = 2n), got {J}"
        )
    m = min(6, J) if m is None else check_int("m", m, 1)
    if m > J:
        raise ValueError(f"m must be <= J (got m={m}, J={J})")
    batch_size = (max(1, round(math.sqrt(n))) if batch_size is None
                  else check_int("batch_size", batch_size, 1, n))
    max_iter = spec.max_iter if max_iter is None else check_int("max_iter", max_iter, 1)
    max_passes = (math.inf if max_passes is None
                  else _check_positive_float("max_passes", max_passes, allow_inf=True))
    tol = check_nonneg("tol", tol)
    ftol = check_nonneg("ftol", ftol)
    patience = spec.patience if patience is None else check_int("patience", patience, 1)
    steps = (J if spec.epoch else max(1, n // batch_size) if spec.uses_batch else 0)
    record_every = (max(1, steps // 20) if record_every is None
                    else check_int("record_every", record_every, 1))
    record = check_flag("record", record)
    record_iterates = check_flag("record_iterates", record_iterates)
    max_events = check_int("max_events", max_events, 0)
    if eta is None:
        eta_rule = "default"
        eta = default_eta(problem, spec.name, s + len(forced), inner, batch_size)
    else:
        eta_rule = "user"
        eta = _check_positive_float("eta", eta)
    return SolveParams(method=spec.name, s=s, eta=eta, eta_rule=eta_rule, J=J, m=m,
                       inner=inner, batch_size=batch_size, max_iter=max_iter,
                       max_passes=max_passes, tol=tol, ftol=ftol, patience=patience,
                       record_every=record_every, record=record,
                       record_iterates=record_iterates, max_events=max_events,
                       always_select=forced)


def check_always_select(always_select, d):
    """``always_select`` as an ascending tuple of distinct coordinates in ``[0, d)``.

    Raises
    ------
    TypeError, ValueError
        For anything that is not a sequence of distinct integer coordinates, or one that
        leaves no coordinate to select.
    """
    if always_select is None:
        return ()
    a = np.asarray(always_select)
    if a.size == 0:
        return ()
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise TypeError(f"always_select must be a sequence of integer coordinates, got "
                        f"{always_select!r}")
    if a.min() < 0 or a.max() >= d:
        raise ValueError(f"always_select must hold coordinates in [0, {d}), got "
                         f"{sorted(set(a.tolist()))}")
    if len(np.unique(a)) != len(a):
        raise ValueError(f"always_select has repeated coordinates: {a.tolist()}")
    if len(a) >= d:
        raise ValueError(f"always_select keeps all {d} coordinates: nothing left to select")
    return tuple(int(j) for j in np.sort(a))
