"""The paper's six methods (and HTP) as implemented by rgrasp_viz, through ``rv.solve``
with the paper's defaults (step sizes from ``rv.default_eta``, ``J = 2n``, ``m = 6``,
Algorithm 2 as the paper writes it).  Sampled by callback: benchopt evaluates the iterate
after every outer iteration (one full-gradient step, one SVRG epoch, one SG-HT pass), and
stops the run; ``tol = ftol = 0`` so that rv.solve itself stops only at an exact fixed point
or after ``max_iter``."""

from benchopt import BaseSolver


class Solver(BaseSolver):
    name = "rgrasp_viz"
    parameters = {"method": ["fght", "sght", "svrght", "grasp", "svrgsp", "svrgsp+", "htp"]}
    sampling_strategy = "callback"
    requirements = []  # rgrasp_viz: the package this benchmark lives in

    def set_objective(self, problem, W, y, loss, s):
        import numpy as np

        self.problem, self.s = problem, s
        self.x = np.zeros(problem.d)
        self.warm_up()

    def warm_up(self):
        """Compile the Numba kernels outside the timed run (a one-iteration solve)."""
        import rgrasp_viz as rv

        rv.solve(self.problem, self.method, s=self.s, max_iter=1, random_state=0, warn=False)

    def run(self, callback):
        import numpy as np

        import rgrasp_viz as rv

        self.x = np.zeros(self.problem.d)
        if not callback():
            return

        def step(info):
            self.x = info.x
            if not callback():
                raise StopIteration

        rv.solve(self.problem, self.method, s=self.s, max_iter=100_000, tol=0.0, ftol=0.0,
                 random_state=0, callback=step, warn=False)

    def get_result(self):
        return dict(x=self.x)
