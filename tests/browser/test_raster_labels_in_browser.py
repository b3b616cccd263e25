"""The support raster's row labels as Chromium draws them: no two drawn tick labels overlap
(their boxes on the page), every labelled row of the layout is drawn, and no label reaches
out of the figure or, in an rv.animate frame, into the panel on its left."""

from __future__ import annotations

import plotly.io as pio
import pytest
import raster_cases

from rgrasp_viz.viz import _animate as A
from rgrasp_viz.viz import figures as F

# the drawn boxes of one y axis's tick labels, and where its plot and the first x axis are
TICKS_JS = """
(axisName) => {
  const gd = document.querySelector('.js-plotly-plot');
  const fl = gd._fullLayout;
  const ax = fl[axisName];
  const page = gd.getBoundingClientRect();
  const boxes = Array.from(gd.querySelectorAll('.' + ax._id + 'tick text')).map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, top: r.top - page.top, bottom: r.bottom - page.top,
            left: r.left - page.left, right: r.right - page.left,
            height: t.getBBox().height};
  });
  return {boxes, tickvals: (ax.tickvals || []).length, plotHeight: ax._length,
          firstPanelRight: fl.xaxis._offset + fl.xaxis._length, width: fl.width};
}
"""


@pytest.fixture(scope="module")
def classroom():
    return raster_cases.classroom_trace()


@pytest.fixture(scope="module")
def named():
    pytest.importorskip("pandas")
    return raster_cases.long_named_trace()


def frame(trace, row_height=280):
    """One rv.animate frame (all three panels) at its last moment."""
    states, _ = A.animation_frames([trace], max_frames=3)
    px = row_height - A._PANEL_TITLE_PX - A._PANEL_AXIS_PX
    panel = A._Panels(trace, A.VIEWS, [s[0] for s in states], 1.0, px // F.ROW_PX, px)
    return A.compose([panel.row(*states[-1][0])], widths=[A._WEIGHTS[v] for v in A.VIEWS],
                     row_height=row_height, width=960, title="frame")


def drawn_ticks(page, tmp_path, fig, name):
    """Draw ``fig`` in the page; the raster's y tick labels as drawn."""
    (raster,) = [t for t in fig["data"] if (t.get("meta") or {}).get("role") == "raster"]
    axis = "yaxis" + raster.get("yaxis", "y")[1:]
    html_path = tmp_path / f"{name}.html"
    html_path.write_text(pio.to_html(fig, include_plotlyjs=True, full_html=True,
                                     validate=False), encoding="utf-8")
    page.goto(html_path.as_uri())
    page.wait_for_function(
        "() => { const gd = document.querySelector('.js-plotly-plot');"
        " return gd && gd._fullLayout && gd.querySelectorAll('.ytick').length > 0; }",
        timeout=30_000)
    page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    return page.evaluate(TICKS_JS, axis)


def assert_apart(boxes):
    boxes = sorted(boxes, key=lambda b: b["top"])
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert b["top"] >= a["bottom"] - 0.01, (a, b)  # no two drawn labels overlap


@pytest.mark.parametrize("max_rows", [60, 150])
def test_classroom_raster_labels_every_row_without_overlap(page, tmp_path, classroom,
                                                           max_rows):
    fig = F.support_raster_spec(classroom, max_rows=max_rows)
    fig["layout"]["width"] = 900
    got = drawn_ticks(page, tmp_path, fig, f"classroom-{max_rows}")
    n_rows = len(fig["layout"]["yaxis"]["categoryarray"])
    assert len(got["boxes"]) == got["tickvals"] == n_rows > 30  # every row drawn
    assert got["plotHeight"] / n_rows >= max(b["height"] for b in got["boxes"])
    assert_apart(got["boxes"])
    assert min(b["left"] for b in got["boxes"]) >= 0


def test_long_names_fit_the_figure_without_overlap(page, tmp_path, named):
    fig = F.support_raster_spec(named)
    fig["layout"]["width"] = 900
    got = drawn_ticks(page, tmp_path, fig, "named")
    assert len(got["boxes"]) == got["tickvals"] > 1
    assert_apart(got["boxes"])
    assert min(b["left"] for b in got["boxes"]) >= 0
    texts = [b["text"] for b in got["boxes"]]
    assert all("…" in t and "<b>" in t for t in texts)  # cut, and the markup shown as text


@pytest.mark.parametrize("which", ["classroom", "named"])
def test_animation_frame_labels_do_not_overlap(page, tmp_path, classroom, named, which):
    trace = classroom if which == "classroom" else named
    got = drawn_ticks(page, tmp_path, frame(trace), f"frame-{which}")
    assert len(got["boxes"]) == got["tickvals"] > 1
    assert_apart(got["boxes"])
    # the labels stay in the gap: right of the coefficient panel's plot area
    assert min(b["left"] for b in got["boxes"]) >= got["firstPanelRight"]


def test_the_overlap_check_sees_crowded_labels(page, tmp_path, classroom):
    """The check above can fail: every row labelled in a raster squeezed to 320 px (what the
    animation's raster panel did before its labels were fitted) draws overlapping labels."""
    fig = F.support_raster_spec(classroom, max_rows=60)
    labels = fig["layout"]["yaxis"]["categoryarray"]
    fig["layout"].update(width=900, height=320)
    fig["layout"]["yaxis"].update(tickvals=labels, ticktext=labels)
    got = drawn_ticks(page, tmp_path, fig, "crowded")
    assert len(got["boxes"]) == len(labels)
    with pytest.raises(AssertionError):
        assert_apart(got["boxes"])
