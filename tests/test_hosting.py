"""The hosting recipes of docs/guides/hosting.md, tried: each host's tree served by
nginx with the README's server block (as written, but for the port, name
and root), and the `_headers` rules Netlify and Cloudflare Pages read,
matched the way they match them; every card, AI Catalog and key set gets
its type, CORS and cache headers, and `_headers` itself is never served."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, Knoc

README = (ROOT / "docs/guides/hosting.md").read_text(encoding="utf-8")
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
needs_nginx = pytest.mark.skipif(NGINX is None and not os.environ.get("KNOC_REQUIRE_NGINX"),
                                 reason="needs nginx (.ci/run installs it and sets KNOC_REQUIRE_NGINX)")
WANTED = {"agent-card.json": "application/json", "agent.json": "application/json",
          "ai-catalog.json": "application/ai-catalog+json", "jwks.json": "application/jwk-set+json"}


@pytest.fixture
def site(repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example built signed, so every host tree has a key set too."""
    key = tmp_path_factory.mktemp("key") / "k.pem"
    assert subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(key)], capture_output=True).returncode == 0
    assert knoc("build", "--sign-key", str(key), root=repo)[0] == 0
    return repo / "build/site"


def published(tree: Path) -> list[str]:
    """Each file of a host tree that needs its headers, as a url path."""
    return sorted("/" + p.relative_to(tree).as_posix() for p in tree.rglob("*.json")
                  if p.parent.name == ".well-known" and p.name in WANTED)


def hosts(site: Path) -> list[str]:
    return sorted(p.name for p in site.iterdir() if p.is_dir() and (p / ".well-known").is_dir())


def test_every_host_tree_is_whole(site: Path) -> None:
    """What a static host needs is in each tree: no file outside it is linked to."""
    for host in hosts(site):
        tree = site / host
        assert (tree / ".nojekyll").is_file() and (tree / "_headers").is_file() and (tree / "index.html").is_file()
        page = (tree / "index.html").read_text(encoding="utf-8")
        for link in re.findall(r'(?:href|src)="(\.?/?[^"#:]+)"', page):
            assert (tree / link).resolve().is_relative_to(tree.resolve()) and (tree / link).exists(), (host, link)


def netlify_headers(rules: str, path: str) -> dict[str, str]:
    """The headers Netlify's `_headers` gives a path: every rule whose
    pattern matches, in order (`*` matches anything, slashes too)."""
    found: dict[str, str] = {}
    pattern = None
    for line in rules.splitlines():
        if line.startswith("/"):
            pattern = re.compile("^" + re.escape(line.strip()).replace(r"\*", ".*") + "$")
        elif line.startswith("  ") and pattern is not None and pattern.match(path):
            name, _, value = line.strip().partition(": ")
            found[name] = value
    return found


def test_netlify_and_cloudflare_headers_cover_every_published_file(site: Path) -> None:
    for host in hosts(site):
        rules = (site / host / "_headers").read_text(encoding="utf-8")
        for path in published(site / host):
            got = netlify_headers(rules, path)
            assert got.get("Content-Type") == WANTED[path.rsplit("/", 1)[1]], (host, path)
            assert got.get("Access-Control-Allow-Origin") == "*" and "max-age" in got.get("Cache-Control", ""), path
            assert got.get("ETag") or path.endswith("jwks.json")


def nginx_server(block: str, port: int, host: str, root: Path) -> str:
    """The README's server block for one host on loopback, as written otherwise."""
    block = re.sub(r"listen [^;]*;[^\n]*", f"listen 127.0.0.1:{port};", block, count=1)
    block = re.sub(r"server_name [^;]*;", f"server_name {host};", block, count=1)
    return re.sub(r"root [^;]*;[^\n]*", f"root {root};", block, count=1)


@contextlib.contextmanager
def nginx(servers: str, folder: Path) -> Iterator[None]:
    conf = folder / "nginx.conf"
    user = "user root;" if os.geteuid() == 0 else ""  # the workers read the test's own folders
    conf.write_text(f"""{user} daemon off; pid {folder}/nginx.pid; error_log {folder}/error.log;
events {{}}
http {{ include /etc/nginx/mime.types; access_log off;
client_body_temp_path {folder}; proxy_temp_path {folder}; fastcgi_temp_path {folder};
uwsgi_temp_path {folder}; scgi_temp_path {folder};
{servers}
}}
""", encoding="utf-8")
    proc = subprocess.Popen([str(NGINX), "-p", str(folder), "-c", str(conf)], stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def fetch(port: int, host: str, path: str, method: str = "GET") -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


@needs_nginx
def test_the_readme_nginx_recipe_serves_each_host_tree(site: Path, tmp_path: Path) -> None:
    block = README[README.index("```nginx\n") + len("```nginx\n"):]
    block = block[:block.index("```")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    servers = "\n".join(nginx_server(block, port, host, site / host) for host in hosts(site))
    with nginx(servers, tmp_path):
        for host in hosts(site):
            for path in published(site / host):
                status, headers = fetch(port, host, path)
                assert status == 200 and headers["Content-Type"] == WANTED[path.rsplit("/", 1)[1]], (host, path)
                assert headers["Access-Control-Allow-Origin"] == "*" and "max-age=300" in headers["Cache-Control"]
            assert fetch(port, host, "/.well-known/agent-card.json", "OPTIONS")[0] == 204
            assert fetch(port, host, "/")[0] == 200  # the host's own catalog page
            assert fetch(port, host, "/_headers")[0] == 404
