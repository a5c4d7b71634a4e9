"""`knoc import URL` against servers that misbehave: each ends in one
KNO-IMPORT-READ diagnostic within the download limits, never a hang, a
huge read or a traceback."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from knoc.rules import limits
from tests.conftest import Knoc, json_diags


def drip(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{")
    for _ in range(200):
        time.sleep(0.05)
        conn.sendall(b" ")


def huge(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
    for _ in range(300):
        conn.sendall(b" " * (1 << 20))


def declared_huge(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 314572800\r\n\r\n{")


def bad_status(conn: socket.socket) -> None:
    conn.sendall(b"HELLO THERE\r\n\r\n")


def silent(conn: socket.socket) -> None:
    time.sleep(5)


def not_found(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")


@contextmanager
def server(behave: object) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn, contextlib.suppress(OSError):  # OSError: the client gave up, as it should
                conn.recv(65536)
                behave(conn)  # type: ignore[operator]

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/card.json"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize(("behave", "words"), [
    (drip, "took longer than 1 s"), (huge, "larger than"), (declared_huge, "314,572,800 bytes"),
    (bad_status, "BadStatusLine"), (silent, "no answer within 0.5 s"), (not_found, "404"),
])
def test_a_misbehaving_server_is_one_diagnostic(behave: object, words: str, repo: Path, knoc: Knoc,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "DOWNLOAD_SECONDS", 1.0)
    monkeypatch.setattr(limits, "CONNECT_SECONDS", 0.5)
    with server(behave) as url:
        start = time.monotonic()
        code, out, err = knoc("import", url, "--format", "json", root=repo)
        took = time.monotonic() - start
    assert took < 5 and "Traceback" not in out + err
    [diag] = json_diags(out)
    assert code == 1 and diag["code"] == "KNO-IMPORT-READ" and words in diag["message"], diag
    assert not (repo / "content/agent-blueprints/card.kno").exists()


def drip_headers(conn: socket.socket) -> None:
    """Headers a byte at a time, every 0.2 s: each read is quick, the whole never ends."""
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Slow: " + b"a" * 500:
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def redirect_to_ftp(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1/card.json\r\nContent-Length: 0\r\n\r\n")


def redirect_to_file(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 301 Moved\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n\r\n")


@pytest.mark.parametrize(("behave", "words"), [
    (drip_headers, "took longer than 1 s"), (redirect_to_ftp, "redirected to a ftp URL"),
    (redirect_to_file, "redirected to a file URL"),
])
@pytest.mark.parametrize("command", ["import", "verify", "jwks"])
def test_one_deadline_and_http_only_redirects_for_every_download(behave: object, words: str, command: str,
                                                                 repo: Path, knoc: Knoc,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """import, verify and --jwks share one download: the deadline covers
    the headers too, and a redirect leaves http(s) never."""
    monkeypatch.setattr(limits, "DOWNLOAD_SECONDS", 1.0)
    monkeypatch.setattr(limits, "CONNECT_SECONDS", 0.5)
    with server(behave) as url:
        start = time.monotonic()
        if command == "import":
            code, out, err = knoc("import", url, "--format", "json", root=repo)
            said = " ".join(d["message"] for d in json_diags(out))
        elif command == "verify":
            code, out, err = _verify(url, "--jwks", url)
            said = err
        else:
            local = repo / "card.json"
            local.write_text('{"name": "a", "signatures": [{"protected": "e30", "signature": "AA"}]}')
            code, out, err = _verify(str(local), "--jwks", url)
            said = err
        took = time.monotonic() - start
    assert took < 5 and "Traceback" not in out + err
    assert code in (1, 2) and words in said, (out, err)


def _verify(*args: str) -> tuple[int, str, str]:
    """`knoc verify` in this process (it takes no --root), so the patched limits apply."""
    from click.testing import CliRunner

    from knoc.cli import main

    result = CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("where", ["card", "jwks", "missing file"])
def test_verify_names_an_input_it_cannot_read_as_such(where: str, repo: Path) -> None:
    """A card or key set that cannot be read is `KNO-VERIFY-READ`, with
    the HTTP status or the OS's reason: not a configuration problem."""
    local = repo / "card.json"
    local.write_text('{"name": "a", "signatures": [{"protected": "e30", "signature": "AA"}]}')
    with server(not_found) as url:
        args = {"card": (url, "--jwks", str(local)), "jwks": (str(local), "--jwks", url),
                "missing file": (str(repo / "gone.json"), "--jwks", str(local))}[where]
        code, _, err = _verify(*args)
    assert code == 2 and "KNO-VERIFY-READ" in err and "KNO-CONFIG" not in err, err
    assert ("404 Not Found" if where != "missing file" else "No such file") in err


def test_a_deadline_that_passes_while_connecting_still_cuts_the_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deadline passes during a slow name lookup or connect, before the
    socket exists: the connection is shut the moment it has one, so a server
    that then drips a body forever is cut at once, not read for hours."""
    from knoc.io import http

    monkeypatch.setattr(limits, "DOWNLOAD_SECONDS", 0.2)
    monkeypatch.setattr(limits, "CONNECT_SECONDS", 0.5)
    lookup = socket.getaddrinfo

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(0.4)  # a lookup that outlasts the whole deadline
        return lookup(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", slow)
    with server(drip) as url:
        start = time.monotonic()
        with pytest.raises(http.FetchError, match=r"took longer than 0\.2 s"):
            http.fetch(url)
        assert time.monotonic() - start < 2


def test_a_name_lookup_that_hangs_is_cut_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resolver that never answers (a dead DNS server, its retries) is
    not waited for past the deadline: a lookup cannot be interrupted, so
    knoc stops waiting for it."""
    from knoc.io import http

    released = threading.Event()

    def hang(*args: object, **kwargs: object) -> object:
        released.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "no answer")

    monkeypatch.setattr(limits, "DOWNLOAD_SECONDS", 0.3)
    monkeypatch.setattr(socket, "getaddrinfo", hang)
    start = time.monotonic()
    try:
        with pytest.raises(http.FetchError, match=r"took longer than 0\.3 s"):
            http.fetch("http://unanswered.example.org/.well-known/agent-card.json")
        assert time.monotonic() - start < 2
    finally:
        released.set()


def test_the_credentials_a_card_was_fetched_with_are_not_its_url(repo: Path, knoc: Knoc) -> None:
    """A card that names no url of its own is published where it was
    fetched from: without the user name and password used to fetch it."""

    def card(conn: socket.socket) -> None:
        body = (b'{"name": "Nameless Url", "description": "d", "version": "1.0.0", "capabilities": {}, '
                b'"defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], '
                b'"skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}]}')
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)

    with server(card) as url:
        code, out, err = knoc("import", url.replace("http://", "http://alice:tok3n@"), root=repo)
    written = (repo / "content/agent-blueprints/nameless-url.kno").read_text(encoding="utf-8")
    assert code == 0 and "tok3n" not in written + out + err and "url: http://127.0.0.1:" in written


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_verify_never_repeats_the_password_of_the_cards_url(fmt: str, tmp_path: Path) -> None:
    def card(conn: socket.socket) -> None:
        body = b'{"name": "a", "signatures": [{"protected": "e30", "signature": "AA"}]}'
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)

    (tmp_path / "jwks.json").write_text('{"keys": []}', encoding="utf-8")
    with server(card) as url:
        code, out, err = _verify(url.replace("http://", "http://user:s3cretpw@"), "--jwks", str(tmp_path / "jwks.json"),
                                 "--format", fmt)
    assert code == 1 and "s3cretpw" not in out + err and ("***@" in out or fmt == "text")


def test_a_name_with_many_unanswering_addresses_is_tried_within_the_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each address a name resolves to is tried within what is left of the
    deadline, not for the whole connect timeout each: four addresses that
    never answer cost the deadline, not four timeouts."""
    from knoc.io import http

    monkeypatch.setattr(limits, "DOWNLOAD_SECONDS", 1.0)
    monkeypatch.setattr(limits, "CONNECT_SECONDS", 0.8)
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    waiting = []
    try:
        for _ in range(8):  # fill the accept queue: a SYN past it is dropped, and a connect hangs
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(full.getsockname())
            waiting.append(s)
        time.sleep(0.1)
        where = full.getsockname()
        monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", where)] * 4)
        start = time.monotonic()
        with pytest.raises(http.FetchError):
            http.fetch(f"http://unanswering.example:{where[1]}/card.json")
        assert time.monotonic() - start < 1.6
    finally:
        for s in waiting:
            s.close()
        full.close()
