"""The trace of a run: everything a visualization reads, as plain NumPy arrays.

Layout (``n_it`` outer iterations plus the starting point, row 0):

* per outer iteration ``t = 0..n_it``: ``iteration``, ``passes`` (cumulative effective
  passes), ``time`` (cumulative solver seconds), ``objective``, ``rel_error``,
  ``support_size``, ``n_thresholds`` (cumulative hard-thresholding operations),
  ``n_entered`` / ``n_left`` (coordinates entering/leaving ``supp(x^t)`` relative to
  ``supp(x^{t-1})``), ``inner_entered`` / ``inner_left`` (sums over that iteration's inner
  thresholding events), ``inner_steps``;
* ragged per-iteration index sets, stored CSR-like (``<name>_ptr`` offsets into
  ``<name>_idx``): ``support`` (with values ``support_val`` = the nonzeros of ``x^t``),
  ``Z`` (the 2s gradient directions), ``T`` (merged support) with ``b_val`` (the sub-problem
  solution ``b`` on ``T``).  Row 0 of ``Z``/``T`` is empty; methods without them leave
  every row empty;
* thresholding events: ``ev_iter``, ``ev_step`` (inner step within the iteration, 1-based;
  0 for methods without inner steps), ``ev_kind`` (0 = inside an epoch: SVRGHT/SG-HT's H_s
  or SVRGSP+'s H_|T|; 1 = the outer H_s of Algorithm 1 / FG-HT / GraSP), ``ev_in``,
  ``ev_out``;
* inner checkpoints every ``record_every`` inner steps: ``ck_iter``, ``ck_step``,
  ``ck_proxy`` (mean sampled loss f_i(z) over the window), ``ck_objective`` (exact F at the
  snapshot when iterates were recorded, else NaN) and optionally ``ck_x`` (snapshots, one row
  per checkpoint);
* ``x_true`` (empty when unknown) and ``meta`` (a JSON-able dict: method, loss, parameters,
  seed, versions, status, message, ...).

Effective passes: a full gradient (or any sweep over all ``n`` samples) counts 1; each
component-gradient evaluation counts ``1/n``.  Solver time excludes objective evaluation and
trace bookkeeping.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ._io import atomic_path

_RAGGED = ("support", "Z", "T")

_PER_ITER = (
    "iteration",
    "passes",
    "time",
    "objective",
    "rel_error",
    "support_size",
    "n_thresholds",
    "n_entered",
    "n_left",
    "inner_entered",
    "inner_left",
    "inner_steps",
)

_EVENTS = ("ev_iter", "ev_step", "ev_kind", "ev_in", "ev_out")
_CHECKPOINTS = ("ck_iter", "ck_step", "ck_proxy", "ck_objective")


class Trace:
    """Recorded history of one solver run.

    Build one with the solvers (``rv.solve(...).trace``) or :meth:`load`.  Arrays are
    available as attributes (``trace.objective``, ``trace.passes``, ...) and the tidy views
    :meth:`records`, :meth:`events` and :meth:`checkpoints` return one dict per row.
    """

    def __init__(self, arrays, meta):
        self._a = {k: np.asarray(v) for k, v in arrays.items()}
        self.meta = dict(meta)

    # -- array access ---------------------------------------------------------------------
    def __getattr__(self, name):
        a = self.__dict__.get("_a")
        if a is not None and name in a:
            return a[name]
        raise AttributeError(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._a))

    @property
    def arrays(self):
        """dict of str to ndarray: every stored array (read-only view by convention)."""
        return dict(self._a)

    @property
    def method(self):
        """str: the method that produced this trace."""
        return self.meta["method"]

    @property
    def n_iter(self):
        """int: number of outer iterations recorded (row 0, the start, not counted)."""
        return len(self._a["iteration"]) - 1

    def __len__(self):
        return len(self._a["iteration"])

    def __repr__(self):
        return (
            f"Trace(method={self.meta.get('method')!r}, loss={self.meta.get('loss')!r}, "
            f"iterations={self.n_iter}, passes={float(self._a['passes'][-1]):.3g}, "
            f"thresholds={int(self._a['n_thresholds'][-1])}, "
            f"status={self.meta.get('status')!r})"
        )

    def _ragged(self, name, t):
        ptr = self._a[name + "_ptr"]
        if not -len(ptr) < t < len(ptr) - 1 and t != -1:
            raise IndexError(f"iteration {t} out of range 0..{len(ptr) - 2}")
        t = t % (len(ptr) - 1)
        return self._a[name + "_idx"][ptr[t] : ptr[t + 1]]

    def support(self, t=-1):
        """Indices of the nonzeros of ``x^t`` (ascending)."""
        return self._ragged("support", t)

    def Z(self, t=-1):  # noqa: N802 - the paper's notation
        """The 2s gradient directions chosen at iteration ``t`` (empty if not used)."""
        return self._ragged("Z", t)

    def T(self, t=-1):  # noqa: N802 - the paper's notation
        """The merged support ``T`` of iteration ``t`` (empty if not used)."""
        return self._ragged("T", t)

    def b(self, t=-1):
        """The sub-problem solution ``b`` at iteration ``t`` as a dense vector (zeros off T)."""
        t = t % len(self)
        ptr = self._a["T_ptr"]
        out = np.zeros(self.meta["d"])
        out[self.T(t)] = self._a["b_val"][ptr[t] : ptr[t + 1]]
        return out

    def x(self, t=-1):
        """The iterate ``x^t`` as a dense vector."""
        t = t % len(self)
        ptr = self._a["support_ptr"]
        out = np.zeros(self.meta["d"])
        out[self.support(t)] = self._a["support_val"][ptr[t] : ptr[t + 1]]
        return out

    def entered(self, t):
        """Coordinates in ``supp(x^t)`` but not in ``supp(x^{t-1})``."""
        if t % len(self) == 0:
            return self.support(0)
        return np.setdiff1d(self.support(t), self.support(t - 1), assume_unique=True)

    def left(self, t):
        """Coordinates in ``supp(x^{t-1})`` but not in ``supp(x^t)``."""
        if t % len(self) == 0:
            return np.empty(0, dtype=np.int64)
        return np.setdiff1d(self.support(t - 1), self.support(t), assume_unique=True)

    @property
    def true_support(self):
        """Indices of the nonzeros of ``x_true`` (empty when unknown)."""
        return np.flatnonzero(self._a["x_true"])

    @property
    def has_iterates(self):
        """bool: whether inner-step snapshots of the iterate were recorded."""
        return self._a["ck_x"].shape[0] > 0

    # -- tidy views -----------------------------------------------------------------------
    def records(self):
        """One dict per outer iteration (row 0 is the starting point).

        Keys: iteration, passes, time, objective, rel_error, support_size, n_thresholds,
        n_entered, n_left, inner_entered, inner_left, inner_steps, T_size, Z_size, method.
        """
        a = self._a
        cols = {k: a[k].tolist() for k in _PER_ITER}
        cols["T_size"] = np.diff(a["T_ptr"]).tolist()
        cols["Z_size"] = np.diff(a["Z_ptr"]).tolist()
        method = self.meta["method"]
        keys = list(cols)
        return [dict(zip(keys, row, strict=True), method=method)
                for row in zip(*cols.values(), strict=True)]

    def _position(self, it, step, kind=None):
        """Effective passes at inner step ``step`` of outer iteration ``it``.

        Inner steps sit at ``passes[it-1] + passes_head + step * passes_per_step`` (the head
        being the full gradient that opens an SVRG epoch); outer events (``kind == 1``) sit at
        the end of their iteration.
        """
        a = self._a
        it = np.asarray(it, dtype=np.int64)
        step = np.asarray(step, dtype=np.float64)
        per_step = float(self.meta.get("passes_per_step", 0.0))
        head = float(self.meta.get("passes_head", 0.0))
        pos = a["passes"][it - 1] + head + step * per_step
        if kind is not None:
            pos = np.where(np.asarray(kind) == 1, a["passes"][it], pos)
        return pos

    def events(self):
        """One dict per recorded hard-thresholding event.

        Keys: iteration, step, kind ("inner" or "outer"), entered, left, passes (the effective
        pass at which the event happened), method.
        """
        a = self._a
        pos = (self._position(a["ev_iter"], a["ev_step"], a["ev_kind"]) if len(a["ev_iter"])
               else [])
        kinds = np.where(a["ev_kind"] == 1, "outer", "inner")
        return [
            {"iteration": int(i), "step": int(s), "kind": str(k), "entered": int(e),
             "left": int(o), "passes": float(p), "method": self.meta["method"]}
            for i, s, k, e, o, p in zip(a["ev_iter"], a["ev_step"], kinds, a["ev_in"],
                                        a["ev_out"], pos, strict=True)
        ]

    def checkpoints(self):
        """One dict per inner checkpoint: iteration, step, passes, proxy, objective."""
        a = self._a
        pos = self._position(a["ck_iter"], a["ck_step"]) if len(a["ck_iter"]) else []
        return [
            {"iteration": int(i), "step": int(s), "passes": float(p), "proxy": float(q),
             "objective": float(f), "method": self.meta["method"]}
            for i, s, p, q, f in zip(a["ck_iter"], a["ck_step"], pos, a["ck_proxy"],
                                     a["ck_objective"], strict=True)
        ]

    # -- persistence ----------------------------------------------------------------------
    def save(self, path):
        """Save to one compressed ``.npz`` file (no pickle; exact round trip).

        The file is written atomically: to a temporary file in the same folder, then moved
        into place, so an existing file is replaced only by a complete new one (a save that
        fails part-way, e.g. on a full disk, leaves the previous file as it was).

        Parameters
        ----------
        path : str or path-like
            Destination; ``.npz`` is appended when missing (as NumPy does).

        Returns
        -------
        pathlib.Path
            The file written.
        """
        path = Path(path)
        if not path.name.endswith(".npz"):
            path = path.with_name(path.name + ".npz")
        payload = dict(self._a)
        payload["__meta__"] = np.array(json.dumps(self.meta, sort_keys=True))
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez_compressed(tmp, **payload)
        return path

    @classmethod
    def load(cls, path, *, max_bytes=None):
        """Load a trace written by :meth:`save`.

        Traces are shared (a student saves a run, an instructor replays it), so a file is
        read defensively: only the arrays a trace has are read (other members of the
        archive are never decompressed), each array's shape and dtype declared in its
        ``.npy`` header must agree with the size the archive declares for it, and the
        total must fit in ``max_bytes`` -- all checked before anything is allocated.  The
        dimension ``d`` is bounded too (every view of a trace makes dense vectors of
        length ``d``).

        Parameters
        ----------
        path : str or path-like
        max_bytes : int, optional
            The most memory the arrays of the trace may take (default
            :data:`MAX_TRACE_BYTES`, 1 GiB); ``d`` may be at most ``max_bytes //
            BYTES_PER_COORDINATE``.

        Returns
        -------
        Trace

        Raises
        ------
        ValueError
            If the file is not a complete, self-consistent trace (not an ``.npz`` archive,
            unreadable or corrupted data, missing or invalid metadata, missing arrays, arrays
            whose lengths or index ranges disagree, arrays whose declared sizes disagree with
            the archive or exceed ``max_bytes``); the message names the file and the problem.
        """
        max_bytes = _check_max_bytes(max_bytes)
        arrays = _read_npz(path, max_bytes)
        if "__meta__" not in arrays:
            raise ValueError(f"{path!s} is not an rgrasp_viz trace (no metadata)")
        meta = _parse_meta(path, arrays.pop("__meta__"))
        too_big = dimension_problem(meta["d"], max_bytes)
        if too_big:
            raise ValueError(f"{path!s}: {too_big}")
        missing = [k for k in _REQUIRED if k not in arrays]
        if missing:
            raise ValueError(f"{path!s} is not a complete trace: missing {missing}")
        problem = _inconsistency(arrays, meta["d"])
        if problem:
            raise ValueError(f"{path!s} is not a consistent rgrasp_viz trace: {problem}")
        return cls(arrays, meta)

    def equals(self, other):
        """True when both traces hold bit-identical arrays and equal metadata.

        Solver times are excluded from the comparison (they are measurements, not results).
        """
        if set(self._a) != set(other._a):
            return False
        skip = {"time"}
        for k, v in self._a.items():
            if k in skip:
                continue
            w = other._a[k]
            if v.dtype != w.dtype or v.shape != w.shape:
                return False
            if not np.array_equal(v, w, equal_nan=v.dtype.kind == "f"):
                return False
        strip = {"versions"}
        ma = {k: v for k, v in self.meta.items() if k not in strip}
        mb = {k: v for k, v in other.meta.items() if k not in strip}
        return ma == mb


# -- reading and checking a saved trace ---------------------------------------------------------

_REQUIRED = (*_PER_ITER, *_EVENTS, *_CHECKPOINTS, "support_ptr", "support_idx", "support_val",
             "Z_ptr", "Z_idx", "T_ptr", "T_idx", "b_val", "ck_x", "x_true")
_INTEGER = ("support_ptr", "support_idx", "Z_ptr", "Z_idx", "T_ptr", "T_idx", *_EVENTS,
            "ck_iter", "ck_step")
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip archive with members / an empty one

MAX_TRACE_BYTES = 2**30
"""Default cap (bytes, 1 GiB) on the memory the arrays of a loaded trace may take
(:meth:`Trace.load`); a trace of the paper's data sets with recorded iterates is far below."""

BYTES_PER_COORDINATE = 64
"""Bytes per coordinate a view of a trace allocates in dense vectors of length ``d`` (the
iterate, first-entry times, masks): :meth:`Trace.load` and the player refuse a ``d`` whose
views would exceed their memory cap."""

_MAX_META_BYTES = 2**24  # the JSON metadata: a few kB in practice
_MEMBERS = frozenset(_REQUIRED) | {"__meta__"}


def _check_max_bytes(max_bytes):
    if max_bytes is None:
        return MAX_TRACE_BYTES
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) \
            or max_bytes < 1:
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    return int(max_bytes)


def dimension_problem(d, max_bytes=None):
    """Why a trace of dimension ``d`` is too large to view within ``max_bytes`` (default
    :data:`MAX_TRACE_BYTES`), or None when it is not."""
    max_bytes = _check_max_bytes(max_bytes)
    top = max_bytes // BYTES_PER_COORDINATE
    if int(d) > top:
        return (f"its dimension d = {int(d):,} is more than this package views within "
                f"{max_bytes:,} bytes (d <= {top:,}: every view makes dense vectors of length "
                f"d); pass a larger max_bytes to load it anyway")
    return None


def _npy_header(zf, info):
    """``(shape, dtype, header_bytes)`` of the ``.npy`` member ``info`` (only its header is
    decompressed)."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:  # pragma: no cover - read_magic accepts only these today
            raise ValueError(f"unsupported .npy format version {version}")
        return shape, dtype, f.tell()


def _read_npz(path, max_bytes=MAX_TRACE_BYTES):
    """The arrays of a trace in the ``.npz`` archive ``path``: only the members a trace has,
    each checked against the archive's declared size and ``max_bytes`` before it is
    allocated (ValueError naming the file and the member otherwise)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise ValueError(f"{path!s} is not a readable rgrasp_viz trace: {exc}") from exc
    if head.startswith(_NPY_MAGIC):
        raise ValueError(f"{path!s} is a single NumPy array (.npy format), not an rgrasp_viz "
                         "trace (an .npz archive written by Trace.save)")
    if not head.startswith(_ZIP_MAGIC):
        raise ValueError(f"{path!s} is not an rgrasp_viz trace: not an .npz (zip) archive")
    try:
        with zipfile.ZipFile(path) as zf:
            members = {}
            for info in zf.infolist():
                key = info.filename[:-4] if info.filename.endswith(".npy") else None
                if key not in _MEMBERS:
                    continue  # never decompressed: a trace has no such array
                if key in members:
                    raise ValueError(f"array {key!r} is stored twice")
                members[key] = info
            declared = {}
            total = 0
            for key, info in members.items():
                shape, dtype, head = _npy_header(zf, info)
                if dtype.hasobject:
                    raise ValueError(f"array {key!r} holds Python objects (dtype {dtype})")
                nbytes = dtype.itemsize * math.prod(int(n) for n in shape)
                if info.file_size != head + nbytes:
                    raise ValueError(
                        f"array {key!r} declares shape {shape} of {dtype} ({nbytes:,} bytes) "
                        f"but the archive declares {max(info.file_size - head, 0):,} bytes of "
                        "data for it (a damaged or crafted file)")
                cap = _MAX_META_BYTES if key == "__meta__" else max_bytes
                total += nbytes
                if nbytes > cap or total > max_bytes + _MAX_META_BYTES:
                    raise ValueError(
                        f"its arrays declare more than {cap:,} bytes (array {key!r} alone: "
                        f"shape {shape} of {dtype}, {nbytes:,} bytes); pass a larger "
                        "max_bytes to load it anyway")
                declared[key] = (shape, dtype)
            arrays = {}
            for key, info in members.items():
                with zf.open(info) as f:
                    a = np.lib.format.read_array(f, allow_pickle=False)
                if (a.shape, a.dtype) != declared[key]:  # pragma: no cover - same header
                    raise ValueError(f"array {key!r} changed while it was read")
                arrays[key] = a
            return arrays
    except ValueError as exc:
        raise ValueError(f"{path!s} is not a readable rgrasp_viz trace: {exc}") from exc
    except (OSError, EOFError, KeyError, NotImplementedError, zipfile.BadZipFile,
            zlib.error) as exc:
        raise ValueError(f"{path!s} is not a readable rgrasp_viz trace: {exc}") from exc


def _parse_meta(path, raw):
    """The metadata dict stored as ``__meta__`` (ValueError naming the file and the problem)."""
    where = f"{path!s} has invalid trace metadata"
    if raw.ndim != 0 or raw.dtype.kind != "U":
        raise ValueError(f"{where}: expected a JSON string, got an array of dtype {raw.dtype} "
                         f"and shape {raw.shape}")
    try:
        meta = json.loads(str(raw))
    except ValueError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(meta).__name__}")
    method = meta.get("method")
    if not isinstance(method, str) or not method:
        raise ValueError(f"{where}: 'method' is missing or not a string (got {method!r})")
    d = meta.get("d")
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"{where}: 'd' (the dimension) is missing or not a positive integer "
                         f"(got {d!r})")
    return meta


def _inconsistency(a, d):
    """What makes the arrays of a loaded trace inconsistent (None when they are not)."""
    for k in _REQUIRED:
        v = a[k]
        if v.dtype.kind not in ("iu" if k in _INTEGER else "biuf"):
            kind = "integers" if k in _INTEGER else "numbers"
            return f"array {k!r} has dtype {v.dtype} ({kind} expected)"
        if v.ndim != (2 if k == "ck_x" else 1):
            return f"array {k!r} has shape {v.shape} ({2 if k == 'ck_x' else 1}-D expected)"
    rows = len(a["iteration"])
    if rows == 0:
        return "no rows (the per-iteration arrays are empty; row 0 is the starting point)"
    for k in _PER_ITER:
        if len(a[k]) != rows:
            return (f"per-iteration arrays differ in length: 'iteration' has {rows} rows, "
                    f"{k!r} has {len(a[k])}")
    for name in _RAGGED:
        ptr, idx = a[name + "_ptr"], a[name + "_idx"]
        if len(ptr) != rows + 1:
            return (f"'{name}_ptr' has {len(ptr)} offsets, expected {rows + 1} (one more than "
                    f"the {rows} rows)")
        if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != len(idx):
            return (f"'{name}_ptr' is not an offset array into '{name}_idx' (it must start at "
                    f"0, never decrease and end at len('{name}_idx') = {len(idx)})")
        if len(idx) and (idx.min() < 0 or idx.max() >= d):
            return (f"'{name}_idx' holds indices outside 0..{d - 1} (the trace's dimension d "
                    f"= {d}): {int(idx.min())}..{int(idx.max())}")
    for vals, idx in (("support_val", "support_idx"), ("b_val", "T_idx")):
        if len(a[vals]) != len(a[idx]):
            return f"{vals!r} has {len(a[vals])} values for {len(a[idx])} indices in {idx!r}"
    for group in (_EVENTS, _CHECKPOINTS):
        lengths = {k: len(a[k]) for k in group}
        if len(set(lengths.values())) > 1:
            return f"arrays {list(group)} differ in length: {lengths}"
    for k in ("ev_iter", "ck_iter"):
        v = a[k]
        if len(v) and (v.min() < 1 or v.max() > rows - 1):
            return (f"{k!r} holds iterations outside 1..{rows - 1}: "
                    f"{int(v.min())}..{int(v.max())}")
    if len(a["ev_kind"]) and not np.all(np.isin(a["ev_kind"], (0, 1))):
        return "'ev_kind' holds values other than 0 (inner) and 1 (outer)"
    ck_x, n_ck = a["ck_x"], len(a["ck_iter"])
    if ck_x.shape[1] != d or ck_x.shape[0] not in (0, n_ck):
        return f"'ck_x' has shape {ck_x.shape}, expected (0, {d}) or ({n_ck}, {d})"
    if len(a["x_true"]) not in (0, d):
        return f"'x_true' has length {len(a['x_true'])}, expected 0 (unknown) or d = {d}"
    return None


class TraceBuilder:
    """Accumulates a run's records; :meth:`finish` returns the :class:`Trace`.

    Used by the solver driver only; kept apart from the kernels so recording never runs
    inside the timed region.
    """

    def __init__(self, d, x_true, record_iterates, max_events):
        self.d = d
        self.x_true = x_true
        self.record_iterates = record_iterates
        self.max_events = max_events
        self.rows = {k: [] for k in _PER_ITER}
        self.ragged = {k: [] for k in _RAGGED}
        self.support_val = []
        self.b_val = []
        self.ev = {k: [] for k in _EVENTS}
        self.n_events = 0
        self.events_truncated = False
        self.ck = {k: [] for k in _CHECKPOINTS}
        self.ck_x = []
        self.prev_support = None

    def add_iteration(self, *, iteration, passes, time, objective, rel_error, x, n_thresholds,
                      inner_entered=0, inner_left=0, inner_steps=0, Z=None, T=None, b_T=None):
        """Append one outer iteration (``x`` dense)."""
        sup = np.flatnonzero(x)
        if self.prev_support is None:
            entered, left = len(sup), 0
        else:
            common = np.intersect1d(sup, self.prev_support, assume_unique=True).size
            entered, left = len(sup) - common, len(self.prev_support) - common
        self.prev_support = sup
        for k, v in (("iteration", iteration), ("passes", passes), ("time", time),
                     ("objective", objective), ("rel_error", rel_error),
                     ("support_size", len(sup)), ("n_thresholds", n_thresholds),
                     ("n_entered", entered), ("n_left", left),
                     ("inner_entered", inner_entered), ("inner_left", inner_left),
                     ("inner_steps", inner_steps)):
            self.rows[k].append(v)
        self.ragged["support"].append(sup)
        self.support_val.append(x[sup])
        empty = np.empty(0, dtype=np.int64)
        self.ragged["Z"].append(empty if Z is None else np.asarray(Z, dtype=np.int64))
        self.ragged["T"].append(empty if T is None else np.asarray(T, dtype=np.int64))
        self.b_val.append(np.empty(0) if b_T is None else np.asarray(b_T, dtype=np.float64))

    def add_events(self, iteration, steps, entered, left, kind):
        """Append thresholding events (arrays of equal length) up to ``max_events``."""
        k = len(steps)
        room = self.max_events - self.n_events
        if k > room:
            self.events_truncated = True
            k = max(room, 0)
        if k == 0:
            return
        self.ev["ev_iter"].append(np.full(k, iteration, dtype=np.int32))
        self.ev["ev_step"].append(np.asarray(steps[:k], dtype=np.int32))
        self.ev["ev_kind"].append(np.full(k, kind, dtype=np.int8))
        self.ev["ev_in"].append(np.asarray(entered[:k], dtype=np.int32))
        self.ev["ev_out"].append(np.asarray(left[:k], dtype=np.int32))
        self.n_events += k

    def add_checkpoints(self, iteration, steps, proxy, snaps=None, objective=None):
        """Append inner checkpoints; ``snaps`` (k x d) when iterates are recorded."""
        k = len(steps)
        if k == 0:
            return
        self.ck["ck_iter"].append(np.full(k, iteration, dtype=np.int32))
        self.ck["ck_step"].append(np.asarray(steps, dtype=np.int32))
        self.ck["ck_proxy"].append(np.asarray(proxy, dtype=np.float64))
        obj = np.full(k, np.nan) if objective is None else np.asarray(objective, np.float64)
        self.ck["ck_objective"].append(obj)
        if self.record_iterates and snaps is not None:
            self.ck_x.append(np.asarray(snaps, dtype=np.float64))

    def finish(self, meta):
        """Concatenate everything into a :class:`Trace`."""
        dtypes = {"iteration": np.int64, "support_size": np.int64, "n_thresholds": np.int64,
                  "n_entered": np.int64, "n_left": np.int64, "inner_entered": np.int64,
                  "inner_left": np.int64, "inner_steps": np.int64}
        arrays = {k: np.asarray(v, dtype=dtypes.get(k, np.float64)) for k, v in self.rows.items()}
        for name, parts in self.ragged.items():
            lens = np.array([len(p) for p in parts], dtype=np.int64)
            arrays[name + "_ptr"] = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
            arrays[name + "_idx"] = (np.concatenate(parts).astype(np.int64) if parts
                                     else np.empty(0, np.int64))
        arrays["support_val"] = np.concatenate(self.support_val)
        arrays["b_val"] = np.concatenate(self.b_val)
        ev_dtypes = {"ev_iter": np.int32, "ev_step": np.int32, "ev_kind": np.int8,
                     "ev_in": np.int32, "ev_out": np.int32}
        for k, parts in self.ev.items():
            arrays[k] = np.concatenate(parts) if parts else np.empty(0, ev_dtypes[k])
        ck_dtypes = {"ck_iter": np.int32, "ck_step": np.int32}
        for k, parts in self.ck.items():
            arrays[k] = np.concatenate(parts) if parts else np.empty(0, ck_dtypes.get(k, float))
        arrays["ck_x"] = (np.concatenate(self.ck_x, axis=0) if self.ck_x
                          else np.empty((0, self.d)))
        arrays["x_true"] = (np.empty(0) if self.x_true is None
                            else np.asarray(self.x_true, dtype=np.float64))
        meta = dict(meta)
        meta["events_truncated"] = bool(self.events_truncated)
        meta["d"] = int(self.d)
        return Trace(arrays, meta)
