"""The estimators' swap scores: the objective after trading a selected coordinate for an
unselected one, on the quadratic model of a fit on the support, for every pair at once
(``rgrasp_viz._estimators._pair_candidates`` documents the formula).  One fused sweep over
the ``|J| x |free|`` pairs instead of about ten NumPy passes over temporary arrays; each
entry is the same sequence of floating-point operations as the NumPy expression, so the
scores agree bit for bit.  Dense arrays only (the model's matrices are always dense).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def swap_scores(M, J, free_pos, bk, g, C, e, base, floor):
    """Scores of the swaps ``(J[r] in, free_pos[c] out)``.

    Parameters
    ----------
    M : ndarray, shape (d, k)
        ``B @ G^-1`` (``B = A^T A_S``).
    J : ndarray of int64
        The coordinates that may enter.
    free_pos : ndarray of int64
        The positions in the support that may leave.
    bk, g : ndarray, shape (len(free_pos),)
        The fit's coefficients and ``diag(G^-1)`` at those positions.
    C, e : ndarray, shape (d,)
        ``A^T r`` and the entering columns' residual norms.
    base : ndarray, shape (len(free_pos),)
        ``rss + bk**2 / g``.
    floor : ndarray, shape (len(J),)
        A swap whose denominator is at most this is not scored.

    Returns
    -------
    ndarray, shape (len(J), len(free_pos))
        ``base - num^2 / den`` with ``num = bk M / g + C``, ``den = M^2 / g + e``; ``inf``
        where ``den <= floor`` or the score is not finite.
    """
    out = np.empty((len(J), len(free_pos)))
    for r in range(len(J)):
        j = J[r]
        cj = C[j]
        ej = e[j]
        fl = floor[r]
        for c in range(len(free_pos)):
            m = M[j, free_pos[c]]
            gc = g[c]
            if gc == 0.0:  # NumPy's scores are inf / nan here: not scored
                out[r, c] = np.inf
                continue
            num = bk[c] * m
            num = num / gc
            num = num + cj
            den = m * m
            den = den / gc
            den = den + ej
            if not den > fl:
                out[r, c] = np.inf
                continue
            v = num * num
            v = v / den
            v = base[c] - v
            out[r, c] = v if math.isfinite(v) else np.inf
    return out
