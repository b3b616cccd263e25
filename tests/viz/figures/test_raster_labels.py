"""The support raster's row labels on figure data: never closer than a label's height (every
k-th row labelled when rows are thinner), every row still named on hover, long names cut
with an ellipsis and escaped; the same in rv.animate's frames."""

from __future__ import annotations

import html

import numpy as np
import pytest
import raster_cases

from rgrasp_viz.viz import _animate as A
from rgrasp_viz.viz import figures as F

LONG = raster_cases.LONG


@pytest.fixture(scope="module")
def classroom():
    return raster_cases.classroom_trace()


@pytest.fixture(scope="module")
def named():
    pytest.importorskip("pandas")
    return raster_cases.long_named_trace()


def heatmap(spec):
    (hm,) = [t for t in spec["data"] if (t.get("meta") or {}).get("role") == "raster"]
    return hm


def plot_px(spec):
    lay = spec["layout"]
    return lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]


def assert_spaced(labels, tickvals, px, label_px=F.LABEL_PX):
    """Labelled rows are at least ``label_px`` apart, start at the top row, and are not
    thinned more than needed."""
    index = [labels.index(v) for v in tickvals]
    assert index[0] == 0
    steps = set(np.diff(index).tolist())
    row = px / len(labels)
    assert len(steps) <= 1
    step = steps.pop() if steps else 1
    assert step * row >= label_px - 1e-9
    if step > 1:
        assert (step - 1) * row < label_px  # the smallest step that fits
    return step


@pytest.mark.parametrize("max_rows", [30, 60, 150])
def test_standalone_raster_labels_every_row_with_room(classroom, max_rows):
    spec = F.support_raster_spec(classroom, max_rows=max_rows)
    y = spec["layout"]["yaxis"]
    labels = list(y["categoryarray"])
    assert len(labels) > 20  # the true support and more
    assert list(y["tickvals"]) == labels  # ROW_PX per row: no row loses its label
    assert plot_px(spec) / len(labels) >= F.LABEL_PX
    assert spec["layout"]["meta"]["label_step"] == 1


@pytest.mark.parametrize("px", [60, 100, 190, 250, 400, 2000])
def test_fitted_labels_are_one_per_label_height(classroom, px):
    spec = F.fit_row_labels(F.support_raster_spec(classroom, max_rows=60), px)
    y = spec["layout"]["yaxis"]
    labels = list(y["categoryarray"])
    step = assert_spaced(labels, list(y["tickvals"]), px)
    assert len(y["tickvals"]) <= px / F.LABEL_PX + 1
    assert spec["layout"]["meta"]["label_step"] == step
    assert (step > 1) == (px / len(labels) < F.LABEL_PX)
    # every row is still a category of the heatmap, named in its hover text
    hm = heatmap(spec)
    assert list(hm["y"]) == labels and len(labels) == len(spec["layout"]["meta"]["rows"])
    assert "%{y}" in hm["hovertemplate"]


def test_long_names_are_cut_with_an_ellipsis_and_escaped(named):
    spec = F.support_raster_spec(named)
    y = spec["layout"]["yaxis"]
    rows = spec["layout"]["meta"]["rows"]
    full = [html.escape(LONG.format(j), quote=False) for j in rows]
    hm = heatmap(spec)
    assert list(hm["y"]) == full  # the whole (escaped) name of every row, shown on hover
    texts = list(y["ticktext"])
    assert len(texts) == len(rows)
    for t in texts:
        raw = html.unescape(t)
        assert "…" in raw and len(raw) <= F.LABEL_CHARS
        assert "<" not in t and html.escape(raw, quote=False) == t  # escaped, no entity split
    # the shared start is dropped, so that the rows' labels still differ
    assert len(set(texts)) == len(texts)
    assert [t[1:3] for t in texts] == [f"{j:02d}" for j in rows]
    assert y.get("automargin") is True


def test_animation_frame_labels_fit_their_panel(classroom, named):
    """rv.animate's raster panel: labels thinned to the panel's plot area and cut to the gap
    between panels; the whole names stay the rows' categories."""
    states, _ = A.animation_frames([classroom], max_frames=3)
    row_height = 280
    px = row_height - 90
    fit = px // F.ROW_PX
    panel = A._Panels(classroom, ("support",), [s[0] for s in states], 1.0, fit, px)
    (spec,) = panel.row(*states[-1][0])
    labels = list(spec["layout"]["yaxis"]["categoryarray"])
    assert len(labels) > fit  # the true support (20) does not fit 15 rows of ROW_PX
    step = assert_spaced(labels, list(spec["layout"]["yaxis"]["tickvals"]), px)
    assert step == 2 and "every 2nd row labelled" in spec["layout"]["title"]["text"]
    # composed into a frame, the raster's axis gets that plot area: labels still spaced
    frame = A.compose([[spec]], row_height=row_height, width=600)
    (ax,) = [v for k, v in frame["layout"].items()
             if k.startswith("yaxis") and v.get("tickvals")]
    lay = frame["layout"]
    frame_px = (ax["domain"][1] - ax["domain"][0]) * (
        lay["height"] - lay["margin"]["t"] - lay["margin"]["b"])
    assert frame_px == pytest.approx(px)
    assert_spaced(labels, list(ax["tickvals"]), frame_px)

    states, _ = A.animation_frames([named], max_frames=3)
    panel = A._Panels(named, ("support",), [s[0] for s in states], 1.0, fit, px)
    (spec,) = panel.row(*states[-1][0])
    texts = [html.unescape(t) for t in spec["layout"]["yaxis"]["ticktext"]]
    assert all(len(t) <= A._FRAME_LABEL_CHARS and "…" in t for t in texts)
    assert len(set(texts)) == len(texts)
    assert spec["layout"]["yaxis"]["title"]["text"] == ""  # room for the labels


def test_animation_objective_is_labelled_by_decades(classroom):
    states, _ = A.animation_frames([classroom], max_frames=3)
    panel = A._Panels(classroom, ("objective",), [s[0] for s in states], 2.0, 10)
    (spec,) = panel.row(*states[-1][0])
    lo, hi = spec["layout"]["yaxis"]["range"]
    assert hi - lo >= 2 and spec["layout"]["yaxis"]["dtick"] == 1


def test_short_label_keeps_the_star_and_the_short_names():
    assert F.row_ticks(["3★", "10"], 100) == (["3★", "10"], ["3★", "10"], 1)
    long = html.escape("a&b<c>" * 10, quote=False) + "★"
    (text,), step = F.row_ticks([long], 100, max_chars=9)[1:]
    assert html.unescape(text) == "a&b<…b<c>★" and step == 1  # start and end kept
    assert html.escape(html.unescape(text), quote=False) == text


def test_bad_label_room_is_refused():
    with pytest.raises(ValueError, match="plot_px"):
        F.row_ticks(["1"], 0)
    with pytest.raises(ValueError, match="max_chars"):
        F.row_ticks(["1"], 100, max_chars=2)
