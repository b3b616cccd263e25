"""The paper's real data sets (Section 5.3), when their files are in rgrasp_viz's data
directory (``$RGRASP_VIZ_DATA`` or the user cache; ``rgrasp-viz reproduce fig2-rcv1`` or
``rv.datasets.fetch`` downloads them): rcv1 (logistic: Figure 2; least squares: Figure 3) and
real-sim (logistic), sparsity ``s = 200``.  Never downloads: a missing file is skipped with
the message saying where to put it."""

from benchopt import BaseDataset


class Dataset(BaseDataset):
    name = "libsvm"
    parameters = {"dataset, loss": [("rcv1", "logistic"), ("rcv1", "squares"),
                                    ("real-sim", "logistic")]}
    requirements = ["pip:scikit-learn"]  # and rgrasp_viz

    def get_data(self):
        from rgrasp_viz import datasets, exceptions
        from rgrasp_viz.reproduce._experiments import S_REAL

        try:
            W, y = datasets.fetch(self.dataset, download=False, progress=False,
                                  return_X_y=True)
        except exceptions.DatasetUnavailableError as exc:
            return dict(W=None, y=None, loss=self.loss, s=S_REAL, name=str(exc))
        return dict(W=W, y=y, loss=self.loss, s=min(S_REAL, W.shape[1]), name=self.dataset)
