"""Tests of rgrasp_viz.datasets._download: the transfer's deadline and where a redirect may
lead, against servers on 127.0.0.1."""

import http.server
import socket
import threading

import pytest

from rgrasp_viz.datasets import RemoteDataset, fetch
from rgrasp_viz.exceptions import DatasetUnavailableError

pytest.importorskip("pooch")


class _SlowHeaders:
    """A server that answers every connection with its status line one byte every 2 s (for
    at most 60 bytes, two minutes): it never gets to the end of its headers in time."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.sent = 0  # bytes of the status line and headers sent so far, all connections
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn):
        with conn:
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nX-Padding: aaaaaaaaaa"[:60]:
                if self.done.wait(2.0):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:  # the client gave up
                    return
                self.sent += 1

    def close(self):
        self.done.set()
        self.sock.close()
        self.thread.join(5)


def _spec(url):
    return RemoteDataset(name="tiny", url=url, filename="tiny.bz2", n_samples=3, n_features=2)


def test_the_deadline_counts_from_before_the_request(tmp_path):
    """Headers trickling in one byte every 2 s never trip requests' per-read timeout; the
    deadline of the whole transfer (3 s) must still end the download."""
    server = _SlowHeaders()
    try:
        with pytest.raises(DatasetUnavailableError, match="not complete after 3 s") as info:
            fetch(_spec(f"http://127.0.0.1:{server.port}/tiny.bz2"), data_dir=tmp_path,
                  progress=False, timeout=3)
        sent = server.sent
    finally:
        server.close()
    # the download ended while the headers were still trickling in (60 bytes, one every 2 s)
    assert sent < 60
    assert "save it as" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.fixture
def redirecting_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server API)
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def test_a_redirect_to_a_file_url_is_an_unavailable_data_set(redirecting_server, tmp_path):
    with pytest.raises(DatasetUnavailableError, match=r"not an http\(s\) address") as info:
        fetch(_spec(redirecting_server + "/tiny.bz2"), data_dir=tmp_path, progress=False,
              timeout=30)
    assert "file:///etc/passwd" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_file_url_is_an_unavailable_data_set(tmp_path):
    with pytest.raises(DatasetUnavailableError, match=r"not an http\(s\) address"):
        fetch(_spec("file:///etc/passwd"), data_dir=tmp_path, progress=False, timeout=30)
