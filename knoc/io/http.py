"""HTTP reads (`knoc import URL`, `knoc verify URL`, key sets), within the
download limits: one deadline (DOWNLOAD_SECONDS) over the whole exchange,
connect, headers and body alike, however slowly a server drips bytes; a
body of at most DOWNLOAD_BYTES; redirects only to http(s) URLs, at most
MAX_REDIRECTS; and every failure one `FetchError`."""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urljoin, urlsplit

from knoc.rules import limits

USER_AGENT = "knoc"
MAX_REDIRECTS = 5


class FetchError(OSError):
    """The URL could not be fetched within the limits; the message says why."""


def http_only(url: str) -> str | None:
    """The redirect rule for a URL the user gave: anywhere over http(s)."""
    scheme = urlsplit(url).scheme
    return None if scheme in ("http", "https") else (
        f"the server redirected to a {scheme or 'relative'} URL; knoc follows redirects only to http(s)")


def fetch(url: str, accept: str = "application/json", redirect: Callable[[str], str | None] = http_only) -> bytes:
    """The body of `url`. `redirect(url)` says why a redirect may not be
    followed there (None: it may): a URL a card chose is held to more than
    one the user gave."""
    deadline = time.monotonic() + limits.DOWNLOAD_SECONDS
    for _ in range(MAX_REDIRECTS + 1):
        status, location, body = _exchange(url, accept, deadline)
        if location is None:
            if status != 200:
                raise FetchError(f"the server answered {status} {http.client.responses.get(status, '')}".rstrip())
            return body
        try:
            url = urljoin(url, location)
            refused = redirect(url)
        except ValueError:  # a malformed location (`https://[::1/`)
            raise FetchError("the server redirected to a URL that is not well formed") from None
        if refused is not None:
            raise FetchError(refused)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


def _exchange(url: str, accept: str, deadline: float) -> tuple[int, str | None, bytes]:
    """One request: (status, where a redirect points, body)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise FetchError("it is not a well-formed URL (its host or port)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError("it is not an http(s) URL")
    timeout = max(0.1, min(limits.CONNECT_SECONDS, deadline - time.monotonic()))
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection(parts.hostname, port, timeout=timeout, context=ssl.create_default_context())
        if parts.scheme == "https" else http.client.HTTPConnection(parts.hostname, port, timeout=timeout))
    watchdog = _Watchdog(deadline)
    conn._create_connection = watchdog.connected  # type: ignore[attr-defined]  # held from the first byte
    try:
        conn.connect()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", path, headers={"Accept": accept, "User-Agent": USER_AGENT})
        response = conn.getresponse()
        if response.status in (301, 302, 303, 307, 308) and response.getheader("Location"):
            return response.status, response.getheader("Location"), b""
        if response.status != 200:
            return response.status, None, b""
        declared = response.getheader("Content-Length", "")
        if declared.isdigit() and int(declared) > limits.DOWNLOAD_BYTES:
            raise FetchError(f"the body is {int(declared):,} bytes; knoc reads at most {limits.DOWNLOAD_BYTES:,}")
        return response.status, None, _body(response, deadline)
    except FetchError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if time.monotonic() >= deadline - 0.05:
            raise FetchError(f"the download took longer than {limits.DOWNLOAD_SECONDS:g} s") from None
        if isinstance(exc, ssl.SSLError | ssl.CertificateError):
            raise FetchError(f"the TLS handshake failed ({str(exc)[:200]})") from None
        if isinstance(exc, socket.timeout | TimeoutError):
            raise FetchError(f"no answer within {timeout:g} s") from None
        if isinstance(exc, socket.gaierror | ConnectionError):
            raise FetchError(f"cannot reach it: {exc.strerror or exc}") from None
        raise FetchError(f"the exchange failed ({type(exc).__name__}: {str(exc)[:200]})") from None
    finally:
        watchdog.close()
        conn.close()


class _Watchdog:
    """Shuts the exchange's connection at the deadline, whatever it is
    waiting on. It holds a duplicate of the socket's descriptor from the
    moment the socket connects (TLS then wraps the socket object, not the
    connection), so a handshake, headers or body that drip past the
    deadline are all cut; a deadline that passes before the socket connects
    (a slow name lookup) shuts it as soon as it does."""

    def __init__(self, deadline: float) -> None:
        self._lock = threading.Lock()
        self._held: list[socket.socket] = []
        self._expired = False
        self._deadline = deadline
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def connected(self, address: tuple[str, int], timeout: float | None,
                  source: tuple[str, int] | None = None) -> socket.socket:
        """http.client's `_create_connection`: the socket, held. Each address
        a name resolves to is tried within what is left of the deadline
        (`socket.create_connection` gives each the whole timeout)."""
        sock = self._connect(address, timeout, source)
        held = socket.fromfd(sock.fileno(), sock.family, sock.type)
        with self._lock:
            self._held.append(held)
            expired = self._expired
        if expired:
            _shut(held)
        return sock

    def _connect(self, address: tuple[str, int], timeout: float | None,
                 source: tuple[str, int] | None) -> socket.socket:
        failed: OSError = TimeoutError("timed out")
        left = self._deadline - time.monotonic()
        for family, kind, proto, _, where in _lookup(address, min(timeout or left, left)):
            left = self._deadline - time.monotonic()
            if left <= 0:
                break
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(min(timeout or left, left))
                if source:
                    sock.bind(source)
                sock.connect(where)
            except OSError as exc:
                sock.close()
                failed = exc
                continue
            sock.settimeout(timeout)
            return sock
        raise failed

    def _cut(self) -> None:
        with self._lock:
            self._expired = True
            held = list(self._held)
        for sock in held:
            _shut(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._held:
                sock.close()
            self._held.clear()


_Resolved = Sequence[tuple[socket.AddressFamily, socket.SocketKind, int, str,
                       tuple[str, int] | tuple[str, int, int, int] | tuple[int, bytes]]]


def _lookup(address: tuple[str, int], left: float) -> _Resolved:
    """The addresses a name resolves to, within `left` seconds: a lookup
    cannot be interrupted, so it runs on a thread of its own, left behind
    (to end with the process) if the resolver hangs."""
    found: list[_Resolved | OSError | ValueError] = []
    done = threading.Event()

    def run() -> None:
        try:
            found.append(socket.getaddrinfo(*address, type=socket.SOCK_STREAM))
        except (OSError, ValueError) as exc:  # ValueError: a name IDNA cannot encode
            found.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(max(0.0, left)):
        raise TimeoutError("the name lookup timed out")
    if not found:
        raise OSError("the name lookup failed")
    if isinstance(found[0], OSError | ValueError):
        raise found[0]
    return found[0]


def _shut(sock: socket.socket) -> None:
    """Shut the connection, so whatever read or write is waiting on it returns."""
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


def _body(response: http.client.HTTPResponse, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(1 << 16):
        size += len(chunk)
        if size > limits.DOWNLOAD_BYTES:
            raise FetchError(f"the body is larger than {limits.DOWNLOAD_BYTES:,} bytes, the most knoc reads")
        if time.monotonic() >= deadline:  # a drip the watchdog has not cut yet
            raise FetchError(f"the download took longer than {limits.DOWNLOAD_SECONDS:g} s")
        chunks.append(chunk)
    if time.monotonic() >= deadline:  # the watchdog cut it short: not the whole body
        raise FetchError(f"the download took longer than {limits.DOWNLOAD_SECONDS:g} s")
    return b"".join(chunks)
