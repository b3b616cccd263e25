"""The ``reproduce`` command: :func:`run` from Python, and its command-line arguments.

Every argument is checked before any work (:func:`check_run_args`, and the argument types
of :func:`add_parser`): a bad value is one clear line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import math
import numbers
import os
import sys
import time

from .._progress import bar as progress_bar
from ..analysis import best_objective
from ..solvers.registry import normalize_reading, run_label
from .claims import (
    FSTAR_GUARD,
    GAP_LEVELS,
    PASS_RULE,
    TARGET_ERR_FACTOR,
    TARGET_LEVEL,
    evaluate_claims,
    target_table,
    verdict_counts,
)
from .condition_map import NAME as MAP_NAME
from .condition_map import check_map_args, run_condition_map
from .experiments import (
    EXPERIMENTS,
    METHODS,
    PASS_BUDGET,
    RUN_TOL,
    DataFileError,
    build_problem,
    get_experiment,
    reference,
    run_method,
    status_text,
    warm_up,
)
from .output import OutputError, OutputFolder, OutputWriteError, check_out
from .report import Report, default_out, method_row, print_summary, reading_text, write_outputs
from .tuning import TUNE_SEED_OFFSET, TUNE_SEEDS, factor_key, tune, tuned_factor

__all__ = ["MAX_BUDGET", "add_parser", "budget_arg", "check_run_args", "main", "reading_arg",
           "run", "seed_arg"]

MAX_BUDGET = 1e5
"""Largest pass budget accepted: the paper's runs use 40-60 passes, and the reference run gets
ten times the budget, so a larger value would be an effectively unbounded run (hours to
years), not a longer experiment."""


def _budget(value):
    """A pass budget: a positive finite number of at most :data:`MAX_BUDGET`."""
    try:
        b = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"budget must be a number of effective passes, got {value!r}") \
            from None
    if not (math.isfinite(b) and 0 < b <= MAX_BUDGET):
        raise ValueError(f"budget must be a positive finite number of effective passes of "
                         f"at most {MAX_BUDGET:g}, got {value!r}")
    return b


def _seed(value):
    """A seed: a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"seed must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"seed must be a non-negative integer, got {value!r}")
    return int(value)


def check_run_args(experiment, out=None, seed=0, inner="paper", budget=None, data_dir=None,
                   quick=False):
    """Check :func:`run`'s arguments; return them normalised.

    Returns
    -------
    dict
        ``experiment`` (Experiment), ``out`` (absolute Path), ``seed``, ``inner`` (reading
        key), ``budget`` (float).

    Raises
    ------
    ValueError
        For a bad experiment, seed, reading or budget.
    OutputError
        For an output folder that cannot be used (:func:`~.output.check_out`).
    """
    exp = get_experiment(experiment)
    seed = _seed(seed)
    inner = normalize_reading(inner)
    budget = PASS_BUDGET[exp.name] if budget is None else _budget(budget)
    if data_dir is not None and os.path.exists(data_dir) and not os.path.isdir(data_dir):
        raise ValueError(f"data_dir {os.fspath(data_dir)} is a file, not a folder")
    out = check_out(default_out(exp.name, quick) if out is None else out)
    return {"experiment": exp, "out": out, "seed": seed, "inner": inner, "budget": budget}


def run(experiment, *, quick=False, out=None, data_dir=None, seed=0, inner="paper",
        tune_steps=False, png=True, download=True, budget=None, progress=True):
    """Run one experiment, write its outputs and check the paper's claims.

    Parameters
    ----------
    experiment : str
        One of :data:`~.experiments.EXPERIMENTS`.
    quick : bool
        Classroom-size version (:func:`~.experiments.build_problem`).
    out : path-like, optional
        Output folder; default :func:`~.report.default_out`.  Written all at once
        (:class:`~.output.OutputFolder`): it holds the previous complete run until this one
        is complete.
    data_dir : path-like, optional
        Real data cache directory (:func:`rgrasp_viz.datasets.get_data_dir`).
    seed : int
        Data and index-sequence seed (``>= 0``).
    inner : {"paper", "on_T"}
        Reading of Algorithm 2 for SVRGSP(+): ``"paper"`` (the paper's: ``z`` on all ``d``
        coordinates) or ``"on_T"`` (our variant, labelled "(on T)" everywhere).
    tune_steps : bool
        Tune the step sizes now (:func:`~.tuning.tune`) instead of using the recorded ones.
    png : bool
        Also write PNGs (needs Chromium; skipped with a note otherwise).
    download : bool
        Allow downloading a real data set (full runs only).
    budget : float, optional
        Effective passes per method, in ``(0, MAX_BUDGET]`` (default
        :data:`~.experiments.PASS_BUDGET`).
    progress : bool
        A ``tqdm.auto`` progress bar over the methods (a widget in Jupyter, a bar on stderr
        in a terminal, nothing when stderr is not a terminal) and the data notes (one line
        each on stderr); False: neither (:mod:`rgrasp_viz._progress`).

    Returns
    -------
    Report

    Raises
    ------
    ValueError, OutputError
        For bad arguments or an unusable ``out``, before any work.
    """
    args = check_run_args(experiment, out, seed, inner, budget, data_dir, quick)
    exp, out, seed = args["experiment"], args["out"], args["seed"]
    inner, budget = args["inner"], args["budget"]
    t_start = time.perf_counter()
    steps = len(METHODS) + 2 + (1 if tune_steps else 0)  # (tuning,) methods, F*, files
    name = f"{exp.name}{' --quick' if quick else ''}"
    with OutputFolder(out) as folder, progress_bar(steps, name, progress, "step") as bar:
        bar.set_postfix_str("building data", refresh=True)
        prob, info = build_problem(exp, quick, seed, data_dir, download, progress)
        factors, tune_rows = _factors(exp, quick, seed, data_dir, inner, budget, tune_steps,
                                      download, progress, bar)
        warm_up(prob, inner)
        traces, method_rows = {}, []
        for m in METHODS:
            f, source = factors[m]
            bar.set_postfix_str(run_label(m, inner), refresh=True)
            res = run_method(prob, m, info.s, f, seed, budget, inner)
            traces[m] = res.trace
            method_rows.append(method_row(m, inner, f, source, res, status_text(res, budget)))
            bar.update()
        bar.set_postfix_str("F* (reference run)", refresh=True)
        ref = reference(prob, traces, s=info.s, run=True, budget=budget, seed=seed,
                        inner=inner, factors={m: v[0] for m, v in factors.items()},
                        progress=False)
        bar.update()
        has_truth = prob.x_true is not None
        claims = evaluate_claims(traces, has_truth, ref)
        best_run = min(best_objective(t)[0] for t in traces.values())
        settings = {
            "experiment": exp.name, "figure": exp.figure, "quick": quick,
            "problem": info.label, "stand_in": info.stand_in, "n": prob.n, "d": prob.d,
            "loss": exp.loss, "s": info.s, "seed": seed, "inner": inner,
            "inner_is": reading_text(inner),
            "budget_passes": budget, "J": "2n", "m": 6, "x0": 0, "tol": RUN_TOL,
            "targets": {"relative_gap": "(F - F*) / F* (denominator FSTAR_GUARD (F(x0) - F*) "
                                        "when F* is below it)",
                        "fstar_guard": FSTAR_GUARD, "relative_gap_levels": list(GAP_LEVELS),
                        "claims_level": TARGET_LEVEL,
                        "error": "||x - x*|| / ||x*|| <= target_err_factor x oracle error",
                        "target_err_factor": TARGET_ERR_FACTOR, "pass_rule": PASS_RULE},
            "fstar": ref.fstar, "fstar_source": ref.source,
            "fstar_below_every_run_by": best_run - ref.fstar,
            "reference": ref.to_dict(), "has_truth": has_truth,
            "methods": method_rows, "tuning": tune_rows,
            "claims": claims, "verdict_counts": verdict_counts(claims),
            "targets_reached": target_table(traces, has_truth, ref),
            "versions": traces[METHODS[0]].meta.get("versions"),
        }
        settings["wall_seconds"] = time.perf_counter() - t_start
        bar.set_postfix_str("writing the files", refresh=True)
        try:
            files, notes = write_outputs(folder.stage, out, exp, quick, info, traces, claims,
                                         ref, method_rows, settings, inner, png, progress)
            folder.commit()
        except OSError as exc:
            raise OutputWriteError(f"could not write the outputs in {out.parent} "
                                   f"({exc.strerror or exc}); {out} was left as it "
                                   "was") from exc
        bar.update()
    return Report(exp, quick, info, traces, claims, out, files, notes, settings, ref)


def _factors(exp, quick, seed, data_dir, inner, budget, tune_steps, download, progress, bar):
    """Step-size factor and its source per method; tuning rows when tuned now."""
    if not tune_steps:
        return {m: tuned_factor(exp.name, quick, m, inner) for m in METHODS}, []
    first = seed + TUNE_SEED_OFFSET
    bar.set_postfix_str("tuning the step sizes", refresh=True)
    picked, rows = tune(exp, quick, seed, data_dir, (inner,), budget=budget,
                        download=download, progress=progress)
    bar.update()
    where = f"tuned now on seeds {first}..{first + TUNE_SEEDS - 1}"
    factors = {m: (picked[factor_key(m, inner)], where) for m in METHODS}
    return factors, rows


# -- command line -----------------------------------------------------------------------------


def _arg(check):
    """An argparse type from a checking function (its ValueError becomes the message)."""

    def convert(text):
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = check.__name__.strip("_")
    return convert


def _seed_text(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"must be a non-negative integer, got {text!r}")
    return value


def _budget_text(text):
    try:
        return _budget(text)
    except ValueError:
        raise ValueError(f"must be a positive finite number of effective passes of at most "
                         f"{MAX_BUDGET:g}, got {text!r}") from None


def _reading_text(text):
    try:
        return normalize_reading(text)
    except ValueError:
        raise ValueError(f"must be 'paper' (the paper's Algorithm 2, z on all d coordinates) "
                         f"or 'on_T' (our variant, z on T), got {text!r}") from None


seed_arg = _arg(_seed_text)
"""argparse type of a seed (a non-negative integer)."""

budget_arg = _arg(_budget_text)
"""argparse type of a pass budget (a positive finite number, at most :data:`MAX_BUDGET`)."""

reading_arg = _arg(_reading_text)
"""argparse type of a reading of Algorithm 2 (``paper``, ``on_T``; old names accepted)."""


def add_parser(subparsers):
    """Add the ``reproduce`` sub-command to an argparse ``subparsers`` object."""
    rep = subparsers.add_parser(
        "reproduce", help="re-run an experiment of the paper and check its claims",
        description="Run all six methods with the paper's settings on one experiment of "
                    "Section 5; write interactive figures (log objective gap and, on "
                    "synthetic data, estimation error vs effective passes and vs time), "
                    "PNGs when Chromium is available, the traces (.npz), claims.md and "
                    "run.json; print the claims table.  The output folder is replaced "
                    "only once the new run is complete.")
    rep.add_argument("experiment", choices=[*EXPERIMENTS, MAP_NAME],
                     help="fig1-setting1/2: synthetic linear regression (Figure 1); "
                          "fig2-rcv1/realsim: logistic regression on real data (Figure 2); "
                          "fig3-rcv1: linear regression on rcv1 (Figure 3); condition-map "
                          "(ours, beyond the paper): passes to the target of every method "
                          "with tuned steps over correlation rho and two shapes, the winner "
                          "and the smoothness constants (map.html, claims.md, run.json)")
    rep.add_argument("--quick", action="store_true",
                     help="classroom size, seconds: synthetic n=500, d=1000, s*=50; real "
                          "data: a tenth of the rows and columns of the file (s=20) if it is "
                          "in the data directory, else a clearly labelled synthetic stand-in "
                          "of that shape with as many nonzeros per row (never downloads)")
    rep.add_argument("--out", default=None,
                     help="output folder (default rgrasp-reproduce/EXPERIMENT[-quick]); an "
                          "existing one must hold only a previous run's files")
    rep.add_argument("--data-dir", default=None,
                     help="cache directory of the real data sets (default $RGRASP_VIZ_DATA "
                          "or the user cache directory)")
    rep.add_argument("--seed", type=seed_arg, default=0,
                     help="seed of the synthetic data and of every index sequence (>= 0)")
    rep.add_argument("--inner", type=reading_arg, default="paper",
                     metavar="{paper,on_T}",
                     help="reading of Algorithm 2 for SVRGSP(+): 'paper' (default: z on all "
                          "d coordinates, as the paper writes it) or 'on_T' (our variant: z "
                          "on the merged support T; labelled '(on T)' everywhere)")
    rep.add_argument("--budget", type=budget_arg, default=None,
                     help=f"effective passes per method, > 0 and <= {MAX_BUDGET:g} (default: "
                          + ", ".join(f"{k} {v:g}" for k, v in PASS_BUDGET.items()) + ")")
    rep.add_argument("--tune", action="store_true",
                     help="tune the step sizes now on two separately seeded problems (grid of "
                          "multipliers of default_eta) instead of using the recorded factors")
    rep.add_argument("--no-png", action="store_true", help="write HTML figures only")
    rep.add_argument("--jobs", type=_arg(_jobs_text), default=1,
                     help="worker processes for the independent runs (default 1)")
    rep.add_argument("--seeds", type=_arg(_seeds_text), default=None,
                     help="condition-map: comma-separated seeds, e.g. 0,1,2 (the default)")
    rep.add_argument("--no-download", action="store_true",
                     help="never download a real data set (fail with instructions)")
    rep.set_defaults(check=_check_parsed, handler=main)
    return rep


def _jobs_text(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"must be a positive integer, got {text!r}")
    return value


def _seeds_text(text):
    try:
        seeds = tuple(int(t) for t in text.split(","))
    except ValueError:
        seeds = ()
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"must be distinct non-negative integers separated by commas, got "
                         f"{text!r}")
    return seeds


def _check_parsed(args, parser):
    """Checks that need several arguments (the output folder); errors exit with code 2."""
    if args.experiment == MAP_NAME:
        try:
            check_map_args(args.seeds, args.jobs, args.budget)
            check_out(default_out(MAP_NAME, args.quick) if args.out is None else args.out)
        except (ValueError, OutputError) as exc:
            parser.error(str(exc))
        return
    if args.seeds is not None or args.jobs != 1:
        parser.error("--seeds and --jobs apply to condition-map only")
    try:
        check_run_args(args.experiment, args.out, args.seed, args.inner, args.budget,
                       args.data_dir, args.quick)
    except (ValueError, OutputError) as exc:
        parser.error(str(exc))


def _interrupted(exc):
    """Whether ``exc`` is, or was raised while handling, a KeyboardInterrupt (Ctrl-C inside
    e.g. ``np.savez_compressed`` surfaces as zipfile's "Can't close the ZIP file" ValueError
    raised from its cleanup)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def main(args, prog="rgrasp-viz reproduce"):
    """Run the parsed ``reproduce`` command; return the exit code."""
    from .. import datasets

    if args.experiment == MAP_NAME:
        return _main_map(args, prog)
    try:
        report = run(args.experiment, quick=args.quick, out=args.out, data_dir=args.data_dir,
                     seed=args.seed, inner=args.inner, tune_steps=args.tune,
                     png=not args.no_png, download=not args.no_download, budget=args.budget)
    except BaseException as exc:  # noqa: BLE001 - sorted out below, the rest re-raised
        if _interrupted(exc):
            out = args.out or default_out(args.experiment, args.quick)
            print(f"\n{prog}: interrupted; nothing partial was written ({os.fspath(out)} "
                  "holds the last complete run, if any)", file=sys.stderr)
            return 130
        if isinstance(exc, OutputError):  # e.g. another run holds the folder
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
        if isinstance(exc, (datasets.DatasetUnavailableError, datasets.ChecksumError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if isinstance(exc, DataFileError):  # a damaged file: one line, no traceback
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 1
        if isinstance(exc, OutputWriteError):
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 1
        raise
    print_summary(report)
    return 0


def _main_map(args, prog):
    """``reproduce condition-map``: run it, print the paragraph and where the files are."""
    try:
        data = run_condition_map(quick=args.quick, out=args.out, seeds=args.seeds,
                                 jobs=args.jobs, budget=args.budget, png=not args.no_png)
    except BaseException as exc:  # noqa: BLE001 - sorted out below, the rest re-raised
        if _interrupted(exc):
            out = args.out or default_out(MAP_NAME, args.quick)
            print(f"\n{prog}: interrupted; nothing partial was written ({os.fspath(out)} "
                  "holds the last complete run, if any)", file=sys.stderr)
            return 130
        if isinstance(exc, (OutputError, OutputWriteError)):
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2 if isinstance(exc, OutputError) else 1
        raise
    out = args.out or default_out(MAP_NAME, args.quick)
    print(data["claims"])
    print(f"\nwinners (fewest passes to {data['speed_target']:g} of the initial gap):")
    other = data["winner_by_level"]
    for k, w in enumerate(data["winner"]):
        more = ", ".join(f"to {lv}: {other[lv][k]['label'] or 'none'}" for lv in other
                         if lv != f"{data['speed_target']:g}")
        print(f"  {w['shape']:<6} rho={w['rho']:<5g} {w['label'] or 'none reached it':<9} "
              f"({more})")
    print(f"\nwrote {os.fspath(out)} (run.json, claims.md, map.html) in "
          f"{data['wall_seconds']:.0f} s")
    return 0
