"""rgrasp_viz's scikit-learn estimators as solvers (no intercept, no ridge term: the
benchmark's objective): ``SparseLinearRegression`` / ``SparseLogisticRegression`` at ``s``
(HTP, refit, swaps until stable), and the ``...CV`` estimators choosing among
``1, ..., s`` by 5-fold cross-validation (so the support stays within the constraint; their
objective is not the best at ``s``, their held-out fit is what they optimise).  The whole
fit timed (one point)."""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    import numpy as np


class Solver(BaseSolver):
    name = "rgrasp_viz-estimator"
    parameters = {"estimator": ["fixed-s", "cv"]}
    sampling_strategy = "run_once"
    requirements = ["pip:scikit-learn"]  # and rgrasp_viz

    def set_objective(self, problem, W, y, loss, s):
        import rgrasp_viz as rv

        self.W, self.y, self.s = W, y, s
        common = dict(fit_intercept=False, l2=0.0, random_state=0)
        if self.estimator == "cv":
            cls = rv.SparseLogisticRegressionCV if loss == "logistic" else \
                rv.SparseLinearRegressionCV
            self.make = lambda: cls(s_values=range(1, s + 1), **common)
        else:
            cls = rv.SparseLogisticRegression if loss == "logistic" else \
                rv.SparseLinearRegression
            self.make = lambda: cls(s=s, **common)

    def warm_up(self):
        self.run(None)  # load the kernels, untimed

    def run(self, _):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.x = np.ravel(self.make().fit(self.W, self.y).coef_).astype(float)

    def get_result(self):
        return dict(x=self.x)
