"""``run_tasks`` and ``reproduce --jobs / --scheduler``: the same results serially, on local
processes and on a real Dask cluster (seeds are data, not order)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from rgrasp_viz import Trace
from rgrasp_viz import reproduce as R
from rgrasp_viz.reproduce import _claims as RC
from rgrasp_viz.reproduce._parallel import run_tasks

pytest.importorskip("plotly")


def draw(task):
    """A task's result depends on the task only (module level: picklable)."""
    seed, size, pause = task
    time.sleep(pause)  # later tasks finish first on two workers
    return np.random.default_rng(seed).standard_normal(size)


TASKS = [(s, 5, 0.2 if s < 2 else 0.0) for s in range(6)]


def test_parallel_equals_serial_bit_for_bit_in_task_order():
    serial = run_tasks(draw, TASKS)
    local = run_tasks(draw, TASKS, jobs=2)
    assert len(serial) == len(local) == len(TASKS)
    for a, b, t in zip(serial, local, TASKS, strict=True):
        assert a.tobytes() == b.tobytes()
        np.testing.assert_array_equal(a, np.random.default_rng(t[0]).standard_normal(5))


def test_on_done_sees_every_result_in_task_order():
    seen = []
    out = run_tasks(draw, TASKS, jobs=2, on_done=lambda i, r: seen.append((i, r.tobytes())))
    assert [i for i, _ in seen] == list(range(len(TASKS)))
    assert [r for _, r in seen] == [r.tobytes() for r in out]
    assert run_tasks(draw, []) == []


@pytest.mark.parametrize("jobs", [0, -2, 1.5, True, "2"])
def test_bad_jobs_are_refused_before_any_task(jobs):
    ran = []
    with pytest.raises(ValueError, match="positive integer"):
        run_tasks(ran.append, [1, 2], jobs=jobs)
    assert ran == []


def test_func_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        run_tasks(None, [1])
    with pytest.raises(TypeError, match="on_done must be callable"):
        run_tasks(abs, [1], on_done=3)


# -- reproduce, end to end, three ways ------------------------------------------------------------


def deterministic(out):
    """Everything in ``run.json`` that does not depend on a clock: every claim judged on
    passes, errors or supports (per seed, with its numbers), F* and the quality per seed, the
    targets reached in passes, the step sensitivity."""
    s = json.loads((out / "run.json").read_text())
    claims = [c for c in s["claims"] if c["id"] not in RC.TIME_CLAIMS]
    targets = [{"seed": b["seed"], "rows": [{k: v for k, v in r.items() if k != "seconds"}
                                            for r in b["rows"]]}
               for b in s["targets_reached"]]
    runs = [{"seed": r["seed"], "fstar": r["fstar"], "quality": r["quality"],
             "objective": [m["objective"] for m in r["methods"]],
             "passes": [m["passes"] for m in r["methods"]]} for r in s["runs_per_seed"]]
    return {"claims": claims, "targets": targets, "runs": runs,
            "steps": s["step_sensitivity"], "seeds": s["seeds"]}


def traces_bytes(out):
    return {p.name: {k: np.asarray(getattr(Trace.load(p), k)).tobytes()
                     for k in ("passes", "objective", "rel_error", "n_thresholds")}
            for p in sorted((out / "traces").glob("*.npz"))}


SMALL = {"quick": True, "png": False, "progress": False, "budget": 4, "seeds": "0-1"}
"""Classroom size, 4 passes, two seeds: small, yet every claim, seed and tuning task runs."""


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "run"
    R.run("fig1-setting1", out=out, jobs=1, **SMALL)
    return out


def test_jobs_2_gives_the_serial_numbers(serial_run, tmp_path):
    out = tmp_path / "run"
    rep = R.run("fig1-setting1", out=out, jobs=2, **SMALL)
    assert deterministic(out) == deterministic(serial_run)
    assert traces_bytes(out) == traces_bytes(serial_run)
    assert rep.settings["parallel"]["jobs"] == 2
    # what the done-when check reads
    s = json.loads((out / "run.json").read_text())
    assert s["targets"]["speed"]["metric"] == "(F - F*)/(F0 - F*)"
    assert all(c["agreement"].endswith("/2") and len(c["per_seed"]) == 2 for c in s["claims"])
    assert set(s["step_sensitivity"]["methods"]) == {"fght", "sght", "svrght", "svrgsp|paper",
                                                     "svrgsp+|paper"}


def test_dask_cluster_gives_the_serial_numbers(serial_run, tmp_path):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "run"
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        rep = R.run("fig1-setting1", out=out, scheduler=cluster.scheduler_address, **SMALL)
        with distributed.Client(cluster) as client:  # the work went to the cluster's workers
            assert len(client.scheduler_info()["workers"]) == 2
    assert rep.settings["parallel"]["scheduler"] == cluster.scheduler_address
    assert deterministic(out) == deterministic(serial_run)
    assert traces_bytes(out) == traces_bytes(serial_run)


def test_dask_runs_tasks_on_the_workers_in_task_order():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        out = run_tasks(draw, TASKS, scheduler=cluster.scheduler_address)
    assert [a.tobytes() for a in out] == [a.tobytes() for a in run_tasks(draw, TASKS)]
