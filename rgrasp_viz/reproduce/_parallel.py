"""Run independent tasks serially, on local processes, or on a Dask cluster.

Every task handed to :func:`run_tasks` fully determines its result: seeds, sizes and
steps travel inside the task, nothing is drawn from a shared generator or from the order
in which workers pick tasks up. Every task also runs with one BLAS thread, wherever it runs
(a multi-threaded BLAS sums in another order, and a worker process gets fewer threads than
the main one: results would differ in the last bits).  The results therefore do not depend
on where or in which order the tasks run, and a parallel run is bit-identical to the serial
one (on machines of the same kind: another CPU may take other BLAS kernels).

Three places to run:

* ``jobs=1`` and no scheduler: a plain loop in this process (no joblib machinery, easiest
  to debug and to interrupt).
* ``jobs=N``: joblib's ``loky`` backend, ``N`` worker processes on this machine
  (``jobs=-1``: one per CPU, joblib's convention).
* ``scheduler="tcp://host:port"``: joblib's ``dask`` backend on an existing
  ``distributed`` cluster. The workers must be able to import ``rgrasp_viz``. Needs the
  ``parallel`` extra (``pip install 'rgrasp_viz[parallel]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["run_tasks", "check_jobs", "check_scheduler"]

_DISTRIBUTED_HINT = (
    "running on a Dask cluster (scheduler=...) needs the `distributed` package: "
    "pip install 'rgrasp_viz[parallel]' (or pip install 'distributed>=2023.1')"
)


def check_jobs(jobs: Any) -> int:
    """Validate a number of local worker processes.

    Parameters
    ----------
    jobs : int
        A positive count, or ``-1`` for one process per CPU (joblib's convention).

    Returns
    -------
    int
        ``jobs`` unchanged.

    Raises
    ------
    ValueError
        When ``jobs`` is not a positive integer nor ``-1``.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or (jobs < 1 and jobs != -1):
        raise ValueError(
            f"jobs must be a positive integer (or -1 for one process per CPU), got {jobs!r}"
        )
    return jobs


def check_scheduler(scheduler: Any) -> str | None:
    """Validate a Dask scheduler address and check that ``distributed`` is importable.

    Parameters
    ----------
    scheduler : str or None
        The address of a running ``distributed`` scheduler, e.g. ``"tcp://10.0.0.5:8786"``.

    Returns
    -------
    str or None
        ``scheduler`` unchanged.

    Raises
    ------
    ValueError
        When the address is not a non-empty string.
    ImportError
        When ``distributed`` (the ``parallel`` extra) is not installed.
    """
    if scheduler is None:
        return None
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(
            f"scheduler must be the address of a Dask scheduler such as 'tcp://host:8786', "
            f"got {scheduler!r}"
        )
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ImportError(_DISTRIBUTED_HINT) from exc
    return scheduler


class _OneBlasThread:
    """``func`` run under ``threadpoolctl.threadpool_limits(1, "blas")`` (picklable)."""

    def __init__(self, func):
        self.func = func

    def __call__(self, task):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return self.func(task)


def run_tasks(
    func: Callable[[Any], Any],
    tasks: Iterable[Any],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    on_done: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """Apply ``func`` to every task and return the results in task order.

    Parameters
    ----------
    func : callable
        A picklable module-level function of one argument (the task). It must not rely on
        state left by another task: each task carries everything its result depends on
        (seeds are data), which is what makes parallel and serial runs identical.
    tasks : iterable
        The tasks; each must be picklable when ``jobs != 1`` or ``scheduler`` is given.
    jobs : int, default 1
        Local worker processes (joblib's ``loky`` backend); ``1`` runs in this process,
        ``-1`` uses one process per CPU. Ignored when ``scheduler`` is given (the cluster
        decides how many tasks run at once).
    scheduler : str, optional
        Address of an existing Dask ``distributed`` scheduler; the tasks then run on its
        workers through joblib's ``dask`` backend.
    on_done : callable, optional
        ``on_done(index, result)`` in this process as each result comes back, in task
        order (for a progress bar); it does not change the results.

    Returns
    -------
    list
        ``[func(t) for t in tasks]``, in the order of ``tasks`` whatever the order of
        completion.

    Raises
    ------
    ValueError
        On a bad ``jobs`` or ``scheduler``, before any task runs.
    ImportError
        When ``scheduler`` is given and ``distributed`` is not installed.
    """
    check_jobs(jobs)
    check_scheduler(scheduler)
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    if on_done is not None and not callable(on_done):
        raise TypeError(f"on_done must be callable, got {type(on_done).__name__}")
    tasks = list(tasks)
    func = _OneBlasThread(func)
    if scheduler is None and (jobs == 1 or len(tasks) <= 1):
        return _collect((func(task) for task in tasks), on_done)

    import joblib

    if scheduler is not None:
        import distributed

        try:
            client = distributed.Client(scheduler, set_as_default=False)
        except OSError as exc:
            raise OSError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from exc
        try:
            # the dask backend submits through the client given here, not a global default
            with joblib.parallel_config(backend="dask", client=client):
                results = joblib.Parallel(n_jobs=-1, return_as="generator")(
                    joblib.delayed(func)(t) for t in tasks)
                return _collect(results, on_done)
        finally:
            client.close()

    n_jobs = jobs if jobs == -1 else min(jobs, len(tasks))
    with joblib.parallel_config(backend="loky", n_jobs=n_jobs):
        results = joblib.Parallel(return_as="generator")(
            joblib.delayed(func)(t) for t in tasks)
        return _collect(results, on_done)


def _collect(results, on_done):
    """The results as a list, ``on_done(index, result)`` called as each comes."""
    out = []
    for i, r in enumerate(results):
        out.append(r)
        if on_done is not None:
            on_done(i, r)
    return out
