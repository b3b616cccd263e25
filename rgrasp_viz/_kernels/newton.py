"""Damped Newton on the (weighted) logistic loss over a few columns: the estimators' refit.

``min_b (1/n) sum_i w_i log(1 + exp(-y_i a_i)) + (1/2) sum_j lam_j b_j^2`` with ``a = A b``,
for the ``n x k`` columns ``A`` of one support (``k`` small: a support's columns are always
gathered into a dense block, also from CSR data, so the kernel has no CSR twin).  Each step
solves the Newton system (the Hessian plus a tiny Levenberg term ``1e-10``) by Cholesky and
backtracks from the full step until the Armijo condition holds; the run ends when a step lowers
the objective by at most ``1e-12`` of its value, when no step length down to ``1e-10`` is
accepted, or after ``maxiter`` steps.  The same iteration as the NumPy reference in
``rgrasp_viz._estimators`` (its sums are taken in another order, so the iterates agree to
rounding, not bit for bit).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit

LEVENBERG = 1e-10
"""Added to the Hessian's diagonal: keeps the system solvable on separable or collinear
columns."""


@njit(cache=True, nogil=True, inline="always")
def _log1pexp(z):
    """``log(1 + exp(z))`` = ``logaddexp(0, z)``, without overflow."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@njit(cache=True, nogil=True)
def _objective(A, y, w, lam, b, a):
    """The objective at ``b`` whose margins are ``a`` (filled here)."""
    n, k = A.shape
    total = 0.0
    for i in range(n):
        s = 0.0
        for j in range(k):
            s += A[i, j] * b[j]
        a[i] = s
        total += w[i] * _log1pexp(-y[i] * s)
    ridge = 0.0
    for j in range(k):
        ridge += lam[j] * b[j] * b[j]
    return total / n + 0.5 * ridge


@njit(cache=True, nogil=True)
def logistic_newton_dense(A, y, w, lam, b0, maxiter):
    """Damped Newton from ``b0`` (see the module docstring).

    Parameters
    ----------
    A : ndarray, shape (n, k), C-contiguous
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    w : ndarray, shape (n,)
        Sample weights (ones for the plain mean).
    lam : ndarray, shape (k,)
        Ridge weight per column.
    b0 : ndarray, shape (k,)
        Starting point.
    maxiter : int

    Returns
    -------
    b : ndarray, shape (k,)
    ok : bool
        False when a Newton system was not positive definite to working precision (the
        caller then solves with a rank-revealing method); ``b`` is the point reached so far.
    """
    b, ok, _ = _newton(A, y, w, lam, b0, maxiter, 0.0, 0.0)
    return b, ok


@njit(cache=True, nogil=True)
def logistic_newton_dense_work(A, y, w, lam, b0, maxiter, rtol, g_zero):
    """:func:`logistic_newton_dense` that also counts its work: ``(b, ok, charged)``, with
    ``charged`` the objective evaluations (the start's and every line-search trial) made until
    the gradient's largest entry was first at most ``rtol * max(|grad(b0)|_inf, g_zero)``
    (all of them if never): the package's work rule for an exact restricted fit
    (``rgrasp_viz.solvers._exact``).  The iterates are those of :func:`logistic_newton_dense`.
    """
    return _newton(A, y, w, lam, b0, maxiter, rtol, g_zero)


@njit(cache=True, nogil=True)
def _newton(A, y, w, lam, b0, maxiter, rtol, g_zero):
    """The iteration, and the evaluations charged by the work rule (``rtol``, ``g_zero``: see
    :func:`logistic_newton_dense_work`)."""
    n, k = A.shape
    b = b0.copy()
    evals = 1  # objective evaluations so far (the start's)
    charged = -1  # evaluations when the gradient first met the work rule
    g_ref = -1.0  # max(|grad(b0)|_inf, g_zero), set at the first gradient
    a = np.empty(n)
    a_new = np.empty(n)
    pw = np.empty(n)
    h = np.empty(n)
    g = np.empty(k)
    H = np.empty((k, k))
    step = np.empty(k)
    b_new = np.empty(k)
    f = _objective(A, y, w, lam, b, a)
    for _ in range(maxiter):
        for i in range(n):
            p = math.exp(-_log1pexp(y[i] * a[i]))  # 1 - sigma(y a)
            pw[i] = w[i] * p
            h[i] = pw[i] * (1.0 - p)
        # one sweep over the rows (cache friendly for large n): g and the lower triangle of H
        for j in range(k):
            g[j] = 0.0
            for m in range(j + 1):
                H[j, m] = 0.0
        for i in range(n):
            yp = y[i] * pw[i]
            for j in range(k):
                aij = A[i, j]
                g[j] += aij * yp
                ah = aij * h[i]
                for m in range(j + 1):
                    H[j, m] += ah * A[i, m]
        gmax = 0.0
        for j in range(k):
            g[j] = -g[j] / n + lam[j] * b[j]
            gmax = max(gmax, abs(g[j]))
            for m in range(j + 1):
                H[j, m] = H[j, m] / n
            H[j, j] += lam[j] + LEVENBERG
        if charged < 0:
            if g_ref < 0.0:
                g_ref = max(gmax, g_zero)
            if gmax <= rtol * g_ref:
                charged = evals
        # Cholesky H = L L^T in the lower triangle, then L L^T step = g
        for j in range(k):
            d = H[j, j]
            for m in range(j):
                d -= H[j, m] * H[j, m]
            if not d > 0.0:
                return b, False, evals
            d = math.sqrt(d)
            H[j, j] = d
            for r in range(j + 1, k):
                s = H[r, j]
                for m in range(j):
                    s -= H[r, m] * H[j, m]
                H[r, j] = s / d
        for j in range(k):
            s = g[j]
            for m in range(j):
                s -= H[j, m] * step[m]
            step[j] = s / H[j, j]
        for j in range(k - 1, -1, -1):
            s = step[j]
            for m in range(j + 1, k):
                s -= H[m, j] * step[m]
            step[j] = s / H[j, j]
        dec = 0.0
        for j in range(k):
            dec += g[j] * step[j]
        t = 1.0
        accepted = False
        f_new = f
        while t > 1e-10:
            for j in range(k):
                b_new[j] = b[j] - t * step[j]
            f_new = _objective(A, y, w, lam, b_new, a_new)
            evals += 1
            if f_new <= f - 1e-4 * t * dec:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        done = f - f_new <= 1e-12 * max(abs(f), 1e-300)
        b[:] = b_new
        a[:] = a_new
        f = f_new
        if done:
            break
    if charged < 0:  # never met: every evaluation
        charged = evals
    return b, True, charged
