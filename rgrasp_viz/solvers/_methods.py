"""The methods that are not instances of Algorithm 1: FG-HT, SG-HT, SVRGHT and HTP.

(GraSP, SVRGSP and SVRGSP+ are Algorithm 1 with different step-5 solvers: see
``_rgrasp.py`` and ``_subsolvers.py``.)  Every method object exposes
``step(x, rng) -> StepResult``; the driver (:mod:`._driver`) times that call, records its
result, calls back and tests stopping.  Random indices come from the
``np.random.Generator`` passed in, one ``rng.integers(0, n, size=...)`` call per outer
iteration, so a NumPy reference fed the same generator reproduces every iterate.
"""

from __future__ import annotations

import numpy as np

from .. import _kernels as K
from ._common import Method, StepResult, threshold
from ._subsolvers import exact_fit


class FGHT(Method):
    """FG-HT: ``x <- H_s(x - eta * grad F(x))`` (one full gradient per iteration)."""

    def step(self, x, rng):
        g, _ = self.full_gradient(x)
        x_new, _ = threshold(x - self.p.eta * g, self.p.s, self.forced)
        return StepResult(x=x_new, passes=1.0, n_thresholds=1, outer_event=0)


class HTP(Method):
    """HTP (hard thresholding pursuit): ``S = supp(H_s(x - eta * grad F(x)))``, then the exact
    fit of ``F`` on ``S`` (Foucart, 2011).

    The fit is GraSP's exact sub-problem solver on ``S`` (warm-started at ``x|_S``); its data
    passes are counted like GraSP's.
    """

    def step(self, x, rng):
        g, _ = self.full_gradient(x)
        _, S = threshold(x - self.p.eta * g, self.p.s, self.forced)
        S = np.sort(S)
        fit = exact_fit(self, S, x[S])
        x_new = np.zeros(self.d)
        x_new[S] = fit.b
        return StepResult(x=x_new, passes=1.0 + fit.passes, n_thresholds=1, outer_event=0,
                          status=fit.status, message=fit.message)


class SGHT(Method):
    """SG-HT: ``x <- H_s(x - eta * mean of a mini-batch of grad f_i(x))``; n samples a pass."""

    def __init__(self, problem, params, ws):
        super().__init__(problem, params, ws)
        self.batch = params.batch_size
        self.n_steps = max(1, self.n // self.batch)
        self.gbuf = np.zeros(self.d)
        self.passes_per_step = self.batch / self.n
        self.steps_per_iter = self.n_steps

    def step(self, x, rng):
        ws, p = self.ws, self.p
        idx = rng.integers(0, self.n, size=self.n_steps * self.batch)
        z = x.copy()
        n_prev = ws.set_prev(np.flatnonzero(x))
        snaps = ws.snap_buffer(self.d, p.record_iterates)
        common = (self.problem.y, self.loss_code, z, idx, self.batch, p.eta, self.problem.l2,
                  p.s, self.gbuf, ws.keep_idx, ws.prev_idx, n_prev, ws.cand, ws.mags, ws.vbuf,
                  ws.ev_step, ws.ev_in, ws.ev_out, p.record, ws.rec_every, ws.rec_loss,
                  snaps, self.forced)
        if self.sparse:
            out = K.sg_epoch_csr(*self.csr, *common)
        else:
            out = K.sg_epoch_dense(self.problem.W, *common)
        steps, n_ev, n_rec, _, status = (int(v) for v in out)
        return StepResult(x=z, passes=steps * self.batch / self.n, n_thresholds=steps,
                          status=status, inner_steps=steps, n_events=n_ev,
                          n_checkpoints=n_rec, snaps=snaps[:n_rec])


class SVRGHT(Method):
    """SVRGHT: SVRG epochs with ``H_s`` after every inner step; the snapshot is ``z^J``."""

    def __init__(self, problem, params, ws):
        super().__init__(problem, params, ws)
        self.passes_head = 1.0
        self.passes_per_step = 1.0 / self.n
        self.steps_per_iter = params.J

    def step(self, x, rng):
        p = self.p
        g, snap_dloss = self.full_gradient(x)
        idx = rng.integers(0, self.n, size=p.J)
        z = x.copy()
        n_prev = self.ws.set_prev(np.flatnonzero(x))
        steps, n_ev, n_rec, status, snaps = self.svrg_epoch(self.data, z, g, snap_dloss, idx,
                                                            1, p.s, n_prev, self.forced)
        return StepResult(x=z, passes=1.0 + steps / self.n, n_thresholds=steps, status=status,
                          inner_steps=steps, n_events=n_ev, n_checkpoints=n_rec,
                          snaps=snaps[:n_rec])
