"""Tests of rgrasp_viz.datasets: svmlight loading and fetch() against a loopback HTTP server.

Every download test runs the real download code (pooch and requests: temporary file,
checksum, atomic move; our deadline downloader and bounded bz2 decompression) against an
``http.server`` on 127.0.0.1 serving small files that the tests create.
"""

import bz2
import dataclasses
import hashlib
import http.server
import io
import math
import os
import socket
import sys
import threading
import time

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import datasets
from rgrasp_viz.datasets import (
    DATASETS,
    RemoteDataset,
    _download,
    fetch,
    get_data_dir,
    load_svmlight,
)
from rgrasp_viz.exceptions import ChecksumError, DatasetUnavailableError

sklearn_datasets = pytest.importorskip("sklearn.datasets")

N, D = 120, 30


# ----------------------------------------------------------------------------- helpers


def _svmlight_bytes(W, y):
    buf = io.BytesIO()
    sklearn_datasets.dump_svmlight_file(W, y, buf, zero_based=False)
    return buf.getvalue()


@pytest.fixture(scope="module")
def tiny():
    """A small sparse logistic problem, its svmlight text and the .bz2 of it."""
    prob = rv.make_classification(
        n=N, d=D, s_star=4, signal=4.0, sparse_density=0.3, random_state=0
    )
    text = _svmlight_bytes(prob.W, prob.y)
    packed = bz2.compress(text)
    return {
        "problem": prob,
        "text": text,
        "bz2": packed,
        "sha256": hashlib.sha256(packed).hexdigest(),
    }


class _Server:
    def __init__(self):
        self.files = {}  # path -> bytes
        self.truncate = set()  # paths whose body is cut in half (Content-Length says all)
        self.status = {}  # path -> HTTP error status to answer with
        self.trickle = set()  # paths whose body is sent one byte every 2 s
        self.trickled = 0  # bytes of trickled bodies sent so far
        self.requests = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server API)
                owner.requests.append(self.path)
                if self.path in owner.status:
                    self.send_error(owner.status[self.path], "Server trouble")
                    return
                body = owner.files.get(self.path)
                if body is None:
                    self.send_error(404, "File not found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in owner.truncate:
                    body = body[: len(body) // 2]
                if self.path in owner.trickle:
                    for k in range(min(len(body), 60)):  # never completes; 2 minutes at most
                        try:
                            self.wfile.write(body[k:k + 1])
                            self.wfile.flush()
                        except OSError:  # the client gave up
                            return
                        owner.trickled += 1
                        time.sleep(2.0)
                    return
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path):
        return self.base + path

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server():
    srv = _Server()
    yield srv
    srv.close()


def _spec(server, tiny, path="/tiny.bz2", sha256="known"):
    server.files[path] = tiny["bz2"]
    return RemoteDataset(
        name="tiny",
        url=server.url(path),
        filename="tiny.bz2",
        n_samples=N,
        n_features=D,
        sha256=tiny["sha256"] if sha256 == "known" else sha256,
    )


def _listing(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def _refused_url(path="/rcv1_train.binary.bz2"):
    with socket.socket() as s:  # a port that nobody listens on (closed right away)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


# ----------------------------------------------------------------- registry and export


def test_registry_holds_the_papers_data_sets():
    rcv1, realsim = DATASETS["rcv1"], DATASETS["real-sim"]
    assert rcv1.shape == (20_242, 47_236)
    assert realsim.shape == (72_309, 20_958)
    base = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
    assert rcv1.url == base + "rcv1_train.binary.bz2"
    assert realsim.url == base + "real-sim.bz2"
    assert rcv1.decompressed_filename == "rcv1_train.binary"
    assert realsim.decompressed_filename == "real-sim"
    for spec in DATASETS.values():
        assert spec.url.endswith("/" + spec.filename)
        if spec.sha256 is not None:
            assert len(spec.sha256) == 64 and int(spec.sha256, 16) >= 0
            assert spec.sha256_source  # a checksum must say where it comes from


def test_exported_as_rv_datasets():
    assert rv.datasets is datasets
    assert rv.datasets.fetch is fetch


def test_unknown_name_and_missing_path():
    with pytest.raises(ValueError, match="unknown data set 'mnist'.*rcv1.*real-sim"):
        fetch("mnist")
    with pytest.raises(FileNotFoundError, match="no such file"):
        fetch("/nonexistent/dir/rcv1_train.binary.bz2")


# --------------------------------------------------------------------- fetch: success


def test_fetch_downloads_verifies_decompresses_and_caches(server, tiny, tmp_path):
    spec = _spec(server, tiny)
    prob = fetch(spec, data_dir=tmp_path, progress=False)
    assert isinstance(prob, rv.Problem)
    assert prob.loss == "logistic" and prob.name == "tiny"
    assert prob.is_sparse and prob.W.shape == (N, D) and prob.W.dtype == np.float64
    assert prob.W.has_canonical_format
    np.testing.assert_allclose(prob.W.toarray(), tiny["problem"].W.toarray(), rtol=1e-15)
    np.testing.assert_array_equal(prob.y, tiny["problem"].y)
    assert server.requests == ["/tiny.bz2"]
    assert _listing(tmp_path) == ["tiny", "tiny.bz2"]  # no temporary file left
    assert (tmp_path / "tiny.bz2").read_bytes() == tiny["bz2"]
    assert (tmp_path / "tiny").read_bytes() == tiny["text"]

    again = fetch(spec, data_dir=tmp_path, progress=False)
    assert server.requests == ["/tiny.bz2"]  # cache reuse: no second request
    np.testing.assert_array_equal(again.W.toarray(), prob.W.toarray())
    np.testing.assert_array_equal(again.y, prob.y)


def test_return_X_y(server, tiny, tmp_path):
    W, y = fetch(_spec(server, tiny), data_dir=tmp_path, progress=False, return_X_y=True)
    assert W.format == "csr" and W.shape == (N, D)
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_url_override_and_sha256_override(server, tiny, tmp_path):
    spec = _spec(server, tiny, sha256="0" * 64)  # registered checksum is wrong ...
    server.files["/mirror/tiny.bz2"] = tiny["bz2"]
    prob = fetch(
        spec,
        data_dir=tmp_path,
        url=server.url("/mirror/tiny.bz2"),
        sha256=tiny["sha256"],  # ... the override wins
        progress=False,
    )
    assert server.requests == ["/mirror/tiny.bz2"]
    assert prob.W.shape == (N, D)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bars_on_a_terminal_and_silence(server, tiny, tmp_path, capsys, monkeypatch):
    spec = _spec(server, tiny)
    terminal = _Terminal()
    monkeypatch.setattr(_download.sys, "stderr", terminal)
    fetch(spec, data_dir=tmp_path / "a", progress=True)
    err = terminal.getvalue()
    assert "Downloading tiny.bz2" in err and "100%" in err  # tqdm's bars
    assert "Decompressing tiny.bz2" in err
    assert str(tmp_path / "a") in err  # says where the data goes

    terminal.seek(0)
    terminal.truncate()
    (tmp_path / "a" / "tiny").unlink()  # the download is cached: only decompression shows
    fetch(spec, data_dir=tmp_path / "a", progress=True)
    err = terminal.getvalue()
    assert "Decompressing tiny.bz2" in err and "Downloading" not in err

    terminal.seek(0)
    terminal.truncate()
    fetch(spec, data_dir=tmp_path / "b", progress=False)
    assert terminal.getvalue() == ""
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_no_progress_when_stderr_is_not_a_terminal(server, tiny, tmp_path, capsys):
    fetch(_spec(server, tiny), data_dir=tmp_path, progress=True)  # capsys: not a terminal
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""  # a log file gets no bars


def test_environment_variable_chooses_cache_dir(server, tiny, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("RGRASP_VIZ_DATA", str(env_dir))
    assert get_data_dir() == env_dir
    fetch(_spec(server, tiny), progress=False)
    assert _listing(env_dir) == ["tiny", "tiny.bz2"]
    # an explicit data_dir wins over the environment variable
    explicit = tmp_path / "explicit"
    assert get_data_dir(explicit) == explicit
    fetch(_spec(server, tiny), data_dir=explicit, progress=False)
    assert _listing(explicit) == ["tiny", "tiny.bz2"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout")
def test_default_cache_dir_is_per_user(monkeypatch, tmp_path):
    monkeypatch.delenv("RGRASP_VIZ_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_dir() == tmp_path / "xdg" / "rgrasp_viz"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_dir() == tmp_path / "home" / ".cache" / "rgrasp_viz"
    monkeypatch.setenv("RGRASP_VIZ_DATA", "~/data")
    assert get_data_dir() == tmp_path / "home" / "data"


def test_unknown_checksum_is_recorded_on_first_download(server, tiny, tmp_path):
    spec = _spec(server, tiny, sha256=None)
    fetch(spec, data_dir=tmp_path, progress=False)
    sidecar = tmp_path / "tiny.bz2.sha256"
    assert sidecar.read_text().split() == [tiny["sha256"], "tiny.bz2"]
    # a later copy of the compressed file is verified against the recorded checksum
    (tmp_path / "tiny").unlink()
    (tmp_path / "tiny.bz2").write_bytes(bz2.compress(tiny["text"] + b"1 1:1\n"))
    with pytest.raises(ChecksumError, match=tiny["sha256"]):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert (tmp_path / "tiny.bz2").exists()  # the user's file is reported, not deleted
    assert server.requests == ["/tiny.bz2"]


def test_file_placed_by_hand_is_used_without_network(tiny, tmp_path):
    spec = RemoteDataset("tiny", _refused_url("/tiny.bz2"), "tiny.bz2", N, D, tiny["sha256"])
    (tmp_path / "tiny.bz2").write_bytes(tiny["bz2"])
    prob = fetch(spec, data_dir=tmp_path, progress=False)
    assert prob.W.shape == (N, D)
    assert _listing(tmp_path) == ["tiny", "tiny.bz2"]
    # only the decompressed file placed by hand works too
    other = tmp_path / "other"
    other.mkdir()
    (other / "tiny").write_bytes(tiny["text"])
    np.testing.assert_array_equal(fetch(spec, data_dir=other, progress=False).y, prob.y)


# --------------------------------------------------------------------- fetch: failures


def test_checksum_failure_leaves_nothing_behind(server, tiny, tmp_path):
    spec = _spec(server, tiny, sha256="ab" * 32)
    with pytest.raises(ChecksumError) as info:
        fetch(spec, data_dir=tmp_path, progress=False)
    msg = str(info.value)
    assert "ab" * 32 in msg and tiny["sha256"] in msg
    assert f"sha256={tiny['sha256']!r}" in msg  # how to override, if the file is good
    assert _listing(tmp_path) == []  # no half-written or unverified file
    assert server.requests == ["/tiny.bz2"]


def test_corrupted_download_fails_checksum(server, tiny, tmp_path):
    spec = _spec(server, tiny)
    corrupted = bytearray(tiny["bz2"])
    corrupted[len(corrupted) // 2] ^= 0xFF
    server.files["/tiny.bz2"] = bytes(corrupted)
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert _listing(tmp_path) == []


def test_interrupted_transfer_leaves_nothing_behind(server, tiny, tmp_path):
    spec = _spec(server, tiny, sha256=None)
    server.truncate.add("/tiny.bz2")
    with pytest.raises(DatasetUnavailableError, match="incomplete|interrupted"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert _listing(tmp_path) == []


def _assert_where_to_put(msg, root, spec):
    assert str(root / spec.filename) in msg  # exactly where to put the file
    assert spec.url in msg  # and where to get it
    assert spec.decompressed_filename in msg
    assert "RGRASP_VIZ_DATA" in msg


def test_http_404_says_where_to_put_the_file(server, tmp_path):
    rcv1 = DATASETS["rcv1"]
    with pytest.raises(DatasetUnavailableError) as info:
        fetch("rcv1", data_dir=tmp_path, url=server.url("/missing.bz2"), progress=False)
    msg = str(info.value)
    assert "404" in msg and server.url("/missing.bz2") in msg
    _assert_where_to_put(msg, tmp_path, rcv1)
    assert server.requests == ["/missing.bz2"]
    assert _listing(tmp_path) == []


def test_connection_refused_says_where_to_put_the_file(tmp_path):
    url = _refused_url()
    with pytest.raises(DatasetUnavailableError) as info:
        fetch("real-sim", data_dir=tmp_path, url=url, progress=False, timeout=5)
    msg = str(info.value)
    assert url in msg
    assert "cannot connect ([Errno" in msg.splitlines()[0]  # the OS's reason, not a retry chain
    _assert_where_to_put(msg, tmp_path, DATASETS["real-sim"])
    assert _listing(tmp_path) == []
    assert isinstance(info.value, OSError)


def test_download_false_never_touches_the_network(tmp_path):
    with pytest.raises(DatasetUnavailableError) as info:
        fetch("rcv1", data_dir=tmp_path / "cache", download=False)
    _assert_where_to_put(str(info.value), tmp_path / "cache", DATASETS["rcv1"])
    assert not (tmp_path / "cache").exists()


def test_wrong_shape_is_rejected_and_not_kept(server, tiny, tmp_path):
    server.files["/rcv1_train.binary.bz2"] = tiny["bz2"]
    with pytest.raises(ValueError, match=f"has {N} samples, but the 'rcv1' data set has 20242"):
        fetch("rcv1", data_dir=tmp_path, url=server.url("/rcv1_train.binary.bz2"),
              progress=False)
    # rcv1 has no registered checksum, so an unusable download is not kept
    assert _listing(tmp_path) == []


def test_malformed_download_names_the_line_and_is_not_kept(server, tiny, tmp_path):
    lines = tiny["text"].splitlines(keepends=True)
    lines[6] = b"1 3:0.5 2:0.25\n"  # line 7: indices not increasing
    server.files["/tiny.bz2"] = bz2.compress(b"".join(lines))
    spec = RemoteDataset("tiny", server.url("/tiny.bz2"), "tiny.bz2", N, D, None)
    with pytest.raises(ValueError, match=r"tiny:7: feature index 2 after 3"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert _listing(tmp_path) == []


def test_not_a_bz2_file(server, tmp_path):
    server.files["/tiny.bz2"] = b"<html>a captive portal page</html>\n"
    spec = RemoteDataset("tiny", server.url("/tiny.bz2"), "tiny.bz2", N, D, None)
    with pytest.raises(ValueError, match="not a valid compressed file"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert _listing(tmp_path) == []


# ------------------------------------------------------------------ local files, labels


@pytest.mark.parametrize("compress", [False, True])
def test_fetch_local_path(tiny, tmp_path, compress):
    path = tmp_path / ("data.svm.bz2" if compress else "data.svm")
    path.write_bytes(tiny["bz2"] if compress else tiny["text"])
    prob = fetch(path)
    assert prob.name == "data" and prob.W.shape == (N, D)
    np.testing.assert_array_equal(prob.y, tiny["problem"].y)
    W, y = fetch(str(path), return_X_y=True)
    assert W.shape == (N, D)
    with pytest.raises(ChecksumError):
        fetch(path, sha256="0" * 64)


def test_local_file_named_like_a_registered_one_gets_its_checks(tiny, tmp_path):
    path = tmp_path / "rcv1_train.binary"
    path.write_bytes(tiny["text"])
    with pytest.raises(ValueError, match="the 'rcv1' data set has 20242"):
        fetch(path)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([-1, 1, 1, -1], [-1, 1, 1, -1]),
        ([0, 1, 1, 0], [-1, 1, 1, -1]),
        ([2, 4, 4, 2], [-1, 1, 1, -1]),
    ],
)
def test_labels_converted_to_plus_minus_one(tmp_path, labels, expected):
    lines = "".join(f"{lab} 1:1 {i + 2}:0.5\n" for i, lab in enumerate(labels))
    path = tmp_path / "labels.svm"
    path.write_text(lines)
    _, y = fetch(path, return_X_y=True)
    np.testing.assert_array_equal(y, np.asarray(expected, dtype=float))
    raw = load_svmlight(path)[1]
    np.testing.assert_array_equal(raw, np.asarray(labels, dtype=float))  # loader: unchanged


def test_more_than_two_classes_is_not_binary(tmp_path):
    path = tmp_path / "three.svm"
    path.write_text("1 1:1\n2 2:1\n3 3:1\n")
    with pytest.raises(ValueError, match="expected two classes.*found 3"):
        fetch(path)


# ------------------------------------------------------------------------- load_svmlight


def test_load_svmlight_shapes_and_dtypes(tiny, tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_bytes(tiny["text"])
    W, y = load_svmlight(path)
    assert W.format == "csr" and W.dtype == np.float64 and W.has_canonical_format
    assert y.dtype == np.float64 and y.shape == (N,)
    assert W.shape[0] == N and W.shape[1] <= D  # columns: largest index present
    W2, _ = load_svmlight(path, n_features=D + 5)
    assert W2.shape == (N, D + 5)
    np.testing.assert_allclose(W2[:, :D].toarray(), tiny["problem"].W.toarray(), rtol=1e-15)


@pytest.mark.parametrize(
    ("bad_line", "kwargs", "message"),
    [
        (b"1 2:abc", {}, r"feature value b'abc' in b'2:abc' is not a number"),
        (b"1 2", {}, r"feature b'2' is not of the form index:value"),
        (b"1 x:1", {}, r"feature index b'x' in b'x:1' is not an integer"),
        (b"yes 2:1", {}, r"label b'yes' is not a number"),
        (b"1 3:1 2:1", {}, r"feature index 2 after 3: indices must be strictly increasing"),
        (b"1 2:1 2:3", {}, r"feature index 2 after 2"),
        (b"1 -4:1", {}, r"feature index -4 is invalid"),
        (b"1 0:1", {"zero_based": False}, r"feature index 0 is invalid \(indices start at 1\)"),
        (b"1 2:nan", {}, r"feature value b'nan' \(index 2\) is not finite"),
        (b"inf 2:1", {}, r"label b'inf' is not finite"),
        (b"1 2:1 99:1", {"n_features": 10}, r"feature index 99 exceeds n_features=10"),
    ],
)
@pytest.mark.parametrize("compress", [False, True])
def test_malformed_file_error_names_the_line(tmp_path, bad_line, kwargs, message, compress):
    text = b"# a comment line\n1 1:0.5 3:1\n-1 2:0.25\n" + bad_line + b"\n1 4:1\n"
    path = tmp_path / ("bad.svm.bz2" if compress else "bad.svm")
    path.write_bytes(bz2.compress(text) if compress else text)
    with pytest.raises(ValueError, match=rf"bad\.svm(\.bz2)?:4: {message}"):
        load_svmlight(path, **kwargs)


def test_valid_variants_are_accepted(tmp_path):
    path = tmp_path / "ok.svm"
    path.write_bytes(b"# header\n+1 qid:3 1:0.5 3:1 # trailing\n\n-1\t2:0.25\r\n0 \n")
    W, y = load_svmlight(path, n_features=4)
    np.testing.assert_array_equal(y, [1.0, -1.0, 0.0])
    np.testing.assert_array_equal(
        W.toarray(), [[0.5, 0, 1, 0], [0, 0.25, 0, 0], [0, 0, 0, 0]]
    )


def test_load_svmlight_missing_file_and_bad_args(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_svmlight(tmp_path / "nope.svm")
    path = tmp_path / "ok.svm"
    path.write_text("1 1:1\n")
    with pytest.raises(ValueError, match="n_features"):
        load_svmlight(path, n_features=0)
    with pytest.raises(ValueError, match="zero_based"):
        load_svmlight(path, zero_based="yes")


# ----------------------------------------------------------------------------- solving


def test_fetched_problem_solves_with_svrgsp(server, tiny, tmp_path):
    prob = fetch(_spec(server, tiny), data_dir=tmp_path, progress=False)
    res = rv.solve(prob, method="svrgsp", s=8, random_state=0, max_iter=30, warn=False)
    assert res.status in (rv.Status.CONVERGED, rv.Status.MAX_ITER, rv.Status.STALLED)
    assert np.all(np.isfinite(res.x))
    assert np.count_nonzero(res.x) <= 8
    # the start x = 0 has objective log 2; the labels are informative, so it must drop
    assert res.fun < 0.8 * math.log(2.0)


def test_uncompressed_remote_file(server, tiny, tmp_path):
    server.files["/tiny.svm"] = tiny["text"]
    sha = hashlib.sha256(tiny["text"]).hexdigest()
    spec = RemoteDataset("tiny", server.url("/tiny.svm"), "tiny.svm", N, D, sha)
    prob = fetch(spec, data_dir=tmp_path, progress=False)
    assert prob.W.shape == (N, D)
    assert _listing(tmp_path) == ["tiny.svm"]


def test_http_500_says_where_to_put_the_file(server, tiny, tmp_path):
    spec = _spec(server, tiny)
    server.status["/tiny.bz2"] = 500
    with pytest.raises(DatasetUnavailableError, match="HTTP error 500") as info:
        fetch(spec, data_dir=tmp_path, progress=False)
    _assert_where_to_put(str(info.value), tmp_path, spec)
    assert _listing(tmp_path) == []


@pytest.mark.slow
def test_timeout_is_a_deadline_for_the_whole_download(server, tiny, tmp_path):
    """A server sending one byte every 2 s never trips a per-read timeout of 3 s."""
    spec = _spec(server, tiny, sha256=None)
    server.trickle.add("/tiny.bz2")
    with pytest.raises(DatasetUnavailableError, match="not complete after 3 s") as info:
        fetch(spec, data_dir=tmp_path, progress=False, timeout=3)
    # the download ended while the body was still trickling in (60 bytes, one every 2 s)
    assert server.trickled < min(len(tiny["bz2"]), 60)
    _assert_where_to_put(str(info.value), tmp_path, spec)
    assert _listing(tmp_path) == []


def _bz2_bomb(megabytes):
    """A multi-stream bz2 file of a few kilobytes that expands to `megabytes` MB of valid
    svmlight lines."""
    block = bz2.compress(b"1 1:1\n" * (1_000_000 // 6))  # one MB, compresses to ~100 bytes
    return block * megabytes


def test_decompression_bomb_is_stopped_early(server, tmp_path, monkeypatch):
    bomb = _bz2_bomb(200)
    assert len(bomb) < 30_000
    server.files["/tiny.bz2"] = bomb
    spec = RemoteDataset("tiny", server.url("/tiny.bz2"), "tiny.bz2", N, D, None)
    written = []
    real_replace = _download.os.replace
    monkeypatch.setattr(_download.os, "replace",
                        lambda a, b: (written.append(os.path.getsize(a)), real_replace(a, b)))
    limit = datasets.MAX_EXPANSION * len(bomb)
    with pytest.raises(ValueError, match=rf"decompresses to more than {limit:,} bytes"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert written == []  # nothing decompressed was kept
    assert _listing(tmp_path) == []  # and the unverifiable download is gone too


def test_declared_size_bound(server, tiny, tmp_path):
    spec = dataclasses.replace(_spec(server, tiny), max_bytes=len(tiny["text"]) - 1)
    with pytest.raises(ValueError, match=rf"more than {len(tiny['text']) - 1:,} bytes"):
        fetch(spec, data_dir=tmp_path, progress=False)
    assert _listing(tmp_path) == ["tiny.bz2"]  # verified by its checksum: kept
    spec = dataclasses.replace(spec, max_bytes=len(tiny["text"]))
    assert fetch(spec, data_dir=tmp_path, progress=False).W.shape == (N, D)


def test_registered_data_sets_have_a_decompression_bound():
    for spec in DATASETS.values():
        assert spec.max_bytes is not None
        # generous: at least 16 bytes for every cell of a 0.1 % dense matrix
        assert spec.max_bytes >= 16 * spec.n_samples * spec.n_features // 1000


# ------------------------------------------------------------- bounded LIBSVM loads


def test_huge_feature_index_is_refused_before_any_solve(tmp_path):
    """A 2-line file naming feature 10^9 would make solve allocate 7.45 GiB per vector."""
    path = tmp_path / "big.svm"
    path.write_bytes(b"1 1:1 1000000000:2\n-1 2:1\n")
    with pytest.raises(ValueError, match=r"big\.svm:1: feature index 1000000000 exceeds the "
                                         r"cap of max_features=16777216 columns"):
        load_svmlight(path)
    with pytest.raises(ValueError, match=r"big\.svm:1: feature index 1000000000 exceeds the cap"):
        fetch(path)
    with pytest.raises(ValueError, match=r"big\.svm:1: feature index 1000000000 exceeds "
                                         r"n_features=10 "):
        load_svmlight(path, n_features=10)
    # asked for explicitly, a wide (sparse) matrix is fine
    W, _ = load_svmlight(path, max_features=10**9)
    assert W.shape == (2, 10**9) and W.nnz == 3
    with pytest.raises(ValueError, match="max_features must be a positive integer"):
        load_svmlight(path, max_features=0)


def test_cap_counts_columns_of_a_zero_based_file(tmp_path):
    path = tmp_path / "zero.svm"
    path.write_bytes(b"1 0:1 2:1\n-1 3:1\n")
    assert load_svmlight(path, max_features=4)[0].shape == (2, 4)
    with pytest.raises(ValueError, match=r"zero\.svm:2: feature index 3 exceeds the cap of "
                                         r"max_features=3 columns \(largest allowed index: 2\)"):
        load_svmlight(path, max_features=3)


@pytest.mark.parametrize("n_features", [None, 10])
def test_index_beyond_2_to_the_31_is_a_clear_error(tmp_path, n_features):
    path = tmp_path / "huge.svm"
    path.write_bytes(b"1 1:1\n-1 2:1 3000000000:2\n")
    with pytest.raises(ValueError, match=r"huge\.svm:2: feature index 3000000000 is too large "
                                         r"\(indices must be below 2\*\*31"):
        load_svmlight(path, n_features=n_features)
