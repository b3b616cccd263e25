"""Inner epochs of the stochastic methods, in dense / CSR pairs.

Every kernel works on plain arrays in a "working space" of ``p`` coordinates: the full
``d`` coordinates, or the merged support ``T`` when the caller has gathered ``W[:, T]``.
Random indices are drawn by the caller (``np.random.Generator``) and passed in, so a run is
reproducible and a slow NumPy reference fed the same indices gives the same iterates.
Every kernel takes ``lam >= 0`` right after ``eta``: the components are
``f_i + (lam / 2) ||.||^2`` on the working coordinates (``lam = 0``: the paper's objective,
with the same arithmetic as before the term existed).  Every kernel takes ``forced`` last:
ascending int64 working coordinates that every thresholding keeps (``always_select``; not
counted in ``s_keep``; empty for the paper's operator).

Recording is done in caller-allocated fixed-size buffers:

* thresholding events: inner step (1-based), coordinates entered, coordinates left;
* checkpoints every ``rec_every`` inner steps: the mean sampled loss ``f_i(z)`` over the
  window (a free, unbiased-on-average proxy of the objective along the path; the ridge
  term ``(lam / 2) ||z||^2`` is not included) and, when ``snaps`` has rows, a copy of the
  iterate.

Return value of every epoch kernel: ``(steps_done, n_events, n_checkpoints, n_prev, status)``
with ``status`` 0 = ok, 1 = a non-finite margin was met (divergence; the iterate is left as
it was at that step), 2 = stopped on request.

Stopping on request: the SVRG epoch kernels take ``stop`` (just before ``forced``), a one-element
int64 array, and are compiled with ``nogil=True``; every ``STOP_EVERY`` inner steps they read
``stop[0]`` and, if it is non-zero, materialise the iterate and return with status 2.  A
caller running a long epoch in a worker thread sets it when the main thread receives Ctrl-C
(see :meth:`rgrasp_viz.solvers._common.Method.svrg_epoch`).  Reading the flag touches no
floating-point value, so the iterates are those of a run that never looks at it.
"""

from __future__ import annotations

import numpy as np

from ._jit import _INTERNAL, njit
from .threshold import count_changes, keep_only, top_k_forced

_HUGE = 1e150  # a margin beyond this means the run has blown up
_TINY = 1e-9  # lazy ridge steps: resynchronise before the scale of u falls below this
_ZERO = np.int64(0)  # counters start from a typed zero (see svrg_epoch_dense)
STOP_EVERY = 256  # inner steps between two reads of the stop flag (a power of two)
_STOP_MASK = STOP_EVERY - 1


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
                acc, cnt, forced):
    """End of inner step ``j`` (0-based): thresholding event and checkpoint, if due.
    The thresholding keeps ``forced`` (``always_select``) and the ``s_keep`` largest others.

    Returns the updated ``(n_prev, n_ev, n_rec, acc, cnt)``.
    """
    if _due(j, thr_every):  # z <- H_{s_keep}(z); entered / left relative to prev_idx
        nk = top_k_forced(z, s_keep, forced, keep_idx, cand, mags, vbuf)
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


@njit(cache=True, **_INTERNAL)
def _sync(out, u, sig, D, h):
    """``out = sig * u - D * h`` (``out`` may be ``u``): the iterate the lazy state stands
    for."""
    for k in range(out.shape[0]):
        out[k] = sig * u[k] - D * h[k]


@njit(cache=True, **_INTERNAL, inline="always")
def _affine_part(g, lam, z):
    """``h = g - lam * z~`` (``z~ = z`` on entry): the constant part of an SVRG step with the
    ridge term, ``z <- (1 - eta lam) z - eta c w_i - eta h``; ``h = g`` when ``lam = 0``."""
    h = np.empty(z.shape[0])
    if lam == 0.0:
        for k in range(z.shape[0]):
            h[k] = g[k]
    else:
        for k in range(z.shape[0]):
            h[k] = g[k] - lam * z[k]
    return h


@njit(cache=True, nogil=True)
def svrg_epoch_dense(X, y, loss, z, g, snap_dloss, idx, eta, lam, thr_every, s_keep,
                     keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                     ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps, stop, forced):
    """SVRG inner loop (Algorithm 2 / SVRGHT) on a dense C-contiguous ``X`` (n x >= p).

    With ``z~`` the iterate on entry, step ``j`` (sample ``i = idx[j]``) is
    ``z <- z - eta * (grad f_i(z) - grad f_i(z~) + lam * (z - z~) + g)``: the SVRG step of
    the components ``f_i + (lam / 2) ||.||^2``, so ``g`` must be their full gradient at
    ``z~``, ``lam * z~`` included (``lam = 0``: the paper's objective).  When
    ``thr_every > 0``, ``z <- H_{s_keep}(z)`` after every ``thr_every``-th step.
    ``grad f_i(z~) = snap_dloss[i] * w_i`` is rebuilt from ``snap_dloss[i] = f_i'(w_i^T z~)``,
    stored by the full-gradient pass (one ``exp`` per step less for the logistic loss).
    Only the first ``p = len(z)`` columns of ``X`` are read (the on-T reading passes
    ``W[:, T]`` inside a wider buffer).  The checkpoint losses are the mean sampled
    ``f_i(z)`` (the ridge term not included).

    A step is ``z <- beta z - eta c w_i - eta h`` with ``beta = 1 - eta lam``,
    ``c = f_i'(w_i z) - f_i'(w_i z~)`` and ``h = g - lam z~``.  Unless the iterate is
    thresholded after every step (SVRGHT), the part of it that does not depend on ``i`` is
    applied lazily, as in :func:`svrg_epoch_csr`: the buffer of ``z`` holds ``u`` with
    ``z = sig * u - D * h``, where since the last synchronisation ``sig = beta^k`` and ``D``
    follow ``D <- beta D + eta`` (``D = k eta`` when ``lam = 0``).  A margin is
    ``sig <w_i, u> - D (W h)_i``, with ``(W h)_i`` formed the first time row ``i`` is needed;
    a step updates ``u -= (eta c / sig) w_i`` in the same sweep as the next step's
    ``<w_next, u>``, so a step streams ``u`` once and ``h`` (almost) never.  ``z`` is
    materialised before a thresholding event (then the clock restarts), at a divergence stop,
    at the end of the epoch, and before ``sig`` could underflow (that step is then taken
    eagerly); a snapshot is written straight into its buffer row, leaving the state alone,
    so recording never changes the run.  With ``thr_every == 1`` every step is eager and,
    after each ``H_s``, the next margin reads only the kept coordinates (the others are
    zero).  The iterates equal the eager update's up to rounding.
    """
    n_steps = idx.shape[0]
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    if n_steps == 0:
        return 0, n_ev, n_rec, n_prev, 0
    n = X.shape[0]
    h = _affine_part(g, lam, z)
    beta = 1.0 - eta * lam
    wh = np.empty(n)  # (W h)_i, formed the first time row i follows a lazy step (NaN: not yet)
    for r in range(n):
        wh[r] = np.nan
    snap = snaps.shape[0] > 0
    t0 = 0  # step of the last synchronisation (z == u there, sig = 1, D = 0)
    sig = 1.0
    D = 0.0
    au = _dot(X, idx[0], z)  # <w_i, u> of the coming step
    for j in range(n_steps):
        i = idx[j]
        if lam == 0.0:
            D = (j - t0) * eta
        if (j & _STOP_MASK) == 0 and stop[0] != 0:  # stopped on request (e.g. Ctrl-C)
            _sync(z, z, sig, D, h)
            return j, n_ev, n_rec, n_prev, 2
        a = sig * au - D * wh[i] if j > t0 else sig * au
        if not abs(a) < _HUGE:
            _sync(z, z, sig, D, h)
            return j, n_ev, n_rec, n_prev, 1
        fa, da = loss_and_dloss(a, y[i], loss)
        acc += fa
        cnt += 1
        ec = eta * (da - snap_dloss[i])
        event = _due(j, thr_every)
        eager = thr_every == 1
        if lam == 0.0:  # the lazy state after this step
            sig_n = 1.0
            D_n = (j + 1 - t0) * eta
        else:
            sig_n = sig * beta
            D_n = beta * D + eta
            eager = eager or not abs(sig_n) >= _TINY  # the scale would underflow
        if eager:  # z <- beta z - ec w_i - eta h on the materialised iterate
            if j > t0:
                _sync(z, z, sig, D, h)
            if lam != 0.0:
                _sync(z, z, beta, 0.0, h)
            _axpy2(z, -ec, X, i, -eta, h)
            sig_n = 1.0
            D_n = 0.0
            t0 = j + 1
        elif event or j + 1 == n_steps:
            _axpy2(z, -ec / sig_n, X, i, 0.0, h)
        else:  # u -= (ec / sig_n) * w_i and the next margin <w_next, u> in one sweep
            i2 = idx[j + 1]
            if wh[i2] == wh[i2]:
                au = _step_dot(X, i, z, ec / sig_n, i2)
            else:
                au, wh[i2] = _step_dot2(X, i, z, ec / sig_n, i2, h)
        if event:  # H reads every coordinate: synchronise, threshold, restart the clock
            if not eager:
                _sync(z, z, sig_n, D_n, h)
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt, forced)
            t0 = j + 1
            sig = 1.0
            D = 0.0
            if j + 1 < n_steps:
                if thr_every == 1:  # z is zero outside the n_prev kept coordinates
                    au = 0.0
                    i2 = idx[j + 1]
                    for q in range(n_prev):
                        k = keep_idx[q]
                        au += X[i2, k] * z[k]
                else:
                    au = _dot(X, idx[j + 1], z)
            continue
        sig = sig_n
        D = D_n
        if eager and j + 1 < n_steps:
            au = _dot(X, idx[j + 1], z)
        if _due(j, rec_every):
            rec_loss[n_rec] = acc / cnt
            acc = 0.0
            cnt = _ZERO
            if snap:  # written straight into the buffer: recording never changes the run
                _sync(snaps[n_rec], z, sig, D, h)
            n_rec += 1
    if lam == 0.0:
        D = (n_steps - t0) * eta
    _sync(z, z, sig, D, h)
    return n_steps, n_ev, n_rec, n_prev, 0


@njit(cache=True, **_INTERNAL)
def _materialize(z, ug, sig, D):
    """Lazy updates: write the current iterate ``z = sig * u - D * h`` from
    ``ug = [u | h]``."""
    for k in range(z.shape[0]):
        z[k] = sig * ug[k, 0] - D * ug[k, 1]


@njit(cache=True, nogil=True)
def svrg_epoch_csr(data, indices, indptr, y, loss, z, g, snap_dloss, idx, eta, lam,
                   thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                   ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps, stop, forced):
    """CSR twin of :func:`svrg_epoch_dense` (``X`` given as ``data, indices, indptr``).

    Unless the iterate is thresholded after every step (``thr_every == 1``, SVRGHT, whose
    ``H_s`` reads all ``p`` coordinates anyway), the dense part of a step,
    ``z <- beta z - eta h`` (``beta = 1 - eta lam``, ``h = g - lam z~``; ``-eta g`` when
    ``lam = 0``), is applied *lazily* ("just in time").  Since the last synchronisation at
    step ``t0`` every coordinate has gone through ``k = j - t0`` of these maps besides its
    sparse updates, so the kernel stores ``u`` with ``z = sig * u - D * h``, ``sig = beta^k``
    and ``D <- beta D + eta`` (``D = k eta`` when ``lam = 0``, the scaled representation of
    scikit-learn's SAG), interleaved with ``h`` in one ``p x 2`` buffer (one cache line per
    coordinate), and advances two scalars instead of touching all ``p`` coordinates: a
    coordinate's current value is formed only when a sampled row reads it, and a sparse
    update is ``u -= (eta c / sig) w_i``.  The iterate is materialised into ``z`` (and the
    clock restarted) before a thresholding event, at a divergence stop, at the end of the
    epoch, and before ``sig`` could underflow (that step is then taken eagerly); a snapshot
    is materialised straight into its buffer row, leaving the state alone, so recording
    iterates never changes the run.  The iterates are the same as with the eager update up
    to rounding, and an inner step costs O(nnz of the sampled row) instead of O(p).
    """
    p = z.shape[0]
    n_ev = _ZERO  # not a literal 0: that would type (and compile) _after_step twice
    n_rec = _ZERO
    acc = 0.0
    cnt = _ZERO
    beta = 1.0 - eta * lam
    h = _affine_part(g, lam, z)
    if thr_every == 1:  # eager: H_s after every step reads every coordinate anyway
        for j in range(idx.shape[0]):
            if (j & _STOP_MASK) == 0 and stop[0] != 0:  # stopped on request (e.g. Ctrl-C)
                return j, n_ev, n_rec, n_prev, 2
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
            if lam != 0.0:
                for k in range(p):
                    z[k] *= beta
            for q in range(indptr[i], indptr[i + 1]):
                z[indices[q]] -= eta * c * data[q]
            for k in range(p):
                z[k] -= eta * h[k]
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt, forced)
        return idx.shape[0], n_ev, n_rec, n_prev, 0
    ug = np.empty((p, 2), dtype=np.float64)
    for k in range(p):
        ug[k, 0] = z[k]
        ug[k, 1] = h[k]
    snap = snaps.shape[0] > 0
    t0 = 0  # step of the last synchronisation (z == u there, sig = 1, D = 0)
    sig = 1.0
    D = 0.0
    for j in range(idx.shape[0]):
        i = idx[j]
        lo = indptr[i]
        hi = indptr[i + 1]
        if lam == 0.0:
            D = (j - t0) * eta
        if (j & _STOP_MASK) == 0 and stop[0] != 0:  # stopped on request (e.g. Ctrl-C)
            _materialize(z, ug, sig, D)
            return j, n_ev, n_rec, n_prev, 2
        a = 0.0
        for q in range(lo, hi):
            k = indices[q]
            a += data[q] * (sig * ug[k, 0] - D * ug[k, 1])
        if not abs(a) < _HUGE:
            _materialize(z, ug, sig, D)
            return j, n_ev, n_rec, n_prev, 1
        yi = y[i]
        fa, da = loss_and_dloss(a, yi, loss)
        acc += fa
        cnt += 1
        c = da - snap_dloss[i]
        if lam == 0.0:  # the lazy state after this step
            sig = 1.0
            D = (j + 1 - t0) * eta
            ec = eta * c
        else:
            sig_n = sig * beta
            if abs(sig_n) >= _TINY:
                D = beta * D + eta
                sig = sig_n
                ec = eta * c / sig
            else:  # the scale would underflow: synchronise, take this step eagerly
                _materialize(z, ug, sig, D)
                for k in range(p):
                    ug[k, 0] = beta * z[k] - eta * h[k]
                sig = 1.0
                D = 0.0
                t0 = j + 1
                ec = eta * c
        for q in range(lo, hi):
            ug[indices[q], 0] -= ec * data[q]
        if _due(j, thr_every):
            # the event reads every coordinate: synchronise, threshold, restart the clock
            _materialize(z, ug, sig, D)
            n_prev, n_ev, n_rec, acc, cnt = _after_step(
                j, z, thr_every, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                ev_step, ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec,
                acc, cnt, forced)
            for k in range(p):
                ug[k, 0] = z[k]
            t0 = j + 1
            sig = 1.0
            D = 0.0
        elif _due(j, rec_every):
            rec_loss[n_rec] = acc / cnt
            acc = 0.0
            cnt = _ZERO
            if snap:  # written straight into the buffer: recording never changes the run
                _materialize(snaps[n_rec], ug, sig, D)
            n_rec += 1
    if lam == 0.0:
        D = (idx.shape[0] - t0) * eta
    _materialize(z, ug, sig, D)
    return idx.shape[0], n_ev, n_rec, n_prev, 0


@njit(cache=True, **_INTERNAL, inline="always")
def _sg_update(z, gbuf, scale, eta_lam):
    """``z -= scale * gbuf + eta_lam * z`` (the SG-HT step before ``H_s``)."""
    if eta_lam == 0.0:
        for k in range(z.shape[0]):
            z[k] -= scale * gbuf[k]
    else:
        for k in range(z.shape[0]):
            z[k] -= scale * gbuf[k] + eta_lam * z[k]


@njit(cache=True)
def sg_epoch_dense(X, y, loss, z, idx, batch, eta, lam, s_keep, gbuf,
                   keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                   ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps, forced):
    """SG-HT: ``z <- H_s(z - eta * (mean_{i in batch} grad f_i(z) + lam * z))`` for
    consecutive batches (``lam``: the ridge term of the components, 0 in the paper).

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
        _sg_update(z, gbuf, eta / batch, eta * lam)
        # SG-HT thresholds after every step (thr_every = 1)
        n_prev, n_ev, n_rec, acc, cnt = _after_step(
            j, z, 1, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf, ev_step,
            ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec, acc, cnt,
            forced)
    return n_steps, n_ev, n_rec, n_prev, 0


@njit(cache=True)
def sg_epoch_csr(data, indices, indptr, y, loss, z, idx, batch, eta, lam, s_keep, gbuf,
                 keep_idx, prev_idx, n_prev, cand, mags, vbuf,
                 ev_step, ev_in, ev_out, track, rec_every, rec_loss, snaps, forced):
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
        _sg_update(z, gbuf, eta / batch, eta * lam)
        # SG-HT thresholds after every step (thr_every = 1)
        n_prev, n_ev, n_rec, acc, cnt = _after_step(
            j, z, 1, s_keep, keep_idx, prev_idx, n_prev, cand, mags, vbuf, ev_step,
            ev_in, ev_out, n_ev, track, rec_every, rec_loss, snaps, n_rec, acc, cnt,
            forced)
    return n_steps, n_ev, n_rec, n_prev, 0
