"""abess (splicing best-subset selection): ``LinearRegression`` or ``LogisticRegression``
with ``support_size = s``, no intercept, the whole fit timed (one point)."""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    import abess
    import numpy as np


class Solver(BaseSolver):
    name = "abess"
    sampling_strategy = "run_once"
    requirements = ["pip:abess"]

    def set_objective(self, problem, W, y, loss, s):
        self.W, self.loss, self.s = W, loss, s
        # abess's logistic regression takes labels in {0, 1}
        self.y = (y > 0).astype(float) if loss == "logistic" else y

    def run(self, _):
        cls = abess.LogisticRegression if self.loss == "logistic" else abess.LinearRegression
        est = cls(support_size=self.s, fit_intercept=False)
        self.x = np.asarray(est.fit(self.W, self.y).coef_, dtype=float).ravel()

    def get_result(self):
        return dict(x=self.x)
