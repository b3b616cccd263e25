"""skscope's ``ScopeSolver`` and ``GraspSolver`` on rgrasp_viz's objective written in JAX
(least squares or logistic), sparsity ``s``, the whole fit timed (one point; the JIT
compilation happens in an untimed warm-up fit)."""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    from skscope import GraspSolver, ScopeSolver


class Solver(BaseSolver):
    name = "skscope"
    parameters = {"algorithm": ["scope", "grasp"]}
    sampling_strategy = "run_once"
    requirements = ["pip:skscope"]

    def skip(self, problem, W, y, loss, s):
        if sp.issparse(W):
            return True, "skscope needs a dense design"
        return False, None

    def set_objective(self, problem, W, y, loss, s):
        self.d, self.s, self.loss = W.shape[1], s, loss
        self.W, self.y = jnp.asarray(W), jnp.asarray(y)
        self.run(None)  # JIT compilation, untimed

    def objective(self, x):
        margins = self.W @ x
        if self.loss == "logistic":
            return jnp.mean(jnp.logaddexp(0.0, -self.y * margins))
        r = self.y - margins
        return jnp.sum(r * r) / (2 * self.W.shape[0])

    def run(self, _):
        cls = ScopeSolver if self.algorithm == "scope" else GraspSolver
        self.x = np.asarray(cls(self.d, sparsity=self.s).solve(self.objective, jit=True))

    def get_result(self):
        return dict(x=self.x)
