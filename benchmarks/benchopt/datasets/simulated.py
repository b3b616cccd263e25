"""Simulated sparse regression or classification with correlated columns (the dataset
``benchopt test`` runs): rows ``N(0, Sigma)`` with ``Sigma_ij = rho^|i-j|`` (Toeplitz),
``s_star`` nonzero coefficients uniform on [-1, 1], Gaussian noise (least squares) or labels
drawn from the logistic model; sparsity ``s = s_star``."""

from benchopt import BaseDataset, safe_import_context

with safe_import_context() as import_ctx:
    import numpy as np


class Dataset(BaseDataset):
    name = "simulated"
    parameters = {"n_samples": [500], "n_features": [1000], "s_star": [20],
                  "rho": [0.0, 0.9], "loss": ["squares", "logistic"], "random_state": [0]}
    test_parameters = {"n_samples": [60], "n_features": [30], "s_star": [3], "rho": [0.5],
                       "loss": ["squares", "logistic"], "random_state": [0]}
    requirements = []

    def get_data(self):
        rng = np.random.default_rng(self.random_state)
        n, d, k, rho = self.n_samples, self.n_features, self.s_star, float(self.rho)
        Z = rng.standard_normal((n, d))
        W = np.empty_like(Z)
        W[:, 0] = Z[:, 0]
        c = np.sqrt(1 - rho * rho)
        for j in range(1, d):
            W[:, j] = rho * W[:, j - 1] + c * Z[:, j]
        x = np.zeros(d)
        x[rng.choice(d, k, replace=False)] = rng.uniform(-1, 1, k)
        a = W @ x
        if self.loss == "squares":
            y = a + 0.1 * rng.standard_normal(n)
        else:
            y = np.where(rng.random(n) < 1 / (1 + np.exp(-a)), 1.0, -1.0)
        return dict(W=W, y=y, loss=self.loss, s=k, x_true=x,
                    name=f"simulated rho={rho} ({self.loss})")
