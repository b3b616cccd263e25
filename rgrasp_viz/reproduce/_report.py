"""What a run leaves behind: figures, traces, ``claims.md``, ``run.json`` and the summary.

Files (in ``--out``, default ``rgrasp-reproduce/EXPERIMENT[-quick]``): ``passes.html`` /
``time.html`` (log objective gap, and on synthetic data the estimation error, against
effective passes / solver seconds, for the first evaluation seed; ``.png`` twins when
Chromium is found), ``steps.html`` (and ``.png``: passes to the speed target against the
step-size factor, when the steps were tuned), ``traces/<method>.npz`` (the first seed) and
``traces/<method>-seed<k>.npz`` (the other seeds; :meth:`rgrasp_viz.Trace.save`),
``claims.md`` and ``run.json`` (settings, the two kinds of target, ``F*`` and its source per
seed, step sizes and their sensitivity, budgets, the claims with ``per_seed`` verdicts and
``agreement``, versions).  Every file is written
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
from ..viz import figures as F
from ._claims import (
    PASS_RULE,
    format_claims,
    format_target_table,
    targets_text,
    verdict_summary,
)
from ._experiments import Experiment, ProblemInfo, say

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
    reference : rgrasp_viz.analysis.FStar
        ``F*`` and the error reference the first seed's claims were measured against.
    per_seed : list of dict
        Per evaluation seed: ``seed``, ``traces``, ``reference``, ``quality`` and ``claims``
        (that seed's verdicts; ``claims`` above are over seeds).
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
    per_seed: list = dataclasses.field(default_factory=list)


def default_out(experiment, quick=False):
    """``rgrasp-reproduce/<experiment>[-quick]`` in the current directory."""
    return Path("rgrasp-reproduce") / (experiment + ("-quick" if quick else ""))


def trace_filename(method, seed=None):
    """``traces/<method>.npz`` name of a method's trace (``+`` spelled ``plus``), or
    ``<method>-seed<k>.npz`` for another evaluation seed than the first."""
    stem = method.replace("+", "plus")
    return f"{stem}.npz" if seed is None else f"{stem}-seed{seed}.npz"


def reading_text(inner):
    """One phrase naming the reading of Algorithm 2 that ran."""
    r = READINGS[inner]
    who = ("our variant: z on the merged support T, labelled (on T)" if r.ours else
           "the paper's Algorithm 2: z on all d coordinates")
    return f"inner = {inner} ({who})"


def _figures(traces, exp, info, reference, has_truth, quick, inner, seed=None):
    order = list(traces.values())
    src = f"F* = {reference.value:.8g}, from {reference.where}"
    title = (f"{exp.figure} of the paper{' (quick)' if quick else ''} — {info.label}"
             f"<br><sup>{exp.loss} loss, s={info.s}, x0=0, J=2n, m=6, "
             f"{reading_text(inner)}</sup>")
    figs = {}
    if seed is not None:
        title = title.replace("</sup>", f"; seed {seed} (the first evaluation seed)</sup>")
    for axis in ("passes", "time"):
        fig = F.convergence(order, x=axis, y="both" if has_truth else "gap",
                            fstar=(reference.value, src))
        fig.update_layout(title={"text": title}, height=480, margin={"t": 110})
        figs[axis] = fig
    return figs


def _export(fig, path, **kw):
    with atomic_path(path) as tmp:
        F.export(fig, tmp, **kw)
    return path


def _export_all(figs, stage, png):
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
                  settings, inner, png=True, progress=False, seed_traces=None):
    """Write every output file of a run into ``stage`` (the run's temporary folder).

    ``seed_traces`` (seed -> traces) adds the other seeds' traces; ``traces`` are the first
    seed's (drawn in the figures).

    Returns
    -------
    files : list of pathlib.Path
        Where the files will be once ``stage`` is swapped into ``out``.
    notes : list of str
    """
    (stage / "traces").mkdir(exist_ok=True)
    written = []
    first = settings.get("figures_seed")
    saved = [(None, traces)] + [(k, t) for k, t in (seed_traces or {}).items() if k != first]
    for seed, runs in saved:
        for m, tr in runs.items():
            p = stage / "traces" / trace_filename(m, seed)
            with atomic_path(p) as tmp:
                tr.save(tmp)
            written.append(p)
    has_truth = settings["has_truth"]
    figs = _figures(traces, exp, info, reference, has_truth, quick, inner, first)
    if settings.get("step_sensitivity"):
        figs["steps"] = F.step_sensitivity(settings["step_sensitivity"])
    fig_files, notes = _export_all(figs, stage, png)
    written += fig_files
    for n in notes:
        say(progress, "note: " + n)
    if info.note:
        notes.insert(0, info.note)
    md = claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes,
                         reference, fig_files)
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
    lines = [f"F* = {reference.value:.12g}, from {reference.where}."]
    if reference.candidates:
        lines += ["", "Candidates for F* (the lowest is used; each is at most the run it "
                      "comes from):", "", "| source | objective |", "|---|---|"]
        for c in sorted(reference.candidates, key=lambda c: c["objective"]):
            lines.append(f"| {c['source']} | {c['objective']:.12g} |")
    return lines


def step_table(sensitivity):
    """``step_sensitivity`` as a Markdown table: passes to the speed target per factor."""
    grid = sensitivity["grid"]
    lines = ["| method | " + " | ".join(f"x{f:.3g}" for f in grid) + " | chosen |",
             "|---|" + "---|" * (len(grid) + 1)]
    for m in sensitivity["methods"].values():
        cells = []
        for f in grid:
            if f not in m["factors"]:
                cells.append("-")
                continue
            i = m["factors"].index(f)
            p = m["passes"][i]
            cell = ("diverged" if m["diverged"][i] else "never") if p is None else f"{p:.3g}"
            cells.append(f"**{cell}**" if f == m["chosen"] else cell)
        lines.append(f"| {m['label']} | " + " | ".join(cells) + f" | x{m['chosen']:.3g} |")
    return "\n".join(lines)


def claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes,
                    reference, files=()):
    """The text of ``claims.md``."""
    names = {os.path.basename(os.fspath(f)) for f in files}
    seeds = settings.get("seeds", [settings.get("seed")])
    head = [f"# Claims check: {exp.name} ({exp.figure}){' — quick' if quick else ''}", ""]
    if info.stand_in:
        head += [f"> **SYNTHETIC STAND-IN, NOT THE REAL DATA.** {info.note}", ""]
    head += [f"Problem: {info.label}; {exp.loss} loss; s = {info.s}; evaluation seeds "
             f"{', '.join(str(k) for k in seeds)} (each redraws the data and every index "
             f"sequence); {reading_text(settings['inner'])}; budget "
             f"{settings['budget_passes']:g} effective passes per method.", "",
             f"Seed {seeds[0]}: " + targets_text(traces, reference), ""]
    quality = settings.get("targets", {}).get("quality", {})
    split = quality.get("split")
    if split:
        head += [f"**Held-out split (ours, not the paper's: the paper reports the training "
                 f"objective only).** Per evaluation seed the rows are split once, drawn from "
                 f"the seed and the same for every method: {split['n_train']:,} training rows, "
                 f"{split['n_heldout']:,} held out ({100 * split['heldout_fraction']:g} %). "
                 "The methods, F*, the passes, the speed targets and the step tuning use the "
                 "training rows only; the quality claims (V2, V3) compare the held-out loss of "
                 f"each method's final iterate (the mean {exp.loss} loss on the held-out "
                 "rows), with a tie tolerance of "
                 f"{100 * quality['tie_tolerance']:g} %.", ""]
    head += [format_claims(claims, markdown=True), "", "Verdicts over seeds: "
             + verdict_summary(claims), "", "Counting work: " + PASS_RULE + " GraSP solves its "
             "sub-problem exactly and has no step size."]
    sens = settings.get("step_sensitivity")
    head += ["", "## Step sensitivity", ""]
    if sens:
        if "steps.png" in names:
            head += ["![Passes to the speed target against the step-size factor, one line "
                     "per method](steps.png)", ""]
        head += ["Passes to the speed target at each multiplier of default_eta (the worst of "
                 f"tuning seeds {', '.join(str(k) for k in sens['tuning_seeds'])}; chosen in "
                 "bold; interactive figure: [steps.html](steps.html)). Selection: "
                 + sens["selection"] + ".", "", step_table(sens)]
    else:
        head += ["Not tuned in this run: the recorded factors were used (see the runs' "
                 "step-size sources below)."]
    for block in settings.get("targets_reached", []):
        head += ["", f"## Targets reached, seed {block['seed']}", "",
                 format_target_table(block["rows"], markdown=True)]
    head += ["", "## F*", ""]
    for r in settings.get("runs_per_seed", []):
        head.append(f"* seed {r['seed']}: F* = {r['fstar']:.12g}, from {r['fstar_source']}")
    head += ["", f"Seed {seeds[0]} in detail:", ""] + reference_text(reference)
    head += ["", f"## Runs, seed {seeds[0]}", "",
             "| method | eta (factor) | iterations | passes | seconds | objective | "
             "rel. error | stopped |", "|---|---|---|---|---|---|---|---|"]
    for r in method_rows:
        step = (f"{r['eta']:.3g} (x{r['factor']:.3g})" if r["eta"] is not None
                else "none (no step size)")
        head.append(f"| {r['label']} | {step} | "
                    f"{r['iterations']} | {r['passes']:.1f} | {r['time']:.3f} | "
                    f"{r['objective']:.6e} | {r['rel_error']:.3e} | {r['status']} |")
    head += ["", "Step-size factors: " + "; ".join(
        f"{r['label']}: {r['factor_source']}" for r in method_rows if r["eta"] is not None)]
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
    seeds = report.settings.get("seeds", [report.settings.get("seed")])
    print(f"\nVerdicts over seeds {', '.join(str(k) for k in seeds)}: "
          + verdict_summary(report.claims), file=stream)
    print(f"Wrote {len(report.files)} files to {os.fspath(report.out)} "
          "(passes.html, time.html, steps.html, traces/*.npz, claims.md, run.json).",
          file=stream)


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
