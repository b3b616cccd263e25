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

import math
import numbers

import numpy as np

from .. import _kernels as K
from .. import losses
from ._common import Method, StepResult, gather_columns, merge_support
from .registry import MethodSpec, add, remove
from .subsolvers import SubResult

__all__ = ["RGraSP", "SubProblem", "framework", "register_method", "unregister_method"]


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
        Z, T = merge_support(g, x, s)  # steps 3-4
        r = self.sub.solve(x, g, snap_dloss, T, rng)  # step 5: b on T, zero elsewhere
        keep = K.top_k(r.b_T, s)  # step 6: H_s over T
        x_new = np.zeros(self.d)
        x_new[T[keep]] = r.b_T[keep]
        return StepResult(x=x_new, passes=1.0 + r.passes, n_thresholds=r.n_thresholds + 1,
                          status=r.status, message=r.message, inner_steps=r.inner_steps,
                          Z=Z, T=T, b_T=r.b_T, n_events=r.n_events,
                          n_checkpoints=r.n_checkpoints, snaps=r.snaps,
                          work_index=r.work_index, outer_event=r.inner_steps)


def framework(make_subsolver):
    """A registry factory: Algorithm 1 with the step-5 solver ``make_subsolver(method)``."""

    def factory(problem, params, ws):
        return RGraSP(problem, params, ws, make_subsolver)

    return factory


# -- a learner's own step 5 ------------------------------------------------------------


class SubProblem:
    """The sub-problem of one outer iteration, handed to a registered step-5 solver.

    ``min F(x)`` over the ``x`` that are 0 outside ``T``, in the coordinates ``T`` (every
    vector here has length ``|T|``).  A solver returns ``b`` on ``T``; Algorithm 1 then keeps
    its ``s`` largest entries.

    Attributes
    ----------
    T : ndarray of int
        The merged support ``Z ∪ supp(x̂^{t-1})``, ascending.
    x0 : ndarray
        ``x̂^{t-1}`` restricted to ``T`` (a fresh copy: modify it freely).
    g : ndarray
        ``grad F(x̂^{t-1})`` restricted to ``T`` (computed by step 2, free to use).
    W : ndarray or scipy.sparse.csr_matrix, shape (n, len(T))
        The columns ``T`` of the design (gathered on first access).
    y : ndarray, shape (n,)
    n, d, s : int
        Samples, features, sparsity level.
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
        Effective passes this solver declared so far (:meth:`add_passes`).
    """

    def __init__(self, problem, T, x0, g, eta, rng, s, iteration):
        self._problem = problem
        self.T = T
        self.x0 = x0
        self.g = g
        self.eta = eta
        self.rng = rng
        self.s = s
        self.iteration = iteration
        self.y = problem.y
        self.n = problem.n
        self.d = problem.d
        self.loss = problem.loss
        self.l2 = problem.l2
        self.passes = 0.0
        self._W = None

    @property
    def W(self):  # noqa: N802 - the paper's notation
        if self._W is None:
            self._W = gather_columns(self._problem.W, self.T)
        return self._W

    def _z(self, z):
        z = np.asarray(z, dtype=np.float64)
        if z.shape != (len(self.T),):
            raise ValueError(f"z must have shape ({len(self.T)},) (one entry per coordinate "
                             f"of T), got {z.shape}")
        return z

    def fun(self, z):
        """``F`` at the vector equal to ``z`` on ``T`` and zero elsewhere."""
        z = self._z(z)
        a = np.asarray(self.W @ z).ravel()
        f = float(np.mean(losses.sample_losses(a, self.y, self.loss)))
        return f + 0.5 * self.l2 * float(z @ z) if self.l2 else f

    def grad(self, z):
        """The gradient of ``F`` over the coordinates ``T`` at ``z`` (length ``|T|``)."""
        z = self._z(z)
        a = np.asarray(self.W @ z).ravel()
        r = losses.loss_derivative(a, self.y, self.loss)
        g = np.asarray(self.W.T @ r).ravel() / self.n
        return g + self.l2 * z if self.l2 else g

    def add_passes(self, k):
        """Declare the work done, in effective passes (a sweep over the ``n`` samples counts
        1, one component gradient ``1/n``)."""
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (
                math.isfinite(k) and k >= 0):
            raise ValueError(f"add_passes takes a non-negative finite number, got {k!r}")
        self.passes += float(k)


class PythonSubsolver:
    """Adapter: a plain Python function ``solver(sub: SubProblem) -> b_T`` as step 5."""

    def __init__(self, method, func, name):
        self.method = method
        self.func = func
        self.name = name
        self.t = 0

    def solve(self, x, g, snap_dloss, T, rng):
        m = self.method
        self.t += 1
        sub = SubProblem(m.problem, T, x[T].copy(), g[T].copy(), m.p.eta, rng, m.p.s, self.t)
        b = self.func(sub)
        try:
            b = np.asarray(b, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"the sub-problem solver of {self.name!r} must return b on T (an "
                            f"array of {len(T)} numbers), got {type(b).__name__}") from exc
        if b.shape != (len(T),):
            raise ValueError(f"the sub-problem solver of {self.name!r} must return b on T, of "
                             f"shape ({len(T)},); got shape {b.shape}")
        if not np.all(np.isfinite(b)):
            return SubResult(b_T=np.nan_to_num(b), passes=sub.passes, status=2, message=(
                f"the sub-problem solver of {self.name!r} returned non-finite values"))
        return SubResult(b_T=b.copy(), passes=sub.passes)


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
        ``b`` on ``T`` (an array of length ``|T|``).  Call ``sub.add_passes(k)`` to declare
        the work done in effective passes, and draw random numbers from ``sub.rng``.
    label : str, optional
        Display name (default: ``name`` in upper case).
    color : str, optional
        ``#RRGGBB`` colour (default: a colour no other method uses).
    aliases : sequence of str
        Other accepted spellings.
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
    ...         z -= sub.eta * sub.grad(z)
    ...         sub.add_passes(1)
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
            from .steps import ETA_RULES

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
    if color is None:
        from .registry import _REGISTRY

        used = {s.color for s in _REGISTRY.values()}
        color = next((c for c in _EXTRA_COLORS if c not in used), _EXTRA_COLORS[-1])
    for arg, v in (("max_iter", max_iter), ("patience", patience)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{arg} must be a positive integer, got {v!r}")

    def make(method):
        return PythonSubsolver(method, subsolver, key)

    if not description:
        who = getattr(subsolver, "__name__", "a Python function")
        description = f"Algorithm 1 with {who} as step 5"
    spec = MethodSpec(key, label or key.upper(), color, framework(make), eta_rule=rule,
                      aliases=tuple(aliases), max_iter=int(max_iter), patience=int(patience),
                      framework=True, in_paper=False, builtin=False, description=description)
    return add(spec)


def unregister_method(name):
    """Remove a method added with :func:`register_method` (built-in ones stay).

    Returns
    -------
    MethodSpec
        The removed entry.
    """
    return remove(name)
