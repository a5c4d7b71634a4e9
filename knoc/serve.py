"""`knoc serve`: build/site/ on loopback, answered the way a static host
would answer it. The request's Host header picks the `site/<host>` tree
(a client asking for agents.example.net gets that host's cards); a host
with no tree gets site/ itself, whose index.html is the catalog page."""

from __future__ import annotations

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import unquote, urlsplit

from knoc.hosting import CARD_HEADERS, CARD_NAMES, HEADERS_FILE, headers_for, is_card
from knoc.load import discover

INDEX = "index.html"


def locate(site: Path, fixed: str | None, host: str, url: str) -> tuple[Path, str] | None:
    """(file, its path inside the served tree) for a request, or None for 404."""
    tree = site / fixed if fixed else _tree(site, host)
    segments = [unquote(s) for s in urlsplit(url).path.split("/") if s]
    if any(s in (".", "..") or "/" in s or "\\" in s for s in segments) or segments[-1:] == [HEADERS_FILE]:
        return None
    rel = "/".join(segments)
    path = tree / rel if rel else tree
    if path.is_dir():
        path, rel = path / INDEX, f"{rel}/{INDEX}".lstrip("/")
    if not path.is_file() and is_card(rel) and rel.endswith(CARD_NAMES[1]):  # agent.json: the same card
        path = path.with_name(CARD_NAMES[0])
    return (path, rel) if path.is_file() else None


def _tree(site: Path, host: str) -> Path:
    host = host.strip().lower()
    for name in (host, host.rsplit(":", 1)[0]):  # a card url with a port has its own tree
        if name and "/" not in name and not name.startswith(".") and (site / name).is_dir():
            return site / name
    return site


def handler(site: Path, fixed: str | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "knoc-serve"

        def do_GET(self) -> None:
            self._answer(with_body=True)

        def do_HEAD(self) -> None:
            self._answer(with_body=False)

        def do_OPTIONS(self) -> None:  # a CORS preflight: cards may be fetched from any origin
            self.send_response(204)
            for k in ("Access-Control-Allow-Origin", "Access-Control-Allow-Methods"):
                self.send_header(k, CARD_HEADERS[k])
            self.send_header("Access-Control-Allow-Headers", "*")
            self.end_headers()

        def _answer(self, with_body: bool) -> None:
            found = locate(site, fixed, self.headers.get("Host", ""), self.path)
            try:
                body = found[0].read_bytes() if found else None
            except OSError:  # swapped away by a rebuild between the check and the read
                body = None
            if found is None or body is None:
                self.send_error(404, "Not Found")
                return
            self.send_response(200)
            for k, v in headers_for(found[1]).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
            pass  # quiet: the command line is for build findings

    return Handler


def start(site: Path, fixed: str | None, port: int) -> ThreadingHTTPServer:
    """Bind loopback (OSError when the port is taken); serve_forever() runs it."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler(site, fixed))
    server.daemon_threads = True
    return server


def fingerprint(root: Path, folders: list[str]) -> tuple[tuple[str, int, int], ...]:
    """What changes when an author saves, adds or removes a source: the
    size and mtime of each file a compile reads (load.discover's list)."""
    out = []
    for rel in discover(root, folders):
        try:
            st = os.stat(root / rel)
        except OSError:  # removed since the listing: the next poll sees it gone
            continue
        out.append((rel, st.st_mtime_ns, st.st_size))
    return tuple(out)


def watch(current: Callable[[], object], rebuild: Callable[[], None], stop: threading.Event,
          interval: float = 0.5) -> None:
    """Call `rebuild` whenever `current()` changes, until `stop` is set."""
    last = current()
    while not stop.wait(interval):
        now = current()
        if now != last:
            time.sleep(0.1)  # let an editor finish writing
            last = current()
            rebuild()
