"""Default step sizes: restricted smoothness estimated from the data, one rule per method.

A method's rule is named by its registry entry (``MethodSpec.eta_rule``); :func:`default_eta`
looks it up.  The rules never use the global Lipschitz constant ``max_i ||w_i||^2``: for
sparse iterates it is far too pessimistic.  Data for which no rule can give a usable step
(all-zero or badly scaled ``W``) is reported as such, naming the data problem.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import losses
from .._kernels import top_k
from ._registry import get_method, normalize_reading

# -- step-size rules -------------------------------------------------------------------------

_ROW_SAMPLE = 512  # rows used to estimate restricted row norms of dense data


def restricted_row_smoothness(problem, k):
    """Mean over samples of ``max_{|S| <= k} ||w_{i,S}||^2`` times the loss curvature bound.

    This is the average restricted smoothness of the per-sample losses ``f_i`` over k-sparse
    directions (for least squares the Hessian of ``f_i`` is ``w_i w_i^T``).  It is the sum of
    the ``k`` largest squared entries of each row: exact for CSR data, estimated on at most
    512 evenly spaced rows for dense data; plus the ridge term ``l2`` of the problem.
    Cached on the problem.
    """
    k = int(min(max(k, 1), problem.d))

    def compute():
        W = problem.W
        if sp.issparse(W):
            vals = []
            data, ptr = W.data, W.indptr
            for i in range(W.shape[0]):
                row = data[ptr[i] : ptr[i + 1]] ** 2
                if row.size > k:
                    row = np.partition(row, row.size - k)[row.size - k :]
                vals.append(row.sum())
            est = float(np.mean(vals))
        else:
            n = W.shape[0]
            rows = W[:: max(1, n // _ROW_SAMPLE)][:_ROW_SAMPLE] ** 2
            if k < problem.d:
                rows = np.partition(rows, problem.d - k, axis=1)[:, problem.d - k :]
            est = float(rows.sum(axis=1).mean())
        return est * losses.curvature_bound(problem.loss) + problem.l2

    return problem.cached(("row", k), compute)


def restricted_smoothness(problem, k, n_power=30):
    """Largest eigenvalue of ``(1/n) W_S^T W_S`` (times the curvature bound), by power iteration.

    ``S`` is the set of the ``k`` columns most correlated with ``y`` (the largest
    ``|W^T y|``, i.e. the first gradient directions from ``x = 0``): a cheap, deterministic
    estimate of the restricted smoothness of ``F`` at sparsity ``k``, which (unlike column
    norms) sees correlated designs such as setting 2; plus the ridge term ``l2``.  Cached on
    the problem.
    """
    k = int(min(max(k, 1), problem.d))

    def compute():
        W = problem.W
        S = top_k(np.asarray(W.T @ problem.y).ravel(), k)
        WS = W[:, S]
        if sp.issparse(WS):
            WS = WS.tocsr()
        v = np.full(len(S), 1.0 / math.sqrt(len(S)))
        lam = 0.0
        for _ in range(n_power):
            u = WS.T @ (WS @ v) / problem.n
            lam = float(np.linalg.norm(u))
            if lam == 0.0:
                break
            v = u / lam
        return lam * losses.curvature_bound(problem.loss) + problem.l2

    return problem.cached(("col", k), compute)


def _eta_gradient(problem, s, inner, batch_size):
    return 1.0 / restricted_smoothness(problem, 2 * s)


def _eta_subproblem(problem, s, inner, batch_size):
    return 1.0 / restricted_smoothness(problem, 3 * s)


def _eta_sght(problem, s, inner, batch_size):
    B = batch_size or max(1, round(math.sqrt(problem.n)))
    L = restricted_row_smoothness(problem, s) / B + restricted_smoothness(problem, 2 * s)
    return 1.0 / (2.0 * L)


def _eta_svrght(problem, s, inner, batch_size):
    return 2.5 / restricted_row_smoothness(problem, s)


def _eta_svrgsp(problem, s, inner, batch_size):
    if inner == "paper":
        return 1.0 / restricted_row_smoothness(problem, problem.d)
    return 1.0 / restricted_row_smoothness(problem, 3 * s)


ETA_RULES = {"gradient": _eta_gradient, "subproblem": _eta_subproblem, "sght": _eta_sght,
             "svrght": _eta_svrght, "svrgsp": _eta_svrgsp}
"""Step-size rules by name (a method's ``eta_rule`` in the registry)."""


def default_eta(problem, method, s, inner="paper", batch_size=None):
    """The default step size of ``method`` on ``problem`` (a documented rule, no tuning loop).

    Notation: ``rho(k)`` is the restricted smoothness of ``F`` at sparsity ``k``
    (:func:`restricted_smoothness`, from the columns most correlated with ``y``) and ``L(k)``
    the mean restricted smoothness of the per-sample losses (:func:`restricted_row_smoothness`,
    from the k largest squared entries of each row).  Both include the loss curvature bound
    (1 for least squares, 1/4 for logistic).  Rules, by the registry's ``eta_rule``:

    * ``"gradient"`` (FG-HT; GraSP, which has no step size, reports it): ``1 / rho(2s)``.
    * ``"subproblem"`` (default of a registered step-5 solver): ``1 / rho(3s)``, a safe
      gradient step on the sub-problem over ``|T| <= 3s`` coordinates.
    * ``"sght"``: ``1 / (2 (L(s) / B + rho(2s)))`` -- the smoothness of a mini-batch of ``B``
      samples, halved for the gradient noise.
    * ``"svrght"``: ``2.5 / L(s)``.  SVRGHT's window is narrow: smaller steps stall on a
      wrong support (an off-support coordinate must cross the threshold in one step to
      enter), larger ones diverge; no constant factor works on every problem.
    * ``"svrgsp"``: ``1 / L(d)`` (the mean squared row norm) in the paper's reading, where the
      inner iterate moves on all ``d`` coordinates; ``1 / L(3s)`` on ``T`` (``|T| <= 3s``).

    The global Lipschitz constant (``max_i ||w_i||^2``) is never used: for sparse iterates it
    is far too pessimistic.

    Parameters
    ----------
    problem : Problem
    method : str
        Any registered method name.
    s : int
    inner : {"paper", "on_T"}
    batch_size : int, optional
        SG-HT mini-batch size (default ``round(sqrt(n))``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When the data admits no step size: ``W`` is all zeros (``F`` does not depend on
        ``x``), or its entries are so large or small that their squares overflow or underflow
        in float64.
    """
    spec = get_method(method)
    rule = spec.eta_rule if spec.eta_rule is not None else "gradient"
    if isinstance(rule, str):
        rule = ETA_RULES[rule]
    check_scale(problem)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        eta = float(rule(problem, int(s), normalize_reading(inner), batch_size))
    if not (math.isfinite(eta) and eta > 0.0):
        raise ValueError(f"no default step size for {spec.label} on this data (the rule gave "
                         f"{eta!r}); pass eta explicitly")
    return eta


_SCALE_LIMITS = (1e-150, 1e150)
"""Largest |W| outside this range: squares of entries (smoothness, margins) leave float64."""


def check_scale(problem):
    """Raise a ``ValueError`` naming the data problem when ``W`` is all zeros or its largest
    entry is so large or small that squares of entries overflow or underflow in float64.

    The result is cached on the problem (one O(nnz) scan).
    """
    def compute():
        W = problem.W
        data = W.data if sp.issparse(W) else W
        # max(|min|, |max|): two passes, no copy of the data (finite: Problem checked)
        return max(-float(np.min(data)), float(np.max(data))) if data.size else 0.0

    top = problem.cached("max_abs_W", compute)
    if top == 0.0:
        raise ValueError("W is all zeros: the objective does not depend on x, so there is "
                         "nothing to fit (and no step size to choose); check the data")
    lo, hi = _SCALE_LIMITS
    if not lo <= top <= hi:
        kind = "large" if top > hi else "small"
        W = problem.W
        at = int(np.argmax(np.abs(W.data if sp.issparse(W) else W)))  # only on this error
        column = int(W.indices[at]) if sp.issparse(W) else at % W.shape[1]
        raise ValueError(f"the entries of W are too {kind} for float64 arithmetic (largest "
                         f"|W| = {top:.3g}, in column {column}: squares of entries "
                         f"{'overflow' if kind == 'large' else 'underflow'}); rescale the "
                         f"data, e.g. W / {top:.3g}")


