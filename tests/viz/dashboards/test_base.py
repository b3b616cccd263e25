"""The dashboards' one base (``_base.Dashboard``): busy and error lines, ``wait``, ``close``
and the static copy, shared by the explorer, the comparison and the player; the static copy
is built from the one public method ``static_figures`` and nothing else of a dashboard."""

from __future__ import annotations

import copy
import time

import pytest

import rgrasp_viz as rv
from rgrasp_viz.viz import _static as static
from rgrasp_viz.viz.dashboards import Comparison, Explorer, Player
from rgrasp_viz.viz.dashboards._base import Dashboard

SHARED = ("_on_busy", "_on_error", "wait", "close", "_repr_mimebundle_")


@pytest.fixture(scope="module")
def prob():
    return rv.make_regression(n=120, d=60, s_star=4, random_state=1)


@pytest.fixture(scope="module")
def dashboards(prob):
    res = rv.solve(prob, "svrgsp+", s=5, max_iter=4, record_iterates=True, random_state=0,
                   warn=False)
    out = {"explore": rv.explore(prob, method="svrgsp", s=5, debounce=0, max_iter=4),
           "compare": rv.compare(prob, methods=["svrght", "svrgsp"], s=5, max_iter=4,
                                 debounce=0),
           "play": rv.play(res)}
    yield out
    for d in out.values():
        d.close()


@pytest.mark.parametrize("cls", [Explorer, Comparison, Player])
def test_every_dashboard_takes_the_shared_parts_from_the_base(cls):
    assert issubclass(cls, Dashboard)
    assert [name for name in SHARED if name in vars(cls)] == []
    assert "static_figures" in vars(cls)  # each says what its copy shows


def test_static_figures_are_a_title_and_figure_specs(dashboards):
    n_figs = {"explore": 3, "compare": 2 + 2, "play": 3}
    for name, dash in dashboards.items():
        title, figs = dash.static_figures()
        assert isinstance(title, str) and title.startswith(f"rv.{name} ("), name
        assert len(figs) == n_figs[name], name
        assert all(isinstance(f, dict) and f["data"] and "layout" in f for f in figs), name
    assert "end of the runs" in dashboards["compare"].static_figures()[0]
    assert "last of" in dashboards["play"].static_figures()[0]
    # the comparison's copy has no playback cursor; its live figures keep theirs
    for fig in dashboards["compare"].static_figures()[1][:2]:
        assert "shapes" not in fig["layout"]


def test_the_static_copy_reads_static_figures_only(dashboards):
    """What the page shows is exactly ``static_html`` of ``static_figures()``; any object
    with that one method gets a copy (nothing else is read)."""
    for dash in dashboards.values():
        title, figs = dash.static_figures()
        bundle = dash._repr_mimebundle_()
        assert bundle["text/html"] == static.static_html(figs, title=title)

    class OnlyThat:
        def static_figures(self):
            return "a title <b>", [{"data": [{"type": "scatter", "x": [0, 1], "y": [1, 2]}],
                                    "layout": {}}]

    out = static.dashboard_bundle(OnlyThat(), {"text/plain": "w"})
    assert out["text/plain"] == "w" and out["text/html"].count("rgrasp-static-figure") == 1
    assert "a title &lt;b&gt;" in out["text/html"]  # the title reaches the page as text


def test_static_figures_are_copies(dashboards):
    for dash in dashboards.values():
        shown = [copy.deepcopy(fw.to_plotly_json()) for fw in _figures(dash)]
        title, figs = dash.static_figures()
        for f in figs:
            f["layout"]["title"] = {"text": "changed"}
            f["data"].clear()
        dash._repr_mimebundle_()
        after = [fw.to_plotly_json() for fw in _figures(dash)]
        assert [len(f["data"]) for f in after] == [len(f["data"]) for f in shown]
        assert [f["layout"].get("title") for f in after] == \
            [f["layout"].get("title") for f in shown]
        assert [f["layout"].get("shapes") for f in after] == \
            [f["layout"].get("shapes") for f in shown]  # the compare cursor stays


def _figures(dash):
    if isinstance(dash, Explorer):
        return [dash.fig_convergence, dash.fig_timeline, dash.fig_raster]
    if isinstance(dash, Comparison):
        return [dash.fig_convergence, dash.fig_timeline, *dash.fig_coefficients.values()]
    return [dash.fig_coefficients, dash.fig_progress, dash.fig_support]


def test_an_explorer_with_nothing_solved_has_no_figures_and_says_why(prob):
    bad = rv.explore(prob, method="svrgsp", s=5, debounce=0, max_iter=4)
    try:
        bad.last_result = None
        bad.error = "ValueError: broken"
        assert bad.static_figures() == ("rv.explore: ValueError: broken", [])
    finally:
        bad.close()


@pytest.mark.parametrize("name, busy, hint", [
    ("explore", "solving…", "The plots show the last successful run."),
    ("compare", "solving every method it changes…",
     "The plots show the last runs that were solved."),
])
def test_busy_and_error_lines(dashboards, name, busy, hint):
    dash = dashboards[name]
    before = dash.status.value
    try:
        dash._on_busy(7.9)
        assert "rgrasp-busy" in dash.status.value and busy in dash.status.value
        assert "7 s</b>" in dash.status.value
        dash._on_error(ValueError("<img src=x>"))
        assert dash.error == "ValueError: <img src=x>"
        assert "rgrasp-error" in dash.status.value and hint in dash.status.value
        assert "&lt;img src=x&gt;" in dash.status.value and "<img" not in dash.status.value
    finally:
        dash.status.value = before
        dash.error = None


def test_an_explorer_error_before_any_run_says_nothing_is_plotted(prob):
    dash = rv.explore(prob, method="svrgsp", s=5, debounce=0, max_iter=4)
    try:
        dash.last_result = None
        dash._on_error(RuntimeError("x"))
        assert "Nothing to plot yet" in dash.status.value
    finally:
        dash.close()


def test_wait_and_close(dashboards, prob):
    assert dashboards["play"].wait() is True  # nothing re-solves in a replay
    dash = rv.explore(prob, method="svrgsp", s=5, debounce=0.05, max_iter=4)
    dash.controls["s"].value = 4
    assert dash.wait(timeout=60) is True
    assert dash.result.trace.meta["s"] == 4
    assert Explorer._wait_timeout == 30.0 and Comparison._wait_timeout == 60.0  # as before
    dash.close()
    assert dash.comm is None  # the widget is closed
    dash.debouncer.request({**dash.params(), "s": 3})  # the worker is stopped: not solved
    time.sleep(0.5)
    assert dash.result.trace.meta["s"] == 4


def test_a_converged_poor_estimate_is_amber_in_both_dashboards_with_its_note():
    """CONVERGED at s = 1 on the classroom problem (relative error ~0.95): amber, and the
    note says why, in the explorer's status line and in the comparison's table."""
    prob = rv.make_regression("classroom", random_state=0)
    dash = rv.explore(prob, method="svrgsp+", s=1, debounce=0)
    cmp_ = rv.compare(prob, methods=["svrgsp+"], s=1, debounce=0)
    try:
        assert dash.result.status == rv.Status.CONVERGED
        assert "rgrasp-warn" in dash.status.value
        assert "rgrasp-status-note" in dash.status.value
        assert "poor estimate" in dash.status.value
        assert cmp_.results["svrgsp+"].status == rv.Status.CONVERGED
        assert "rgrasp-status-warn" in cmp_.summary.value
        assert "poor estimate" in cmp_.summary.value
    finally:
        dash.close()
        cmp_.close()
