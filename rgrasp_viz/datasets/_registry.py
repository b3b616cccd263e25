"""The registry of the paper's data sets (:data:`DATASETS`) and :func:`fetch`."""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from pathlib import Path

import numpy as np

from .._problems import Problem
from ..exceptions import ChecksumError, DatasetUnavailableError
from ._download import (
    _TIMEOUT,
    DATA_DIR_ENV,
    _read_sidecar,
    _retrieve,
    _sha256_file,
    _unlink_quietly,
    _where_to_put,
    _write_sidecar,
    get_data_dir,
)
from ._svmlight import load_svmlight


@dataclasses.dataclass(frozen=True)
class RemoteDataset:
    """Where a binary-classification LIBSVM file lives and what it must contain.

    Parameters
    ----------
    name : str
        Short name, used as the :class:`~rgrasp_viz.Problem` name.
    url : str
        Download address of the (usually ``.bz2``-compressed) file.
    filename : str
        File name in the cache directory (the last part of `url`).
    n_samples, n_features : int
        Expected shape of the design matrix. The file is parsed with
        ``n_features`` columns and must have exactly ``n_samples`` rows.
    sha256 : str or None
        Expected SHA-256 of the downloaded file (hex). ``None`` means that no trustworthy
        published checksum is known: the file is then accepted on first download only if
        it decompresses, parses and has the expected shape, and its checksum is recorded
        in a sidecar file ``<filename>.sha256`` against which later copies are verified
        ("trust on first use").
    sha256_source : str
        Where `sha256` comes from, shown in checksum errors.
    description : str
        One line for humans.
    max_bytes : int, optional
        Upper bound on the decompressed size: decompression stops with a ``ValueError``
        beyond it (and beyond ``MAX_EXPANSION`` times the compressed size in any case).
    """

    name: str
    url: str
    filename: str
    n_samples: int
    n_features: int
    sha256: str | None = None
    sha256_source: str = ""
    description: str = ""
    max_bytes: int | None = None

    @property
    def decompressed_filename(self):
        """str: `filename` without its ``.bz2``/``.gz`` suffix."""
        for ext in (".bz2", ".gz"):
            if self.filename.endswith(ext):
                return self.filename[: -len(ext)]
        return self.filename

    @property
    def shape(self):
        """tuple of int: ``(n_samples, n_features)``."""
        return (self.n_samples, self.n_features)



_LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

# Decompression bounds: 64 bytes per stored entry ("index:value " is about 20 characters)
# of the about 1.50 M (rcv1) and 3.71 M (real-sim) nonzeros, rounded up: several times the
# files' real sizes, far below what a decompression bomb would write.
_MAX_BYTES_RCV1 = 96 * 2**20
_MAX_BYTES_REALSIM = 240 * 2**20

# The data sets of the paper, by name; where each expected checksum comes from is
# documented with DATASETS in datasets/__init__.py (the public name).
DATASETS = {
    "rcv1": RemoteDataset(
        name="rcv1",
        url=_LIBSVM_BINARY + "rcv1_train.binary.bz2",
        filename="rcv1_train.binary.bz2",
        n_samples=20_242,
        n_features=47_236,
        sha256=None,
        sha256_source="none published; recorded on first download",
        description="rcv1.binary (training part), Reuters news, cosine-normalized TF-IDF",
        max_bytes=_MAX_BYTES_RCV1,
    ),
    "real-sim": RemoteDataset(
        name="real-sim",
        url=_LIBSVM_BINARY + "real-sim.bz2",
        filename="real-sim.bz2",
        n_samples=72_309,
        n_features=20_958,
        sha256="7cd52374f55ce62e803ef33ca1c44689427c23d481eff64026f8ba9f53b8cc27",
        sha256_source=(
            "github.com/pratikrathore8/rlaopt-experiments, "
            "src/rlaopt_experiments/suites/real_erm/data.py"
        ),
        description="real-sim, UseNet articles: real vs simulated auto racing/aviation",
        max_bytes=_MAX_BYTES_REALSIM,
    ),
}
_ALIASES = {"rcv1.binary": "rcv1", "rcv1_train": "rcv1", "realsim": "real-sim"}


def _as_pm1(y, where):
    """Binary labels as -1/+1: {-1, 1} unchanged, {0, 1} -> 0 to -1, else smaller -> -1."""
    values = np.unique(y)
    if values.size > 2:
        shown = ", ".join(repr(float(v)) for v in values[:5])
        raise ValueError(
            f"{where}: expected two classes for a binary data set, found {values.size} label "
            f"values ({shown}{', ...' if values.size > 5 else ''}); "
            "use rgrasp_viz.datasets.load_svmlight for other data"
        )
    if values.size < 2:
        raise ValueError(
            f"{where}: expected two classes for a binary data set, found one label value "
            f"({float(values[0])!r}) on all {len(y)} samples: a classifier has nothing to "
            "separate (wrong or truncated file?); use rgrasp_viz.datasets.load_svmlight to "
            "read it anyway"
        )
    if np.all(np.isin(values, (-1.0, 1.0))):
        return y
    if np.all(np.isin(values, (0.0, 1.0))):
        return np.where(y == 0.0, -1.0, 1.0)
    return np.where(y == values[0], -1.0, 1.0)  # two values a < b: a -> -1, b -> +1



def _check_shape(spec, W, where):
    if W.shape[0] != spec.n_samples:
        raise ValueError(
            f"{where}: has {W.shape[0]} samples, but the {spec.name!r} data set has "
            f"{spec.n_samples} (expected shape {spec.shape}); wrong or truncated file?"
        )


def _load_spec_file(spec, path):
    W, y = load_svmlight(path, n_features=spec.n_features, zero_based=False)
    _check_shape(spec, W, path)
    return W, _as_pm1(y, path)


def _check_fetch_args(name, data_dir, url, sha256, download, progress, return_X_y, timeout):
    """Type (and value) checks of :func:`fetch`'s arguments, before any work; returns the
    timeout as a float."""
    if not isinstance(name, (str, os.PathLike, RemoteDataset)):
        raise TypeError("name must be a data set name (str), a file path or a RemoteDataset, "
                        f"got {type(name).__name__}: {name!r}")
    if data_dir is not None and not isinstance(data_dir, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a str or path-like, got {type(data_dir).__name__}: "
                        f"{data_dir!r}")
    if url is not None and not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}: {url!r}")
    if sha256 is not None:
        if not isinstance(sha256, str):
            raise TypeError("sha256 must be a str of 64 hexadecimal digits, got "
                            f"{type(sha256).__name__}: {sha256!r}")
        if len(sha256) != 64 or any(c not in "0123456789abcdefABCDEF" for c in sha256):
            raise ValueError(f"sha256 must be 64 hexadecimal digits, got {sha256!r}")
    for arg, value in (("download", download), ("progress", progress),
                       ("return_X_y", return_X_y)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{arg} must be True or False, got {type(value).__name__}: "
                            f"{value!r}")
    if isinstance(timeout, (bool, np.bool_)) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}: "
                        f"{timeout!r}")
    timeout = float(timeout)
    if not (math.isfinite(timeout) and timeout > 0.0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
    return timeout


def _resolve(name):
    if isinstance(name, RemoteDataset):
        return name, None
    if isinstance(name, str):
        key = name.strip().lower()
        key = _ALIASES.get(key, key)
        if key in DATASETS:
            return DATASETS[key], None
    if isinstance(name, (str, os.PathLike)):
        path = Path(os.fspath(name)).expanduser()
        if path.is_file():
            known = {
                f: s for s in DATASETS.values() for f in (s.filename, s.decompressed_filename)
            }
            return known.get(path.name), path
        if isinstance(name, os.PathLike) or os.sep in name or "." in name:
            raise FileNotFoundError(
                f"no such file: {path} (and {name!r} is not a data set name; "
                f"known: {', '.join(sorted(DATASETS))})"
            )
    raise ValueError(
        f"unknown data set {name!r}; known: {', '.join(sorted(DATASETS))}, "
        "or the path of a LIBSVM file"
    )


def _result(W, y, name, return_X_y):
    if return_X_y:
        return W, y
    return Problem(W, y, loss="logistic", name=name)


def fetch(
    name,
    *,
    data_dir=None,
    url=None,
    sha256=None,
    download=True,
    progress=True,
    return_X_y=False,
    timeout=_TIMEOUT,
):
    """Load a binary LIBSVM data set of the paper, downloading it once into a cache.

    Parameters
    ----------
    name : {"rcv1", "real-sim"}, RemoteDataset, str or os.PathLike
        A data set of :data:`DATASETS` (``"rcv1"`` is the training part of rcv1.binary,
        20,242 x 47,236; ``"real-sim"`` is 72,309 x 20,958), a :class:`RemoteDataset`
        describing another binary LIBSVM file, or the path of a local LIBSVM file
        (``.bz2``, ``.gz`` or plain). A local file named like a registered one (e.g.
        ``rcv1_train.binary.bz2`` or ``rcv1_train.binary``) gets that data set's shape
        check; its checksum is verified only if `sha256` is given.
    data_dir : str or os.PathLike, optional
        Cache directory (created if needed); default :func:`get_data_dir` (the
        ``RGRASP_VIZ_DATA`` environment variable, else the user cache directory).
    url : str, optional
        Download from here instead of the registered address (an ``http(s)://`` mirror).
        The file must still pass the checksum and shape checks.
    sha256 : str, optional
        Expected SHA-256 (hex) of the compressed file, overriding the registered one.
    download : bool, default True
        If False, never touch the network: a data set that is not cached raises
        :class:`DatasetUnavailableError` with instructions.
    progress : bool, default True
        Show download and decompression progress bars (tqdm: a widget in Jupyter, a bar
        on a terminal; nothing when stderr is neither, e.g. a log file). False is silent.
    return_X_y : bool, default False
        Return ``(W, y)`` instead of a :class:`~rgrasp_viz.Problem`.
    timeout : float, default 600
        Seconds a download may take in all (a deadline for the whole transfer, also when
        the server keeps sending a trickle of data); then it is abandoned.

    Returns
    -------
    Problem or tuple (W, y)
        ``Problem(W, y, loss="logistic", name=...)`` with `W` a canonical float64 CSR
        matrix and labels `y` in {-1, +1}: labels {0, 1} map 0 to -1, any other two
        values map the smaller to -1 and the larger to +1.

    Raises
    ------
    DatasetUnavailableError
        The file is not cached and cannot be downloaded (no network, HTTP error,
        interrupted transfer, `timeout` passed, or ``download=False``). The message
        gives the address to download from and the exact path to save the file under.
    ChecksumError
        The download has the wrong SHA-256: it is discarded, nothing is written to the
        cache. (A compressed file placed in the cache by hand that fails the check is
        reported but left alone.)
    ValueError
        The file is malformed (the message names the line), is not a valid ``.bz2``
        file, decompresses to more than its bound (``MAX_EXPANSION`` times its size, and
        :attr:`RemoteDataset.max_bytes`), has the wrong number of samples, or has more
        than two label values or only one.
    ImportError
        scikit-learn (the ``data`` extra) is missing.
    TypeError
        An argument has the wrong type (e.g. ``sha256=123``, ``download="no"``); checked
        before anything is read or downloaded, the message names the argument.

    Notes
    -----
    Cache layout, in the cache directory: the compressed file as published (e.g.
    ``rcv1_train.binary.bz2``), its decompressed twin (``rcv1_train.binary``), which is
    what later calls load, and, for a data set without a registered checksum,
    ``<filename>.sha256`` recording the checksum seen on first download. The download
    is pooch's (``pooch.retrieve``: a temporary file in the same directory, checked
    against the known SHA-256 and moved into place only when complete and verified);
    the decompressed file is written to a temporary ``.<name>.*.part`` file and renamed
    into place, so a failure at any point leaves no partial file. A decompressed file
    already in the cache is trusted as is; a compressed file found in the cache without
    its decompressed twin (e.g. placed there by hand) is verified against `sha256`, the
    registered checksum or the recorded one.

    A download whose checksum is not known beforehand is kept only if it decompresses,
    parses and has the expected number of samples; otherwise it is deleted again.

    Examples
    --------
    >>> prob = fetch("rcv1")                                  # doctest: +SKIP
    >>> res = rgrasp_viz.solve(prob, method="svrgsp", s=200)  # doctest: +SKIP
    """
    timeout = _check_fetch_args(name, data_dir, url, sha256, download, progress, return_X_y,
                                timeout)
    spec, local = _resolve(name)
    if local is not None:
        if sha256 is not None:
            got = _sha256_file(local)
            if got != sha256.lower():
                raise ChecksumError(
                    f"SHA-256 checksum mismatch for {local}: expected {sha256}, got {got}"
                )
        if spec is None:
            W, y = load_svmlight(local)
            return _result(W, _as_pm1(y, local), local.name.split(".")[0], return_X_y)
        W, y = _load_spec_file(spec, local)
        return _result(W, y, spec.name, return_X_y)

    root = get_data_dir(data_dir)
    raw = root / spec.filename
    dec = root / spec.decompressed_filename
    if dec.is_file() and dec != raw:
        W, y = _load_spec_file(spec, dec)
        return _result(W, y, spec.name, return_X_y)

    expected = sha256 if sha256 is not None else spec.sha256
    fresh = not raw.is_file()
    if not fresh:
        recorded = _read_sidecar(root, spec)
        expected = expected if expected is not None else recorded
        got = _sha256_file(raw)
        if expected is not None and got != expected.lower():
            # a file placed by hand is the user's: report it, do not delete it (pooch would
            # download it again over the user's copy)
            raise ChecksumError(
                f"SHA-256 checksum mismatch for {raw}: expected {expected}, got {got}. "
                f"Delete it to download it again, or pass sha256={got!r} if it is known to "
                "be good."
            )
    elif not download:
        raise DatasetUnavailableError(
            _where_to_put(spec, root, f"{raw} is not there and download=False.")
        )
    else:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatasetUnavailableError(
                f"cannot create the cache directory {root}: {exc}; choose another one with "
                f"data_dir=... or the {DATA_DIR_ENV} environment variable"
            ) from exc
    trusted = expected is not None
    source = url if url is not None else spec.url
    try:
        path = _retrieve(spec, source, root, expected, progress, timeout)
        W, y = _load_spec_file(spec, path)
    except BaseException:
        if dec != raw:
            _unlink_quietly(dec)  # made by this call
        if fresh and not trusted:  # downloaded, unverifiable and unusable: do not keep it
            _unlink_quietly(raw)
        raise
    if not trusted:
        _write_sidecar(root, spec, _sha256_file(raw))
    return _result(W, y, spec.name, return_X_y)
