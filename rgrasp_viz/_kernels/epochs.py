"""Inner epochs of the stochastic methods, in dense / CSR pairs.

Every kernel works on plain arrays in a "working space" of ``p`` coordinates: the full
``d`` coordinates, or the merged support ``T`` when the caller has gathered ``W[:, T]``.
Random indices are drawn by the caller (``np.random.Generator``) and passed in, so a run is
reproducible and a slow NumPy reference fed the same indices gives the same iterates.

Recording is done in caller-allocated fixed-size buffers:

* thresholding events: inner step (1-based), coordinates entered, coordinates left;
* checkpoints every ``rec_every`` inner steps: the mean sampled loss ``f_i(z)`` over the
  window (a free, unbiased-on-average proxy of the objective along the path) and, when
  ``snaps`` has rows, a copy of the iterate.

Return value of every epoch kernel: ``(steps_done, n_events, n_checkpoints, n_prev, status)``
with ``status`` 0 = ok, 1 = a non-finite margin was met (divergence; the iterate is left as
it was at that step).
"""

from __future__ import annotations

import numpy as np

from ._jit import _INTERNAL, njit
from .threshold import count_changes, keep_only, top_k_indices

_HUGE = 1e150  # a margin beyond this means the run has blown up
_ZERO = np.int64(0)  # counters start from a typed zero (see svrg_epoch_dense)


@njit(cache=True)
def sample_loss(a, y, loss):
    """Per-sample loss as a function of the margin ``a = w_i^T x``."""
    if loss == 0:
        r = a - y
        return 0.5 * r * r
    t = -y * a
    if t > 0.0:
        return t + np.log1p(np.exp(-t))
    return np.log1p(np.exp(t))


@njit(cache=True, inline="always")
def dloss(a, y, loss):
    """Derivative of the per-sample loss with respect to the margin ``a``."""
    if loss == 0:
        return a - y
    t = -y * a  # d/da log(1 + exp(t)) = -y * sigmoid(t)
    if t > 0.0:
        return -y / (1.0 + np.exp(-t))
    e = np.exp(t)
    return -y * e / (1.0 + e)


@njit(cache=True, **_INTERNAL, inline="always")
def loss_and_dloss(a, y, loss):
    """``(sample_loss(a, y, loss), dloss(a, y, loss))`` with one ``exp`` (same values)."""
    if loss == 0:
        r = a - y
        return 0.5 * r * r, r
    t = -y * a
    if t > 0.0:
        e = np.exp(-t)
        return t + np.log1p(e), -y / (1.0 + e)
    e = np.exp(t)
    return np.log1p(e), -y * e / (1.0 + e)


@njit(cache=True, **_INTERNAL, inline="always")
def row_dot(X, i, z):
    """``X[i] @ z`` with four partial sums (a single running sum is latency-bound)."""
    p = z.shape[0]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    k = 0
    while k + 4 <= p:
        a0 += X[i, k] * z[k]
        a1 += X[i, k + 1] * z[k + 1]
        a2 += X[i, k + 2] * z[k + 2]
        a3 += X[i, k + 3] * z[k + 3]
        k += 4
    while k < p:
        a0 += X[i, k] * z[k]
        k += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True, **_INTERNAL, inline="always")
def _due(j, every):
    """Whether something that happens every ``every`` steps (0: never) is due after step j."""
    return every > 0 and (j + 1) % every == 0


@njit(cache=True, **_INTERNAL)
def _after_step(j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt):
    """End of inner step ``j`` (0-based): thresholding event and checkpoint, if due.

    Returns the updated ``(n_prev, n_ev, n_rec, acc, cnt)``.
    """
    if _due(j, thr_every):  # z <- H_{s_keep}(z); entered / left relative to prev_idx
        nk = top_k_indices(z, s_keep, keep_idx, cand, mags)
        keep_only(z, keep_idx, nk, vbuf)
        if track:
            e_in, e_out = count_changes(prev_idx, n_prev, keep_idx, nk)
            for q in range(nk):
                prev_idx[q] = keep_idx[q]
            ev_step[n_ev] = j + 1
            ev_in[n_ev] = e_in
            ev_out[n_ev] = e_out
        n_prev = nk
        n_ev += 1
    if _due(j, rec_every):
        rec_loss[n_rec] = acc / cnt
        acc = 0.0
        cnt = _ZERO
        if snaps.shape[0] > 0:
            for k in range(z.shape[0]):  # a loop: `snaps[n_rec, :] = z` costs seconds of
                snaps[n_rec, k] = z[k]      # compilation (broadcast error formatting)
        n_rec += 1
    return n_prev, n_ev, n_rec, acc, cnt


_FAST = {"reassoc", "contract"}
"""Floating-point licence of the streaming loops below: sums may be reassociated (so LLVM
vectorises them into several partial sums) and ``a * b + c`` fused.  NaN and infinity keep
their meaning, so the divergence test still sees them.  A margin then differs from a
sequential sum by rounding only (on a given machine, always in the same way)."""


@njit(cache=True, fastmath=_FAST, **_INTERNAL)
def _dot(X, i, v):
    """``X[i, :p] @ v`` (``p = len(v)``), vectorised."""
    a = 0.0
    for k in range(v.shape[0]):
        a += X[i, k] * v[k]
    return a


@njit(cache=True, fastmath=_FAST, **_INTERNAL)
def _step_dot(X, i, u, ec, i2):
    """``u -= ec * X[i, :p]`` and, in the same sweep, return ``X[i2, :p] @ u`` (updated)."""
    a = 0.0
    for k in range(u.shape[0]):
        v = u[k] - ec * X[i, k]
        u[k] = v
        a += X[i2, k] * v
    return a


@njit(cache=True, fastmath=_FAST, **_INTERNAL)
def _step_dot2(X, i, u, ec, i2, h):
    """:func:`_step_dot` that also returns ``X[i2, :p] @ h`` (same sweep)."""
    a = 0.0
    b = 0.0
    for k in range(u.shape[0]):
        v = u[k] - ec * X[i, k]
        u[k] = v
        a += X[i2, k] * v
        b += X[i2, k] * h[k]
    return a, b


@njit(cache=True, fastmath=_FAST, **_INTERNAL)
def _axpy2(u, c, X, i, b, g):
    """``u += c * X[i, :p] + b * g``."""
    for k in range(u.shape[0]):
        u[k] += c * X[i, k] + b * g[k]


@njit(cache=True, **_INTERNAL, inline="always")
def _drift(z, g, D):
    """``z -= D * g``: apply ``D / eta`` pending steps of the dense part ``-eta * g``."""
    for k in range(z.shape[0]):
        z[k] -= D * g[k]


@njit(cache=True)
def svrg_epoch_dense(X, y, loss, z, g, snap_dloss, idx, eta, thr_every, s_keep,
                     keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                     ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps):
    """SVRG inner loop (Algorithm 2 / SVRGHT) on a dense C-contiguous ``X`` (n x >= p).

    ``z <- z - eta * (grad f_i(z) - grad f_i(z~) + g)`` for ``i`` in ``idx``; when
    ``thr_every > 0``, ``z <- H_{s_keep}(z)`` after every ``thr_every``-th step.
    ``grad f_i(z~) = snap_dloss[i] * w_i`` is rebuilt from ``snap_dloss[i] = f_i'(w_i^T z~)``,
    stored by the full-gradient pass (one ``exp`` per step less for the logistic loss).
    Only the first ``p = len(z)`` columns of ``X`` are read (the on-T reading passes
    ``W[:, T]`` inside a wider buffer).

    Unless the iterate is thresholded after every step (SVRGHT), the constant part
    ``-eta * g`` of a step is applied lazily, as in :func:`svrg_epoch_csr`: the kernel keeps
    ``u = z + D * g`` (``D = (j - t0) * eta`` since the last synchronisation ``t0``) in the
    buffer of ``z``, and a margin is ``<w_i, u> - D * (W g)_i``, with ``(W g)_i`` formed the
    first time row ``i`` is needed.  Each step's update ``u -= eta * c * w_i`` and the next
    step's ``<w_next, u>`` share one sweep, so a step streams ``u`` once and ``g`` (almost)
    never.  ``z`` is materialised before a thresholding event (then the clock restarts), at
    a divergence stop and at the end of the epoch; a snapshot is written straight into its
    buffer row, leaving the state alone, so recording never changes the run.  With
    ``thr_every == 1`` the update is eager and, after each ``H_s``, the next margin reads
    only the kept coordinates (the others are zero).  The iterates equal the eager
    update's up to rounding.
    """
    n_steps = idx.shape[0]
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    if n_steps == 0:
        return 0, n_ev, n_rec, n_prev, 0
    n = X.shape[0]
    wg = np.empty(n)  # (W g)_i, formed the first time row i follows a step (NaN: not yet)
    for r in range(n):
        wg[r] = np.nan
    snap = snaps.shape[0] > 0
    t0 = 0  # step of the last synchronisation (z == u there)
    au = _dot(X, idx[0], z)  # <w_i, u> of the coming step
    for j in range(n_steps):
        i = idx[j]
        D = (j - t0) * eta
        a = au - D * wg[i] if j > t0 else au
        if not abs(a) < _HUGE:
            _drift(z, g, D)
            return j, n_ev, n_rec, n_prev, 1
        fa, da = loss_and_dloss(a, y[i], loss)
        acc += fa
        cnt += 1
        ec = eta * (da - snap_dloss[i])
        event = _due(j, thr_every)
        if event or j + 1 == n_steps:
            # thr_every == 1: z -= ec * w_i + eta * g (eager, no clock); else u -= ec * w_i
            _axpy2(z, -ec, X, i, -eta if thr_every == 1 else 0.0, g)
        else:  # u -= ec * w_i and the next margin <w_next, u> in one sweep
            i2 = idx[j + 1]
            if wg[i2] == wg[i2]:
                au = _step_dot(X, i, z, ec, i2)
            else:
                au, wg[i2] = _step_dot2(X, i, z, ec, i2, g)
        if event:  # H reads every coordinate: synchronise, threshold, restart the clock
            if thr_every != 1:
                _drift(z, g, (j + 1 - t0) * eta)
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt)
            t0 = j + 1
            if j + 1 < n_steps:
                if thr_every == 1:  # z is zero outside the n_prev kept coordinates
                    au = 0.0
                    i2 = idx[j + 1]
                    for q in range(n_prev):
                        k = keep_idx[q]
                        au += X[i2, k] * z[k]
                else:
                    au = _dot(X, idx[j + 1], z)
        elif _due(j, rec_every):
            rec_loss[n_rec] = acc / cnt
            acc = 0.0
            cnt = _ZERO
            if snap:  # written straight into the buffer: recording never changes the run
                D1 = (j + 1 - t0) * eta
                for k in range(z.shape[0]):
                    snaps[n_rec, k] = z[k] - D1 * g[k]
            n_rec += 1
    _drift(z, g, (n_steps - t0) * eta)
    return n_steps, n_ev, n_rec, n_prev, 0


@njit(cache=True, **_INTERNAL)
def _materialize(z, ug, D):
    """Lazy updates: write the current iterate ``z = u - D * g`` from ``ug = [u | g]``."""
    for k in range(z.shape[0]):
        z[k] = ug[k, 0] - D * ug[k, 1]


@njit(cache=True)
def svrg_epoch_csr(data, indices, indptr, y, loss, z, g, snap_dloss, idx, eta, thr_every,
                   s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                   ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps):
    """CSR twin of :func:`svrg_epoch_dense` (``X`` given as ``data, indices, indptr``).

    Unless the iterate is thresholded after every step (``thr_every == 1``, SVRGHT, whose
    ``H_s`` reads all ``p`` coordinates anyway), the dense part ``-eta * g`` of a step is
    applied *lazily* ("just in time").  Since the last synchronisation at step ``t0`` every
    coordinate has drifted by ``-(j - t0) * eta * g[k]`` besides its sparse updates, so the
    kernel stores ``u = z + (j - t0) * eta * g`` (interleaved with ``g`` in one ``p x 2``
    buffer, one cache line per coordinate) and advances a scalar clock instead of touching
    all ``p`` coordinates: a coordinate's current value ``u[k] - D * g[k]``
    (``D = (j - t0) * eta``) is formed only when a sampled row reads it.  The iterate is
    materialised into ``z`` (and the clock restarted) before a thresholding event, at a
    divergence stop and at the end of the epoch; a snapshot is materialised straight into
    its buffer row, leaving the state alone, so recording iterates never changes the run.
    The iterates are the same as with the eager update up to rounding, and an inner step
    costs O(nnz of the sampled row) instead of O(p).
    """
    p = z.shape[0]
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    if thr_every == 1:  # eager: H_s after every step reads every coordinate anyway
        for j in range(idx.shape[0]):
            i = idx[j]
            a = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                a += data[q] * z[indices[q]]
            if not abs(a) < _HUGE:
                return j, n_ev, n_rec, n_prev, 1
            yi = y[i]
            fa, da = loss_and_dloss(a, yi, loss)
            acc += fa
            cnt += 1
            c = da - snap_dloss[i]
            for q in range(indptr[i], indptr[i + 1]):
                z[indices[q]] -= eta * c * data[q]
            for k in range(p):
                z[k] -= eta * g[k]
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt)
        return idx.shape[0], n_ev, n_rec, n_prev, 0
    ug = np.empty((p, 2), dtype=np.float64)
    for k in range(p):
        ug[k, 0] = z[k]
        ug[k, 1] = g[k]
    snap = snaps.shape[0] > 0
    t0 = 0  # step of the last synchronisation (z == u there)
    for j in range(idx.shape[0]):
        i = idx[j]
        lo = indptr[i]
        hi = indptr[i + 1]
        D = (j - t0) * eta
        a = 0.0
        for q in range(lo, hi):
            k = indices[q]
            a += data[q] * (ug[k, 0] - D * ug[k, 1])
        if not abs(a) < _HUGE:
            _materialize(z, ug, D)
            return j, n_ev, n_rec, n_prev, 1
        yi = y[i]
        fa, da = loss_and_dloss(a, yi, loss)
        acc += fa
        cnt += 1
        c = da - snap_dloss[i]
        for q in range(lo, hi):
            ug[indices[q], 0] -= eta * c * data[q]
        if _due(j, thr_every):
            # the event reads every coordinate: synchronise, threshold, restart the clock
            _materialize(z, ug, (j + 1 - t0) * eta)
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt)
            for k in range(p):
                ug[k, 0] = z[k]
            t0 = j + 1
        elif _due(j, rec_every):
            rec_loss[n_rec] = acc / cnt
            acc = 0.0
            cnt = _ZERO
            if snap:  # written straight into the buffer: recording never changes the run
                _materialize(snaps[n_rec], ug, (j + 1 - t0) * eta)
            n_rec += 1
    _materialize(z, ug, (idx.shape[0] - t0) * eta)
    return idx.shape[0], n_ev, n_rec, n_prev, 0


@njit(cache=True)
def sg_epoch_dense(X, y, loss, z, idx, batch, eta, s_keep, gbuf,
                   keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                   ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps):
    """SG-HT: ``z <- H_s(z - eta * mean_{i in batch} grad f_i(z))`` for consecutive batches.

    ``idx`` holds ``n_steps * batch`` sample indices; step ``j`` uses
    ``idx[j*batch:(j+1)*batch]``.  Every step ends with a thresholding event.
    """
    p = z.shape[0]
    n_steps = idx.shape[0] // batch
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    for j in range(n_steps):
        gbuf[:] = 0.0
        for b in range(batch):
            i = idx[j * batch + b]
            a = row_dot(X, i, z)
            if not abs(a) < _HUGE:
                return j, n_ev, n_rec, n_prev, 1
            fa, c = loss_and_dloss(a, y[i], loss)
            acc += fa
            cnt += 1
            for k in range(p):
                gbuf[k] += c * X[i, k]
        scale = eta / batch
        for k in range(p):
            z[k] -= scale * gbuf[k]
        # SG-HT thresholds after every step (thr_every = 1)
        n_prev, n_ev, n_rec, acc, cnt = _after_step(
            j, z, 1, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf, ev_step,
            ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec, acc, cnt)
    return n_steps, n_ev, n_rec, n_prev, 0


@njit(cache=True)
def sg_epoch_csr(data, indices, indptr, y, loss, z, idx, batch, eta, s_keep, gbuf,
                 keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                 ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps):
    """CSR twin of :func:`sg_epoch_dense`."""
    n_steps = idx.shape[0] // batch
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    for j in range(n_steps):
        gbuf[:] = 0.0
        for b in range(batch):
            i = idx[j * batch + b]
            a = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                a += data[q] * z[indices[q]]
            if not abs(a) < _HUGE:
                return j, n_ev, n_rec, n_prev, 1
            fa, c = loss_and_dloss(a, y[i], loss)
            acc += fa
            cnt += 1
            for q in range(indptr[i], indptr[i + 1]):
                gbuf[indices[q]] += c * data[q]
        scale = eta / batch
        for k in range(z.shape[0]):
            z[k] -= scale * gbuf[k]
        # SG-HT thresholds after every step (thr_every = 1)
        n_prev, n_ev, n_rec, acc, cnt = _after_step(
            j, z, 1, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf, ev_step,
            ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec, acc, cnt)
    return n_steps, n_ev, n_rec, n_prev, 0
