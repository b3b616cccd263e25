"""scikit-learn's Orthogonal Matching Pursuit (least squares only): ``s`` atoms, no
intercept, the whole fit timed (one point)."""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    from sklearn.linear_model import OrthogonalMatchingPursuit


class Solver(BaseSolver):
    name = "sklearn-OMP"
    sampling_strategy = "run_once"
    requirements = ["pip:scikit-learn"]

    def skip(self, problem, W, y, loss, s):
        if loss != "squares":
            return True, "OMP solves least squares only"
        return False, None

    def set_objective(self, problem, W, y, loss, s):
        self.W, self.y, self.s = W, y, s

    def run(self, _):
        est = OrthogonalMatchingPursuit(n_nonzero_coefs=self.s, fit_intercept=False)
        self.x = est.fit(self.W, self.y).coef_

    def get_result(self):
        return dict(x=self.x)
