"""Per-sample losses of the linear models in the paper, in plain NumPy.

Both problems of the paper are finite sums over samples of a loss of the *margin*
:math:`a_i = \\mathbf{w}_i^T \\mathbf{x}`:

* ``"squares"``  -- sparsity-constrained linear regression (Eq. 2),
  :math:`f_i(a) = \\tfrac12 (a - y_i)^2`;
* ``"logistic"`` -- sparsity-constrained logistic regression,
  :math:`f_i(a) = \\log(1 + \\exp(-y_i a))` with labels :math:`y_i \\in \\{-1, +1\\}`.

The objective is :math:`F(\\mathbf{x}) = \\frac1n \\sum_i f_i(\\mathbf{w}_i^T \\mathbf{x})`
(plus an optional ridge term :math:`\\frac{\\lambda}{2}\\|\\mathbf{x}\\|^2`, ``l2``, 0 in
the paper), so everything reduces to the margins ``W @ x`` plus a scalar function of each margin.
This module is the readable reference implementation (no numba): the compiled kernels
and the tests are checked against it.
"""

from __future__ import annotations

import operator

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

__all__ = [
    "LOSSES",
    "LOSS_CODES",
    "check_loss",
    "sample_losses",
    "loss_derivative",
    "objective",
    "gradient",
    "sample_gradient",
    "curvature_bound",
]

LOSSES = ("squares", "logistic")
"""Names of the supported losses."""

LOSS_CODES = {"squares": 0, "logistic": 1}
"""Integer code of each loss, as used by the compiled kernels."""

# Max of f_i''(a) over a: 1 for squares; sigma(t)(1 - sigma(t)) <= 1/4 for logistic.
_CURVATURE = {"squares": 1.0, "logistic": 0.25}


def check_loss(loss):
    """Validate a loss name and return its integer code.

    Parameters
    ----------
    loss : str
        One of :data:`LOSSES`.

    Returns
    -------
    int
        ``LOSS_CODES[loss]``.

    Raises
    ------
    ValueError
        If `loss` is not one of :data:`LOSSES`.
    """
    if not isinstance(loss, str) or loss not in LOSS_CODES:
        raise ValueError(f"loss must be one of {LOSSES!r}, got {loss!r}")
    return LOSS_CODES[loss]


def sample_losses(margins, y, loss):
    """Per-sample losses :math:`f_i(a_i)` given the margins :math:`a_i = w_i^T x`.

    Parameters
    ----------
    margins : array_like of float, shape (n,)
        Margins ``W @ x``.
    y : array_like of float, shape (n,)
        Responses (``"squares"``) or labels in {-1, +1} (``"logistic"``).
    loss : {"squares", "logistic"}
        Which loss.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        ``0.5 * (a - y)**2`` for squares, ``log(1 + exp(-y * a))`` for logistic.

    Notes
    -----
    The logistic loss is evaluated as ``logaddexp(0, -y * a)``, which never overflows:
    for a margin of -800 with label +1 it returns 800 rather than ``inf``.
    """
    code = check_loss(loss)
    a = np.asarray(margins, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if code == 0:
        r = a - y
        return 0.5 * r * r
    return np.logaddexp(0.0, -y * a)


def loss_derivative(margins, y, loss):
    """Derivative :math:`f_i'(a_i)` of each per-sample loss with respect to its margin.

    Parameters
    ----------
    margins : array_like of float, shape (n,)
        Margins ``W @ x``.
    y : array_like of float, shape (n,)
        Responses (``"squares"``) or labels in {-1, +1} (``"logistic"``).
    loss : {"squares", "logistic"}
        Which loss.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        ``a - y`` for squares, ``-y * sigmoid(-y * a)`` for logistic.

    Notes
    -----
    The sigmoid is :func:`scipy.special.expit`, which saturates to 0 or 1 without
    overflow warnings even for margins as large as ``1e300``.
    """
    code = check_loss(loss)
    a = np.asarray(margins, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if code == 0:
        return a - y
    return -y * expit(-y * a)


def objective(W, y, x, loss, l2=0.0):
    """Objective :math:`F(x) = \\frac1n \\sum_i f_i(w_i^T x)`.

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix, shape (n, d)
        Design matrix, one sample per row.
    y : array_like of float, shape (n,)
        Responses or labels.
    x : array_like of float, shape (d,)
        Model parameter.
    loss : {"squares", "logistic"}
        Which loss.
    l2 : float, default 0
        Optional ridge term ``(l2 / 2) ||x||^2`` (0: the paper's objective).

    Returns
    -------
    float
        ``1/(2n) ||y - W x||^2`` for squares,
        ``1/n sum_i log(1 + exp(-y_i w_i^T x))`` for logistic (plus the ridge term).
    """
    x = np.asarray(x, dtype=np.float64)
    sup = None if sp.issparse(W) else np.flatnonzero(x)
    if sup is not None and 4 * len(sup) < x.shape[0]:  # sparse x: its columns only, O(n s)
        margins = W[:, sup] @ x[sup]
    else:
        margins = np.asarray(W @ x, dtype=np.float64).ravel()
    f = float(np.mean(sample_losses(margins, y, loss)))
    return f + 0.5 * l2 * float(x @ x) if l2 else f


def gradient(W, y, x, loss, margins=None, l2=0.0):
    """Full gradient :math:`\\nabla F(x) = \\frac1n W^T f'(W x)`.

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix, shape (n, d)
        Design matrix, one sample per row.
    y : array_like of float, shape (n,)
        Responses or labels.
    x : array_like of float, shape (d,)
        Model parameter.
    loss : {"squares", "logistic"}
        Which loss.
    margins : array_like of float, shape (n,), optional
        Precomputed ``W @ x``; computed here when omitted.
    l2 : float, default 0
        Optional ridge term: adds ``l2 * x``.

    Returns
    -------
    grad : numpy.ndarray of float64, shape (d,)
        The full gradient at `x`.
    margins : numpy.ndarray of float64, shape (n,)
        The margins ``W @ x``, returned so callers (e.g. an objective evaluation at the
        same point) need not recompute the O(nnz) product.
    """
    if margins is None:
        x = np.asarray(x, dtype=np.float64)
        margins = np.asarray(W @ x, dtype=np.float64).ravel()
    else:
        margins = np.asarray(margins, dtype=np.float64)
    g = loss_derivative(margins, y, loss)
    n = W.shape[0]
    grad = np.asarray(W.T @ g, dtype=np.float64).ravel() / n
    if l2:
        grad += l2 * np.asarray(x, dtype=np.float64)
    return grad, margins


def sample_gradient(W, y, x, i, loss, l2=0.0):
    """Gradient of the single component :math:`f_i` at `x`.

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix, shape (n, d)
        Design matrix, one sample per row.
    y : array_like of float, shape (n,)
        Responses or labels.
    x : array_like of float, shape (d,)
        Model parameter.
    i : int
        Sample index (negative indices count from the end, as in NumPy).
    loss : {"squares", "logistic"}
        Which loss.
    l2 : float, default 0
        Optional ridge term, shared by every component: adds ``l2 * x``.

    Returns
    -------
    numpy.ndarray of float64, shape (d,)
        ``f_i'(w_i^T x) * w_i`` as a dense vector (the average over all ``i`` is the
        full gradient).

    Raises
    ------
    IndexError
        If `i` is out of range.
    """
    n, d = W.shape
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"sample index i={i} out of range for n={n} samples")
    i %= n
    x = np.asarray(x, dtype=np.float64)
    yi = np.asarray(y, dtype=np.float64)[i : i + 1]
    if sp.issparse(W):
        if W.format != "csr":
            W = sp.csr_matrix(W)
        lo, hi = W.indptr[i], W.indptr[i + 1]
        idx = W.indices[lo:hi]
        vals = np.asarray(W.data[lo:hi], dtype=np.float64)
        a = np.array([vals @ x[idx]])
        coef = loss_derivative(a, yi, loss)[0]
        out = np.zeros(d)
        # add.at rather than assignment: stays correct if the CSR has duplicate entries
        np.add.at(out, idx, coef * vals)
        return out + l2 * x if l2 else out
    row = np.asarray(W[i], dtype=np.float64).ravel()
    coef = loss_derivative(np.array([row @ x]), yi, loss)[0]
    return coef * row + l2 * x if l2 else coef * row


def curvature_bound(loss):
    """Largest second derivative of the per-sample loss with respect to the margin.

    Combined with row norms this gives smoothness constants, e.g.
    :math:`L_i = c \\|w_i\\|^2` for component :math:`f_i`.

    Parameters
    ----------
    loss : {"squares", "logistic"}
        Which loss.

    Returns
    -------
    float
        ``1.0`` for squares, ``0.25`` for logistic.
    """
    check_loss(loss)
    return _CURVATURE[loss]
