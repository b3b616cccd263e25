"""skscope's ``ScopeSolver`` and ``GraspSolver`` on rgrasp_viz's objective written in JAX
(least squares or logistic), sparsity ``s``, the whole fit timed (one point; the JIT
compilation happens in an untimed warm-up fit).

skscope is handed a plain function closing over the data: given a bound method (as this file
did before), skscope 0.1.8 aborts the process (SIGABRT) when it builds its JAX callbacks."""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    from skscope import GraspSolver, ScopeSolver


def make_objective(W, y, loss):
    """``F`` as a plain JAX function of ``x`` (no ``self``: see the module docstring)."""
    W, y = jnp.asarray(W), jnp.asarray(y)
    n = W.shape[0]

    if loss == "logistic":
        def objective(x):
            return jnp.mean(jnp.logaddexp(0.0, -y * (W @ x)))
    else:
        def objective(x):
            r = y - W @ x
            return jnp.sum(r * r) / (2 * n)
    return objective


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
        self.d, self.s = W.shape[1], s
        self.objective = make_objective(W, y, loss)

    def warm_up(self):
        self.run(None)  # JIT compilation, untimed

    def run(self, _):
        cls = ScopeSolver if self.algorithm == "scope" else GraspSolver
        self.x = np.asarray(cls(self.d, sparsity=self.s).solve(self.objective, jit=True))

    def get_result(self):
        return dict(x=self.x)
