"""What a run leaves behind: figures, traces, ``claims.md``, ``run.json`` and the summary.

Files (in ``--out``, default ``rgrasp-reproduce/EXPERIMENT[-quick]``): ``passes.html`` /
``time.html`` (log objective gap, and on synthetic data the estimation error, against
effective passes / solver seconds; ``.png`` twins when Chromium is found),
``traces/<method>.npz`` (:meth:`rgrasp_viz.Trace.save`), ``claims.md`` and ``run.json``
(settings, ``F*`` and its source, step sizes, budgets, versions).  Every file is written
atomically (:mod:`rgrasp_viz._io`) into the run's temporary folder
(:class:`~rgrasp_viz.reproduce._output.OutputFolder`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

from .._io import atomic_path, write_text
from ..solvers._registry import READINGS, get_method, run_label
from ._claims import (
    PASS_RULE,
    format_claims,
    format_target_table,
    target_table,
    targets_text,
    verdict_summary,
)
from ._experiments import Experiment, ProblemInfo, say
from ._tuning import TUNE_SEED_OFFSET, TUNE_SEEDS

__all__ = ["Report", "default_out", "print_summary", "trace_filename", "write_outputs"]


@dataclasses.dataclass
class Report:
    """What :func:`rgrasp_viz.reproduce.run` did.

    Attributes
    ----------
    experiment : Experiment
    quick : bool
    info : ProblemInfo
    traces : dict of str to Trace
    claims : list of dict
    out : pathlib.Path
    files : list of pathlib.Path
        The files written (their final place in ``out``).
    notes : list of str
    settings : dict
        Everything written to ``run.json``.
    reference : Reference
        ``F*`` and the error reference the claims were measured against.
    """

    experiment: Experiment
    quick: bool
    info: ProblemInfo
    traces: dict
    claims: list
    out: Path
    files: list
    notes: list
    settings: dict
    reference: object = None


def default_out(experiment, quick=False):
    """``rgrasp-reproduce/<experiment>[-quick]`` in the current directory."""
    return Path("rgrasp-reproduce") / (experiment + ("-quick" if quick else ""))


def trace_filename(method):
    """``traces/<method>.npz`` name of a method's trace (``+`` spelled ``plus``)."""
    return f"{method.replace('+', 'plus')}.npz"


def reading_text(inner):
    """One phrase naming the reading of Algorithm 2 that ran."""
    r = READINGS[inner]
    who = ("our variant: z on the merged support T, labelled (on T)" if r.ours else
           "the paper's Algorithm 2: z on all d coordinates")
    return f"inner = {inner} ({who})"


def _figures(traces, exp, info, reference, has_truth, quick, inner):
    from ..viz import figures as F

    order = list(traces.values())
    src = f"F* = {reference.fstar:.8g}, from {reference.source}"
    title = (f"{exp.figure} of the paper{' (quick)' if quick else ''} — {info.label}"
             f"<br><sup>{exp.loss} loss, s={info.s}, x0=0, J=2n, m=6, "
             f"{reading_text(inner)}</sup>")
    figs = {}
    for axis in ("passes", "time"):
        fig = F.convergence(order, x=axis, y="both" if has_truth else "gap",
                            fstar=(reference.fstar, src))
        fig.update_layout(title={"text": title}, height=480, margin={"t": 110})
        figs[axis] = fig
    return figs


def _export(fig, path, **kw):
    from ..viz import figures as F

    with atomic_path(path) as tmp:
        F.export(fig, tmp, **kw)
    return path


def _export_all(figs, stage, png):
    from ..viz import figures as F

    files, notes = [], []
    for name, fig in figs.items():
        files.append(_export(fig, stage / f"{name}.html"))
    if not png:
        notes.append("PNG export skipped (--no-png)")
        return files, notes
    if F.find_chromium() is None:
        notes.append("PNG export skipped: no Chromium/Chrome found (HTML figures written)")
        return files, notes
    for name, fig in figs.items():
        try:
            files.append(_export(fig, stage / f"{name}.png", width=1100, height=480))
        except RuntimeError as exc:
            notes.append(f"PNG export skipped: {exc}")
            break
    return files, notes


def write_outputs(stage, out, exp, quick, info, traces, claims, reference, method_rows,
                  settings, inner, png=True, progress=False):
    """Write every output file of a run into ``stage`` (the run's temporary folder).

    Returns
    -------
    files : list of pathlib.Path
        Where the files will be once ``stage`` is swapped into ``out``.
    notes : list of str
    """
    (stage / "traces").mkdir(exist_ok=True)
    written = []
    for m, tr in traces.items():
        p = stage / "traces" / trace_filename(m)
        with atomic_path(p) as tmp:
            tr.save(tmp)
        written.append(p)
    has_truth = settings["has_truth"]
    figs = _figures(traces, exp, info, reference, has_truth, quick, inner)
    fig_files, notes = _export_all(figs, stage, png)
    written += fig_files
    for n in notes:
        say(progress, "note: " + n)
    if info.note:
        notes.insert(0, info.note)
    md = claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes,
                         reference)
    write_text(stage / "claims.md", md)
    write_text(stage / "run.json", json.dumps(_clean(settings), indent=2, default=_jsonable))
    written += [stage / "claims.md", stage / "run.json"]
    return [out / p.relative_to(stage) for p in written], notes


def _clean(v):
    """Non-finite floats as strings ("inf", "nan"), so that ``run.json`` is standard JSON."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, (float, np.floating)) and not math.isfinite(v):
        return str(float(v))
    return v


def _jsonable(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return str(v)


def reference_text(reference):
    """Markdown lines describing ``F*``: its value, source and the candidates considered."""
    lines = [f"F* = {reference.fstar:.12g}, from {reference.source}."]
    if reference.candidates:
        lines += ["", "Candidates for F* (the lowest is used; each is at most the run it "
                      "comes from):", "", "| source | objective |", "|---|---|"]
        for c in sorted(reference.candidates, key=lambda c: c["objective"]):
            lines.append(f"| {c['source']} | {c['objective']:.12g} |")
    return lines


def claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes,
                    reference):
    """The text of ``claims.md``."""
    head = [f"# Claims check: {exp.name} ({exp.figure}){' — quick' if quick else ''}", ""]
    if info.stand_in:
        head += [f"> **SYNTHETIC STAND-IN, NOT THE REAL DATA.** {info.note}", ""]
    head += [f"Problem: {info.label}; {exp.loss} loss; s = {info.s}; seed {settings['seed']}; "
             f"{reading_text(settings['inner'])}; budget {settings['budget_passes']:g} "
             "effective passes per method.", "", targets_text(traces, reference), ""]
    head += [format_claims(claims, markdown=True), "", "Verdicts: " + verdict_summary(claims),
             "", "Counting work: " + PASS_RULE + " GraSP solves its sub-problem exactly and "
             "has no step size.", "", "## Targets reached", "",
             format_target_table(target_table(traces, settings["has_truth"], reference),
                                 markdown=True), "", "## F*", ""]
    head += reference_text(reference)
    head += ["", "## Runs", "",
             "| method | eta (factor) | iterations | passes | seconds | objective | "
             "rel. error | stopped |", "|---|---|---|---|---|---|---|---|"]
    for r in method_rows:
        step = (f"{r['eta']:.3g} (x{r['factor']:g})" if r["eta"] is not None
                else "none (no step size)")
        head.append(f"| {r['label']} | {step} | "
                    f"{r['iterations']} | {r['passes']:.1f} | {r['time']:.3f} | "
                    f"{r['objective']:.6e} | {r['rel_error']:.3e} | {r['status']} |")
    head += ["", "Step-size factors: " + "; ".join(
        f"{r['label']}: {r['factor_source']}" for r in method_rows if r["eta"] is not None)]
    if settings["tuning"]:
        head += ["", "## Step-size tuning (this run, seeds "
                 f"{settings['seed'] + TUNE_SEED_OFFSET} + 0..{TUNE_SEEDS - 1})", "",
                 "| method | factor | passes to target (worst seed) | best rel. gap (median) "
                 "| status |",
                 "|---|---|---|---|---|"]
        for r in settings["tuning"]:
            head.append(f"| {r['key']} | x{r['factor']:g} | {r['passes']:.3g} | "
                        f"{r['best_gap']:.2e} | {r['status']} |")
    if notes:
        head += ["", "Notes:", ""] + [f"* {n}" for n in notes]
    return "\n".join(head) + "\n"


def print_summary(report, stream=None):
    """Print the claims table, ``F*``'s source and where the files are."""
    stream = stream or sys.stdout
    exp = report.experiment
    inner = report.settings["inner"]
    print(f"\nClaims of the paper, {exp.name} ({exp.figure})"
          f"{' — quick' if report.quick else ''}: {report.info.label}; "
          f"{reading_text(inner)}", file=stream)
    if report.info.stand_in:
        print("*** SYNTHETIC STAND-IN, NOT THE REAL DATA ***", file=stream)
    print(targets_text(report.traces, report.reference), file=stream)
    print(format_claims(report.claims), file=stream)
    print("\nVerdicts: " + verdict_summary(report.claims), file=stream)
    print(f"Wrote {len(report.files)} files to {os.fspath(report.out)} "
          "(passes.html, time.html, traces/*.npz, claims.md, run.json).", file=stream)


def method_row(method, inner, factor, factor_source, res, budget_text):
    """One ``run.json`` / ``claims.md`` row of a budgeted run."""
    tr = res.trace
    has_step = get_method(method).has_step  # GraSP has none: no step size is shown
    return {"method": method, "label": run_label(method, inner),
            "factor": factor if has_step else None,
            "eta": tr.meta["eta"] if has_step else None,
            "factor_source": factor_source if has_step else "no step size",
            "iterations": tr.n_iter, "passes": res.passes, "time": res.time,
            "objective": res.fun, "rel_error": res.rel_error, "status": budget_text}
