"""Files from strangers and user code: text reaches a page as text, loads are bounded, the
registry holds under threads, arguments are checked, temp files do not pile up, a hung
step-5 solver does not freeze a dashboard."""

from __future__ import annotations

import json

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz._trace import Trace

PAYLOAD = "<img src=x onerror=\"document.title='pwned';window.__rgrasp_pwned=1\">"
ESCAPED = "&lt;img src=x onerror="


@pytest.fixture(scope="module")
def small_run():
    prob = rv.make_regression(n=60, d=40, s_star=3, random_state=0)
    return rv.solve(prob, "svrgsp+", s=4, max_iter=3, record_iterates=True, warn=False)


def crafted_trace(run, path, **meta):
    """``run``'s trace saved with some metadata replaced (a file a stranger could send)."""
    tr = run.trace
    Trace(dict(tr.arrays), {**tr.meta, **meta}).save(path)
    return path


def widget_texts(widget):
    """Every string value of ``widget`` and its children (HTML widgets, labels, ...)."""
    out = []
    value = getattr(widget, "value", None)
    if isinstance(value, str):
        out.append(value)
    for child in getattr(widget, "children", ()):
        out += widget_texts(child)
    return out


def _shown(obj):
    """``obj`` without its ``meta`` entries (data for code, never drawn)."""
    if isinstance(obj, dict):
        return {k: _shown(v) for k, v in obj.items() if k != "meta"}
    if isinstance(obj, (list, tuple)):
        return [_shown(v) for v in obj]
    return obj


def figure_texts(fw):
    """Every piece of text a plotly figure shows (titles, names, hover templates, ticks)."""
    spec = fw.to_plotly_json() if hasattr(fw, "to_plotly_json") else fw
    return json.dumps(_shown(spec), default=str)


# -- 1. text from a file reaches the page as text ------------------------------------------------

def test_player_of_a_crafted_trace_shows_the_method_as_text(small_run, tmp_path):
    path = crafted_trace(small_run, tmp_path / "evil.npz", method=PAYLOAD)
    tr = Trace.load(path)
    assert tr.method == PAYLOAD  # the file says so; the page must not run it
    player = rv.play(tr)
    try:
        player.step(+2)
        texts = widget_texts(player)
        assert any(ESCAPED in t for t in texts), texts
        assert not any("<img" in t for t in texts), texts
        for fw in (player.fig_coefficients, player.fig_progress, player.fig_support):
            js = figure_texts(fw)
            assert "<img" not in js
            assert ESCAPED in js
        # the frames the page draws while playing come from the same builders
        patch = figure_texts(rv.viz.figures.coefficients_spec(tr, *player.frames[-1]))
        assert "<img" not in patch and ESCAPED in patch
    finally:
        player.close()


def test_figures_show_labels_from_a_file_as_text(small_run, tmp_path):
    tr = Trace.load(crafted_trace(small_run, tmp_path / "evil.npz", method=PAYLOAD))
    F = rv.viz.figures
    specs = [F.convergence_spec([tr, small_run.trace], y="both"),
             F.threshold_timeline_spec([tr, small_run], cost=False),
             F.support_raster_spec(tr), F.progress_spec(tr, 1, None),
             F.coefficients_spec(tr, 1, None)]
    for spec in specs:
        shown = figure_texts(spec)
        assert "<img" not in shown
        assert ESCAPED in shown
    # the labels stay as they are in the figure's data for code
    conv = specs[0]
    assert any(t["meta"]["method"] == PAYLOAD for t in conv["data"])


# -- 4. clear errors for unchecked arguments -----------------------------------------------------

@pytest.mark.parametrize(("kwargs", "exc", "word"), [
    ({"debounce": -1}, ValueError, "debounce"),
    ({"debounce": float("nan")}, ValueError, "debounce"),
    ({"debounce": float("inf")}, ValueError, "debounce"),
    ({"debounce": "0.1"}, ValueError, "debounce"),
    ({"debounce": 1e6}, ValueError, "debounce"),
    ({"max_rows": 0}, ValueError, "max_rows"),
    ({"max_rows": 2.5}, TypeError, "max_rows"),
])
def test_explore_checks_its_options_first(kwargs, exc, word, monkeypatch):
    calls = []
    monkeypatch.setattr("rgrasp_viz.viz.dashboards._explorer.solve",
                        lambda *a, **k: calls.append(1))
    with pytest.raises(exc, match=word):
        rv.explore(n=60, d=40, **kwargs)
    assert not calls  # before any work


@pytest.mark.parametrize(("kwargs", "exc", "word"), [
    ({"n_ticks": 0}, ValueError, "n_ticks"),
    ({"n_ticks": 10**9}, ValueError, "n_ticks"),
    ({"n_ticks": "200"}, TypeError, "n_ticks"),
    ({"interval": 0}, ValueError, "interval"),
    ({"interval": -50}, ValueError, "interval"),
    ({"interval": 50.5}, TypeError, "interval"),
    ({"debounce": -0.5}, ValueError, "debounce"),
])
def test_compare_checks_its_options_first(kwargs, exc, word, monkeypatch):
    calls = []
    monkeypatch.setattr("rgrasp_viz.viz.dashboards._comparison.solve",
                        lambda *a, **k: calls.append(1))
    with pytest.raises(exc, match=word):
        rv.compare(rv.make_regression(n=60, d=40, s_star=3, random_state=0), ("grasp",),
                   **kwargs)
    assert not calls


@pytest.mark.parametrize(("kwargs", "exc", "word"), [
    ({"interval": 0}, ValueError, "interval"),
    ({"max_rows": -3}, ValueError, "max_rows"),
    ({"start": 10**6}, ValueError, "start"),
    ({"start": -10**6}, ValueError, "start"),
    ({"start": 1.5}, TypeError, "start"),
    ({"start": True}, TypeError, "start"),
])
def test_play_checks_its_options(small_run, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        rv.play(small_run, **kwargs)


def test_play_accepts_a_start_counted_from_the_end(small_run):
    player = rv.play(small_run, start=-1)
    try:
        assert player.slider.value == len(player.frames) - 1
    finally:
        player.close()


@pytest.mark.parametrize(("kwargs", "exc", "word"), [
    ({"tol": float("inf")}, ValueError, "tol"),
    ({"ftol": float("inf")}, ValueError, "ftol"),
    ({"tol": float("nan")}, ValueError, "tol"),
    ({"warn": "no"}, TypeError, "warn"),
    ({"warn": 0}, TypeError, "warn"),
    ({"warn": None}, TypeError, "warn"),
])
def test_solve_checks_tol_and_warn(kwargs, exc, word):
    prob = rv.make_regression(n=60, d=40, s_star=3, random_state=0)
    with pytest.raises(exc, match=word):
        rv.solve(prob, "grasp", s=4, **kwargs)


def _gd(sub):
    return sub.x0 - sub.eta * sub.grad(sub.x0)


def test_register_method_refuses_a_string_of_aliases():
    with pytest.raises(TypeError, match="aliases"):
        rv.register_method("strgd", _gd, aliases="xyz")
    assert "strgd" not in rv.method_names()
    with pytest.raises(ValueError, match="unknown method"):
        rv.get_method("x")
    spec = rv.register_method("strgd", _gd, aliases=("xyz",))
    try:
        assert spec.aliases == ("xyz",)
        assert rv.get_method("XYZ").name == "strgd"
    finally:
        rv.unregister_method("strgd")


@pytest.mark.parametrize("color", ["red;background:url(x)", "#12345", "#GGGGGG", "not-a-colour",
                                   "'><script>", 0x123456, "rgb(1,2)", ""])
def test_register_method_refuses_what_is_not_a_colour(color):
    with pytest.raises(ValueError, match="color"):
        rv.register_method("colgd", _gd, color=color)
    assert "colgd" not in rv.method_names()


@pytest.mark.parametrize("color", ["#1a2B3c", "teal", "RebeccaPurple", "rgb(10, 20, 30)",
                                   "rgba(10,20,30,0.5)"])
def test_register_method_takes_colours_plotly_and_css_draw(color):
    spec = rv.register_method("colgd", _gd, color=color)
    try:
        assert spec.color == color
        import plotly.graph_objects as go

        go.Figure({"data": [{"type": "scatter", "x": [0], "y": [0],  # plotly validates it
                             "line": {"color": spec.color}}], "layout": {}})
    finally:
        rv.unregister_method("colgd")


# -- 3. the registry under threads ---------------------------------------------------------------

@pytest.fixture
def busy_switching():
    """Threads switch as often as the interpreter allows (races show up in a few trials)."""
    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_eight_threads_registering_one_name_one_succeeds(busy_switching):
    import threading

    for trial in range(40):
        name = f"racegd{trial}"
        barrier = threading.Barrier(8)
        ok, errors, other = [], [], []

        def register(name=name, barrier=barrier, ok=ok, errors=errors, other=other):
            barrier.wait()
            try:
                ok.append(rv.register_method(name, _gd, aliases=(name + "-alias",)))
            except ValueError as exc:
                errors.append(str(exc))
            except Exception as exc:  # noqa: BLE001 - what the test is about
                other.append(repr(exc))

        threads = [threading.Thread(target=register) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        try:
            assert other == []
            assert len(ok) == 1, (trial, len(ok))
            assert len(errors) == 7 and all("already registered" in e for e in errors)
            assert rv.method_names().count(name) == 1
        finally:
            rv.unregister_method(name)
        assert name not in rv.method_names()
        with pytest.raises(ValueError):
            rv.get_method(name + "-alias")


def test_registry_readers_see_snapshots_while_others_register(busy_switching):
    import threading

    stop = threading.Event()
    failures = []

    def churn():
        k = 0
        while not stop.is_set():
            name = f"churngd{k % 5}"
            try:
                rv.register_method(name, _gd)
                rv.unregister_method(name)
            except ValueError:
                pass
            k += 1

    writers = [threading.Thread(target=churn) for _ in range(3)]
    for w in writers:
        w.start()
    try:
        for _ in range(3000):
            try:
                names = rv.method_names()
                rv.method_names(paper_only=True)
            except RuntimeError as exc:  # "dictionary changed size during iteration"
                failures.append(str(exc))
                break
            assert len(set(names)) == len(names)
    finally:
        stop.set()
        for w in writers:
            w.join()
    assert failures == []
    assert not any(n.startswith("churngd") for n in rv.method_names())


# -- 2. bounded loads ----------------------------------------------------------------------------

def _npy_header(shape, dtype):
    """The bytes of a ``.npy`` header declaring ``shape`` and ``dtype``."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
              "shape": tuple(shape)})
    return buf.getvalue()


def _copy_with(src, dst, extra=(), drop=()):
    """``src`` (an .npz) copied to ``dst`` without the members ``drop``, plus ``extra``
    (name, iterable of byte chunks) members, compressed as np.savez_compressed does."""
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename not in drop:
                zout.writestr(info.filename, zin.read(info))
        for name, chunks in extra:
            with zout.open(name, "w", force_zip64=True) as f:
                for chunk in chunks:
                    f.write(chunk)
    return dst


GIB = 2**30


def _zeros(n, chunk=2**20):
    block = bytes(chunk)
    while n > 0:
        yield block[: min(n, chunk)]
        n -= chunk


@pytest.fixture(scope="module")
def saved(small_run, tmp_path_factory):
    return small_run.trace.save(tmp_path_factory.mktemp("saved") / "run.npz")


@pytest.fixture(scope="module")
def bomb(saved, tmp_path_factory):
    """A trace whose ``ck_x`` member declares no rows but inflates to 1 GiB (a few MB on
    disk)."""
    return _copy_with(saved, tmp_path_factory.mktemp("bomb") / "bomb.npz", drop={"ck_x.npy"},
                      extra=[("ck_x.npy", [_npy_header((0, 40), np.float64), *_zeros(GIB)])])


def _peak_bytes(fn):
    import tracemalloc

    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_member_that_inflates_to_1_gib_is_refused_before_reading(bomb):
    assert bomb.stat().st_size < 20 * 2**20

    def load():
        with pytest.raises(ValueError, match=r"'ck_x' declares shape \(0, 40\).*"
                                             r"1,073,741,824 bytes of data"):
            Trace.load(bomb)

    _, peak = _peak_bytes(load)
    assert peak < 16 * 2**20  # its data were never decompressed


def test_load_never_reads_a_member_a_trace_does_not_have(saved, small_run, tmp_path):
    size = 256 * 2**20
    path = _copy_with(saved, tmp_path / "extra.npz",
                      extra=[("payload.npy", [_npy_header((size // 8,), np.float64),
                                              *_zeros(size)])])
    tr, peak = _peak_bytes(lambda: Trace.load(path))
    assert tr.equals(small_run.trace)
    assert peak < 16 * 2**20  # the 256 MiB member was never decompressed


def test_a_member_bigger_than_its_header_says_is_refused_before_reading(saved, tmp_path):
    path = _copy_with(saved, tmp_path / "lie.npz", drop={"x_true.npy"},
                      extra=[("x_true.npy", [_npy_header((0,), np.float64),
                                             *_zeros(64 * 2**20)])])
    with pytest.raises(ValueError, match=r"'x_true' declares shape \(0,\).*damaged or crafted"):
        _peak_bytes(lambda: Trace.load(path))
    _, peak = _peak_bytes(lambda: pytest.raises(ValueError, Trace.load, path))
    assert peak < 16 * 2**20


def test_consistent_but_huge_declared_sizes_are_refused_before_allocating(saved, tmp_path):
    rows = 2**19  # 4 MiB per per-iteration array: over a 1 MiB cap
    path = _copy_with(saved, tmp_path / "huge.npz", drop={"ck_x.npy"},
                      extra=[("ck_x.npy", [_npy_header((rows, 1), np.float64),
                                           *_zeros(rows * 8)])])
    with pytest.raises(ValueError, match=r"'ck_x' alone.*max_bytes"):
        Trace.load(path, max_bytes=2**20)
    # with room for it, the sizes are checked against each other as before
    with pytest.raises(ValueError, match="ck_x"):
        Trace.load(path)
    with pytest.raises(ValueError, match="max_bytes"):
        Trace.load(saved, max_bytes=0)


def test_a_huge_dimension_is_refused_by_load_and_by_play(small_run, tmp_path):
    d = 10**12  # a trace with no dense arrays can still claim any d
    arrays = dict(small_run.trace.arrays)
    arrays["ck_x"] = np.empty((0, d))
    arrays["x_true"] = np.empty(0)
    tr = Trace(arrays, {**small_run.trace.meta, "d": d})
    path = tr.save(tmp_path / "wide.npz")
    assert path.stat().st_size < 2**20
    with pytest.raises(ValueError, match=r"dimension d = 1,000,000,000,000"):
        Trace.load(path)
    with pytest.raises(ValueError, match=r"cannot replay this trace.*dimension d"):
        rv.play(tr)


def test_load_refuses_duplicate_and_object_members(saved, tmp_path):
    import zipfile

    dup = tmp_path / "dup.npz"
    _copy_with(saved, dup)
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(dup, "a") as zf:
        zf.writestr("x_true.npy", _npy_header((0,), np.float64))
    with pytest.raises(ValueError, match="stored twice"):
        Trace.load(dup)
    obj = _copy_with(saved, tmp_path / "obj.npz", drop={"x_true.npy"},
                     extra=[("x_true.npy", [_npy_header((1,), object), bytes(8)])])
    with pytest.raises(ValueError, match="objects"):
        Trace.load(obj)


# -- 5. leftovers of a killed save ---------------------------------------------------------------

def _dead_pid():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # exited and reaped: no process has this id (until it is reused)


def test_a_killed_save_leaves_a_temp_file_the_next_save_removes(small_run, tmp_path):
    import os

    from rgrasp_viz import _io

    target = tmp_path / "run.npz"
    dead = _dead_pid()
    stale = tmp_path / f".run.npz.tmp-{dead}-abc123xy.npz"  # what SIGKILL mid-save leaves
    stale.write_bytes(b"PK\x03\x04partial")
    live = tmp_path / f".run.npz.tmp-{os.getppid()}-zz99zz99.npz"  # a writer still running
    live.write_bytes(b"partial")
    mine = tmp_path / f".run.npz.tmp-{os.getpid()}-qq11qq11.npz"  # another thread of ours
    mine.write_bytes(b"partial")
    other = tmp_path / f".other.npz.tmp-{dead}-abc123xy.npz"  # another destination's
    other.write_bytes(b"partial")
    assert _io.temp_pattern(target).fullmatch(stale.name)
    small_run.trace.save(target)
    assert not stale.exists()
    assert live.exists() and mine.exists() and other.exists()
    assert Trace.load(target).equals(small_run.trace)
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == sorted([target.name, live.name, mine.name, other.name])


def test_temp_files_are_named_after_their_target_and_writer(tmp_path):
    import os

    from rgrasp_viz import _io

    target = tmp_path / "fig.png"
    with _io.atomic_path(target) as tmp:
        assert tmp.parent == tmp_path
        m = _io.temp_pattern(target).fullmatch(tmp.name)
        assert m and int(m.group(1)) == os.getpid()
        tmp.write_bytes(b"png")
    assert target.read_bytes() == b"png" and not tmp.exists()


# -- 6. a step-5 solver that never returns -------------------------------------------------------

@pytest.fixture
def stuck_method():
    """A registered method whose step-5 solver blocks until released (a learner's infinite
    loop), and the Event that releases it."""
    import threading

    release, entered = threading.Event(), threading.Event()

    def stuck(sub):
        entered.set()
        release.wait(120)
        return sub.x0

    rv.register_method("stuckgd", stuck)
    yield release, entered
    release.set()
    rv.unregister_method("stuckgd")


def _wait_for(cond, seconds=60.0):
    """Poll ``cond()`` (a liveness bound, not a speed)."""
    import time

    for _ in range(int(seconds / 0.02)):
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_explorer_shows_a_running_solve_and_a_new_value_supersedes_it(stuck_method):
    release, entered = stuck_method
    dash = rv.explore(n=60, d=40, debounce=0.01, cost=False)
    try:
        deb = dash.debouncer
        deb.tick, deb.supersede_after = 0.05, 0.2
        good = dash.result
        dash.set(method="stuckgd")
        assert entered.wait(60)
        # the dashboard says the solve is still running, with its age in seconds
        assert _wait_for(lambda: "rgrasp-busy-seconds" in dash.status.value)
        assert "not finished yet" in dash.status.value and "rgrasp-busy" in dash.status.value
        assert dash.result is good and not deb.idle
        # a new value supersedes it: solved and shown while the stuck solve still runs
        dash.set(method="fght")
        assert dash.wait(60)
        assert dash.result.method == "fght" and "rgrasp-busy" not in dash.status.value
        shown = dash.status.value
        n_dropped = deb.n_dropped
        release.set()  # the stuck solve returns at last: its result is dropped
        assert _wait_for(lambda: deb.n_dropped == n_dropped + 1)
        assert dash.result.method == "fght" and dash.status.value == shown
    finally:
        release.set()
        dash.close()


def test_compare_shows_a_running_solve_and_a_new_value_supersedes_it(stuck_method):
    release, entered = stuck_method
    prob = rv.make_regression(n=60, d=40, s_star=3, random_state=0)
    cmp_ = rv.compare(prob, ("grasp", "svrgsp+"), debounce=0.01, cost=False, n_ticks=20)
    gate = {"stuck": False}
    real = cmp_._compute

    def compute(params):  # the first re-solve meets the stuck solver
        if gate["stuck"]:
            gate["stuck"] = False
            rv.solve(prob, "stuckgd", s=4, warn=False)
        return real(params)

    cmp_.debouncer.compute = compute
    try:
        deb = cmp_.debouncer
        deb.tick, deb.supersede_after = 0.05, 0.2
        gate["stuck"] = True
        cmp_.m_slider.value = 3
        assert entered.wait(60)
        assert _wait_for(lambda: "rgrasp-busy-seconds" in cmp_.status.value)
        assert "solving every method" in cmp_.status.value
        cmp_.m_slider.value = 4
        assert cmp_.wait(60)
        assert cmp_.results["svrgsp+"].trace.meta["m"] == 4
        assert "rgrasp-busy" not in cmp_.status.value
        n_dropped = deb.n_dropped
        release.set()
        assert _wait_for(lambda: deb.n_dropped == n_dropped + 1)
        assert cmp_.results["svrgsp+"].trace.meta["m"] == 4
    finally:
        release.set()
        cmp_.close()


def test_debouncer_busy_ticks_only_for_slow_computations():
    import threading

    from rgrasp_viz.viz.dashboards import Debouncer

    ticks, applied = [], []
    release = threading.Event()

    def compute(p):
        if p == "slow":
            release.wait(60)
        return p

    deb = Debouncer(compute, applied.append, applied.append, delay=0.01,
                    on_busy=ticks.append, tick=0.05)
    try:
        deb.request("quick")
        assert deb.wait(60) and applied == ["quick"]
        deb.request("slow")
        assert _wait_for(lambda: len(ticks) >= 2)
        assert ticks == sorted(ticks) and all(t >= 0.05 for t in ticks)
        release.set()
        assert deb.wait(60) and applied == ["quick", "slow"]
        n = len(ticks)
        deb.request("quick")
        assert deb.wait(60)
        assert len(ticks) <= n + 1  # no ticking once nothing runs
    finally:
        release.set()
        deb.close()


def test_animation_headlines_show_labels_as_text(small_run, tmp_path):
    from rgrasp_viz.viz import _animate as A

    tr = Trace.load(crafted_trace(small_run, tmp_path / "evil.npz", method=PAYLOAD))
    head = A._frame_title([PAYLOAD], [tr], [(1, None)], 0.5, None)
    assert "<img" not in head and ESCAPED in head and head.startswith("<b>")
    assert "&lt;b&gt;mine" in A._frame_title([PAYLOAD], [tr], [(1, None)], 0.5, "<b>mine")
    panel = A._Panels(tr, ("support",), [(1, None)], 1.0, 10)
    shown = figure_texts(panel.row(1, None)[0])
    assert "<img" not in shown and ESCAPED in shown
