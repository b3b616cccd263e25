"""``rv.animate``: frames on a shared axis of effective passes, composition of the figure
builders' panels, GIF (and MP4) output rendered by a real Chromium, and clear errors before
any work.

Rendering tests need Chromium (skipped with the reason when none is found, a failure when
``CI`` is set), kaleido and Pillow (test extras); the MP4 checks run when an encoder is
found (the ``imageio-ffmpeg`` test extra ships one).
"""

from __future__ import annotations

import base64
import sys

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz.viz import _animate as A
from rgrasp_viz.viz import figures as F

N, D, S, J = 60, 30, 3, 30


@pytest.fixture(scope="module")
def pair():
    """SVRGHT and SVRGSP on one tiny problem, two epochs, every inner step recorded."""
    prob = rv.make_regression(n=N, d=D, s_star=S, random_state=0)
    eta = rv.default_eta(prob, "svrgsp", S, inner="paper")
    kw = dict(s=S, J=J, eta=eta, inner="paper", max_iter=2, record_iterates=True,
              record_every=3, random_state=0, warn=False)
    return [rv.solve(prob, m, **kw) for m in ("svrght", "svrgsp")]


# -- frames ----------------------------------------------------------------------------------


def test_frames_follow_a_shared_axis_of_effective_passes(pair):
    states, where = A.animation_frames(pair, max_frames=40)
    assert 2 <= len(states) <= 40 and len(states) == len(where)
    assert states[0] == ((0, None), (0, None))
    assert np.all(np.diff(where) > 0)
    assert all(a != b for a, b in zip(states, states[1:], strict=False))  # no repeats
    for state, pos in zip(states, where, strict=True):
        for res, (t, step) in zip(pair, state, strict=True):
            tr = res.trace
            if step is None:
                at = float(tr.passes[t])
            else:
                k = np.flatnonzero((tr.ck_iter == t) & (tr.ck_step == step))[0]
                at = float(F.checkpoint_positions(tr)[k])
            assert at <= pos + 1e-9  # what a run shows has happened by then
    last = states[-1]
    for res, (t, step) in zip(pair, last, strict=True):
        assert (t, step) == (res.trace.n_iter, None)  # both runs end on x^T
    # both methods cost the same per epoch: they reach each epoch's end at the same frame
    ends = [i for i, st in enumerate(states) if all(s[1] is None and s[0] > 0 for s in st)]
    assert ends, states


def test_until_cuts_the_axis(pair):
    epoch = 1 + J / N
    states, where = A.animation_frames(pair, max_frames=30, until=epoch)
    assert max(where) <= epoch + 1e-12
    assert all(t <= 1 for st in states for t, _ in st)


def test_compose_keeps_each_panel_on_its_own_axes(pair):
    tr = pair[0].trace
    row = [F.coefficients_spec(tr, 1, 3), F.support_raster_spec(pair[1], cursor=1.0),
           F.convergence_spec(pair, y="both")]  # a panel with two axis pairs
    fig = A.compose([row, row], widths=[2, 1, 2], row_height=250, width=900,
                    title="t", footer="f")
    lay = fig["layout"]
    n_pairs = 2 * (1 + 1 + 2)
    assert {f"xaxis{'' if k == 1 else k}" for k in range(1, n_pairs + 1)} == {
        k for k in lay if k.startswith("xaxis")}
    refs = {(d["xaxis"], d["yaxis"]) for d in fig["data"]}
    assert len(refs) == n_pairs  # every panel's traces on that panel's own axes
    doms = [lay[f"xaxis{'' if k == 1 else k}"]["domain"] for k in (1, 2, 3)]
    assert doms[0][1] < doms[1][0] and doms[1][1] < doms[2][0]  # columns do not overlap
    assert all(0 <= v <= 1 for k, a in lay.items() if k[1:5] == "axis"
               for v in a["domain"])
    assert lay["height"] % 2 == 0 and lay["width"] % 2 == 0
    heat = [d for d in fig["data"] if d.get("type") == "heatmap"]
    assert heat and all(d["showscale"] is False for d in heat)
    # the raster's separator line (xref paper) stays inside its own column
    seps = [s for s in lay["shapes"] if s.get("xref") == "paper"]
    assert seps and all(doms[1][0] - 1e-9 <= s["x0"] < s["x1"] <= doms[1][1] + 1e-9
                        for s in seps)
    titles = [a["text"] for a in lay["annotations"]]
    assert sum("|x| at inner step 3" in t for t in titles) == 2 and "t" in titles


# -- errors before any work -------------------------------------------------------------------


@pytest.fixture
def no_render(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("a frame was rendered before the input was checked")

    monkeypatch.setattr(A, "_render", fail)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"path": "out.png"}, ValueError, r"\.gif"),
    ({"path": "missing-folder/out.gif"}, ValueError, "does not exist"),
    ({"views": ("coefficients", "bogus")}, ValueError, "views"),
    ({"views": ()}, ValueError, "views"),
    ({"max_frames": 1}, ValueError, "max_frames"),
    ({"fps": 0}, ValueError, "fps"),
    ({"width": True}, ValueError, "width"),
    ({"until": -1.0}, ValueError, "until"),
    ({"mp4": "yes"}, ValueError, "mp4"),
    ({"progress": 3}, TypeError, "progress"),
])
def test_bad_options_are_refused_before_any_work(pair, tmp_path, monkeypatch, no_render,
                                                 kwargs, exc, match):
    monkeypatch.chdir(tmp_path)
    kw = {"path": "out.gif", **kwargs}
    with pytest.raises(exc, match=match):
        rv.animate(pair, **kw)
    assert list(tmp_path.iterdir()) == []


def test_bad_runs_are_refused(pair, tmp_path, no_render):
    with pytest.raises(TypeError, match="a Trace, a SolveResult or a fitted estimator"):
        rv.animate(["not a run"], tmp_path / "a.gif")
    with pytest.raises(ValueError, match="at most 4 runs"):
        rv.animate(pair * 3, tmp_path / "a.gif")


def test_missing_tools_are_named_before_any_work(pair, tmp_path, monkeypatch, no_render):
    path = tmp_path / "a.gif"
    monkeypatch.setattr(F, "find_chromium", lambda: None)
    with pytest.raises(RuntimeError, match="Chromium"):
        rv.animate(pair, path)
    monkeypatch.undo()
    monkeypatch.setattr(A, "_render", lambda *a, **k: pytest.fail("rendered"))
    monkeypatch.setitem(sys.modules, "kaleido", None)
    with pytest.raises(RuntimeError, match="kaleido"):
        rv.animate(pair, path)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(RuntimeError, match="Pillow"):
        rv.animate(pair, path)
    monkeypatch.undo()
    monkeypatch.setattr(A, "_render", lambda *a, **k: pytest.fail("rendered"))
    monkeypatch.setattr(A, "find_encoder", lambda: None)
    with pytest.raises(RuntimeError, match="ffmpeg"):
        rv.animate(pair, path, mp4=True)
    assert not path.exists()


def test_on_missing_warn_says_so_in_one_line_and_draws_nothing(pair, tmp_path, monkeypatch,
                                                              capsys):
    """What the notebooks do: with Chromium on PATH but no Pillow (``make lab`` installs no
    ``animate`` extra), Run All must go on: one printed line, None, no file."""
    path = tmp_path / "a.gif"
    monkeypatch.setattr(F, "find_chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(A, "_render", lambda *a, **k: pytest.fail("rendered"))
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` -> ImportError
    with pytest.raises(RuntimeError, match="Pillow"):
        rv.animate(pair, path)  # the default still raises
    capsys.readouterr()
    assert rv.animate(pair, path, on_missing="warn") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "Pillow" in out and out.startswith("No animation")
    assert not path.exists()
    monkeypatch.setattr(F, "find_chromium", lambda: None)
    monkeypatch.delitem(sys.modules, "PIL")
    assert rv.animate(pair, path, on_missing="warn") is None
    assert "Chromium" in capsys.readouterr().out
    # bad options are still errors, whatever on_missing says
    with pytest.raises(ValueError, match="fps"):
        rv.animate(pair, path, fps=0, on_missing="warn")
    with pytest.raises(ValueError, match="on_missing"):
        rv.animate(pair, path, on_missing="ignore")
    assert not path.exists()


def test_on_missing_warn_covers_a_browser_that_cannot_render(pair, tmp_path, monkeypatch,
                                                           capsys):
    pytest.importorskip("PIL")
    pytest.importorskip("kaleido")
    path = tmp_path / "a.gif"
    monkeypatch.setattr(F, "find_chromium", lambda: "/usr/bin/chromium")

    def broken(fig, chromium):
        raise RuntimeError(f"rendering a frame with kaleido and {chromium} failed: boom")

    monkeypatch.setattr(A, "_render", broken)
    with pytest.raises(RuntimeError, match="boom"):
        rv.animate(pair, path, mp4=False)
    capsys.readouterr()
    assert rv.animate(pair, path, mp4=False, on_missing="warn") is None
    assert "boom" in capsys.readouterr().out
    assert not path.exists()


def test_find_encoder_prefers_ffmpeg_on_path(tmp_path, monkeypatch):
    exe = tmp_path / "ffmpeg"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert A.find_encoder() == str(exe)


# -- rendered for real -------------------------------------------------------------------------


def _gif_frames(path):
    from PIL import Image

    with Image.open(path) as im:
        frames, durations = [], []
        for k in range(im.n_frames):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB")))
            durations.append(im.info.get("duration"))
    return frames, durations


@pytest.mark.browser
def test_gif_frames_size_and_mp4(pair, tmp_path, chromium_path, monkeypatch):
    monkeypatch.setenv("RGRASP_VIZ_CHROMIUM", chromium_path)
    seen = []
    anim = rv.animate(pair, tmp_path / "pair.gif", max_frames=10, fps=5, hold=1.0,
                      width=480, row_height=170, progress=lambda i, n: seen.append((i, n)))
    states, _ = A.animation_frames(pair, max_frames=10)
    assert anim.n_frames == len(states) == len(anim.frames) and anim.n_frames >= 4
    assert seen == [(i, anim.n_frames) for i in range(1, anim.n_frames + 1)]
    frames, durations = _gif_frames(anim.path)
    assert len(frames) == anim.n_frames
    assert frames[0].shape == (anim.size[1], anim.size[0], 3) and anim.size[0] == 480
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False))
    assert durations[:-1] == [200] * (anim.n_frames - 1) and durations[-1] == 1200
    assert anim.seconds == pytest.approx(0.2 * anim.n_frames + 1.0)
    assert anim.nbytes == anim.path.stat().st_size < 5e6
    bundle = anim._repr_mimebundle_()
    assert base64.b64decode(bundle["image/gif"]) == anim.path.read_bytes()
    # two runs, one row each: the rows differ (SVRGHT's |x| is not SVRGSP's)
    top, bottom = frames[-1][: anim.size[1] // 2], frames[-1][anim.size[1] // 2:]
    assert not np.array_equal(top[: bottom.shape[0]], bottom[: top.shape[0]])
    if A.find_encoder() is None:
        assert anim.mp4 is None
    else:
        import imageio_ffmpeg

        assert anim.mp4 == tmp_path / "pair.mp4"
        n, secs = imageio_ffmpeg.count_frames_and_secs(str(anim.mp4))
        assert n == anim.n_frames + 5  # the last frame held for 1 s at 5 fps
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["pair.gif"] + (["pair.mp4"] if anim.mp4 else []))  # no temporary file left


@pytest.mark.browser
def test_default_animation_fits_a_slide(tmp_path, chromium_path, monkeypatch):
    """The defaults give a few seconds under 5 MB for SVRGHT against SVRGSP on the
    classroom problem (two epochs with inner steps)."""
    monkeypatch.setenv("RGRASP_VIZ_CHROMIUM", chromium_path)
    prob = rv.make_regression("classroom", random_state=0)
    runs = [rv.solve(prob, m, s=24, max_iter=2, record_iterates=True, random_state=0,
                     warn=False) for m in ("svrght", "svrgsp")]
    anim = rv.animate(runs, tmp_path / "classroom.gif", mp4=False, progress=False)
    assert 10 <= anim.n_frames <= 48
    # the GIF's playback length, from the frame durations written in the file (not a clock)
    durations = _gif_frames(anim.path)[1]
    playback = sum(durations) / 1000
    # GIF durations are stored in centiseconds: each frame may be off by 10 ms
    assert anim.seconds == pytest.approx(playback, abs=0.01 * len(durations))
    assert 2 <= playback <= 10  # a few seconds: fits a slide
    assert anim.nbytes < 5e6
    print(f"\ndefault animation: {anim}")


def test_objective_panel_draws_no_straight_line_between_epoch_ends(pair):
    """The GIF's unexplained diagonal was the progress panel's faint "whole run" line, which
    joins only the ends of epochs (over one epoch: a straight line from F(x^0) to F(x^1)).
    Frames draw the recorded objective so far, on one fixed log scale."""
    res = pair[1]
    states, _ = A.animation_frames([res], max_frames=12)
    panels = A._Panels(res.trace, ("objective",), [s[0] for s in states], 2.0, 10)
    ranges = set()
    for (t, step), in states:
        (spec,) = panels.row(t, step)
        roles = [(d.get("meta") or {}).get("role") for d in spec["data"]]
        assert "whole" not in roles and "so_far" in roles
        ranges.add(tuple(spec["layout"]["yaxis"]["range"]))
    assert len(ranges) == 1  # the axis does not jump between frames
    lo, hi = ranges.pop()
    f = res.trace.objective
    assert lo <= np.log10(f.min()) and hi >= np.log10(f.max())
    assert "objective" in A._FOOTER
