"""Real data: LIBSVM/svmlight files and the two binary data sets of the paper.

:func:`load_svmlight` reads a LIBSVM/svmlight file (plain, ``.bz2`` or ``.gz``) into a
canonical float64 CSR matrix with scikit-learn's parser (the optional ``data`` extra:
``pip install "rgrasp_viz[data]"``); a malformed file gives an error naming its line.

:func:`fetch` returns the binary LIBSVM versions of rcv1 and real-sim used in Section 5 of
Shang et al. (IJCAI 2019) as a logistic :class:`~rgrasp_viz.Problem`:

========== ======================= ========= ==========
name       file                    n         d
========== ======================= ========= ==========
"rcv1"     rcv1_train.binary.bz2      20,242     47,236
"real-sim" real-sim.bz2               72,309     20,958
========== ======================= ========= ==========

The compressed file is downloaded once into a cache directory (see :func:`get_data_dir`)
by `pooch <https://www.fatiando.org/pooch>`_, which verifies its SHA-256 checksum (see
:data:`DATASETS` for where each expected checksum comes from) before moving it into place,
so an interrupted or failed download never leaves a half-written file behind; it is then
decompressed next to it (bounded: a "decompression bomb" is stopped early) and loaded.
Progress bars are tqdm's.
Without network access, :func:`fetch` says exactly which file to download and where to
put it (:class:`~rgrasp_viz.exceptions.DatasetUnavailableError`).

>>> import rgrasp_viz as rv
>>> prob = rv.datasets.fetch("rcv1")                     # doctest: +SKIP
>>> prob.n, prob.d, prob.loss                            # doctest: +SKIP
(20242, 47236, 'logistic')
>>> W, y = rv.datasets.fetch("real-sim", return_X_y=True)  # doctest: +SKIP
"""

from . import _registry
from ._download import DATA_DIR_ENV as DATA_DIR_ENV
from ._download import MAX_EXPANSION as MAX_EXPANSION
from ._download import get_data_dir
from ._registry import RemoteDataset, fetch
from ._svmlight import MAX_FEATURES as MAX_FEATURES
from ._svmlight import load_svmlight

#: The data sets of the paper, by name.
#:
#: Checksums. The files could not be downloaded while this module was written, so no
#: checksum here was computed by us:
#:
#: * ``real-sim.bz2``: the SHA-256 is the one hard-coded in public code,
#:   github.com/pratikrathore8/rlaopt-experiments, file
#:   ``src/rlaopt_experiments/suites/real_erm/data.py`` (commit 37976c08), which
#:   downloads the same URL and verifies it. It is a single third-party source: if
#:   LIBSVM re-publishes the file the check fails, and the error says how to override it.
#: * ``rcv1_train.binary.bz2``: no published checksum was found, so ``sha256`` is ``None``
#:   (trust on first use, see :class:`RemoteDataset`); the shape check still applies.
DATASETS = _registry.DATASETS

__all__ = [
    "DATASETS",
    "RemoteDataset",
    "fetch",
    "get_data_dir",
    "load_svmlight",
]
