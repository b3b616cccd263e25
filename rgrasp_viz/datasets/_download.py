"""The download machinery of :func:`~rgrasp_viz.datasets.fetch`: the cache directory, the
transfer with a deadline, the bounded decompression, checksums and the messages."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import sys
import tempfile
import threading
from pathlib import Path

import platformdirs

from .. import _progress
from ..exceptions import ChecksumError, DatasetUnavailableError
from ._svmlight import _open_maybe_compressed

#: Environment variable naming the cache directory (overridden by ``data_dir=``).
DATA_DIR_ENV = "RGRASP_VIZ_DATA"

_CHUNK = 1 << 20  # bytes per read when decompressing
_TIMEOUT = 600.0  # seconds a download may take in all


# ------------------------------------------------------------------------ cache dir


def get_data_dir(data_dir=None):
    """The cache directory for downloaded data sets (not created).

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Explicit directory; wins over everything else.

    Returns
    -------
    pathlib.Path
        `data_dir` if given; else the environment variable ``RGRASP_VIZ_DATA`` if set and
        non-empty; else the platform's user cache directory for ``rgrasp_viz`` as
        ``platformdirs.user_cache_dir`` gives it (``$XDG_CACHE_HOME/rgrasp_viz``, default
        ``~/.cache/rgrasp_viz``, on Linux; ``~/Library/Caches/rgrasp_viz`` on macOS;
        ``%LOCALAPPDATA%\\rgrasp_viz\\Cache`` on Windows). ``~`` is expanded.
    """
    if data_dir is not None:
        return Path(os.fspath(data_dir)).expanduser()
    env = os.environ.get(DATA_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("rgrasp_viz", appauthor=False))


# ------------------------------------------------------------------------- download
#
# The temporary file, the checksum and the atomic move into the cache are pooch's
# (``pooch.retrieve``); HTTP is requests'; progress bars are tqdm's. What is ours: the
# downloader with a deadline on the whole transfer (pooch's ``HTTPDownloader`` calls
# ``requests.get``, which leaves no handle on the connection before the headers arrive),
# the bounded decompression processor, the checksum recorded on first use and the messages.


def _progress_bar(desc, progress):
    """A byte-counting bar under the package's one progress policy
    (:func:`rgrasp_viz._progress.bar`)."""
    return _progress.bar(None, desc, progress, unit="B", unit_scale=True, unit_divisor=1024)


class _PoochBar:
    """A tqdm bar as :class:`_DeadlineDownloader` drives it, with pooch's progress-bar
    protocol (``total``, ``update``, ``reset``, ``close``; true even while the total is
    unknown, which tqdm's own truth test refuses)."""

    def __init__(self, bar):
        self.bar = bar

    def __bool__(self):
        return True

    @property
    def total(self):
        return self.bar.total

    @total.setter
    def total(self, value):
        self.bar.total = value or None  # 0: no Content-Length

    def update(self, n):
        self.bar.update(n)

    def reset(self):
        self.bar.reset(total=self.bar.total)

    def close(self):
        self.bar.close()


def _say(bar, message):
    """One line above the bar, only when the bar is shown."""
    if not bar.disable:
        bar.write(message, file=sys.stderr)


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download at INFO level on stderr; ours say it with the bar."""
    import pooch  # lazy: loads on the first download

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


class _DownloadTimeout(TimeoutError):
    """A download did not complete within its deadline."""


class _DeadlineDownloader:
    """A pooch downloader: an HTTP(S) GET through requests with `timeout` as a deadline for
    the whole transfer, counted from before the request, not only for each read.

    requests' timeout bounds one wait for data, so a server sending a byte every few
    seconds, of its headers or of its body, would keep a download alive forever. Here a
    timer started before the request shuts down every socket the transfer opened (and the
    response, once there is one) when the deadline passes, which ends the read in progress;
    the download then fails with ``_DownloadTimeout`` (reported as
    :class:`DatasetUnavailableError`). The temporary file, the checksum and the atomic move
    into the cache stay pooch's (``pooch.retrieve``).
    """

    def __init__(self, timeout, progressbar):
        self.timeout = timeout
        self.progressbar = progressbar

    def __call__(self, url, output_file, pooch_obj):
        expired = threading.Event()
        lock = threading.Lock()
        handles = []  # sockets and responses to shut down at the deadline

        def stop(handle):
            shutdown = getattr(handle, "shutdown", None)  # sockets; responses: urllib3 >= 2.3
            with contextlib.suppress(OSError, AttributeError, RuntimeError):
                if isinstance(handle, socket.socket):
                    handle.shutdown(socket.SHUT_RDWR)
                elif shutdown is not None:
                    shutdown()
                else:
                    handle.close()

        def track(handle):
            with lock:
                handles.append(handle)
            if expired.is_set():  # opened while the deadline passed
                stop(handle)

        def expire():
            expired.set()
            with lock:
                current = list(handles)
            for handle in current:
                stop(handle)

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            with _tracking_session(track) as session:
                self._transfer(session, url, output_file, track)
        except Exception as exc:
            if expired.is_set():
                raise _DownloadTimeout(f"not complete after {self.timeout:g} s") from exc
            raise
        finally:
            timer.cancel()
        if expired.is_set():  # a body without a declared length just ends early
            raise _DownloadTimeout(f"not complete after {self.timeout:g} s")

    def _transfer(self, session, url, output_file, track):
        """Stream `url` into `output_file` (a path or a binary file), as
        ``pooch.HTTPDownloader`` does."""
        bar = self.progressbar or None
        owned = not hasattr(output_file, "write")
        out = open(output_file, "w+b") if owned else output_file  # noqa: SIM115
        try:
            response = session.get(url, stream=True, timeout=self.timeout,
                                   headers={"User-Agent": "rgrasp_viz"})
            track(response.raw)
            response.raise_for_status()
            if bar is not None:
                bar.total = int(response.headers.get("content-length", 0) or 0)
            for chunk in response.iter_content(chunk_size=_CHUNK):
                if chunk:
                    out.write(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
            out.flush()
        finally:
            if owned:
                out.close()
            if bar is not None:
                bar.close()


@contextlib.contextmanager
def _tracking_session(track):
    """A ``requests.Session`` whose every new connection hands its socket to `track` once
    connected (through urllib3's public ``ConnectionCls`` hook of its connection pools)."""
    import requests  # lazy: loads on the first download
    from urllib3.connection import HTTPConnection, HTTPSConnection  # lazy: on the first download
    from urllib3.connectionpool import (  # lazy: on the first download
        HTTPConnectionPool,
        HTTPSConnectionPool,
    )

    class Connection(HTTPConnection):
        def connect(self):
            super().connect()
            track(self.sock)

    class SecureConnection(HTTPSConnection):
        def connect(self):
            super().connect()
            track(self.sock)

    class Pool(HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    class Adapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SecurePool}

    with requests.Session() as session:
        adapter = Adapter()
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        yield session


#: A compressed data file may expand to at most this many times its size (LIBSVM text
#: compresses 3-10 times; a "decompression bomb" thousands of times).
MAX_EXPANSION = 100


class _BoundedDecompress:
    """A pooch processor: decompress a ``.bz2``/``.gz`` download next to it through a
    temporary file and an atomic rename, at most ``MAX_EXPANSION`` times the compressed
    size and at most `max_bytes` (the data set's declared bound, if any).

    ``pooch.Decompress`` has no size bound; a few kilobytes of bzip2 can expand to
    gigabytes. Here decompression stops with a ``ValueError`` as soon as the output
    exceeds the bound, having written no more than the bound.
    """

    def __init__(self, dest_name, max_bytes, progress):
        self.dest_name = dest_name
        self.max_bytes = max_bytes
        self.progress = progress

    def __call__(self, fname, action, pooch_obj):
        raw = Path(fname)
        dest = raw.with_name(self.dest_name)
        if dest == raw:
            return str(raw)
        limit = MAX_EXPANSION * max(raw.stat().st_size, 1)
        if self.max_bytes is not None:
            limit = min(limit, self.max_bytes)
        fd, tmp = tempfile.mkstemp(dir=raw.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, _open_maybe_compressed(raw) as src:
                bar = _progress_bar(f"Decompressing {raw.name}", self.progress)
                written = 0
                try:
                    while block := src.read(_CHUNK):
                        written += len(block)
                        if written > limit:
                            raise ValueError(
                                f"{raw}: decompresses to more than {limit:,} bytes, "
                                "more than a data file of this size and kind can hold "
                                f"(at most {MAX_EXPANSION} times the compressed size and "
                                "the data set's declared bound); not the expected file? "
                                "Decompression stopped."
                            )
                        out.write(block)
                        bar.update(len(block))
                except (OSError, EOFError) as exc:
                    raise ValueError(f"{raw}: is not a valid compressed file ({exc})") from exc
                finally:
                    bar.close()
            os.replace(tmp, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)  # no-op after a successful rename
        return str(dest)


def _unlink_quietly(path):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _where_to_put(spec, root, problem):
    """`problem` (one sentence) plus exactly which file to get and where to save it."""
    return (
        f"{problem}\n"
        f"To use the {spec.name!r} data set without network access, download\n"
        f"    {spec.url}\n"
        f"(on any machine with internet access) and save it as\n"
        f"    {root / spec.filename}\n"
        f"The decompressed file {spec.decompressed_filename!r} in the same directory works "
        f"too, or pass the file's path: rgrasp_viz.datasets.fetch('/path/to/{spec.filename}')."
        f"\nThe cache directory is chosen by data_dir=... or the {DATA_DIR_ENV} environment "
        f"variable."
    )


def _why(exc):
    """A short reason for a failed transfer (requests' own messages are long)."""
    import requests  # lazy: loads on the first download

    if isinstance(exc, _DownloadTimeout):
        return f"transfer {exc}"
    if isinstance(exc, (requests.exceptions.InvalidSchema, requests.exceptions.InvalidURL,
                        requests.exceptions.MissingSchema)):
        return f"not an http(s) address, or redirected to one that is not ({exc})"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP error {exc.response.status_code} ({exc.response.reason})"
    if isinstance(exc, (requests.exceptions.ChunkedEncodingError,
                        requests.exceptions.ContentDecodingError)):
        return f"transfer interrupted or incomplete ({exc})"
    if isinstance(exc, requests.exceptions.Timeout):
        return "no answer in time (timeout)"
    if isinstance(exc, requests.ConnectionError):
        # requests' text holds the whole retry chain; the OS error says it all
        found = re.search(r"\[Errno -?\d+\][^'\")]*", str(exc))
        return f"cannot connect ({found.group(0).strip() if found else exc})"
    return f"{type(exc).__name__}: {exc}"


def _download_errors():
    import requests  # lazy: loads on the first download

    return (requests.RequestException, OSError)


_HASH_MISMATCH = re.compile(r"does not match the known hash.* but got ([0-9a-fA-F]{64})", re.S)


def _checksum_message(spec, source, expected, got):
    origin = f" (expected checksum from: {spec.sha256_source})" if spec.sha256_source else ""
    fix = (f" If the file is known to be good (e.g. LIBSVM re-published it), pass "
           f"sha256={got!r}." if got else "")
    return (
        f"SHA-256 checksum mismatch for {spec.filename} from {source}: expected {expected}"
        f"{origin}, got {got or 'another'}. The file was discarded; nothing was written to "
        f"the cache.{fix}"
    )


def _sha256_file(path):
    import pooch  # lazy: loads on the first download

    return pooch.file_hash(str(path), alg="sha256")


def _sidecar(root, spec):
    return root / (spec.filename + ".sha256")


def _read_sidecar(root, spec):
    try:
        text = _sidecar(root, spec).read_text().split()
    except FileNotFoundError:
        return None
    return text[0].lower() if text else None


def _write_sidecar(root, spec, digest):
    fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{spec.filename}.sha256.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(f"{digest}  {spec.filename}\n")
        os.replace(tmp, _sidecar(root, spec))
    finally:
        _unlink_quietly(tmp)


def _retrieve(spec, source, root, expected, progress, timeout):
    """The compressed file through pooch (downloaded unless cached), decompressed; returns
    the path of the decompressed file."""
    import pooch  # lazy: loads on the first download

    downloading = not (root / spec.filename).is_file()  # else pooch only checks and decompresses
    bar = _progress_bar(f"Downloading {spec.filename}", progress and downloading)
    try:
        _say(bar, f"Downloading the {spec.name!r} data set from {source} into {root}")
        processor = _BoundedDecompress(spec.decompressed_filename, spec.max_bytes, progress)
        downloader = _DeadlineDownloader(timeout, False if bar.disable else _PoochBar(bar))
        with _quiet_pooch():
            try:
                return Path(pooch.retrieve(
                    source, known_hash=None if expected is None else f"sha256:{expected}",
                    fname=spec.filename, path=root, processor=processor,
                    downloader=downloader,
                ))
            except _download_errors() as exc:  # first: some are ValueErrors (InvalidSchema)
                raise DatasetUnavailableError(_where_to_put(
                    spec, root, f"Could not download {spec.filename} from {source}: "
                    f"{_why(exc)}."
                )) from exc
            except ValueError as exc:
                if "does not match the known hash" not in str(exc):
                    raise
                found = _HASH_MISMATCH.search(str(exc))
                raise ChecksumError(_checksum_message(
                    spec, source, expected, found.group(1).lower() if found else None
                )) from exc
    finally:
        bar.close()


