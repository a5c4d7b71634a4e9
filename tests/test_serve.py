"""`knoc serve`: a real server process on a free port, read by the real
client (a2a-sdk's card resolver) and by headless Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.client.card_resolver import parse_agent_card
from google.protobuf.json_format import MessageToDict

from knoc.features.serve import locate
from tests.conftest import ROOT, edit

ARTIFACTS = Path(os.environ.get("KNOC_ARTIFACTS", ROOT / "tests" / "artifacts"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CATALOG = json.loads((ROOT / "build/index/agents.json").read_text(encoding="utf-8"))["agents"]


@contextmanager
def serving(root: Path, *args: str) -> Iterator[str]:
    """`knoc serve --port 0` in its own process; yields its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "knoc", "serve", "--root", str(root), "--port", "0", *args],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = ""
        while "serving" not in line:  # --watch builds first: its summary comes before
            line = proc.stderr.readline()
            assert line, f"knoc serve exited with {proc.wait()}"
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, line
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def get(url: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), b""


def host_and_path(card: str) -> tuple[str, str]:
    """`card` (index/agents.json) is site-relative: <host>/<path>/.well-known/..."""
    host, _, rest = card.partition("/")
    return host, rest.removesuffix("/.well-known/agent-card.json").removesuffix(".well-known/agent-card.json")


def test_the_sdk_resolver_fetches_every_card_as_built() -> None:
    async def fetch_all(base: str) -> dict[str, dict]:
        fetched = {}
        async with httpx.AsyncClient() as client:
            for entry in CATALOG:
                host, path = host_and_path(entry["card"])
                resolver = A2ACardResolver(client, base + path)
                card = await resolver.get_agent_card(http_kwargs={"headers": {"Host": host}})
                fetched[entry["slug"]] = MessageToDict(card)
        return fetched

    assert CATALOG, "the example publishes cards"
    with serving(ROOT) as base:
        fetched = asyncio.run(fetch_all(base.rstrip("/") + "/"))
    for entry in CATALOG:
        built = json.loads((ROOT / "build/site" / entry["card"]).read_bytes())
        assert fetched[entry["slug"]] == MessageToDict(parse_agent_card(built)), entry["slug"]


def test_cards_are_served_the_way_a_static_host_serves_them() -> None:
    host, path = host_and_path(CATALOG[0]["card"])
    built = (ROOT / "build/site" / CATALOG[0]["card"]).read_bytes()
    with serving(ROOT) as base:
        status, headers, body = get(f"{base}{path}/.well-known/agent-card.json", host)
        assert (status, body) == (200, built)
        assert headers["Content-Type"] == "application/json"
        assert headers["Access-Control-Allow-Origin"] == "*"
        assert "max-age=" in headers["Cache-Control"]
        legacy = (ROOT / "build/site" / CATALOG[0]["card"].replace("agent-card.json", "agent.json")).read_bytes()
        assert get(f"{base}{path}/.well-known/agent.json", host)[2] == legacy  # the pre-0.3 path
        # Without that Host, the same path is not a card: the host picks the tree.
        assert get(f"{base}{path}/.well-known/agent-card.json")[0] == 404
        assert get(f"{base}{host}/{path}/.well-known/agent-card.json")[2] == built  # site/ served whole
        assert get(f"{base}_headers", host)[0] == 404  # a host's config, never a page
        assert get(f"{base}%2e%2e/%2e%2e/knoc.toml", host)[0] == 404


def test_site_serves_one_tree_for_every_host() -> None:
    host, path = host_and_path(CATALOG[0]["card"])
    built = (ROOT / "build/site" / CATALOG[0]["card"]).read_bytes()
    with serving(ROOT, "--site", host) as base:
        assert get(f"{base}{path}/.well-known/agent-card.json", "elsewhere.example")[2] == built


def test_unknown_site_and_missing_build_are_usage_errors(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "knoc", "serve", "--root", str(ROOT), "--port", "0",
                          "--site", "nowhere.example"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "KNO-SERVE" in out.stderr and "agents.possibility.space" in out.stderr
    assert "_catalog" not in out.stderr  # the catalog's assets, no host's tree
    out = subprocess.run([sys.executable, "-m", "knoc", "serve", "--root", str(ROOT), "--port", "0",
                          "--site", "_catalog"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "KNO-SERVE" in out.stderr
    (tmp_path / "specs").mkdir()
    out = subprocess.run([sys.executable, "-m", "knoc", "serve", "--root", str(tmp_path), "--port", "0"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "knoc build" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("hidden", [False, True])
def test_watch_rebuilds_when_a_source_changes(repo: Path, tmp_path_factory: pytest.TempPathFactory,
                                              hidden: bool) -> None:
    """Also for a repo that lives under a hidden folder (~/.config/agents):
    only the path inside the repo decides what is a source."""
    if hidden:
        moved = tmp_path_factory.mktemp("home") / ".config" / "agents"
        moved.parent.mkdir()
        shutil.move(str(repo), moved)
        repo = moved
    rel = "content/agent-blueprints/quick-summarizer.kno"
    with serving(repo, "--watch") as base:
        card = f"{base}quick-summarizer/.well-known/agent-card.json"
        assert b"Condenses a document" in get(card, "agents.possibility.space")[2]
        edit(repo, rel, "Condenses a document", "Boils down a document")
        deadline = time.monotonic() + 30
        while b"Boils down" not in get(card, "agents.possibility.space")[2]:
            assert time.monotonic() < deadline, "no rebuild within 30 s"
            time.sleep(0.2)


def test_locate_never_leaves_the_tree(tmp_path: Path) -> None:
    (tmp_path / "a.example/.well-known").mkdir(parents=True)
    (tmp_path / "a.example/.well-known/agent-card.json").write_text("{}")
    (tmp_path / "secret").write_text("x")
    # an agent.json the build did not write (a 1.0-only agent) is not stood in for by its card
    assert locate(tmp_path, None, "a.example", "/.well-known/agent.json") is None
    assert locate(tmp_path, None, "a.example", "/../secret") is None
    assert locate(tmp_path, None, "A.EXAMPLE:8080", "/.well-known/agent-card.json") is not None
    assert locate(tmp_path, None, "../", "/secret") is not None  # no tree by that name: site/ itself


def test_a_folder_without_its_slash_is_redirected_as_a_static_host_does(tmp_path: Path) -> None:
    """The catalog page's relative links need the `/`; the redirect never
    leaves the server (`//host` is no path of it)."""
    from knoc.features.serve import answer
    from knoc.io.server import Request

    (tmp_path / "a.example/agents x").mkdir(parents=True)
    (tmp_path / "a.example/agents x/index.html").write_text("<p>")
    (tmp_path / "a.example/.well-known").mkdir()
    (tmp_path / "a.example/index.html").write_text("<p>")
    respond = answer(tmp_path, None)
    moved = respond(Request("GET", "other", "/a.example?q=1", ""))
    assert (moved.status, moved.headers) == (301, {"Location": "/a.example/?q=1"})
    assert respond(Request("GET", "a.example", "/agents%20x", "")).headers == {"Location": "/agents%20x/"}
    assert respond(Request("GET", "other", "/a.example/", "")).status == 200
    assert respond(Request("GET", "other", "//a.example", "")).status == 404  # a network path: not followed
    assert respond(Request("GET", "other", "/nothing", "")).status == 404
    assert respond(Request("GET", "a.example", "/.well-known", "")).status == 404  # no page there: no redirect


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("KNOC_REQUIRE_CHROMIUM"),
    reason="needs Debian's chromium (.ci/run installs it and sets KNOC_REQUIRE_CHROMIUM)")


def chromium(profile: Path, url: str, shot: Path | None = None, size: str = "1000,1600") -> str:
    """The page's DOM after its scripts ran, and a screenshot when asked."""
    assert CHROMIUM, "chromium is not installed"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}"]
    if shot is not None:
        shot.unlink(missing_ok=True)
        subprocess.run([CHROMIUM, *flags, "--hide-scrollbars", f"--window-size={size}", f"--screenshot={shot}", url],
                       capture_output=True, timeout=120)
        assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True,
                          timeout=120).stdout


def script_details(site: Path) -> dict[str, Any]:
    """Every card's details, from each host's `_catalog/agents.js`."""
    found: dict[str, Any] = {}
    for script in sorted(site.glob("*/_catalog/agents.js")):
        text = script.read_text(encoding="utf-8")
        found.update(json.loads(text[text.index(".details, ") + len(".details, "):text.rindex(");")]))
    return found


def _agents(dom: str) -> dict[str, str]:
    """Each listed agent's <li> by slug, with whether it is hidden."""
    return dict(re.findall(r'<li class="agent" id="agent-([^"]+)"[^>]*>(.*?)</li>\n', dom, re.S))


@needs_chromium
def test_catalog_in_headless_chromium(tmp_path: Path) -> None:
    """What a visitor sees: every public agent with what it does, where and
    how to reach it; a search that narrows the list; one page per agent.
    The screenshots land in tests/artifacts/ (CI keeps them) to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile = tmp_path / "profile"
    details = script_details(ROOT / "build/site")
    with serving(ROOT) as base:
        dom = chromium(profile, base, ARTIFACTS / "catalog.png")
        chromium(profile, base, ARTIFACTS / "catalog-phone.png", "390,1400")
        found = chromium(profile, base + "?q=drift%20sweep", ARTIFACTS / "catalog-search.png", "1000,900")
        page = chromium(profile, base + "_catalog/agent.html#catalog-search", ARTIFACTS / "agent.png", "1000,1200")
        unknown = chromium(profile, base + "_catalog/agent.html#nobody")
    listed = re.findall(r'<li class="agent" id="agent-([^"]+)"', dom)
    assert listed == [a["slug"] for a in CATALOG]
    for a in CATALOG:
        item = _agents(dom)[a["slug"]]
        d = details[a["slug"]]
        assert a["name"] in item and d["description"] in item and d["version"] in item
        assert d["interfaces"][0]["url"] in item and d["interfaces"][0]["binding"] in item
        for skill in d["skills"]:
            assert skill["name"] in item and skill["description"] in item
    # The search keeps the agents whose text has every word, and says how many.
    tags = dict(re.findall(r'<li class="agent" id="agent-([^"]+)"([^>]*)>', found))
    shown = [s for s, attrs in tags.items() if "hidden" not in attrs]
    assert shown == ["drift-sentinel"] and f"1 of {len(listed)} agents match" in found
    # One agent's page: its card readably, and a link that resolves to the card's JSON.
    assert "Catalog Search" in page and "Find entities" in page and "GRPC" in page
    href = re.search(r'<a href="([^"]+)">https://agents\.possibility\.space/catalog-search/\.well-known', page)
    assert href and href.group(1) == "../agents.possibility.space/catalog-search/.well-known/agent-card.json"
    assert "Unknown agent" in unknown and "nobody" in unknown


@needs_chromium
def test_catalog_works_from_disk_and_for_host_port_urls(tmp_path: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """Opened as a file (no server), the page still gets every detail; a
    card at `localhost:9000` is linked as a path, not as a url scheme."""
    repo = tmp_path / "repo"
    assert subprocess.run([sys.executable, "-m", "knoc", "init", str(repo)], capture_output=True).returncode == 0
    blueprint = repo / "content/agent-blueprints/hello-agent.kno"
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(re.sub(r"url: .*#", 'url: "http://localhost:9000/helper"  #', text, count=1), encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0
    index = repo / "build/site/index.html"
    dom = chromium(tmp_path / "profile", index.as_uri())
    href = re.search(r'<dd><a href="([^"]+)">http://localhost:9000/helper/', dom)
    assert href and href.group(1) == "./localhost:9000/helper/.well-known/agent-card.json"
    assert (index.parent / href.group(1)).is_file()
    assert "localhost:9000/helper" in dom and "JSONRPC" in dom  # the details came from agents.js


def test_catalog_page_marks_inferred_classes_and_groups_by_domain() -> None:
    page = (ROOT / "build/site/index.html").read_text(encoding="utf-8")
    search = page[page.index('id="agent-catalog-search"'):]
    search = search[:search.index("</li>\n<li")]
    assert 'class="class inferred">utility' in search and "inferred from skill tags" in search
    assert 'href="./agents.possibility.space/catalog-search/.well-known/agent-card.json"' in search
    domains = json.loads((ROOT / "build/index/domains.json").read_text(encoding="utf-8"))["domains"]
    for domain, slugs in domains.items():
        section = page[page.index(f'<section id="domain-{domain}">'):]
        section = section[:section.index("</section>")]
        assert re.findall(r'href="#agent-([^"]+)"', section) == slugs


@needs_chromium
def test_each_host_tree_carries_its_own_catalog(tmp_path: Path, repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """build/site/<host> served alone, as a static host would: its page
    lists its agents with their details, links to cards inside the tree,
    an agent page, and to the all-hosts catalog where knoc.toml says it is."""
    config = repo / "knoc.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[knoc]\n", '[knoc]\ncatalog_url = "https://possibility.space/agents/"\n', 1),
                      encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0
    host = "agents.possibility.space"
    tree = repo / "build/site" / host
    ours = sorted(a["slug"] for a in CATALOG if a["card"].startswith(host + "/"))
    profile = tmp_path / "profile"
    with serving(repo, "--site", host) as base:
        dom = chromium(profile, base, ARTIFACTS / "host-catalog.png")
        page = chromium(profile, base + "_catalog/agent.html#drift-sentinel")
        links = re.findall(r'<dd><a href="\./([^"]+)">', dom)
        assert links and all(get(base + link)[0] == 200 for link in links)
    assert re.findall(r'<li class="agent" id="agent-([^"]+)"', dom) == ours
    assert "Agents on agents.possibility.space" in dom and 'href="https://possibility.space/agents/"' in dom
    assert "Compares derived artifacts" in dom  # the details came from the tree's own scripts
    href = re.search(r'<a href="([^"]+)">https://agents\.possibility\.space/drift-sentinel/\.well-known', page)
    assert href and href.group(1) == "../drift-sentinel/.well-known/agent-card.json"
    assert (tree / "_catalog" / href.group(1)).resolve().is_file() and (tree / ".nojekyll").is_file()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_serve_as_an_interrupted_command(stop: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "knoc", "serve", "--root", str(ROOT), "--port", "0"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert "serving" in proc.stderr.readline()
    proc.send_signal(stop)
    err = proc.stderr.read()
    assert proc.wait(timeout=20) == 130 and "Traceback" not in err
    assert "stopped serving" in err and "half-written" not in err  # it wrote nothing, and says no more


def test_watch_sees_a_folder_moved_in_and_never_watches_through_a_link(repo: Path,
                                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    """A folder of sources moved into content/ is watched from then on (the
    agent it brings is served); a link out of the repo is not watched at all:
    its tree is no source, as a build lists them."""
    from knoc.io.watch import _folders

    outside = tmp_path_factory.mktemp("outside")
    (outside / "deep").mkdir()
    (repo / "content/elsewhere").symlink_to(outside, target_is_directory=True)
    watched, _ = _folders(repo, ["specs", "content"])
    assert (repo / "content/agent-blueprints").resolve() in watched
    assert not any(str(outside.resolve()) in str(f) for f in watched)
    (repo / "content/elsewhere").unlink()  # a build refuses it (KNO-IO-REFUSED): not served
    incoming = tmp_path_factory.mktemp("incoming") / "team"
    incoming.mkdir()
    text = (repo / "content/agent-blueprints/quick-summarizer.kno").read_text(encoding="utf-8")
    (incoming / "brief.kno").write_text(text.replace("quick-summarizer", "brief-writer").replace(
        "01KKV1QV1CKSVMMAR1ZER00004", "01KKV1BR1EFWR1TER000000004"), encoding="utf-8")
    with serving(repo, "--watch") as base:
        shutil.move(str(incoming), repo / "content/agent-blueprints/team")
        card = f"{base}brief-writer/.well-known/agent-card.json"
        deadline = time.monotonic() + 30
        while get(card, "agents.possibility.space")[0] != 200:
            assert time.monotonic() < deadline, "the moved-in folder's agent was not built within 30 s"
            time.sleep(0.2)
        text = (repo / "content/agent-blueprints/team/brief.kno").read_text(encoding="utf-8")
        (repo / "content/agent-blueprints/team/brief.kno").write_text(
            text.replace("Condenses a document", "Writes a brief of a document"), encoding="utf-8")
        while b"Writes a brief" not in get(card, "agents.possibility.space")[2]:
            assert time.monotonic() < deadline, "an edit in the moved-in folder was not seen within 30 s"
            time.sleep(0.2)


def test_a_watch_that_cannot_go_on_is_said_once_and_serving_stops(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """The system's limit on watches, say: one line, and the watch ends,
    rather than a traceback and a server that no longer rebuilds."""
    import threading

    import watchfiles

    from knoc.io import watch

    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watchfiles, "watch", refuse)
    lost: list[Exception] = []
    ready = threading.Event()
    (tmp_path / "content").mkdir()
    watch._watch(tmp_path, ["specs", "content"], ("knoc.toml",), lambda: None, threading.Event(), ready, lost.append)
    assert ready.is_set() and len(lost) == 1 and "watch limit" in str(lost[0])


def test_watch_follows_what_a_build_reads_a_link_inside_the_repo_and_a_folder_named_like_a_source(
        repo: Path) -> None:
    """A link to a folder inside the repo is read by a build, so its edits
    are watched where it leads; a folder named `more.kno` is a folder."""
    text = (repo / "content/agent-blueprints/quick-summarizer.kno").read_text(encoding="utf-8")

    def agent(slug: str, ulid: str) -> str:
        return text.replace("quick-summarizer", slug).replace("01KKV1QV1CKSVMMAR1ZER00004", ulid)

    (repo / "shared").mkdir()
    (repo / "shared/linked.kno").write_text(agent("linked-agent", "01KKV1XXXXXXXXXXXXXXXX0001"), encoding="utf-8")
    (repo / "content/agent-blueprints/shared").symlink_to(repo / "shared", target_is_directory=True)
    with serving(repo, "--watch") as base:
        card = f"{base}linked-agent/.well-known/agent-card.json"
        assert get(card, "agents.possibility.space")[0] == 200
        (repo / "shared/linked.kno").write_text((repo / "shared/linked.kno").read_text(encoding="utf-8").replace(
            "Condenses a document", "Links a document"), encoding="utf-8")
        deadline = time.monotonic() + 30
        while b"Links a document" not in get(card, "agents.possibility.space")[2]:
            assert time.monotonic() < deadline, "an edit through a link inside the repo was not seen within 30 s"
            time.sleep(0.2)
        (repo / "content/agent-blueprints/more.kno").mkdir()
        (repo / "content/agent-blueprints/more.kno/inner.kno").write_text(
            agent("inner-agent", "01KKV1XXXXXXXXXXXXXXXX0002"), encoding="utf-8")
        card = f"{base}inner-agent/.well-known/agent-card.json"
        while get(card, "agents.possibility.space")[0] != 200:
            assert time.monotonic() < deadline, "a source in a folder named like a source was not built in 30 s"
            time.sleep(0.2)


def test_watch_follows_a_source_folder_swapped_whole(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """content/ moved aside and a copy put in its place (as a tool that
    swaps a folder does): the watch is set on the new folder, never left on
    the old one outside the repo, and its edits are served."""
    rel = "content/agent-blueprints/quick-summarizer.kno"
    aside = tmp_path_factory.mktemp("aside") / "content"
    with serving(repo, "--watch") as base:
        card = f"{base}quick-summarizer/.well-known/agent-card.json"
        shutil.move(str(repo / "content"), aside)
        shutil.copytree(aside, repo / "content")
        time.sleep(1)  # the swap seen, the watch set anew
        edit(repo, rel, "Condenses a document", "Boils down a document")
        deadline = time.monotonic() + 30
        while b"Boils down" not in get(card, "agents.possibility.space")[2]:
            assert time.monotonic() < deadline, "an edit in the swapped-in folder was not seen within 30 s"
            time.sleep(0.2)
        (aside / "agent-blueprints/quick-summarizer.kno").write_text("a: [", encoding="utf-8")  # outside: no source
        time.sleep(1.5)
        assert b"Boils down" in get(card, "agents.possibility.space")[2]


def test_watch_rereads_knoc_toml_and_builds_nothing_while_it_is_broken(repo: Path) -> None:
    """An edit of knoc.toml is a change like a source's: the next build reads
    it. One knoc cannot read, or none (removed: a build with every default
    would drop its settings), builds nothing (the tree served stays as it
    was) until it is mended."""
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")

    def served(base: str, wanted: bytes, seconds: float = 30) -> bytes:
        deadline = time.monotonic() + seconds
        while wanted not in (body := get(f"{base}quick-summarizer/.well-known/agent-card.json",
                                         "agents.possibility.space")[2]):
            if time.monotonic() > deadline:
                return body
            time.sleep(0.2)
        return body

    with serving(repo, "--watch") as base:
        assert b'"supportedInterfaces"' in served(base, b"Condenses a document")
        (repo / "knoc.toml").write_text(settings.replace('a2a = "1.0"', 'a2a = "0.3"'), encoding="utf-8")
        assert b'"protocolVersion": "0.3"' in served(base, b'"protocolVersion": "0.3"')
        (repo / "knoc.toml").write_text(settings.replace('a2a = "1.0"', 'a2a = "9.9"'), encoding="utf-8")
        edit(repo, "content/agent-blueprints/quick-summarizer.kno", "Condenses a document", "Boils down a document")
        assert b"Boils down" not in served(base, b"Boils down", seconds=3)  # not built with a broken knoc.toml
        (repo / "knoc.toml").unlink()
        assert b"Boils down" not in served(base, b"Boils down", seconds=3)  # not built without it
        (repo / "knoc.toml").write_text(settings, encoding="utf-8")
        body = served(base, b"Boils down")
        assert b"Boils down" in body and b'"supportedInterfaces"' in body
