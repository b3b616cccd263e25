"""The LIBSVM/svmlight parser: scikit-learn's, with errors that name the bad line."""

from __future__ import annotations

import bz2
import gzip
import math
import numbers
import operator
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

#: Default bound on the columns :func:`load_svmlight` infers from a file (2**24: wider than
#: any data set of the paper by a factor of 300; a float64 vector of that length is 128 MiB).
MAX_FEATURES = 2**24
_INDEX_LIMIT = 2**31  # scikit-learn's parser overflows on feature indices from here


def _open_maybe_compressed(path):
    name = str(path)
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _sklearn_loader():
    try:
        from sklearn.datasets import load_svmlight_file  # optional: the data extra
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
        Number of columns, at most `max_features`; a larger feature index in the file is an
        error naming its line. Default: the largest feature index found in the file, at
        most `max_features`.
    zero_based : bool or "auto", default "auto"
        Whether feature indices start at 0. ``"auto"`` treats the file as 1-based (the
        LIBSVM convention) unless some index is 0; ``False`` rejects index 0.
    max_features : int, default ``MAX_FEATURES`` (2**24)
        Bound on the number of columns: a larger `n_features` is refused before the file is
        read, and, when `n_features` is not given, a file whose largest index is beyond it
        is an error naming the line, not a matrix whose width makes every later solve
        allocate gigabytes.

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
        naming the file. So is an `n_features` above `max_features`, before the file is
        read.

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
    if n_features is not None and n_features > max_features:
        raise ValueError(
            f"n_features={n_features} exceeds max_features={max_features}: every solve on "
            f"such data allocates vectors of {n_features} entries ({8 * n_features:,} bytes "
            "each); pass a larger max_features if the data really is that wide"
        )
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

