"""The ``reproduce`` command: :func:`run` from Python, and its command-line arguments.

Every argument is checked before any work (:func:`check_run_args`, and the argument types
of :func:`add_parser`): a bad value is one clear line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import inspect
import math
import numbers
import os
import sys
import time

from .._problems import make_regression
from .._progress import bar as progress_bar
from ..analysis import best_objective
from ..exceptions import (
    ChecksumError,
    DataFileError,
    DatasetUnavailableError,
    OutputError,
    OutputWriteError,
)
from ..solvers._registry import normalize_reading
from ._claims import (
    AGREEMENT,
    FSTAR_GUARD,
    GAP_LEVELS,
    PASS_RULE,
    SPEED_LEVEL,
    SPEED_LEVELS,
    STRONG_SIGMAS,
    TARGET_ERR_FACTOR,
    TIE_TOLERANCE,
    aggregate_claims,
    evaluate_claims,
    quality_of,
    strong_threshold,
    target_table,
    verdict_counts,
)
from ._condition_map import NAME as MAP_NAME
from ._condition_map import check_map_args, run_condition_map
from ._experiments import (
    EXPERIMENTS,
    HELDOUT_FRACTION,
    METHODS,
    PASS_BUDGET,
    RUN_TOL,
    SPLIT_STREAM,
    build_train_heldout,
    get_experiment,
    heldout_loss,
    reference,
    run_method,
    status_text,
    warm_up,
)
from ._output import OutputFolder, check_out
from ._parallel import check_jobs, check_scheduler, run_tasks
from ._report import Report, default_out, method_row, print_summary, reading_text, write_outputs
from ._tuning import factor_key, n_tuning_tasks, tune, tuned_factor, tuning_seeds

__all__ = ["DEFAULT_SEEDS", "MAX_BUDGET", "add_parser", "budget_arg", "check_run_args", "main",
           "jobs_arg", "parse_seeds", "reading_arg", "run", "seed_arg", "seed_task", "seeds_arg",
           "targets_spec"]

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


DEFAULT_SEEDS = (0, 1, 2, 3, 4)
"""Evaluation seeds when none are given (full size and ``--quick`` alike)."""


def parse_seeds(value):
    """Evaluation seeds from ``"0-4"``, ``"0,2,5"``, ``"1-3,7"``, an integer or a sequence.

    Parameters
    ----------
    value : str, int or sequence of int

    Returns
    -------
    list of int
        The seeds in the order given (a range ascending).

    Raises
    ------
    ValueError
        For an empty list, a negative or non-integer seed, a range whose end is below its
        start, a repeated seed, or a tuning seed (:func:`~.tuning.tuning_seeds`).
    """
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not value.strip() or any(not p for p in parts):
            raise ValueError(f"seeds must be a range such as 0-4 or a comma list such as "
                             f"0,2,5, got {value!r}")
        seeds = []
        for p in parts:
            lo, dash, hi = p.partition("-")
            if not lo.strip().isdigit() or (dash and not hi.strip().isdigit()):
                raise ValueError(f"seeds must be non-negative integers, ranges such as 0-4 "
                                 f"or comma lists such as 0,2,5; {p!r} in {value!r} is "
                                 "none of these")
            lo_i = int(lo)
            hi_i = int(hi) if dash else lo_i
            if hi_i < lo_i:
                raise ValueError(f"seed range {p!r} ends below its start")
            seeds.extend(range(lo_i, hi_i + 1))
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        seeds = [_seed(value)]
    else:
        try:
            seeds = [_seed(v) for v in value]
        except TypeError:
            raise ValueError(f"seeds must be a range such as '0-4', a comma list or a list "
                             f"of non-negative integers, got {value!r}") from None
        if not seeds:
            raise ValueError("seeds must name at least one seed, got an empty list")
    dup = sorted({s for s in seeds if seeds.count(s) > 1})
    if dup:
        raise ValueError(f"seeds must be distinct; {', '.join(map(str, dup))} repeated in "
                         f"{value!r}")
    tuning = set(tuning_seeds())
    clash = [s for s in seeds if s in tuning]
    if clash:
        raise ValueError(f"seeds {', '.join(map(str, clash))} are tuning seeds "
                         f"({min(tuning)}-{max(tuning)}: the step sizes are tuned there); "
                         "evaluate on other seeds")
    return [int(s) for s in seeds]


def check_run_args(experiment, out=None, seed=None, inner="paper", budget=None, data_dir=None,
                   quick=False, seeds=None, jobs=1, scheduler=None):
    """Check :func:`run`'s arguments; return them normalised.

    Returns
    -------
    dict
        ``experiment`` (Experiment), ``out`` (absolute Path), ``seeds`` (list), ``seed``
        (the first), ``inner`` (reading key), ``budget`` (float), ``jobs``, ``scheduler``.

    Raises
    ------
    ValueError
        For a bad experiment, seed(s), reading, budget or jobs, or both ``seed`` and
        ``seeds``.
    ImportError
        For a ``scheduler`` without the ``distributed`` package.
    OutputError
        For an output folder that cannot be used (:func:`~.output.check_out`).
    """
    exp = get_experiment(experiment)
    if seed is not None and seeds is not None:
        raise ValueError("give seed or seeds, not both (seed=N is seeds=[N])")
    if seeds is None:
        seeds = DEFAULT_SEEDS if seed is None else [_seed(seed)]
    seeds = parse_seeds(seeds)
    inner = normalize_reading(inner)
    budget = PASS_BUDGET[exp.name] if budget is None else _budget(budget)
    check_jobs(jobs)
    check_scheduler(scheduler)
    if data_dir is not None and os.path.exists(data_dir) and not os.path.isdir(data_dir):
        raise ValueError(f"data_dir {os.fspath(data_dir)} is a file, not a folder")
    out = check_out(default_out(exp.name, quick) if out is None else out)
    return {"experiment": exp, "out": out, "seeds": seeds, "seed": seeds[0], "inner": inner,
            "budget": budget, "jobs": jobs, "scheduler": scheduler}


def _noise_sd():
    """Noise standard deviation of the synthetic settings (``make_regression``'s default
    ``noise_var``, the paper's 0.01)."""
    return math.sqrt(inspect.signature(make_regression).parameters["noise_var"].default)


def seed_task(task):
    """Everything one evaluation seed does (module level, so that it can run in another
    process): draw the data (on real data, split it: :func:`~._experiments.heldout_split`),
    run every method, compute ``F*``, judge what the runs return (on real data, each final
    iterate's held-out loss).

    Parameters
    ----------
    task : dict
        ``experiment``, ``quick``, ``seed``, ``data_dir``, ``download``, ``inner``,
        ``budget``, ``factors`` (method -> (factor, source)), ``progress``.

    Returns
    -------
    dict
        ``seed``, ``info``, ``n``, ``d``, ``has_truth``, ``traces``, ``method_rows``,
        ``reference``, ``quality`` (per method, :func:`~.claims.quality_of`); on real
        data also ``n_heldout`` (``n`` is then the training rows).
    """
    exp = get_experiment(task["experiment"])
    seed, inner, budget = task["seed"], task["inner"], task["budget"]
    # real data: solved on the training rows only (F*, passes, speed targets), judged on the
    # held-out rows (heldout is None on synthetic data, where nothing changes)
    prob, heldout, info = build_train_heldout(exp, task["quick"], seed, task["data_dir"],
                                              task["download"], task["progress"])
    warm_up(prob, inner)
    traces, rows, held = {}, [], {}
    factors = task["factors"]
    for m in METHODS:
        f, source = factors[m]
        res = run_method(prob, m, info.s, f, seed, budget, inner)
        traces[m] = res.trace
        held[m] = None if heldout is None else heldout_loss(heldout, res.x)
        rows.append(method_row(m, inner, f, source, res, status_text(res, budget)))
    ref = reference(prob, traces, s=info.s, run=True, budget=budget, seed=seed, inner=inner,
                    factors={m: v[0] for m, v in factors.items()}, progress=False)
    has_truth = prob.x_true is not None
    sigma = _noise_sd() if has_truth else None
    quality = {m: quality_of(t, prob.x_true, sigma, prob.n, held[m])
               for m, t in traces.items()}
    out = {"seed": seed, "info": info, "n": prob.n, "d": prob.d, "has_truth": has_truth,
           "traces": traces, "method_rows": rows, "reference": ref, "quality": quality}
    if heldout is not None:
        out["n_heldout"] = heldout.n
    return out


def run(experiment, *, quick=False, out=None, data_dir=None, seed=None, seeds=None,
        inner="paper", tune_steps=True, png=True, download=True, budget=None, progress=True,
        jobs=1, scheduler=None):
    """Run one experiment over seeds, write its outputs and check the paper's claims.

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
    seed : int, optional
        One evaluation seed (the same as ``seeds=[seed]``).
    seeds : str or sequence of int, optional
        Evaluation seeds (:func:`parse_seeds`: ``"0-4"``, ``"0,2,5"``, a list); default
        :data:`DEFAULT_SEEDS`.  Each seed redraws the data and every index sequence; each
        claim gets a verdict per seed and one over seeds (:func:`~.claims.aggregate_claims`).
    inner : {"paper", "on_T"}
        Reading of Algorithm 2 for SVRGSP(+): ``"paper"`` (the paper's: ``z`` on all ``d``
        coordinates) or ``"on_T"`` (our variant, labelled "(on T)" everywhere).
    tune_steps : bool, default True
        Tune the step sizes now on the tuning seeds (:func:`~.tuning.tune`, the sqrt(2)
        grid, the speed target); False: the recorded :data:`~.tuning.TUNED_FACTORS` (no
        ``step_sensitivity``).
    png : bool
        Also write PNGs (needs Chromium; skipped with a note otherwise).
    download : bool
        Allow downloading a real data set (full runs only).
    budget : float, optional
        Effective passes per method, in ``(0, MAX_BUDGET]`` (default
        :data:`~.experiments.PASS_BUDGET`).
    progress : bool
        A ``tqdm.auto`` progress bar over the steps and the data notes; False: neither.
    jobs : int, default 1
        Local worker processes for the runs (:func:`~._parallel.run_tasks`).
    scheduler : str, optional
        Address of a Dask ``distributed`` scheduler to run on instead.  The results are
        the same wherever the runs go (seeds are data); only solver seconds differ.

    Returns
    -------
    Report

    Raises
    ------
    ValueError, ImportError, OutputError
        For bad arguments or an unusable ``out``, before any work.
    """
    args = check_run_args(experiment, out, seed, inner, budget, data_dir, quick, seeds, jobs,
                          scheduler)
    exp, out, seeds = args["experiment"], args["out"], args["seeds"]
    inner, budget = args["inner"], args["budget"]
    t_start = time.perf_counter()
    # the tuning tasks, one per seed, the claims, the files
    steps = (n_tuning_tasks((*METHODS,), (inner,)) if tune_steps else 0) + len(seeds) + 2
    name = f"{exp.name}{' --quick' if quick else ''}"
    where = {"jobs": jobs, "scheduler": scheduler}
    with OutputFolder(out) as folder, progress_bar(steps, name, progress, "step") as bar:
        def tick(text):
            # every step is drawn with its text (tqdm's own rate limit would skip the steps
            # that end within its minimum interval: a fast machine would show fewer)
            bar.update()
            bar.set_postfix_str(text, refresh=True)

        if tune_steps:
            bar.set_postfix_str("tuning the step sizes", refresh=True)
            picked, sensitivity = tune(exp, quick, data_dir, (inner,), budget=budget,
                                       download=download, progress=False, on_done=tick,
                                       **where)
            tseeds = tuning_seeds()
            src = (f"tuned now on seeds {tseeds[0]}-{tseeds[-1]} (sqrt(2) grid, speed "
                   "target)")
            factors = {m: (picked[factor_key(m, inner)], src) for m in METHODS}
        else:
            factors = {m: tuned_factor(exp.name, quick, m, inner) for m in METHODS}
            sensitivity = None
        bar.set_postfix_str(f"running {len(seeds)} seed{'s' if len(seeds) > 1 else ''} x "
                            f"{len(METHODS)} methods", refresh=True)
        tasks = [{"experiment": exp.name, "quick": quick, "seed": s, "data_dir": data_dir,
                  "download": download, "inner": inner, "budget": budget,
                  "factors": factors, "progress": progress and k == 0}
                 for k, s in enumerate(seeds)]
        results = run_tasks(seed_task, tasks, **where,
                            on_done=lambda i, r: tick(f"seed {r['seed']}: "
                                                      f"{len(METHODS)} methods and F* done"))
        bar.set_postfix_str("claims", refresh=True)
        first = results[0]
        info, has_truth = first["info"], first["has_truth"]
        per_seed, targets = [], []
        for r in results:
            rows = evaluate_claims(r["traces"], r["has_truth"], r["reference"], r["quality"])
            per_seed.append((r["seed"], rows))
            targets.append({"seed": r["seed"], "rows": target_table(
                r["traces"], r["has_truth"], r["reference"], r["quality"])})
        claims = aggregate_claims(per_seed)
        bar.update()
        ref = first["reference"]
        traces = first["traces"]
        best_run = min(best_objective(t)[0] for t in traces.values())
        settings = {
            "experiment": exp.name, "figure": exp.figure, "quick": quick,
            "problem": info.label, "stand_in": info.stand_in, "n": first["n"],
            "d": first["d"], "loss": exp.loss, "s": info.s, "seeds": seeds,
            "seed": seeds[0], "figures_seed": seeds[0], "inner": inner,
            "inner_is": reading_text(inner),
            "budget_passes": budget, "J": "2n", "m": 6, "x0": 0, "tol": RUN_TOL,
            "targets": targets_spec(has_truth, _noise_sd() if has_truth else None,
                                    first["n"], first.get("n_heldout"), exp.loss),
            "fstar": ref.value, "fstar_source": ref.where,
            "fstar_below_every_run_by": best_run - ref.value,
            "reference": ref.to_dict(), "has_truth": has_truth,
            "methods": first["method_rows"],
            "runs_per_seed": [{"seed": r["seed"], "fstar": r["reference"].value,
                               "fstar_source": r["reference"].source,
                               "error_reference": r["reference"].err_ref,
                               "error_source": r["reference"].err_source,
                               "quality": r["quality"],
                               "methods": r["method_rows"]} for r in results],
            "step_sensitivity": sensitivity,
            "claims": claims, "verdict_counts": verdict_counts(claims),
            "targets_reached": targets,
            "parallel": {"jobs": jobs, "scheduler": scheduler,
                         "note": "the same numbers wherever the runs go, except solver "
                                 "seconds"},
            "versions": traces[METHODS[0]].meta.get("versions"),
        }
        if "n_heldout" in first:  # real data: n is the training rows (our split)
            settings["n_heldout"] = first["n_heldout"]
        settings["wall_seconds"] = time.perf_counter() - t_start
        bar.set_postfix_str("writing the files", refresh=True)
        seed_traces = {r["seed"]: r["traces"] for r in results}
        try:
            files, notes = write_outputs(folder.stage, out, exp, quick, info, traces, claims,
                                         ref, settings["methods"], settings, inner, png,
                                         progress, seed_traces=seed_traces)
            folder.commit()
        except OSError as exc:
            raise OutputWriteError(f"could not write the outputs in {out.parent} "
                                   f"({exc.strerror or exc}); {out} was left as it "
                                   "was") from exc
        bar.update()
    per_seed_report = [{"seed": r["seed"], "traces": r["traces"], "reference": r["reference"],
                        "quality": r["quality"], "claims": rows}
                       for r, (_, rows) in zip(results, per_seed, strict=True)]
    return Report(exp, quick, info, traces, claims, out, files, notes, settings, ref,
                  per_seed=per_seed_report)


def targets_spec(has_truth, sigma, n, heldout=None, loss=None):
    """``run.json``'s ``targets``: the speed and the quality target, the "which local
    minimum" column, the tie tolerances and the agreement rule.

    ``n`` is the number of rows solved on; ``heldout`` the number held out (real data, our
    split: :func:`~._experiments.heldout_split`), None without a split; ``loss`` the
    experiment's loss."""
    speed = {"metric": "(F - F*)/(F0 - F*)", "level": SPEED_LEVEL,
             "levels_tabulated": list(SPEED_LEVELS),
             "tie_tolerance": {"passes": TIE_TOLERANCE["passes"],
                               "time": TIE_TOLERANCE["time"]},
             "time": "in-process solver seconds (objective evaluation and recording "
                     "excluded); the spread over seeds is each claim's margin range"}
    if has_truth:
        speed["error"] = {"metric": "||x - x*||/||x*||", "level": "target_err_factor x "
                          "the oracle's error (least squares on the true support)",
                          "target_err_factor": TARGET_ERR_FACTOR}
        quality = {"metric": "final estimation error ||x - x*||/||x*||; strong true "
                             "coordinates held by the final support",
                   "strong": f"|x*_j| > {STRONG_SIGMAS:g} sigma / sqrt(n)",
                   "sigma": sigma, "strong_threshold": strong_threshold(n, sigma),
                   "tie_tolerance": {"error": TIE_TOLERANCE["quality"],
                                     "recovery": TIE_TOLERANCE["recovery"]}}
    elif heldout is None:
        quality = {"metric": "held-out loss of the final iterate",
                   "tie_tolerance": TIE_TOLERANCE["quality"],
                   "note": "no held-out split: quality claims n/a"}
    else:
        quality = {"metric": f"held-out loss of the final iterate: the mean {loss} loss "
                             "(the experiment's per-sample loss, as in F) on the held-out "
                             "rows",
                   "split": {"heldout_fraction": HELDOUT_FRACTION,
                             "n_train": n, "n_heldout": heldout,
                             "drawn": "once per evaluation seed from the seed (numpy "
                                      "default_rng([seed, "
                                      f"{SPLIT_STREAM}]).permutation), the same split "
                                      "for every method",
                             "solved_on": "the training rows only: F*, passes, the speed "
                                          "targets and the step tuning use them"},
                   "tie_tolerance": TIE_TOLERANCE["quality"],
                   "claims": "V2 and V3 (no true coordinates on real data) compare it",
                   "note": "ours: the paper reports the training objective only"}
    return {"speed": speed, "quality": quality,
            "which_local_minimum": {"metric": "(F - F*)/F*", "levels": list(GAP_LEVELS),
                                    "fstar_guard": FSTAR_GUARD,
                                    "note": "not a target: near F* runs differ by the noise "
                                            "columns they fit"},
            "agreement": {"fraction": AGREEMENT,
                          "rule": "a verdict given by at least this fraction of the seeds, "
                                  "else mixed"},
            "pass_rule": PASS_RULE}


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


def _seeds_text(text):
    return parse_seeds(text)


def _jobs_text(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    try:
        return check_jobs(value)
    except ValueError:
        raise ValueError(f"must be a positive integer (or -1 for one process per CPU), got "
                         f"{text!r}") from None


seed_arg = _arg(_seed_text)
"""argparse type of a seed (a non-negative integer)."""

seeds_arg = _arg(_seeds_text)
"""argparse type of evaluation seeds (``0-4``, ``0,2,5``; :func:`parse_seeds`)."""

jobs_arg = _arg(_jobs_text)
"""argparse type of a number of local worker processes."""

budget_arg = _arg(_budget_text)
"""argparse type of a pass budget (a positive finite number, at most :data:`MAX_BUDGET`)."""

reading_arg = _arg(_reading_text)
"""argparse type of a reading of Algorithm 2 (``paper``, ``on_T``; old names accepted)."""


def add_parser(subparsers):
    """Add the ``reproduce`` sub-command to an argparse ``subparsers`` object."""
    rep = subparsers.add_parser(
        "reproduce", help="re-run an experiment of the paper and check its claims",
        description="Tune each step size on the tuning seeds (a sqrt(2) grid of factors, by "
                    "passes to the speed target), then run all six methods with the paper's "
                    "settings on one experiment of Section 5 for every evaluation seed; write "
                    "interactive figures (log objective gap and, on synthetic data, "
                    "estimation error vs effective passes and vs time, for the first seed; "
                    "passes vs step factor), PNGs when Chromium is available, the traces "
                    "(.npz), claims.md and run.json; print the claims table with a verdict "
                    "per seed and over seeds.  The output folder is replaced only once the "
                    "new run is complete.")
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
    rep.add_argument("--seeds", type=seeds_arg, default=None,
                     help="evaluation seeds: a range such as 0-4 (the default) or a comma "
                          "list such as 0,2,5; each seed redraws the data and every index "
                          "sequence, and each claim gets a verdict per seed and one over "
                          f"seeds (given by >= {100 * AGREEMENT:g} %% of them, else mixed)")
    rep.add_argument("--seed", type=seed_arg, default=None,
                     help="one evaluation seed (the same as --seeds N)")
    rep.add_argument("--jobs", type=jobs_arg, default=1,
                     help="run on N local worker processes (joblib, loky); -1: one per CPU. "
                          "The numbers are the same as with --jobs 1 (solver seconds aside)")
    rep.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 "
                          "(joblib's dask backend; needs pip install 'rgrasp_viz[parallel]'); "
                          "its workers must import rgrasp_viz")
    rep.add_argument("--inner", type=reading_arg, default="paper",
                     metavar="{paper,on_T}",
                     help="reading of Algorithm 2 for SVRGSP(+): 'paper' (default: z on all "
                          "d coordinates, as the paper writes it) or 'on_T' (our variant: z "
                          "on the merged support T; labelled '(on T)' everywhere)")
    rep.add_argument("--budget", type=budget_arg, default=None,
                     help=f"effective passes per method, > 0 and <= {MAX_BUDGET:g} (default: "
                          + ", ".join(f"{k} {v:g}" for k, v in PASS_BUDGET.items()) + ")")
    rep.add_argument("--no-tune", action="store_true",
                     help="use the recorded step-size factors instead of tuning them now (by "
                          "default every run tunes each step on a sqrt(2) grid of multipliers "
                          "of default_eta, 0.25 to 8, on the tuning seeds 1000-1001, by "
                          "passes to the speed target)")
    rep.add_argument("--no-png", action="store_true", help="write HTML figures only")
    rep.add_argument("--no-download", action="store_true",
                     help="never download a real data set (fail with instructions)")
    rep.set_defaults(check=_check_parsed, handler=main)
    return rep


def _check_parsed(args, parser):
    """Checks that need several arguments (the output folder); errors exit with code 2."""
    if args.experiment == MAP_NAME:
        try:
            if args.seed is not None and args.seeds is not None:
                raise ValueError("give --seed or --seeds, not both")
            check_map_args(_map_seeds(args), args.jobs, args.budget)
            check_scheduler(args.scheduler)
            check_out(default_out(MAP_NAME, args.quick) if args.out is None else args.out)
        except (ValueError, ImportError, OutputError) as exc:
            parser.error(str(exc))
        return
    try:
        check_run_args(args.experiment, args.out, args.seed, args.inner, args.budget,
                       args.data_dir, args.quick, args.seeds, args.jobs, args.scheduler)
    except (ValueError, ImportError, OutputError) as exc:
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

    if args.experiment == MAP_NAME:
        return _main_map(args, prog)
    try:
        report = run(args.experiment, quick=args.quick, out=args.out, data_dir=args.data_dir,
                     seed=args.seed, seeds=args.seeds, inner=args.inner,
                     tune_steps=not args.no_tune, png=not args.no_png,
                     download=not args.no_download, budget=args.budget, jobs=args.jobs,
                     scheduler=args.scheduler)
    except BaseException as exc:  # noqa: BLE001 - sorted out below, the rest re-raised
        if _interrupted(exc):
            out = args.out or default_out(args.experiment, args.quick)
            print(f"\n{prog}: interrupted; nothing partial was written ({os.fspath(out)} "
                  "holds the last complete run, if any)", file=sys.stderr)
            return 130
        if isinstance(exc, OutputError):  # e.g. another run holds the folder
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
        if isinstance(exc, (DatasetUnavailableError, ChecksumError)):
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


def _map_seeds(args):
    """The condition map's seeds from ``--seeds`` / ``--seed`` (None: its default)."""
    return args.seeds if args.seeds is not None else (
        None if args.seed is None else [args.seed])


def _main_map(args, prog):
    """``reproduce condition-map``: run it, print the paragraph and where the files are."""
    try:
        data = run_condition_map(quick=args.quick, out=args.out, seeds=_map_seeds(args),
                                 jobs=args.jobs, scheduler=args.scheduler,
                                 budget=args.budget, png=not args.no_png)
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
    if data.get("winner_paper_steps"):
        print("with the paper's own steps (no tuning):")
        for w in data["winner_paper_steps"]:
            print(f"  {w['shape']:<6} rho={w['rho']:<5g} {w['label'] or 'none reached it'}")
    print(f"\nwrote {os.fspath(out)} (run.json, claims.md, map.html) in "
          f"{data['wall_seconds']:.0f} s")
    return 0
