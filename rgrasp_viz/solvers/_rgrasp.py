"""Algorithm 1 of the paper (RGraSP), written once, with the step-5 solver as a parameter.

Each outer iteration ``t``:

2. ``g = grad F(x̂^{t-1})``;
3. ``Z = supp(g, 2s)`` -- the directions where pursuing the minimisation is most effective;
4. ``T = Z ∪ supp(x̂^{t-1})``;
5. "minimise slackly": any solver returns ``b`` on ``T`` (``b|_{T^c} = 0``) -- GraSP solves
   the sub-problem exactly, SVRGSP(+) runs Algorithm 2, a learner's own Python function can
   do anything (:func:`register_method`);
6. ``x̂^t = H_s(b)``.

The paper asks of step 5 only a slack descent condition,
``||b - b̂|| <= c1 ||x̂^{t-1} - b̂||`` with ``b̂`` the exact solution and ``0 < c1 < 1``;
the slack-descent figure measures it for any registered solver.
"""

from __future__ import annotations

import contextvars
import copy
import math
import numbers
import re

import numpy as np
import scipy.sparse as sp

from .. import _kernels as K
from .. import losses
from ._common import Method, StepResult, gather_columns, merge_support
from ._registry import MethodSpec, add, remove, specs
from ._steps import ETA_RULES
from ._subsolvers import SubResult

__all__ = ["RGraSP", "SubProblem", "framework", "hard_threshold", "read_only_problem",
           "register_method", "unregister_method"]


class RGraSP(Method):
    """One outer iteration of Algorithm 1; ``make_subsolver(self)`` builds the step-5 solver.

    The sub-solver exposes ``solve(x, g, snap_dloss, T, rng) -> SubResult`` (``b`` on the
    ascending ``T``) and, when it runs inner steps, the pass bookkeeping ``passes_head``,
    ``passes_per_step`` and ``steps_per_iter`` used to place its inner events.
    """

    uses_support_pursuit = True

    def __init__(self, problem, params, ws, make_subsolver):
        super().__init__(problem, params, ws)
        self.sub = make_subsolver(self)
        for key in ("passes_head", "passes_per_step", "steps_per_iter"):
            if hasattr(self.sub, key):
                setattr(self, key, getattr(self.sub, key))

    def step(self, x, rng):
        s = self.p.s
        g, snap_dloss = self.full_gradient(x)  # step 2
        Z, T = merge_support(g, x, s, self.forced)  # steps 3-4
        r = self.sub.solve(x, g, snap_dloss, T, rng)  # step 5: b on T, zero elsewhere
        if hasattr(self.sub, "steps_per_iter"):  # a Python solver's grows with its work
            self.steps_per_iter = self.sub.steps_per_iter
        # step 6: H_s over T (always_select kept besides the s others)
        keep = K.top_k(r.b_T, s, np.searchsorted(T, self.forced) if len(self.forced) else None)
        x_new = np.zeros(self.d)
        x_new[T[keep]] = r.b_T[keep]
        return StepResult(x=x_new, passes=1.0 + r.passes, n_thresholds=r.n_thresholds + 1,
                          status=r.status, message=r.message, inner_steps=r.inner_steps,
                          Z=Z, T=T, b_T=r.b_T, n_events=r.n_events,
                          n_checkpoints=r.n_checkpoints, snaps=r.snaps,
                          work_index=r.work_index, outer_event=r.inner_steps,
                          events=r.events)


def framework(make_subsolver):
    """A registry factory: Algorithm 1 with the step-5 solver ``make_subsolver(method)``."""

    def factory(problem, params, ws):
        return RGraSP(problem, params, ws, make_subsolver)

    return factory


# -- a learner's own step 5 ------------------------------------------------------------


def _read_only(a):
    """A read-only view of an array."""
    v = a.view()
    v.flags.writeable = False
    return v


def _frozen(a):
    """A copy of an array over an immutable ``bytes`` buffer: read-only for good (its
    ``WRITEABLE`` flag cannot be set again, and its ``.base`` leads to the copy, never to
    the caller's array)."""
    a = np.ascontiguousarray(a)
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def _read_only_design(W):
    """``W`` as a read-only view: a dense view, or a CSR matrix over read-only views of the
    same ``data``, ``indices`` and ``indptr`` (nothing copied)."""
    if sp.issparse(W):
        return sp.csr_matrix((_read_only(W.data), _read_only(W.indices),
                              _read_only(W.indptr)), shape=W.shape, copy=False)
    return _read_only(W)


def _frozen_design(W):
    if sp.issparse(W):
        return sp.csr_matrix((_frozen(W.data), _frozen(W.indices), _frozen(W.indptr)),
                             shape=W.shape, copy=False)
    return _frozen(W)


def read_only_problem(problem):
    """A :class:`~rgrasp_viz.Problem` over a read-only copy of ``problem``'s data.

    Its methods work as usual; its ``W``, ``y`` and ``x_true`` are views of one internal copy
    that nothing can make writable again (``setflags(write=True)`` raises, and ``.base``
    leads to the copy, not to ``problem``'s arrays), so no code handed it can change
    ``problem``'s data. Assigning new arrays changes only the returned object. The data are
    copied once: called on a problem it returned, it returns a new view of the same copy.
    """
    frozen = getattr(problem, "_rgrasp_frozen", None)
    if frozen is None:
        frozen = (_frozen_design(problem.W), _frozen(problem.y),
                  None if problem.x_true is None else _frozen(problem.x_true))
    view = copy.copy(problem)  # a shallow copy: a fresh cache of derived data
    W, y, x_true = frozen
    view.W = _read_only_design(W)
    view.y = _read_only(y)
    view.x_true = None if x_true is None else _read_only(x_true)
    view._rgrasp_frozen = frozen
    return view


class SubProblem:
    """The sub-problem of one outer iteration, handed to a registered step-5 solver.

    ``min F(x)`` over the ``x`` that are 0 outside ``T``.  Most of it is in the coordinates
    ``T`` (``x0``, ``g``, ``W``, :meth:`fun`, :meth:`grad`: vectors of length ``|T|``); the
    whole problem is there too (``problem``, ``x_hat``, ``g_full``, ``snap_dloss``, ``J``,
    ``m``), so a solver can move on all ``d`` coordinates as the paper's Algorithm 2 does.
    A solver returns ``b`` on ``T`` (length ``|T|``) or on all coordinates (length ``d``;
    Algorithm 1 zeroes it outside ``T``); Algorithm 1 then keeps its ``s`` largest entries
    on ``T``.

    Algorithm 1 builds it for a registered solver.  Built by hand, ``SubProblem(problem, T,
    x0, g, eta, rng, s, iteration)`` takes ``x̂^{t-1}`` to be ``x0`` on ``T`` and zero
    elsewhere and computes ``g_full`` and ``snap_dloss`` from it; it copies ``problem``'s
    data unless ``problem`` is already a :func:`read_only_problem` (Algorithm 1 passes one,
    made once per solve).

    Nothing a solver receives can change the caller's data: ``W``, ``y`` and ``problem``
    are read-only views of an internal copy of the data, made once per solve (writing into
    them raises ``ValueError``; ``setflags(write=True)`` raises too, and their ``.base``
    leads to that copy, not to the caller's arrays), and the vectors are fresh copies
    (modify them freely).

    Work is counted in effective passes (a sweep over the ``n`` samples counts 1, one
    component gradient ``1/n``): :meth:`fun` and :meth:`grad` charge their own sweep (1 pass
    each call); :meth:`add_passes` declares the work a solver does itself (e.g. ``J``
    component gradients: ``J / n``; calls to ``problem``'s methods).

    Thresholdings are counted like the built-in methods' (``trace.n_thresholds``, the
    timeline's events): every :meth:`hard_threshold` call, and every
    :func:`rgrasp_viz.hard_threshold` call made while the solver runs, is one event, placed
    at the work declared so far (``passes``, in component gradients after step 2's full
    gradient: declare the work of an inner step before thresholding at its end), with the
    coordinates that entered and left the kept set (compared with the previous kept set,
    ``T`` at the start, for vectors on ``T`` or on all ``d`` coordinates).

    Attributes
    ----------
    T : ndarray of int
        The merged support ``Z ∪ supp(x̂^{t-1})``, ascending (read-only).
    x0 : ndarray
        ``x̂^{t-1}`` restricted to ``T`` (a fresh copy: modify it freely).
    g : ndarray
        ``grad F(x̂^{t-1})`` restricted to ``T`` (computed by step 2, already charged).
    x_hat : ndarray, shape (d,)
        ``x̂^{t-1}`` on all coordinates (a fresh copy).
    g_full : ndarray, shape (d,)
        ``grad F(x̂^{t-1})`` on all coordinates (step 2's, already charged; a fresh copy).
    snap_dloss : ndarray, shape (n,)
        The per-sample derivatives ``f_i'(w_i^T x̂^{t-1})`` from step 2 (a fresh copy): with
        them, ``grad f_i(x̂^{t-1}) = snap_dloss[i] * W[i]`` (plus ``l2 * x_hat``) costs no
        extra work, as SVRG's snapshot term.
    problem : Problem
        The whole problem, read-only (``problem.W``, ``problem.y`` are read-only views of
        the internal copy of the data; its methods are not charged: use
        :meth:`add_passes`).
    W : ndarray or scipy.sparse.csr_matrix, shape (n, len(T))
        The columns ``T`` of the design (gathered on first access, read-only).
    y : ndarray, shape (n,)
        The responses or labels (a read-only view of the internal copy).
    n, d, s : int
        Samples, features, sparsity level.
    J, m : int
        The run's inner-loop length and SVRGSP+'s number of ``H_|T|`` cuts per epoch
        (``solve(..., J=, m=)``; defaults ``2n`` and ``min(6, J)``).
    loss : {"squares", "logistic"}
    l2 : float
        The problem's ridge term (``fun`` and ``grad`` include it).
    eta : float
        The step size of the run: the user's, or the default rule of the method's registry
        entry.
    rng : numpy.random.Generator
        The run's generator: draw from it (not from a fresh one) and runs stay reproducible.
    iteration : int
        The outer iteration ``t`` (1-based).
    passes : float
        Effective passes charged so far in this sub-problem (:meth:`fun`, :meth:`grad`,
        :meth:`add_passes`).
    n_thresholds : int
        Thresholdings recorded so far in this sub-problem (:meth:`hard_threshold`,
        :func:`rgrasp_viz.hard_threshold`).
    """

    def __init__(self, problem, T, x0, g, eta, rng, s, iteration, *, x_hat=None,
                 g_full=None, snap_dloss=None, J=None, m=None):
        problem = read_only_problem(problem)  # copies the data unless already a copy
        self._problem = problem
        self.T = _read_only(np.array(T, dtype=np.int64))
        if x_hat is None:  # x̂^{t-1} lives on T (Algorithm 1): zero elsewhere
            x_hat = np.zeros(problem.d)
            x_hat[self.T] = x0
        self.x_hat = np.array(x_hat, dtype=np.float64)
        if g_full is None or snap_dloss is None:  # not charged: step 2 computed them
            a = np.asarray(problem.W @ self.x_hat).ravel()
            snap_dloss = losses.loss_derivative(a, problem.y, problem.loss)
            g_full = np.asarray(problem.W.T @ snap_dloss).ravel() / problem.n
            if problem.l2:
                g_full = g_full + problem.l2 * self.x_hat
        self.g_full = np.array(g_full, dtype=np.float64)
        self.snap_dloss = np.array(snap_dloss, dtype=np.float64)
        self.x0 = np.array(x0, dtype=np.float64)
        self.g = np.array(g, dtype=np.float64)
        self.eta = eta
        self.rng = rng
        self.s = s
        self.iteration = iteration
        self.problem = read_only_problem(problem)  # a view of its own: rebinding its
        self.y = _read_only(problem.y)              # arrays changes nothing else
        self.n = problem.n
        self.d = problem.d
        self.J = 2 * problem.n if J is None else int(J)
        self.m = min(6, self.J) if m is None else int(m)
        self.loss = problem.loss
        self.l2 = problem.l2
        self.passes = 0.0
        self.n_thresholds = 0
        self._events = []  # (step, entered, left) of each thresholding
        self._kept = self.T  # the kept set the next thresholding is compared with
        self._W = None

    @property
    def W(self):  # noqa: N802 - the paper's notation
        if self._W is None:
            self._W = _read_only_design(gather_columns(self._problem.W, self.T))
        return self._W

    def _z(self, z):
        z = np.asarray(z, dtype=np.float64)
        if z.shape != (len(self.T),):
            raise ValueError(f"z must have shape ({len(self.T)},) (one entry per coordinate "
                             f"of T), got {z.shape}")
        return z

    def fun(self, z):
        """``F`` at the vector equal to ``z`` on ``T`` and zero elsewhere (charged 1 pass)."""
        z = self._z(z)
        a = np.asarray(self.W @ z).ravel()
        f = float(np.mean(losses.sample_losses(a, self.y, self.loss)))
        self.passes += 1.0
        return f + 0.5 * self.l2 * float(z @ z) if self.l2 else f

    def grad(self, z):
        """The gradient of ``F`` over the coordinates ``T`` at ``z`` (length ``|T|``;
        charged 1 pass)."""
        z = self._z(z)
        a = np.asarray(self.W @ z).ravel()
        r = losses.loss_derivative(a, self.y, self.loss)
        g = np.asarray(self.W.T @ r).ravel() / self.n
        self.passes += 1.0
        return g + self.l2 * z if self.l2 else g

    def add_passes(self, k):
        """Declare work the solver did itself, in effective passes (a sweep over the ``n``
        samples counts 1, one component gradient ``1/n``); :meth:`fun` and :meth:`grad`
        count themselves."""
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (
                math.isfinite(k) and k >= 0):
            raise ValueError(f"add_passes takes a non-negative finite number, got {k!r}")
        self.passes += float(k)

    def hard_threshold(self, z, k, forced=None):
        """``H_k(z)`` (:func:`rgrasp_viz.hard_threshold`), recorded as a thresholding of this
        sub-problem (``trace.n_thresholds`` and the timeline count it like SVRGSP+'s
        ``H_|T|``).

        Parameters
        ----------
        z : array_like of float
            On ``T`` (length ``|T|``) or on all ``d`` coordinates; other lengths are counted
            too, without entered/left coordinates.
        k : int
            Entries kept (``len(self.T)`` for SVRGSP+'s ``H_|T|``).
        forced : array_like of int, optional
            Indices of ``z`` always kept, not counted in ``k``.

        Returns
        -------
        ndarray of float64
            A copy of ``z`` with all but its ``k`` largest-magnitude entries set to zero.
        """
        out, kept = K.hard_threshold_index(z, k, forced)
        self._record_threshold(kept, len(out))
        return out

    def _record_threshold(self, kept, length):
        """One thresholding event: where (the work declared so far, in component gradients)
        and which coordinates entered and left the kept set."""
        self.n_thresholds += 1
        step = int(round(self.passes * self.n))
        if length == len(self.T):
            kept = self.T[kept]
        elif length != self.d:
            self._events.append((step, 0, 0))
            return
        common = np.intersect1d(self._kept, kept, assume_unique=True).size
        self._events.append((step, len(kept) - common, len(self._kept) - common))
        self._kept = kept

    def _event_arrays(self):
        """``(steps, entered, left)`` of the recorded thresholdings (int64 arrays)."""
        if not self._events:
            return None
        return tuple(np.array(col, dtype=np.int64) for col in zip(*self._events, strict=True))


_ACTIVE = contextvars.ContextVar("rgrasp_viz_active_subproblem", default=None)
"""The :class:`SubProblem` a registered step-5 solver is working on (in this thread), so that
:func:`hard_threshold` calls made inside it are recorded."""


def hard_threshold(v, s, forced=None):
    """The hard-thresholding operator H_s: keep the ``s`` largest magnitudes, zero the rest.

    Ties are broken towards the lower index, so the result is deterministic -- the same
    operator Algorithm 1 (step 6) and the built-in methods apply, so a step-5 solver of your
    own (:func:`rgrasp_viz.register_method`) that calls ``rv.hard_threshold(z, len(sub.T))``
    inside its loop cuts exactly as SVRGSP+'s ``H_|T|`` does.  Called while such a solver
    runs, it is recorded as one of its thresholdings (as :meth:`SubProblem.hard_threshold`
    is): ``trace.n_thresholds`` and the timeline count it like the built-in methods' own.

    Parameters
    ----------
    v : array_like of float
        Input vector (not modified).
    s : int
        Number of entries to keep (``s >= 0``).
    forced : array_like of int, optional
        Indices always kept (``always_select``), not counted in ``s``.

    Returns
    -------
    ndarray of float64
        A copy of ``v`` with all but the ``s`` largest-magnitude entries set to zero.

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> rv.hard_threshold([0.5, -3.0, 2.0, 2.0], 2)  # the tie 2.0 / 2.0 goes to index 2
    array([ 0., -3.,  2.,  0.])
    """
    out, kept = K.hard_threshold_index(v, s, forced)
    sub = _ACTIVE.get()
    if sub is not None:
        sub._record_threshold(kept, len(out))
    return out


class PythonSubsolver:
    """Adapter: a plain Python function ``solver(sub: SubProblem) -> b`` as step 5."""

    def __init__(self, method, func, name):
        self.method = method
        self.func = func
        self.name = name
        self.t = 0
        # its thresholdings sit at the work it declared (in component gradients, its "inner
        # steps"), after step 2's full gradient; an iteration spans at least J such steps
        # (the nominal epoch), more when a solver did more work (the timeline's step axis)
        self.passes_head = 1.0
        self.passes_per_step = 1.0 / method.n
        self.steps_per_iter = method.p.J
        self.data = read_only_problem(method.problem)  # one copy of the data per solve

    def solve(self, x, g, snap_dloss, T, rng):
        m = self.method
        self.t += 1
        sub = SubProblem(self.data, T, x[T], g[T], m.p.eta, rng, m.p.s, self.t, x_hat=x,
                         g_full=g, snap_dloss=snap_dloss, J=m.p.J, m=m.p.m)
        token = _ACTIVE.set(sub)
        try:
            b = self.func(sub)
        finally:
            _ACTIVE.reset(token)
        events = sub._event_arrays() if m.p.record else None
        work = int(round(sub.passes * m.n))  # component gradients' worth
        self.steps_per_iter = max(self.steps_per_iter, work)
        counted = dict(n_thresholds=sub.n_thresholds, events=events,
                       n_events=0 if events is None else len(events[0]), inner_steps=work)
        try:
            b = np.asarray(b, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"the sub-problem solver of {self.name!r} must return b on T (an "
                            f"array of {len(T)} numbers) or on all {m.d} coordinates, got "
                            f"{type(b).__name__}") from exc
        if b.shape == (m.d,):
            b = b[T]  # Algorithm 1: b|_{T^c} = 0
        if b.shape != (len(T),):
            raise ValueError(f"the sub-problem solver of {self.name!r} must return b on T, of "
                             f"shape ({len(T)},), or on all coordinates, of shape ({m.d},); "
                             f"got shape {b.shape}")
        if not np.all(np.isfinite(b)):
            return SubResult(b_T=np.nan_to_num(b), passes=sub.passes, status=2, message=(
                f"the sub-problem solver of {self.name!r} returned non-finite values"),
                **counted)
        return SubResult(b_T=b.copy(), passes=sub.passes, **counted)


_EXTRA_COLORS = ("#7B3294", "#1B9E77", "#E7298A", "#66A61E", "#A6761D", "#666666", "#1F78B4")


def register_method(name, subsolver, *, label=None, color=None, aliases=(), eta=None,
                    max_iter=50, patience=5, description=""):
    """Make Algorithm 1 with your own step-5 solver a method of the package.

    The method then works everywhere a built-in one does: :func:`rgrasp_viz.solve`, the
    dashboards (:func:`rgrasp_viz.explore`, :func:`rgrasp_viz.compare`), every figure and
    ``Trace.save`` / ``Trace.load``.

    Parameters
    ----------
    name : str
        The method's name (case-insensitive; must be new).
    subsolver : callable
        ``subsolver(sub) -> b``: given a :class:`SubProblem` for one outer iteration, return
        ``b`` on ``T`` (an array of length ``|T|``, or of length ``d``: zeroed outside
        ``T``).  ``sub.fun`` and ``sub.grad`` charge their own pass; call
        ``sub.add_passes(k)`` to declare work done otherwise (``k`` component gradients:
        ``k / n``), and draw random numbers from ``sub.rng``.
    label : str, optional
        Display name (default: ``name`` in upper case).
    color : str, optional
        ``#RRGGBB``, ``rgb(r, g, b)``, ``rgba(r, g, b, a)`` or a CSS colour name (default:
        a colour no other method uses); anything else is refused (:func:`check_color`).
    aliases : sequence of str
        Other accepted spellings (a tuple or list: a bare string is refused, it is not a
        sequence of aliases).
    eta : None, float, str or callable, optional
        The default step size handed to the solver as ``sub.eta`` when the user gives none:
        a number, the name of a built-in rule of :func:`rgrasp_viz.default_eta`, or
        ``rule(problem, s, inner, batch_size) -> float``.  Default: ``1 / rho(3s)``, the
        restricted smoothness of ``F`` over ``|T| <= 3s`` coordinates (a safe gradient step
        on the sub-problem).
    max_iter, patience : int
        Default outer iterations and stagnation window.
    description : str
        One line for pickers and tables.

    Returns
    -------
    MethodSpec
        The registry entry.

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> def gd_on_T(sub):
    ...     z = sub.x0.copy()
    ...     for _ in range(20):
    ...         z -= sub.eta * sub.grad(z)  # 1 pass each, charged by sub.grad
    ...     return z
    >>> spec = rv.register_method("gdsp", subsolver=gd_on_T, label="GD-SP")
    >>> prob = rv.make_regression("classroom", random_state=0)
    >>> bool(rv.solve(prob, "gdsp", s=24).rel_error < 0.05)
    True
    >>> _ = rv.unregister_method("gdsp")
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if not callable(subsolver):
        raise TypeError(f"subsolver must be callable (sub -> b), got {type(subsolver).__name__}")
    key = name.strip().lower()
    if eta is None:
        rule = "subproblem"
    elif isinstance(eta, str) or callable(eta):
        rule = eta
        if isinstance(eta, str):
            if eta not in ETA_RULES:
                raise ValueError(f"unknown step-size rule {eta!r}; choose one of "
                                 f"{sorted(ETA_RULES)}, a number or a callable")
    elif isinstance(eta, numbers.Real) and not isinstance(eta, bool) and math.isfinite(eta) \
            and eta > 0:
        def rule(problem, s, inner, batch_size, _eta=float(eta)):
            return _eta
    else:
        raise ValueError(f"eta must be None, a positive number, a rule name or a callable, "
                         f"got {eta!r}")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise TypeError(f"label must be a non-empty string, got {label!r}")
    if isinstance(aliases, str):
        raise TypeError(f"aliases must be a sequence of strings, got the string {aliases!r} "
                        f"(write aliases=({aliases!r},) for one alias)")
    try:
        aliases = tuple(aliases)
    except TypeError:
        raise TypeError(f"aliases must be a sequence of strings, got {aliases!r}") from None
    bad = [a for a in aliases if not isinstance(a, str) or not a.strip()]
    if bad:
        raise TypeError(f"aliases must be non-empty strings, got {bad!r}")
    if color is None:
        used = {s.color for s in specs()}
        color = next((c for c in _EXTRA_COLORS if c not in used), _EXTRA_COLORS[-1])
    else:
        color = check_color(color)
    if not isinstance(description, str):
        raise TypeError(f"description must be a string, got {description!r}")
    for arg, v in (("max_iter", max_iter), ("patience", patience)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{arg} must be a positive integer, got {v!r}")

    def make(method):
        return PythonSubsolver(method, subsolver, key)

    if not description:
        who = getattr(subsolver, "__name__", "a Python function")
        description = f"Algorithm 1 with {who} as step 5"
    spec = MethodSpec(key, label or key.upper(), color, framework(make), eta_rule=rule,
                      aliases=aliases, max_iter=int(max_iter), patience=int(patience),
                      framework=True, in_paper=False, builtin=False, description=description)
    return add(spec)


_HEX_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
_RGB_COLOR = re.compile(r"rgba?\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*"
                        r"(,\s*(0|1|0?\.\d+)\s*)?\)")
CSS_COLOR_NAMES = frozenset("""
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgrey darkgreen darkkhaki
darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite
gold goldenrod gray grey green greenyellow honeydew hotpink indianred indigo ivory khaki
lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgrey lightgreen lightpink lightsalmon lightseagreen
lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen
steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow
yellowgreen""".split())
"""The CSS colour names (which plotly accepts too)."""


def check_color(color):
    """``color`` if it is a colour every page draws the same way: ``#RRGGBB``, ``rgb(r, g,
    b)`` / ``rgba(r, g, b, a)`` or a CSS colour name (which plotly accepts as well).

    A method's colour goes into figures and into the style of the dashboards' tables, so
    anything else (a typo, or text that is not a colour at all) is refused here.

    Raises
    ------
    ValueError
    """
    if isinstance(color, str):
        c = color.strip()
        if (_HEX_COLOR.fullmatch(c) or _RGB_COLOR.fullmatch(c)
                or c.lower() in CSS_COLOR_NAMES):
            return c
    raise ValueError(f"color must be '#RRGGBB', 'rgb(r, g, b)', 'rgba(r, g, b, a)' or a CSS "
                     f"colour name such as 'teal', got {color!r}")


def unregister_method(name):
    """Remove a method added with :func:`register_method` (built-in ones stay).

    Returns
    -------
    MethodSpec
        The removed entry.
    """
    return remove(name)
