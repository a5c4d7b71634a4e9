"""`knoc serve` under hostile and heavy use: every request gets an HTTP
status (never a dropped connection or a traceback), and a burst of
concurrent clients on loopback is answered in full."""

from __future__ import annotations

import http.client
import shutil
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from knoc.rules import limits
from tests.conftest import EXAMPLE_PARTS, ROOT, edit
from tests.test_serve import CATALOG, serving

REQUESTS, CLIENTS = 1000, 200


def status(base: str, path: str, host: str = "agents.possibility.space") -> int:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> object:


    root = tmp_path_factory.mktemp("serve") / "repo"
    root.mkdir()
    for part in EXAMPLE_PARTS:
        (shutil.copytree if (ROOT / part).is_dir() else shutil.copy)(ROOT / part, root / part)
    with serving(root, "--watch") as url:
        yield url


@pytest.mark.parametrize(("path", "host", "expected"), [
    ("/" + "a" * 300, "agents.possibility.space", 404),
    ("/" + "a/" * 200, "agents.possibility.space", 404),
    ("/" + "a" * (limits.SERVE_PATH_BYTES + 10), "agents.possibility.space", 414),
    ("/.well-known/agent-card.json", "h" * 300, 431),
    ("/%00/x", "agents.possibility.space", 404),
    ("/..%2f..%2fknoc.toml", "agents.possibility.space", 404),
    ("/catalog-search/.well-known/agent-card.json", "a" * 250, 200),  # an unknown host gets site/ itself
    ("/catalog-search/.well-known/agent-card.json", "agents.possibility.space.", 200),  # a trailing dot: one host
    ("/catalog.js", "_catalog", 404),  # knoc's own folder is no host's tree
    ("/catalog-search/.well-known/agent-card.json", "agents.possibility.space..", 404),  # no host: site/ itself
    ("/catalog-search/.well-known/agent-card.json", "agents.possibility.space:", 200),  # an empty port
])
def test_every_request_gets_a_status(base: str, path: str, host: str, expected: int) -> None:
    if expected == 200 and host == "a" * 250:
        path = "/" + CATALOG[0]["card"]
    assert status(base, path, host) == expected


@pytest.mark.parametrize("request_line", [b"\x00\x01 garbage \xff HTTP/1.1", b"GET / HTTP/9.9", b"BREW /pot HTTP/1.1"])
def test_a_garbled_request_gets_a_status_not_a_dropped_connection(base: str, request_line: bytes) -> None:
    parts = urlsplit(base)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request_line + b"\r\nHost: x\r\n\r\n")
        reply = b"".join(iter(lambda: sock.recv(4096), b""))
    # The standard library answers a request it cannot parse in HTTP/0.9 style: an error page, no status line.
    assert b"Error code: 40" in reply or b"Error code: 50" in reply, reply[:200]


def test_a_burst_of_clients_is_answered_in_full(base: str) -> None:
    cards = ["/" + a["card"] for a in CATALOG]
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        answers = list(pool.map(lambda i: status(base, cards[i % len(cards)], "localhost"), range(REQUESTS)))
    assert answers == [200] * REQUESTS


def test_a_failed_rebuild_keeps_the_old_tree_served_and_the_watcher_alive(repo: Path) -> None:
    rel = "content/agent-blueprints/quick-summarizer.kno"
    card = "/quick-summarizer/.well-known/agent-card.json"
    with serving(repo, "--watch") as url:
        edit(repo, rel, "url: https://agents", "url: https://../agents")  # a rebuild that fails
        time.sleep(1.5)
        assert status(url, card) == 200  # the old tree is still served
        edit(repo, rel, "url: https://../agents", "url: https://agents")
        edit(repo, rel, "Condenses a document", "Boils down a document")
        deadline = time.monotonic() + 30
        while b"Boils down" not in _body(url, card):
            assert time.monotonic() < deadline, "the watcher stopped after a failed rebuild"
            time.sleep(0.2)


def _body(base: str, path: str) -> bytes:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": "agents.possibility.space"})
        return conn.getresponse().read()
    finally:
        conn.close()


def test_links_in_the_site_tree_are_never_followed(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A link in build/site/ (to a file or a folder outside, or inside) is
    404: served with CORS open to any origin, it would let every web page
    the user visits read whatever it points to."""
    import subprocess
    import sys

    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.json").write_text('{"secret": 1}')
    assert subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo)], capture_output=True).returncode == 0
    host = repo / "build/site/agents.possibility.space"
    (host / "secret.json").symlink_to(outside / "secret.json")
    (host / "elsewhere").symlink_to(outside)
    (host / "card-again.json").symlink_to(host / "catalog-search/.well-known/agent-card.json")
    (repo / "build/site/evil.example").symlink_to(outside)
    with serving(repo) as url:
        assert status(url, "/catalog-search/.well-known/agent-card.json") == 200
        for path in ("/secret.json", "/elsewhere/secret.json", "/card-again.json"):
            assert status(url, path) == 404, path
        assert status(url, "/secret.json", "evil.example") == 404  # a linked host tree is no tree


@pytest.mark.parametrize("site", ["/", "..", "../..", ".well-known", "agents.possibility.space/../.."])
def test_site_names_one_host_tree_of_the_build(site: str, repo: Path) -> None:
    import subprocess
    import sys

    assert subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo)], capture_output=True).returncode == 0
    done = subprocess.run([sys.executable, "-m", "knoc", "serve", "--root", str(repo), "--site", site, "--port", "0"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "KNO-SERVE" in done.stderr and "Traceback" not in done.stderr


def test_idle_connections_hold_no_thread_for_long_and_no_more_than_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that send half a request and wait are closed when idle,
    and past the bound new ones are closed at once: a flood never costs a
    thread each, and a real request is answered once the idle ones are gone."""
    import threading
    import urllib.request

    from knoc.io import server

    monkeypatch.setattr(limits, "SERVE_CONNECTIONS", 4)
    monkeypatch.setattr(limits, "SERVE_IDLE_SECONDS", 0.5)
    running = server.start(0, lambda request: server.Response(200, body=b"ok"))
    threading.Thread(target=running.serve_forever, daemon=True).start()
    port = running.server_address[1]
    before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    try:
        for sock in idle:
            sock.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.2)
        assert threading.active_count() - before <= 4
        time.sleep(1.0)  # past the idle limit: their threads are back
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answered:
            assert answered.status == 200 and answered.read() == b"ok"
    finally:
        for sock in idle:
            sock.close()
        running.shutdown()
        running.server_close()


def test_a_request_sent_a_byte_at_a_time_is_cut_off_at_the_idle_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that drips its request a byte at a time, each within the
    idle limit, is cut off once the limit has passed since the request
    began: it cannot hold a thread for good. A request sent whole is answered."""
    import threading

    from knoc.io import server

    monkeypatch.setattr(limits, "SERVE_IDLE_SECONDS", 1.0)
    running = server.start(0, lambda request: server.Response(200, body=b"ok"))
    threading.Thread(target=running.serve_forever, daemon=True).start()
    port = running.server_address[1]
    try:
        drip = socket.create_connection(("127.0.0.1", port))
        began, closed = time.monotonic(), None
        try:
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200:
                drip.sendall(bytes([byte]))
                time.sleep(0.3)
                drip.settimeout(0.01)
                try:
                    if drip.recv(1024) == b"":
                        closed = time.monotonic() - began
                        break
                except TimeoutError:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            closed = time.monotonic() - began
        finally:
            drip.close()
        assert closed is not None and closed < 3.0
        whole = socket.create_connection(("127.0.0.1", port), timeout=5)
        whole.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answered = whole.makefile("rb").read()
        whole.close()
        assert answered.split(b"\r\n", 1)[0].endswith(b" 200 OK") and answered.endswith(b"\r\n\r\nok")
    finally:
        running.shutdown()
        running.server_close()
