"""An HTTP server on loopback that knows nothing of what it serves: each
request is handed to an `answer` function, which returns the response.
Every request gets a status, never a dropped connection: a path or Host
past the limits gets 414 or 431, and a failing `answer` gets 500."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from knoc.rules import limits

_Connection = socket.socket | tuple[bytes, socket.socket]  # what socketserver hands a handler


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class Request:
    method: str
    host: str  # the Host header
    path: str
    if_none_match: str = ""  # the If-None-Match header: the ETags the client holds


Answer = Callable[[Request], Response]


class _Deadline(io.RawIOBase):
    """A connection's reading side, where each request's line and headers
    (and the wait before them) must all arrive by `deadline`: a per-read
    timeout alone lets a client that sends a byte every few seconds hold
    its thread for good."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock, self.deadline = sock, 0.0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


def _handler(answer: Answer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "knoc-serve"

        def setup(self) -> None:
            super().setup()
            self._head = _Deadline(self.connection)
            self.rfile = io.BufferedReader(self._head)

        def handle_one_request(self) -> None:
            # A client that sends nothing, or its request too slowly, gives its thread back.
            self._head.deadline = time.monotonic() + limits.SERVE_IDLE_SECONDS
            super().handle_one_request()

        def do_GET(self) -> None:
            self._reply("GET")

        def do_HEAD(self) -> None:
            self._reply("HEAD")

        def do_OPTIONS(self) -> None:
            self._reply("OPTIONS")

        def _reply(self, method: str) -> None:
            self.connection.settimeout(limits.SERVE_IDLE_SECONDS)  # the answer's writes: not the head's time left
            host = self.headers.get("Host", "")
            if len(self.path) > limits.SERVE_PATH_BYTES:
                response = Response(414)
            elif len(host) > limits.SERVE_HOST_BYTES:
                response = Response(431)
            else:
                try:
                    response = answer(Request(method, host, self.path, self.headers.get("If-None-Match", "")))
                except Exception:  # whatever went wrong, the client gets a status
                    response = Response(500)
            if response.status >= 400:
                self.send_error(response.status)
                return
            self.send_response(response.status)
            for k, v in response.headers.items():
                self.send_header(k, v)
            bodyless = response.status in (204, 304)
            if not bodyless:
                self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if method != "HEAD" and not bodyless:
                self.wfile.write(response.body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: the command line is for build findings

    return Handler


def start(port: int, answer: Answer) -> ThreadingHTTPServer:
    """Bind 127.0.0.1 (OSError when the port is taken); serve_forever() runs it."""
    server = _Server(("127.0.0.1", port), _handler(answer))
    server.daemon_threads = True
    return server


class _Server(ThreadingHTTPServer):
    request_queue_size = limits.SERVE_BACKLOG  # the standard library's 5 drops a burst of clients

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(limits.SERVE_CONNECTIONS)

    def process_request(self, request: _Connection, client_address: tuple[str, int]) -> None:
        """A thread for the connection while one is free; else it is closed
        at once (a flood of connections never costs a thread each)."""
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: _Connection, client_address: tuple[str, int]) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hung up mid-answer is not worth a traceback on the terminal
