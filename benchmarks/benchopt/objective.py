"""benchopt objective: ``min F(x) s.t. ||x||_0 <= s``, least squares or logistic loss.

``F`` is rgrasp_viz's (``1/(2n) ||y - W x||^2`` or ``1/n sum log(1 + exp(-y_i w_i^T x))``, the
paper's Section 5).  Metrics of a result ``x``:

* ``value``: ``F(x)`` (benchopt's own suboptimality curves use the best value any solver
  reached);
* ``relative_gap``: the paper's ``(F(x) - F*) / (F(x0) - F*)`` with ``x0 = 0`` and ``F*`` a
  reference computed once per data set (:func:`reference_objective`), so that a solver that
  beats it shows a negative gap rather than a wrong claim;
* ``estimation_error``: ``||x - x*|| / ||x*||`` when the data set knows ``x*`` (synthetic
  settings), NaN otherwise;
* ``support_size``: ``||x||_0`` (a result denser than ``s`` is reported, not hidden).
"""

import numpy as np
from benchopt import BaseObjective


def reference_objective(problem, s):
    """``F*``: the lowest objective of a long GraSP run (``tol = ftol = 0``), of the
    estimator's fit at ``s`` (HTP, refit, support swaps until no single swap lowers ``F``:
    a local optimum of best-subset selection, what abess's splicing also reaches) and, for
    least squares, of the exact fits on GraSP's support and on the true support.  A
    reference, not a certified optimum: a solver can still land below it, and the relative
    gap then goes negative rather than hiding it."""
    import warnings

    import rgrasp_viz as rv
    from rgrasp_viz.reference import least_squares_on

    res = rv.solve(problem, "grasp", s=s, max_iter=60, tol=0.0, ftol=0.0, random_state=0,
                   warn=False)
    values = [float(np.nanmin(res.trace.objective))]
    try:
        Est = (rv.SparseLogisticRegression if problem.loss == "logistic"
               else rv.SparseLinearRegression)
    except ImportError:  # scikit-learn missing: GraSP and the exact fits only
        Est = None
    if Est is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = Est(s=s, fit_intercept=False, l2=0.0, random_state=0).fit(
                problem.W, problem.y)
        values.append(problem.objective(np.ravel(est.coef_)))
    if problem.loss == "squares":
        values.append(problem.objective(least_squares_on(problem, np.flatnonzero(res.x))))
        if problem.x_true is not None:
            values.append(problem.objective(
                least_squares_on(problem, np.flatnonzero(problem.x_true))))
    return min(values)


class Objective(BaseObjective):
    name = "Sparsity-constrained ERM"
    test_config = {"dataset": {"name": "simulated"}}
    url = "https://github.com/rgrasp-viz/rgrasp_viz"
    requirements = []  # rgrasp_viz: the package this benchmark lives in
    min_benchopt_version = "1.6"

    def skip(self, W, y, loss, s, x_true=None, name=""):
        if W is None:  # a real data set whose file is missing: ``name`` says where to put it
            return True, name
        return False, None

    def set_data(self, W, y, loss, s, x_true=None, name=""):
        import rgrasp_viz as rv

        self.problem = rv.Problem(W, y, loss=loss, x_true=x_true, name=name)
        self.s = int(s)
        self.f0 = self.problem.objective(np.zeros(self.problem.d))
        self.fstar = reference_objective(self.problem, self.s)

    def evaluate_result(self, x):
        x = np.asarray(x, dtype=np.float64).ravel()
        f = self.problem.objective(x)
        span = self.f0 - self.fstar
        gap = (f - self.fstar) / span if span > 0 else np.nan
        err = self.problem.rel_error(x) if self.problem.x_true is not None else np.nan
        return dict(value=f, relative_gap=gap, estimation_error=err,
                    support_size=int(np.count_nonzero(x)))

    def get_one_result(self):
        return dict(x=np.zeros(self.problem.d))

    def get_objective(self):
        p = self.problem
        return dict(problem=p, W=p.W, y=p.y, loss=p.loss, s=self.s)
