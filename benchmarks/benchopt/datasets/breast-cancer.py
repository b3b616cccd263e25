"""A small real data set bundled with scikit-learn (no download): breast cancer
(569 samples, 30 features), standardised columns, labels in {-1, +1}; logistic loss (as the
paper's Figure 2) or least squares, at sparsity ``s``."""

from benchopt import BaseDataset, safe_import_context

with safe_import_context() as import_ctx:
    import numpy as np
    from sklearn.datasets import load_breast_cancer


class Dataset(BaseDataset):
    name = "breast_cancer"
    parameters = {"loss": ["logistic", "squares"], "s": [5]}
    requirements = ["pip:scikit-learn"]

    def get_data(self):
        W, y = load_breast_cancer(return_X_y=True)
        W = (W - W.mean(axis=0)) / W.std(axis=0)
        y = np.where(y > 0, 1.0, -1.0)
        return dict(W=W, y=y, loss=self.loss, s=self.s, name="breast_cancer")
