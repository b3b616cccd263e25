"""Compact, committed results of ``reproduce`` runs, for the course (notebook 5 and the site).

A full-size run of Figure 1 takes minutes; the course draws it from a precomputed copy written
by ``scripts/precompute_fig1.py``: per experiment, ``<name>.npz`` (per method: the outer
iterations' passes, solver time, objective, relative error, support size and count of hard
thresholdings, plus the supports of at most :data:`MAX_SUPPORTS` iterations, always the first
and the last) and ``<name>.json`` (settings, ``F*`` with its source, the method rows, the
claims with their verdicts, the pass-counting rule).  ``np.savez_compressed`` without pickle;
both written atomically.

:func:`load` gives the runs back as :class:`~rgrasp_viz._trace.Trace` objects that the figure
builders read (``meta["compact"]`` is True: events, checkpoints, ``Z`` and ``T`` are not kept,
and the supports of iterations between the kept ones are empty), the claims, and ``F*`` as
an :class:`~rgrasp_viz.analysis.FStar`, so a gap curve is measured against the same ``F*``
the verdicts were.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from .._io import atomic_path
from .._trace import Trace
from ..analysis import FStar
from ._claims import PASS_RULE

__all__ = ["MAX_SUPPORTS", "PASS_RULE", "Precomputed", "compact_arrays", "load", "save"]

MAX_SUPPORTS = 40
"""Supports kept per run (evenly spread over its iterations, the first and last always)."""


_FLOATS = ("passes", "time", "objective", "rel_error")
_INTS = ("support_size", "n_thresholds")
_META = ("method", "loss", "s", "eta", "eta_rule", "J", "m", "inner", "batch_size",
         "random_state", "status", "message", "n", "d", "steps_per_iter")


@dataclasses.dataclass
class Precomputed:
    """One precomputed experiment (see :func:`load`).

    Attributes
    ----------
    name : str
        The experiment (``"fig1-setting1"``, with ``"-quick"`` for a classroom-size run).
    traces : dict of str to Trace
        One compact run per method, in the paper's order.
    claims : list of dict
        The claims and their verdicts, as ``reproduce`` wrote them.
    fstar : FStar
        ``F*`` of the verdicts, with its source.
    settings : dict
        Problem, budget, seed, reading, methods' step sizes, wall time of the run.
    pass_rule : str
        How passes were counted (:data:`~rgrasp_viz.reproduce._claims.PASS_RULE` when the
        run was made).
    """

    name: str
    traces: dict
    claims: list
    fstar: FStar
    settings: dict
    pass_rule: str = PASS_RULE


def compact_arrays(trace, max_supports=MAX_SUPPORTS):
    """The arrays kept of one run (dict of str to ndarray; see the module docstring).

    Parameters
    ----------
    trace : Trace
    max_supports : int
        Supports kept (at least 2: the first and the last iteration).
    """
    if int(max_supports) < 2:
        raise ValueError(f"max_supports must be at least 2, got {max_supports!r}")
    n = len(trace)
    out = {k: np.asarray(getattr(trace, k), dtype=np.float64) for k in _FLOATS}
    out.update({k: np.asarray(getattr(trace, k), dtype=np.int64) for k in _INTS})
    rows = np.unique(np.linspace(0, n - 1, min(n, int(max_supports))).round().astype(np.int64))
    sup = [np.asarray(trace.support(int(t)), dtype=np.int64) for t in rows]
    val = [np.asarray(trace.support_val[trace.support_ptr[t]:trace.support_ptr[t + 1]],
                      dtype=np.float64) for t in rows]
    out["support_rows"] = rows
    out["support_ptr"] = np.concatenate([[0], np.cumsum([len(s) for s in sup])]).astype(
        np.int64)
    out["support_idx"] = (np.concatenate(sup) if sup else np.zeros(0)).astype(np.int64)
    out["support_val"] = (np.concatenate(val) if val else np.zeros(0)).astype(np.float64)
    return out


def _trace(arrays, meta, x_true):
    """A :class:`Trace` the figure builders read, from :func:`compact_arrays`'s output."""
    n = len(arrays["passes"])
    rows = arrays["support_rows"]
    sptr = arrays["support_ptr"]
    counts = np.zeros(n, dtype=np.int64)
    counts[rows] = np.diff(sptr)
    zeros = np.zeros(n, dtype=np.int64)
    full = {
        "iteration": np.arange(n, dtype=np.int64),
        **{k: np.asarray(arrays[k], dtype=np.float64) for k in _FLOATS},
        **{k: np.asarray(arrays[k], dtype=np.int64) for k in _INTS},
        "n_entered": zeros, "n_left": zeros, "inner_entered": zeros, "inner_left": zeros,
        "inner_steps": zeros,
        "support_ptr": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        "support_idx": np.asarray(arrays["support_idx"], dtype=np.int64),
        "support_val": np.asarray(arrays["support_val"], dtype=np.float64),
        "Z_ptr": np.zeros(n + 1, dtype=np.int64), "Z_idx": np.zeros(0, dtype=np.int64),
        "T_ptr": np.zeros(n + 1, dtype=np.int64), "T_idx": np.zeros(0, dtype=np.int64),
        "b_val": np.zeros(0),
        "ev_iter": np.zeros(0, dtype=np.int64), "ev_step": np.zeros(0, dtype=np.int64),
        "ev_kind": np.zeros(0, dtype=np.int64), "ev_in": np.zeros(0, dtype=np.int64),
        "ev_out": np.zeros(0, dtype=np.int64),
        "ck_iter": np.zeros(0, dtype=np.int64), "ck_step": np.zeros(0, dtype=np.int64),
        "ck_proxy": np.zeros(0), "ck_objective": np.zeros(0),
        "ck_x": np.zeros((0, int(meta.get("d", 0) or 0))),
        "x_true": np.asarray(x_true, dtype=np.float64),
    }
    return Trace(full, {**meta, "compact": True, "support_rows": rows.tolist()})


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return str(v)


def save(report, folder, name=None, max_supports=MAX_SUPPORTS):
    """Write ``<name>.npz`` and ``<name>.json`` of a :func:`rgrasp_viz.reproduce.run` report.

    Parameters
    ----------
    report : Report
    folder : path-like
        Must exist.
    name : str, optional
        Default: the experiment's name, with ``"-quick"`` for a classroom-size run.
    max_supports : int

    Returns
    -------
    (pathlib.Path, pathlib.Path)
        The two files.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a folder: create it first")
    name = name or report.experiment.name + ("-quick" if report.quick else "")
    arrays, methods = {}, []
    x_true = None
    for m, tr in report.traces.items():
        for k, v in compact_arrays(tr, max_supports).items():
            arrays[f"{m}.{k}"] = v
        methods.append(m)
        if x_true is None:
            x_true = np.asarray(tr.x_true, dtype=np.float64)
    arrays["x_true"] = x_true if x_true is not None else np.zeros(0)
    ref = report.reference
    doc = {
        "name": name, "methods": methods,
        "meta": {m: {k: tr.meta.get(k) for k in _META if k in tr.meta}
                 for m, tr in report.traces.items()},
        "fstar": {"value": ref.fstar, "source": ref.source},
        "claims": report.claims, "pass_rule": PASS_RULE,
        "settings": {k: v for k, v in report.settings.items()
                     if k not in ("reference", "versions")},
        "max_supports": int(max_supports),
    }
    npz = folder / f"{name}.npz"
    js = folder / f"{name}.json"
    with atomic_path(npz) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    with atomic_path(js) as tmp:
        Path(tmp).write_text(json.dumps(_jsonable(doc), indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return npz, js


def load(path):
    """Read a precomputed experiment written by :func:`save`.

    Parameters
    ----------
    path : path-like
        ``<name>.npz`` or ``<name>.json`` (or the common stem); both files must exist.

    Returns
    -------
    Precomputed

    Raises
    ------
    FileNotFoundError
        When either file is missing (the message says how to write them).
    ValueError
        When the files do not belong together.
    """
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (".npz", ".json") else p
    npz, js = stem.with_suffix(".npz"), stem.with_suffix(".json")
    for f in (npz, js):
        if not f.is_file():
            raise FileNotFoundError(
                f"{f} not found: write it with `python scripts/precompute_fig1.py` "
                "(see its --help)")
    doc = json.loads(js.read_text(encoding="utf-8"))
    with np.load(npz, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    traces = {}
    for m in doc["methods"]:
        arrays = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith(m + ".")}
        missing = {*_FLOATS, *_INTS, "support_rows", "support_ptr", "support_idx",
                   "support_val"} - set(arrays)
        if missing:
            raise ValueError(f"{npz.name} lacks {sorted(missing)} of {m}: {js.name} and "
                             f"{npz.name} do not belong together")
        traces[m] = _trace(arrays, doc["meta"].get(m, {"method": m}), data["x_true"])
    fs = doc["fstar"]
    fstar = FStar(float(fs["value"]), f"F* = {fs['source']}", "reference")
    return Precomputed(doc["name"], traces, doc["claims"], fstar, doc["settings"],
                       doc.get("pass_rule", PASS_RULE))
