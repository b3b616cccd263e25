"""Issue 12: outputs are complete or absent, bad files and arguments get clear errors, cached
step sizes follow the data, and the package and its main job start anywhere.

Faults are injected for real where the machine allows it (a 64 KiB tmpfs as root, a read-only
install run as an unprivileged user, JupyterLab started as root) and by monkeypatching where
it does not.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz import _trace as trace_module
from rgrasp_viz import datasets

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "getuid") and os.getuid() == 0
NOBODY = 65534


def small_trace(max_iter=3, record_iterates=False, d=30):
    prob = rv.make_regression(n=40, d=d, s_star=3, random_state=0)
    return rv.solve(prob, method="svrgsp+", s=4, max_iter=max_iter, tol=0.0, warn=False,
                    random_state=0, record_iterates=record_iterates).trace


def big_trace():
    """A trace whose compressed file is far larger than 64 KiB (about 0.9 MB: snapshots of
    inner iterates that move on all d coordinates)."""
    prob = rv.make_regression(n=200, d=2000, s_star=10, random_state=0)
    return rv.solve(prob, method="svrgsp+", s=12, max_iter=3, tol=0.0, warn=False,
                    random_state=0, record_iterates=True, inner="paper").trace


def leftovers(folder, keep):
    return sorted(p.name for p in Path(folder).iterdir() if p.name not in keep)


# -- 1. Trace.save is atomic -------------------------------------------------------------------


@pytest.fixture
def tiny_tmpfs(unavailable):
    """A 64 KiB tmpfs (needs root and mount); unmounted afterwards."""
    if not IS_ROOT or shutil.which("mount") is None:
        unavailable("a tiny tmpfs needs root and mount (the monkeypatched test still runs)")
    folder = Path(tempfile.mkdtemp(prefix="rgrasp-tmpfs-"))
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        folder.rmdir()
        unavailable(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
        folder.rmdir()


def test_save_on_a_full_disk_keeps_the_previous_file(tiny_tmpfs):
    good = small_trace()
    path = tiny_tmpfs / "run.npz"
    good.save(path)
    before = path.read_bytes()
    with pytest.raises(OSError) as info:
        big_trace().save(path)
    assert info.value.errno == errno.ENOSPC
    assert path.read_bytes() == before  # the previous good file, untouched
    assert rv.Trace.load(path).equals(good)
    assert leftovers(tiny_tmpfs, {"run.npz"}) == []  # no temporary file left


def test_save_failing_part_way_keeps_the_previous_file(tmp_path, monkeypatch):
    good = small_trace()
    path = tmp_path / "run.npz"
    good.save(path)
    before = path.read_bytes()
    real = np.savez_compressed

    def fails_part_way(file, **arrays):
        real(file, **arrays)
        with open(file, "r+b") as f:  # what a full disk leaves: a truncated archive
            f.truncate(100)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trace_module.np, "savez_compressed", fails_part_way)
    with pytest.raises(OSError, match="No space left"):
        small_trace(max_iter=5).save(path)
    assert path.read_bytes() == before
    assert leftovers(tmp_path, {"run.npz"}) == []


def test_save_interrupted_keeps_the_previous_file(tmp_path, monkeypatch):
    good = small_trace()
    path = tmp_path / "run"  # saved as run.npz
    good.save(path)

    def interrupted(file, **arrays):
        Path(file).write_bytes(b"PK\x03\x04 half")
        raise KeyboardInterrupt

    monkeypatch.setattr(trace_module.np, "savez_compressed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        small_trace(max_iter=5).save(path)
    assert rv.Trace.load(tmp_path / "run.npz").equals(good)
    assert leftovers(tmp_path, {"run.npz"}) == []


@pytest.mark.parametrize(("name", "written"), [("run.npz", "run.npz"), ("run", "run.npz"),
                                               ("run.trace", "run.trace.npz"),
                                               ("run.NPZ", "run.NPZ.npz")])
def test_save_keeps_numpys_naming_and_returns_the_path(tmp_path, name, written):
    tr = small_trace()
    out = tr.save(tmp_path / name)
    assert out == tmp_path / written
    assert leftovers(tmp_path, set()) == [written]
    assert rv.Trace.load(out).equals(tr)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()  # not mkstemp's 0600


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- 2. Trace.load names the file and the problem ----------------------------------------------


def _arrays(tr):
    a = dict(tr.arrays)
    a["__meta__"] = np.array(json.dumps(tr.meta))
    return a


def _drop_last(key):
    return lambda a, tr: a.__setitem__(key, a[key][:-1])


def _set(key, value):
    return lambda a, tr: a.__setitem__(key, value(a, tr) if callable(value) else value)


def _meta(change):
    def edit(a, tr):
        meta = dict(tr.meta)
        change(meta)
        a["__meta__"] = np.array(json.dumps(meta))
    return edit


BAD_TRACES = {
    # ragged index sets
    "ptr too short": (_drop_last("support_ptr"), r"'support_ptr' has \d+ offsets, expected"),
    "ptr past the end": (_set("T_ptr", lambda a, tr: a["T_ptr"] + 1),
                         r"'T_ptr' is not an offset array into 'T_idx'"),
    "ptr decreasing": (_set("Z_ptr", lambda a, tr: a["Z_ptr"][::-1].copy()),
                       r"'Z_ptr' is not an offset array"),
    "support index out of range": (_set("support_idx", lambda a, tr: a["support_idx"] + 1000),
                                   r"'support_idx' holds indices outside 0\.\.29"),
    "negative index": (_set("T_idx", lambda a, tr: a["T_idx"] - 100),
                       r"'T_idx' holds indices outside 0\.\.29"),
    "values and indices differ": (_drop_last("support_val"),
                                  r"'support_val' has \d+ values for \d+ indices"),
    # per-iteration arrays
    "per-iteration lengths differ": (_drop_last("objective"),
                                     r"per-iteration arrays differ in length.*'objective'"),
    "no rows": (lambda a, tr: [a.__setitem__(k, a[k][:0]) for k in trace_module._PER_ITER],
                r"no rows"),
    "2-D per-iteration array": (_set("passes", lambda a, tr: a["passes"][:, None]),
                                r"'passes' has shape \(\d+, 1\) \(1-D expected\)"),
    "float indices": (_set("support_idx", lambda a, tr: a["support_idx"].astype(float)),
                      r"'support_idx' has dtype float64 \(integers expected\)"),
    "string array": (_set("objective", lambda a, tr: a["objective"].astype(str)),
                     r"'objective' has dtype <U\d+ \(numbers expected\)"),
    # events, checkpoints, snapshots, truth
    "events differ in length": (_drop_last("ev_step"), r"arrays \['ev_iter'.*differ in length"),
    "event iteration out of range": (_set("ev_iter", lambda a, tr: a["ev_iter"] + 50),
                                     r"'ev_iter' holds iterations outside 1\.\.\d+: "),
    "event kind": (_set("ev_kind", lambda a, tr: a["ev_kind"] + 2),
                   r"'ev_kind' holds values other than 0"),
    "checkpoints differ in length": (_drop_last("ck_proxy"),
                                     r"arrays \['ck_iter'.*differ in length"),
    "snapshots of the wrong width": (_set("ck_x", np.zeros((0, 7))),
                                     r"'ck_x' has shape \(0, 7\), expected \(0, 30\)"),
    "x_true of the wrong length": (_set("x_true", np.ones(5)), r"'x_true' has length 5"),
    "missing array": (lambda a, tr: a.pop("b_val"), r"not a complete trace: missing \['b_val'\]"),
    # metadata
    "meta not JSON": (_set("__meta__", np.array("{'method': fght")),
                      r"invalid trace metadata: not valid JSON"),
    "meta a list": (_set("__meta__", np.array("[1, 2]")),
                    r"invalid trace metadata: expected a JSON object, got list"),
    "meta not a string": (_set("__meta__", np.arange(3)),
                          r"invalid trace metadata: expected a JSON string, got an array"),
    "meta without method": (_meta(lambda m: m.pop("method")), r"'method' is missing"),
    "meta without d": (_meta(lambda m: m.pop("d")), r"'d' \(the dimension\) is missing"),
    "meta with a text d": (_meta(lambda m: m.__setitem__("d", "30")),
                           r"'d' \(the dimension\) is missing or not a positive integer"),
    "meta d smaller than the indices": (_meta(lambda m: m.__setitem__("d", 2)),
                                        r"holds indices outside 0\.\.1"),
}


@pytest.mark.parametrize("case", list(BAD_TRACES))
def test_load_inconsistent_trace_names_file_and_problem(tmp_path, case):
    edit, message = BAD_TRACES[case]
    tr = small_trace()
    assert len(tr.ev_iter) and len(tr.ck_iter) and len(tr.T_idx)  # every part is exercised
    arrays = _arrays(tr)
    edit(arrays, tr)
    path = tmp_path / "broken-trace.npz"
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match=message) as info:
        rv.Trace.load(path)
    assert str(path) in str(info.value)


def test_load_renamed_npy_and_other_files(tmp_path):
    npy = tmp_path / "array.npy"
    np.save(npy, np.arange(5))
    renamed = npy.rename(tmp_path / "renamed.npz")
    with pytest.raises(ValueError, match=r"renamed\.npz is a single NumPy array \(\.npy"):
        rv.Trace.load(renamed)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(ValueError, match=r"notes\.txt is not an rgrasp_viz trace: not an \.npz"):
        rv.Trace.load(text)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.npz is not an rgrasp_viz trace"):
        rv.Trace.load(empty)
    with pytest.raises(ValueError, match=r"missing\.npz is not a readable rgrasp_viz trace"):
        rv.Trace.load(tmp_path / "missing.npz")


def test_load_keeps_good_traces_exact(tmp_path):
    for record in (False, True):
        tr = small_trace(record_iterates=record)
        back = rv.Trace.load(tr.save(tmp_path / f"good{record}.npz"))
        assert back.equals(tr) and back.meta == tr.meta


# -- 3. load_svmlight and fetch arguments ------------------------------------------------------


@pytest.mark.parametrize("content", ["", "# only a comment\n", "\n\n   \n",
                                     "# header\n\n# another\n"],
                         ids=["empty", "comment", "blank", "comments"])
def test_load_svmlight_without_samples_names_the_file(tmp_path, content):
    pytest.importorskip("sklearn")
    path = tmp_path / "nothing.svm"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"nothing\.svm: no samples \(the file is empty"):
        datasets.load_svmlight(path)
    with pytest.raises(ValueError, match=r"nothing\.svm: no samples"):
        datasets.fetch(path)


def test_load_svmlight_argument_types(tmp_path):
    path = tmp_path / "ok.svm"
    path.write_text("1 1:1\n")
    for bad in (1.5, "3", True):
        with pytest.raises(TypeError, match="n_features must be a positive integer"):
            datasets.load_svmlight(path, n_features=bad)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to download fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("fetch tried to download before checking its arguments")
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(datasets._registry, "_retrieve", refuse)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sha256": 123}, r"sha256 must be a str of 64 hexadecimal digits, got int: 123"),
    ({"sha256": b"ab" * 32}, r"sha256 must be a str"),
    ({"data_dir": 123}, r"data_dir must be a str or path-like, got int"),
    ({"url": 123}, r"url must be a str, got int"),
    ({"url": Path("/x")}, r"url must be a str, got PosixPath|url must be a str, got WindowsPath"),
    ({"download": "no"}, r"download must be True or False, got str: 'no'"),
    ({"download": 0}, r"download must be True or False, got int"),
    ({"progress": None}, r"progress must be True or False, got NoneType"),
    ({"return_X_y": "yes"}, r"return_X_y must be True or False"),
    ({"timeout": "5"}, r"timeout must be a number of seconds, got str"),
    ({"timeout": True}, r"timeout must be a number of seconds, got bool"),
    ({"timeout": 1j}, r"timeout must be a number of seconds, got complex"),
    ({"name": 5}, r"name must be a data set name \(str\), a file path or a RemoteDataset, "
                  r"got int"),
    ({"name": None}, r"name must be a data set name"),
])
def test_fetch_wrong_argument_types_before_any_download(tmp_path, no_network, kwargs, message):
    kwargs = {"name": "rcv1", "data_dir": tmp_path, **kwargs}
    with pytest.raises(TypeError, match=message):
        datasets.fetch(**kwargs)
    assert list(tmp_path.iterdir()) == []  # nothing created


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sha256": "abc"}, r"sha256 must be 64 hexadecimal digits, got 'abc'"),
    ({"sha256": "g" * 64}, r"sha256 must be 64 hexadecimal digits"),
    ({"timeout": 0}, r"timeout must be a positive number of seconds, got 0\.0"),
    ({"timeout": -1}, r"timeout must be a positive number of seconds"),
    ({"timeout": float("nan")}, r"timeout must be a positive number of seconds, got nan"),
])
def test_fetch_bad_argument_values_before_any_download(tmp_path, no_network, kwargs, message):
    with pytest.raises(ValueError, match=message):
        datasets.fetch("rcv1", data_dir=tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_fetch_local_file_checks_sha256_type_first(tmp_path):
    path = tmp_path / "local.svm"
    path.write_text("1 1:1\n-1 2:1\n")
    with pytest.raises(TypeError, match="sha256 must be a str"):
        datasets.fetch(path, sha256=123)


# -- 4. cached step sizes follow the data ------------------------------------------------------


def _fresh(prob):
    W = prob.W.copy()
    return rv.Problem(W, prob.y.copy(), loss=prob.loss, x_true=prob.x_true, name=prob.name)


def _edits():
    def scale_dense(p):
        p.W *= 10.0

    def scale_csr(p):
        p.W.data *= 10.0

    def one_entry(p):
        p.W[3, 7] = 25.0

    def swap_columns(p):
        p.W[:, [0, 5]] = p.W[:, [5, 0]]

    def shuffle_rows(p):
        np.random.default_rng(1).shuffle(p.W)

    def edit_y(p):
        p.y[:] = np.random.default_rng(2).standard_normal(p.n)  # other top columns of W^T y

    def new_W(p):
        p.W = p.W * 0.1

    every = ("fght", "sght", "svrgsp+")
    # name: (edit, sparse data, methods whose default step must change)
    return {"scale dense W": (scale_dense, False, every),
            "scale CSR data": (scale_csr, True, every),
            "edit y": (edit_y, False, ("fght", "sght")),  # rho(2s) reads W^T y; L(k) does not
            "assign a new W": (new_W, False, every),
            "one entry": (one_entry, False, ()),
            "swap two columns": (swap_columns, False, ()),
            "shuffle rows": (shuffle_rows, False, ())}


@pytest.mark.parametrize("edit", list(_edits()))
@pytest.mark.parametrize("method", ["fght", "sght", "svrgsp+"])
def test_editing_data_in_place_after_a_solve_uses_the_new_step(method, edit):
    change, sparse, step_changes = _edits()[edit]
    prob = rv.make_regression(n=120, d=200, s_star=6, random_state=0,
                              sparse_density=0.3 if sparse else None)
    kw = {"method": method, "s": 8, "max_iter": 4, "tol": 0.0, "warn": False,
          "random_state": 0}
    before = rv.solve(prob, **kw)
    change(prob)  # in place, after the step size was computed and cached
    after = rv.solve(prob, **kw)
    reference = rv.solve(_fresh(prob), **kw)
    assert after.trace.meta["eta"] == reference.trace.meta["eta"]  # bit for bit
    if method in step_changes:
        assert after.trace.meta["eta"] != before.trace.meta["eta"]
    np.testing.assert_array_equal(after.x, reference.x)
    assert after.trace.equals(reference.trace)


def test_norms_follow_in_place_edits():
    prob = rv.make_regression(n=30, d=20, s_star=3, random_state=0)
    cols, rows = prob.col_sq_norms(), prob.row_sq_norms()
    assert prob.col_sq_norms() is cols  # cached while the data are unchanged
    prob.W[:, 2] *= 3.0
    np.testing.assert_allclose(prob.col_sq_norms(), (prob.W ** 2).sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(prob.row_sq_norms(), (prob.W ** 2).sum(axis=1), rtol=1e-14)
    assert prob.col_sq_norms()[2] == pytest.approx(9.0 * cols[2])
    assert not np.array_equal(prob.row_sq_norms(), rows)


def test_edit_through_the_callers_array_is_seen():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((50, 40))  # canonical: the Problem shares it without copying
    y = rng.standard_normal(50)
    prob = rv.Problem(W, y)
    eta = rv.default_eta(prob, "fght", 5)
    W *= 2.0
    assert rv.default_eta(prob, "fght", 5) == pytest.approx(eta / 4.0, rel=1e-12)


def test_fingerprint_sees_every_single_entry_and_swaps():
    prob = rv.make_regression(n=13, d=11, s_star=3, random_state=0)
    base = prob.data_fingerprint()
    assert prob.data_fingerprint() == base
    W = prob.W
    for i in range(W.shape[0]):  # the smallest change of every entry
        for j in range(W.shape[1]):
            old = W[i, j]
            W[i, j] = np.nextafter(old, np.inf)
            assert prob.data_fingerprint() != base, (i, j)
            W[i, j] = old
    assert prob.data_fingerprint() == base
    for a, b in ((0, 1), (2, 12)):  # rows
        W[[a, b]] = W[[b, a]]
        assert prob.data_fingerprint() != base
        W[[a, b]] = W[[b, a]]
    for a, b in ((0, 10), (3, 4)):  # columns
        W[:, [a, b]] = W[:, [b, a]]
        assert prob.data_fingerprint() != base
        W[:, [a, b]] = W[:, [b, a]]
    assert prob.data_fingerprint() == base
    prob.y[4] = np.nextafter(prob.y[4], -np.inf)
    assert prob.data_fingerprint() != base


def test_fingerprint_of_csr_data_and_structure():
    def csr():
        return rv.make_regression(n=20, d=15, s_star=3, sparse_density=0.3, random_state=0)

    prob = csr()
    base = prob.data_fingerprint()
    prob.W.data[5] = np.nextafter(prob.W.data[5], 0.0)  # a value
    assert prob.data_fingerprint() != base
    prob = csr()
    prob.W.indices[0] = (prob.W.indices[0] + 1) % prob.d  # the structure
    assert prob.data_fingerprint() != base
    assert csr().data_fingerprint() == base


def test_problem_still_pickles_and_copies():
    import copy

    prob = rv.make_regression(n=30, d=20, s_star=3, random_state=0)
    eta = rv.default_eta(prob, "svrgsp+", 4)
    back = pickle.loads(pickle.dumps(prob))
    assert rv.default_eta(back, "svrgsp+", 4) == eta
    twin = copy.copy(prob)
    twin.W = prob.W * 2.0  # the copy's own data; the original keeps its step
    assert rv.default_eta(twin, "svrgsp+", 4) == pytest.approx(eta / 4.0, rel=1e-12)
    assert rv.default_eta(prob, "svrgsp+", 4) == eta


def test_cached_computes_once_per_state_of_the_data():
    prob = rv.make_regression(n=30, d=20, s_star=3, random_state=0)
    calls = []

    def compute():
        calls.append(1)
        return float(prob.W.sum())

    first = prob.cached("total", compute)
    assert prob.cached("total", compute) == first and len(calls) == 1
    prob.W[0, 0] += 1.0
    assert prob.cached("total", compute) == pytest.approx(first + 1.0) and len(calls) == 2


# -- 5. the package and its main job start anywhere --------------------------------------------

READ_ONLY_CHILD = textwrap.dedent(
    """
    import json, os, sys, tempfile, warnings

    if sys.argv[1:] == ["--no-temp-dir"]:  # /tmp and every other candidate unwritable too
        tempfile.tempdir = os.environ["TMPDIR"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import rgrasp_viz as rv
        prob = rv.make_regression(n=40, d=30, s_star=3, random_state=0)
        res = rv.solve(prob, method="fght", s=4, max_iter=3, tol=0.0, warn=False,
                       random_state=0)
    print(json.dumps({
        "package": os.path.dirname(rv.__file__),
        "warnings": [str(w.message) for w in caught],
        "x": res.x.tolist(),
    }))
    """
)


def _chmod_read_only(top):
    """chmod -R a-w (directories keep r-x, files r--)."""
    for path in [top, *top.rglob("*")]:
        mode = path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        os.chmod(path, mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                 | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if path.is_dir() else 0))


@contextlib.contextmanager
def read_only_install(unavailable, temp_writable=True):
    """The package copied into a read-only folder, with an unwritable HOME (and optionally an
    unwritable temporary directory).  ``chmod -R a-w`` makes them read-only for an ordinary
    user; root ignores file modes, so as root they are also bind-mounted read-only (what a
    read-only container image does)."""
    top = Path(tempfile.mkdtemp(prefix="rgrasp-ro-"))
    mounts = []
    try:
        site, home, tmp = top / "site", top / "home", top / "tmp"
        shutil.copytree(ROOT / "rgrasp_viz", site / "rgrasp_viz",
                        ignore=shutil.ignore_patterns("__pycache__"))
        home.mkdir()
        tmp.mkdir()
        read_only = [site, home] + ([] if temp_writable else [tmp])
        for folder in read_only:
            _chmod_read_only(folder)
        if IS_ROOT:
            for folder in read_only:
                for cmd in (["mount", "--bind", str(folder), str(folder)],
                            ["mount", "-o", "remount,bind,ro", str(folder)]):
                    proc = subprocess.run(cmd, capture_output=True, text=True)
                    if proc.returncode != 0:
                        unavailable(f"as root, a read-only install needs a read-only bind "
                                    f"mount: {' '.join(cmd)}: {proc.stderr.strip()}")
                    if cmd[1] == "--bind":
                        mounts.append(folder)
            probe = home / "probe"
            with pytest.raises(OSError):
                probe.write_text("root can write here")
        yield site, home, tmp
    finally:
        for folder in reversed(mounts):
            subprocess.run(["umount", str(folder)], check=False)
        for path in [top, *top.rglob("*")]:
            with contextlib.suppress(OSError):
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
        shutil.rmtree(top, ignore_errors=True)


def _run_read_only(site, home, tmp, *args):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "XDG_", "PYTHON"))}
    env.update(HOME=str(home), PYTHONPATH=str(site), TMPDIR=str(tmp),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", READ_ONLY_CHILD, *args], capture_output=True,
                          text=True, cwd=str(home), env=env, timeout=600)


def _numba_warnings(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report, [w for w in report["warnings"] if "numba cannot write" in w]


def test_import_and_solve_from_a_read_only_install(unavailable):
    if not hasattr(os, "getuid"):
        unavailable("POSIX file modes needed")
    with read_only_install(unavailable) as (site, home, tmp):
        report, warned = _numba_warnings(_run_read_only(site, home, tmp))
        assert report["package"] == str(site / "rgrasp_viz")  # the read-only copy ran
        if rv._kernels.HAVE_NUMBA:
            assert len(warned) == 1, report["warnings"]  # one warning, not one per kernel
            cache = tmp / f"rgrasp_viz-numba-{os.getuid()}"
            assert f"cached in {cache} instead" in warned[0]
            assert any(p.suffix == ".nbi" for p in cache.rglob("*"))  # the cache is used
            assert not list(site.rglob("__pycache__"))  # nothing written into the install
        prob = rv.make_regression(n=40, d=30, s_star=3, random_state=0)
        here = rv.solve(prob, method="fght", s=4, max_iter=3, tol=0.0, warn=False,
                        random_state=0)
        np.testing.assert_array_equal(np.array(report["x"]), here.x)  # same numbers


def test_no_writable_temp_dir_either_runs_without_a_cache(unavailable):
    if not rv._kernels.HAVE_NUMBA:
        unavailable("numba is not installed")
    with read_only_install(unavailable, temp_writable=False) as (site, home, tmp):
        report, warned = _numba_warnings(_run_read_only(site, home, tmp, "--no-temp-dir"))
        assert len(warned) == 1, report["warnings"]
        assert "cached nowhere" in warned[0]
        assert list(tmp.iterdir()) == []


def _make_n(target, as_nobody=False):
    extra = {"user": NOBODY, "group": NOBODY, "extra_groups": []} if as_nobody else {}
    proc = subprocess.run(["make", "-n", target, f"PY={sys.executable}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, **extra)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if " -m jupyter lab" in line
            or " -m voila" in line]


def test_make_lab_passes_allow_root_only_to_root(unavailable):
    if shutil.which("make") is None:
        unavailable("make is not installed")
    (line,) = _make_n("lab")
    assert ("--allow-root" in line.split()) == IS_ROOT, line
    if IS_ROOT:  # the other branch: an ordinary user gets no --allow-root
        (line,) = _make_n("lab", as_nobody=True)
        assert "--allow-root" not in line.split(), line


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_command_serves_the_course(tmp_path, unavailable):
    """Run the command `make lab` runs (as whoever runs the tests: root here) for a few
    seconds: it must serve /lab on loopback instead of exiting at once."""
    if shutil.which("make") is None:
        unavailable("make is not installed")
    pytest.importorskip("jupyterlab")
    (line,) = _make_n("lab")
    port, token = _free_port(), "rgrasp-test-token"
    cmd = shlex.split(line) + ["--no-browser", "--ServerApp.ip=127.0.0.1",
                               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                               f"--IdentityProvider.token={token}"]
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        body, deadline = None, time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/lab?token={token}"
                with urllib.request.urlopen(url, timeout=5) as resp:
                    assert resp.status == 200
                    body = resp.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert proc.poll() is None, f"jupyter lab exited: {log.read_text()[-2000:]}"
        assert body is not None, f"no answer on /lab: {log.read_text()[-2000:]}"
        assert "JupyterLab" in body
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_sparse_problem_pickle_round_trip_keeps_canonical_csr():
    prob = rv.make_regression(n=20, d=15, s_star=3, sparse_density=0.3, random_state=0)
    back = pickle.loads(pickle.dumps(prob))
    assert isinstance(back.W, sp.csr_matrix) and back.data_fingerprint() == prob.data_fingerprint()


def test_a_solve_checks_the_data_for_edits_once(monkeypatch):
    """The fingerprint (one pass over W) is taken once per solve, not at every lookup."""
    prob = rv.make_regression(n=60, d=90, s_star=3, random_state=0)
    calls = []
    real = type(prob).data_fingerprint

    def counting(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(type(prob), "data_fingerprint", counting)
    for method in ("svrgsp+", "sght", "fght"):
        calls.clear()
        rv.solve(prob, method, random_state=0, max_iter=2, warn=False)
        assert len(calls) == 1, method
