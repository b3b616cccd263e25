"""The paper's two synthetic least-squares settings (Section 5.2; ``rv.make_regression``).

``size``: ``"paper"`` (the paper's n, d, s*), ``"quick"`` (n=500, d=1000, s*=50, the
classroom size of ``rgrasp-viz reproduce --quick``) or ``"tiny"`` (n=200, d=100, s*=5, for
tests).  Sparsity level ``s = 1.2 s*`` (the paper's).
"""

from benchopt import BaseDataset

SIZES = {"quick": dict(n=500, d=1000, s_star=50), "tiny": dict(n=200, d=100, s_star=5)}


class Dataset(BaseDataset):
    name = "synthetic"
    parameters = {"setting": [1, 2], "size": ["paper"], "random_state": [0]}
    requirements = []  # rgrasp_viz: the package this benchmark lives in

    def get_data(self):
        import rgrasp_viz as rv

        if self.size == "paper":
            prob = rv.make_regression(int(self.setting), random_state=self.random_state)
        else:
            corr = 0.1 if int(self.setting) == 2 else 0.0
            prob = rv.make_regression(**SIZES[self.size], correlation=corr,
                                      random_state=self.random_state)
        return dict(W=prob.W, y=prob.y, loss="squares", s=prob.default_s,
                    x_true=prob.x_true, name=f"setting {self.setting} ({self.size})")
