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
put it.

>>> import rgrasp_viz as rv
>>> prob = rv.datasets.fetch("rcv1")                     # doctest: +SKIP
>>> prob.n, prob.d, prob.loss                            # doctest: +SKIP
(20242, 47236, 'logistic')
>>> W, y = rv.datasets.fetch("real-sim", return_X_y=True)  # doctest: +SKIP
"""

from __future__ import annotations

import bz2
import contextlib
import dataclasses
import gzip
import logging
import math
import numbers
import operator
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _progress
from ._problems import Problem
from .exceptions import ChecksumError, DatasetUnavailableError

__all__ = [
    "DATASETS",
    "RemoteDataset",
    "fetch",
    "get_data_dir",
    "load_svmlight",
]

#: Environment variable naming the cache directory (overridden by ``data_dir=``).
DATA_DIR_ENV = "RGRASP_VIZ_DATA"

#: Default bound on the columns :func:`load_svmlight` infers from a file (2**24: wider than
#: any data set of the paper by a factor of 300; a float64 vector of that length is 128 MiB).
MAX_FEATURES = 2**24
_INDEX_LIMIT = 2**31  # scikit-learn's parser overflows on feature indices from here

_CHUNK = 1 << 20  # bytes per read when decompressing
_TIMEOUT = 600.0  # seconds a download may take in all


# ---------------------------------------------------------------------------- registry


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






# ------------------------------------------------------------------------ cache dir


def get_data_dir(data_dir=None):
    """The cache directory for downloaded data sets (not created).

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Explicit directory; wins over everything else.

    Returns
    -------
    pathlib.Path
        `data_dir` if given; else the environment variable ``RGRASP_VIZ_DATA`` if set and
        non-empty; else the platform's user cache directory for ``rgrasp_viz`` as
        ``platformdirs.user_cache_dir`` gives it (``$XDG_CACHE_HOME/rgrasp_viz``, default
        ``~/.cache/rgrasp_viz``, on Linux; ``~/Library/Caches/rgrasp_viz`` on macOS;
        ``%LOCALAPPDATA%\\rgrasp_viz\\Cache`` on Windows). ``~`` is expanded.
    """
    if data_dir is not None:
        return Path(os.fspath(data_dir)).expanduser()
    env = os.environ.get(DATA_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rgrasp_viz", appauthor=False))


# ------------------------------------------------------------------------- parsing


def _open_maybe_compressed(path):
    name = str(path)
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _sklearn_loader():
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "reading LIBSVM/svmlight files needs scikit-learn: "
            'pip install "rgrasp_viz[data]" (or pip install scikit-learn)'
        ) from exc
    return load_svmlight_file


def _line_problem(line, zero_based, n_features, state):
    """Why one line of a svmlight file is malformed, or None.

    Mirrors the grammar scikit-learn accepts (``label [qid:q] index:value ...`` with
    strictly increasing indices and an optional ``# comment``) and additionally rejects
    non-finite labels and values. ``state`` collects what is needed to judge indices
    against `n_features` once the whole file is read (0- vs 1-based for "auto").
    """
    line = line.split(b"#", 1)[0]
    tokens = line.split()
    if not tokens:
        return None
    try:
        label = float(tokens[0])
    except ValueError:
        return f"label {tokens[0]!r} is not a number"
    if not math.isfinite(label):
        return f"label {tokens[0]!r} is not finite"
    rest = tokens[1:]
    if rest and rest[0].startswith(b"qid:"):
        try:
            int(rest[0][4:])
        except ValueError:
            return f"query id {rest[0]!r} is not an integer"
        rest = rest[1:]
    last = first = -1
    for tok in rest:
        idx_s, sep, val_s = tok.partition(b":")
        if not sep:
            return f"feature {tok!r} is not of the form index:value"
        try:
            idx = int(idx_s)
        except ValueError:
            return f"feature index {idx_s!r} in {tok!r} is not an integer"
        try:
            val = float(val_s)
        except ValueError:
            return f"feature value {val_s!r} in {tok!r} is not a number"
        lowest = 1 if zero_based is False else 0
        if idx < lowest:
            return f"feature index {idx} is invalid (indices start at {lowest})"
        if idx <= last:
            return f"feature index {idx} after {last}: indices must be strictly increasing"
        if idx >= _INDEX_LIMIT:
            return (f"feature index {idx} is too large (indices must be below 2**31 = "
                    f"{_INDEX_LIMIT})")
        if not math.isfinite(val):
            return f"feature value {val_s!r} (index {idx}) is not finite"
        if first < 0:
            first = idx
        last = idx
    if first == 0:  # indices increase, so only the first one can be 0
        state["has_zero"] = True
    if n_features is not None and last >= n_features and state.get("first_ge") is None:
        state["first_ge"] = (state["lineno"], last)  # too large if the file is 0-based
    if n_features is not None and last > n_features and state.get("first_gt") is None:
        state["first_gt"] = (state["lineno"], last)  # too large if the file is 1-based
    return None


def _find_bad_line(path, zero_based, n_features, cap=None):
    """``(lineno, reason)`` of the first malformed line of `path`, or None.

    Indices are judged against `n_features` columns, or, when it is None, against `cap`
    columns (the bound on an inferred width) if given."""
    width = n_features if n_features is not None else cap
    state = {}
    with _open_maybe_compressed(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            state["lineno"] = lineno
            reason = _line_problem(line, zero_based, width, state)
            if reason is not None:
                return lineno, reason
    if width is not None:
        one_based = zero_based is False or (zero_based == "auto" and not state.get("has_zero"))
        hit = state.get("first_gt" if one_based else "first_ge")
        if hit is not None:
            lineno, idx = hit
            top = width if one_based else width - 1
            if n_features is not None:
                return lineno, (
                    f"feature index {idx} exceeds n_features={n_features} "
                    f"(largest allowed index: {top})"
                )
            return lineno, (
                f"feature index {idx} exceeds the cap of max_features={cap} columns "
                f"(largest allowed index: {top}): a file naming a huge index would make "
                "every solve allocate arrays that long; pass n_features=... or a larger "
                "max_features if the data really is that wide"
            )
    return None


def load_svmlight(path, n_features=None, *, zero_based="auto", max_features=MAX_FEATURES):
    """Read a LIBSVM/svmlight file into a CSR matrix and a label vector.

    Parsing is done by scikit-learn's ``load_svmlight_file`` (the ``data`` extra).

    Parameters
    ----------
    path : str or os.PathLike
        File name; ``.bz2`` and ``.gz`` files are decompressed on the fly.
    n_features : int, optional
        Number of columns; a larger feature index in the file is an error naming its
        line. Default: the largest feature index found in the file, at most
        `max_features`.
    zero_based : bool or "auto", default "auto"
        Whether feature indices start at 0. ``"auto"`` treats the file as 1-based (the
        LIBSVM convention) unless some index is 0; ``False`` rejects index 0.
    max_features : int, default ``MAX_FEATURES`` (2**24)
        Bound on the number of columns when `n_features` is not given: a file whose
        largest index is beyond it is an error naming the line, not a matrix whose width
        makes every later solve allocate gigabytes.

    Returns
    -------
    W : scipy.sparse.csr_matrix of float64, shape (n, n_features)
        Canonical CSR (sorted indices, no duplicates), as :class:`~rgrasp_viz.Problem`
        stores it.
    y : numpy.ndarray of float64, shape (n,)
        Labels or targets, unchanged (see :func:`fetch` for binary ±1 labels).

    Raises
    ------
    ImportError
        If scikit-learn is not installed.
    FileNotFoundError
        If `path` does not exist.
    TypeError
        If `n_features` is not an integer.
    ValueError
        If the file is malformed: the message starts with ``"<path>:<line>: "`` and says
        what is wrong with that line (scikit-learn's own errors do not name the line; the
        file is then re-scanned to find it). Non-finite labels or values count as
        malformed, and so are feature indices beyond `n_features`, beyond
        `max_features` (when `n_features` is not given) or of 2**31 and more. A file
        without any sample (empty, or only comments and blank lines) is an error too,
        naming the file.

    Examples
    --------
    >>> W, y = load_svmlight("rcv1_train.binary.bz2")   # doctest: +SKIP
    """
    path = Path(os.fspath(path)).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if n_features is not None:
        if isinstance(n_features, (bool, np.bool_)):
            raise TypeError(f"n_features must be a positive integer, got {n_features!r}")
        try:
            n_features = operator.index(n_features)
        except TypeError:
            raise TypeError(
                f"n_features must be a positive integer, got {n_features!r}"
            ) from None
        if n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {n_features}")
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if isinstance(max_features, (bool, np.bool_)) or not isinstance(max_features,
                                                                    numbers.Integral):
        raise TypeError(f"max_features must be a positive integer, got {max_features!r}")
    if max_features < 1:
        raise ValueError(f"max_features must be a positive integer, got {max_features}")
    loader = _sklearn_loader()
    try:
        W, y = loader(str(path), n_features=n_features, dtype=np.float64, zero_based=zero_based)
    except (ValueError, OSError, EOFError, UnicodeError, OverflowError) as exc:
        raise _located_error(path, zero_based, n_features, exc) from exc
    if n_features is None and W.shape[1] > max_features:
        raise _located_error(path, zero_based, None, None, cap=int(max_features))
    if W.shape[0] == 0:
        raise ValueError(f"{path}: no samples (the file is empty or holds only comments and "
                         "blank lines)")
    if not (np.all(np.isfinite(W.data)) and np.all(np.isfinite(y))):
        raise _located_error(path, zero_based, n_features, None)
    W = sp.csr_matrix(W, dtype=np.float64)
    W.sum_duplicates()  # canonical: sorted indices, no duplicates (a no-op for valid files)
    return W, np.ascontiguousarray(y, dtype=np.float64)


def _located_error(path, zero_based, n_features, exc, cap=None):
    detail = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
    try:
        bad = _find_bad_line(path, zero_based, n_features, cap)
    except (OSError, EOFError) as scan_exc:  # e.g. a corrupt .bz2 stream
        return ValueError(f"{path}: cannot be read as a svmlight file: {scan_exc}")
    if bad is None:
        if exc is None:  # pragma: no cover - the scanner checks finiteness too
            return ValueError(f"{path}: contains non-finite labels or values")
        return ValueError(f"{path}: cannot be parsed as a svmlight file{detail}")
    lineno, reason = bad
    return ValueError(f"{path}:{lineno}: {reason}{detail}")


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
    if np.all(np.isin(values, (-1.0, 1.0))):
        return y
    if np.all(np.isin(values, (0.0, 1.0))):
        return np.where(y == 0.0, -1.0, 1.0)
    return np.where(y == values[0], -1.0, 1.0)  # two values a < b: a -> -1, b -> +1


# ------------------------------------------------------------------------- download
#
# The transfer (HTTP, temporary file, checksum, atomic move into the cache) is pooch's
# (``pooch.retrieve`` with its ``HTTPDownloader``, built on requests); progress bars are
# tqdm's. What is ours: the deadline on the whole transfer, the bounded decompression
# processor, the checksum recorded on first use and the messages.


def _progress_bar(desc, progress):
    """A byte-counting bar under the package's one progress policy
    (:func:`rgrasp_viz._progress.bar`)."""
    return _progress.bar(None, desc, progress, unit="B", unit_scale=True, unit_divisor=1024)


class _PoochBar:
    """A tqdm bar as pooch's ``HTTPDownloader(progressbar=...)`` drives it (pooch tests the
    bar's truth, which tqdm refuses while the total is unknown)."""

    def __init__(self, bar):
        self.bar = bar

    def __bool__(self):
        return True

    @property
    def total(self):
        return self.bar.total

    @total.setter
    def total(self, value):
        self.bar.total = value or None  # 0: no Content-Length

    def update(self, n):
        self.bar.update(n)

    def reset(self):
        self.bar.reset(total=self.bar.total)

    def close(self):
        self.bar.close()


def _say(bar, message):
    """One line above the bar, only when the bar is shown."""
    if not bar.disable:
        bar.write(message, file=sys.stderr)


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download at INFO level on stderr; ours say it with the bar."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


class _DownloadTimeout(TimeoutError):
    """A download did not complete within its deadline."""


class _DeadlineDownloader:
    """A pooch downloader: ``pooch.HTTPDownloader`` with `timeout` as a deadline for the
    whole transfer, not only for each read.

    requests' timeout bounds one wait for data, so a server sending a byte every few
    seconds would keep a download alive forever. Here a timer started when the response
    headers arrive (a requests response hook) shuts the connection down once the deadline
    has passed, which ends the read in progress; the download then fails with
    ``_DownloadTimeout`` (reported as :class:`DatasetUnavailableError`).
    """

    def __init__(self, timeout, progressbar):
        self.timeout = timeout
        self.progressbar = progressbar

    def __call__(self, url, output_file, pooch_obj):
        import pooch

        deadline = time.monotonic() + self.timeout
        expired = threading.Event()
        timers = []

        def expire(response):
            expired.set()
            shutdown = getattr(response.raw, "shutdown", None)  # urllib3 >= 2.3
            (shutdown or response.close)()

        def start_clock(response, *args, **kwargs):
            timer = threading.Timer(max(deadline - time.monotonic(), 0.0), expire, (response,))
            timer.daemon = True
            timers.append(timer)
            timer.start()
            return response

        http = pooch.HTTPDownloader(progressbar=self.progressbar, timeout=self.timeout,
                                    headers={"User-Agent": "rgrasp_viz"},
                                    hooks={"response": [start_clock]})
        try:
            http(url, output_file, pooch_obj)
        except Exception as exc:
            if expired.is_set():
                raise _DownloadTimeout(f"not complete after {self.timeout:g} s") from exc
            raise
        finally:
            for timer in timers:
                timer.cancel()
        if expired.is_set():  # a body without a declared length just ends early
            raise _DownloadTimeout(f"not complete after {self.timeout:g} s")


#: A compressed data file may expand to at most this many times its size (LIBSVM text
#: compresses 3-10 times; a "decompression bomb" thousands of times).
MAX_EXPANSION = 100


class _BoundedDecompress:
    """A pooch processor: decompress a ``.bz2``/``.gz`` download next to it through a
    temporary file and an atomic rename, at most ``MAX_EXPANSION`` times the compressed
    size and at most `max_bytes` (the data set's declared bound, if any).

    ``pooch.Decompress`` has no size bound; a few kilobytes of bzip2 can expand to
    gigabytes. Here decompression stops with a ``ValueError`` as soon as the output
    exceeds the bound, having written no more than the bound.
    """

    def __init__(self, dest_name, max_bytes, progress):
        self.dest_name = dest_name
        self.max_bytes = max_bytes
        self.progress = progress

    def __call__(self, fname, action, pooch_obj):
        raw = Path(fname)
        dest = raw.with_name(self.dest_name)
        if dest == raw:
            return str(raw)
        limit = MAX_EXPANSION * max(raw.stat().st_size, 1)
        if self.max_bytes is not None:
            limit = min(limit, self.max_bytes)
        fd, tmp = tempfile.mkstemp(dir=raw.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, _open_maybe_compressed(raw) as src:
                bar = _progress_bar(f"Decompressing {raw.name}", self.progress)
                written = 0
                try:
                    while block := src.read(_CHUNK):
                        written += len(block)
                        if written > limit:
                            raise ValueError(
                                f"{raw}: decompresses to more than {limit:,} bytes, "
                                "more than a data file of this size and kind can hold "
                                f"(at most {MAX_EXPANSION} times the compressed size and "
                                "the data set's declared bound); not the expected file? "
                                "Decompression stopped."
                            )
                        out.write(block)
                        bar.update(len(block))
                except (OSError, EOFError) as exc:
                    raise ValueError(f"{raw}: is not a valid compressed file ({exc})") from exc
                finally:
                    bar.close()
            os.replace(tmp, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)  # no-op after a successful rename
        return str(dest)


def _unlink_quietly(path):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _where_to_put(spec, root, problem):
    """`problem` (one sentence) plus exactly which file to get and where to save it."""
    return (
        f"{problem}\n"
        f"To use the {spec.name!r} data set without network access, download\n"
        f"    {spec.url}\n"
        f"(on any machine with internet access) and save it as\n"
        f"    {root / spec.filename}\n"
        f"The decompressed file {spec.decompressed_filename!r} in the same directory works "
        f"too, or pass the file's path: rgrasp_viz.datasets.fetch('/path/to/{spec.filename}')."
        f"\nThe cache directory is chosen by data_dir=... or the {DATA_DIR_ENV} environment "
        f"variable."
    )


def _why(exc):
    """A short reason for a failed transfer (requests' own messages are long)."""
    import requests

    if isinstance(exc, _DownloadTimeout):
        return f"transfer {exc}"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP error {exc.response.status_code} ({exc.response.reason})"
    if isinstance(exc, (requests.exceptions.ChunkedEncodingError,
                        requests.exceptions.ContentDecodingError)):
        return f"transfer interrupted or incomplete ({exc})"
    if isinstance(exc, requests.exceptions.Timeout):
        return "no answer in time (timeout)"
    if isinstance(exc, requests.ConnectionError):
        # requests' text holds the whole retry chain; the OS error says it all
        found = re.search(r"\[Errno -?\d+\][^'\")]*", str(exc))
        return f"cannot connect ({found.group(0).strip() if found else exc})"
    return f"{type(exc).__name__}: {exc}"


def _download_errors():
    import requests

    return (requests.RequestException, OSError)


_HASH_MISMATCH = re.compile(r"does not match the known hash.* but got ([0-9a-fA-F]{64})", re.S)


def _checksum_message(spec, source, expected, got):
    origin = f" (expected checksum from: {spec.sha256_source})" if spec.sha256_source else ""
    fix = (f" If the file is known to be good (e.g. LIBSVM re-published it), pass "
           f"sha256={got!r}." if got else "")
    return (
        f"SHA-256 checksum mismatch for {spec.filename} from {source}: expected {expected}"
        f"{origin}, got {got or 'another'}. The file was discarded; nothing was written to "
        f"the cache.{fix}"
    )


def _sha256_file(path):
    import pooch

    return pooch.file_hash(str(path), alg="sha256")


def _sidecar(root, spec):
    return root / (spec.filename + ".sha256")


def _read_sidecar(root, spec):
    try:
        text = _sidecar(root, spec).read_text().split()
    except FileNotFoundError:
        return None
    return text[0].lower() if text else None


def _write_sidecar(root, spec, digest):
    fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{spec.filename}.sha256.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(f"{digest}  {spec.filename}\n")
        os.replace(tmp, _sidecar(root, spec))
    finally:
        _unlink_quietly(tmp)


def _retrieve(spec, source, root, expected, progress, timeout):
    """The compressed file through pooch (downloaded unless cached), decompressed; returns
    the path of the decompressed file."""
    import pooch

    downloading = not (root / spec.filename).is_file()  # else pooch only checks and decompresses
    bar = _progress_bar(f"Downloading {spec.filename}", progress and downloading)
    try:
        _say(bar, f"Downloading the {spec.name!r} data set from {source} into {root}")
        processor = _BoundedDecompress(spec.decompressed_filename, spec.max_bytes, progress)
        downloader = _DeadlineDownloader(timeout, False if bar.disable else _PoochBar(bar))
        with _quiet_pooch():
            try:
                return Path(pooch.retrieve(
                    source, known_hash=None if expected is None else f"sha256:{expected}",
                    fname=spec.filename, path=root, processor=processor,
                    downloader=downloader,
                ))
            except ValueError as exc:
                if "does not match the known hash" not in str(exc):
                    raise
                found = _HASH_MISMATCH.search(str(exc))
                raise ChecksumError(_checksum_message(
                    spec, source, expected, found.group(1).lower() if found else None
                )) from exc
            except _download_errors() as exc:
                raise DatasetUnavailableError(_where_to_put(
                    spec, root, f"Could not download {spec.filename} from {source}: "
                    f"{_why(exc)}."
                )) from exc
    finally:
        bar.close()


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
        than two label values.
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
