"""The warm path (`knoc.incremental.warm`): after an edit that changes no link
key, a run patches what the last run rendered. Whatever path it takes, a
run gives the bytes, digests and findings a run without the cache gives."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knoc.config import load_config
from knoc.incremental import warm
from knoc.incremental.driver import Result, compile_repo
from knoc.io.cache import DIR
from tests.conftest import ROOT, Knoc, edit, tree

SEARCH = "content/agent-blueprints/catalog-search.kno"
CONCIERGE = "content/agent-blueprints/realm-concierge.kno"
AUDITOR = "content/agent-blueprints/ledger-auditor.kno"  # private
DOMAIN = "content/perception-domains/schemas.kno"


@pytest.fixture
def rendered(repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[bool]]:
    """The example, its sources an hour old (older than the racy window),
    compiled once through the cache; and, for each later run, whether it
    took the warm path."""
    hour_ago = time.time() - 3600
    for p in repo.rglob("*.kno"):
        os.utime(p, (hour_ago, hour_ago))
    first = compile_repo(load_config(repo, None), use_cache=True)
    first.cache.save()
    assert first.ok
    taken: list[bool] = []
    patch = warm.patch

    def spy(*args: Any) -> Any:
        found = patch(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(warm, "patch", spy)
    return repo, taken


def both(repo: Path) -> tuple[Result, Result]:
    config = load_config(repo, None)
    cached = compile_repo(config, use_cache=True)
    cached.cache.save()
    return cached, compile_repo(config)


def assert_same(cached: Result, cold: Result) -> None:
    assert cached.digests == cold.digests
    assert dict(cached.files) == dict(cold.files)  # every byte, the cards left packed too
    assert cached.report.sorted() == cold.report.sorted()
    assert [(c.slug, c.source, c.projection) for c in cached.cards] == [(c.slug, c.source, c.projection)
                                                                        for c in cold.cards]
    assert (cached.published, cached.agents, cached.inputs) == (cold.published, cold.agents, cold.inputs)


EDITS = {  # what an author does, and whether the warm path can take it
    "a card's description": ([(SEARCH, "Searches the KNO", "Searches all of the KNO")], True),
    "a skill's description": ([(SEARCH, "ranked by relevance", "ranked by how well they match")], True),
    "cards on two hosts": ([(SEARCH, "Searches the KNO", "Looks through the KNO"),
                            (CONCIERGE, "Helps members", "Helps the members")], True),
    "a private agent": ([(AUDITOR, "Reconciles internal", "Reconciles the internal")], True),
    "a card's name (the index lists it)": ([(SEARCH, "name: Catalog Search", "name: Catalog Finder")], False),
    "a description with quotes and a newline": (
        [(SEARCH, "description: Searches the KNO content catalog by name, type, domain or tag.",
          'description: "Searches \\"the\\" catalog,\\nby name: ETag \\"x\\""')], True),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_a_warm_run_gives_what_a_cold_one_gives(rendered: tuple[Path, list[bool]], name: str) -> None:
    repo, taken = rendered
    edits, warm_path = EDITS[name]
    for rel, old, new in edits:
        edit(repo, rel, old, new)
    cached, cold = both(repo)
    assert taken == [warm_path]
    assert_same(cached, cold)
    for rel, new, old in reversed(edits):  # and back, from what the warm run kept
        edit(repo, rel, old, new)
    assert_same(*both(repo))
    assert taken == [warm_path, warm_path]


@pytest.mark.parametrize("name", [name for name, (_, warm_path) in EDITS.items() if warm_path])
def test_a_check_knows_what_an_edit_moved_before_joining_anything(rendered: tuple[Path, list[bool]], name: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A check's run (`lazy`) names the outputs the edit moved from the
    changed pieces alone, without reading the 100 MB catalog; they are the
    ones whose bytes changed, and the bytes are a cold run's once asked for."""
    from knoc.output import patch

    joins: list[bool] = []
    join = patch.Patch._join
    monkeypatch.setattr(patch.Patch, "_join", lambda self: joins.append(True) or join(self))
    repo, taken = rendered
    for rel, old, new in EDITS[name][0]:
        edit(repo, rel, old, new)
    config = load_config(repo, None)
    lazy = compile_repo(config, use_cache=True, lazy=True)
    assert taken == [True] and lazy.base is not None and lazy.base.moved
    unlike = lazy.base.unlike()
    assert joins == []
    assert lazy.base.moved == {p for p in lazy.base.touched if lazy.digests.get(p) != lazy.base.digests.get(p)}
    assert unlike.keys() == lazy.base.moved
    assert joins == [True]  # once, for all of them
    assert_same(lazy, compile_repo(config))


def test_a_check_after_a_build_still_joins_nothing(rendered: tuple[Path, list[bool]], knoc: Knoc,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A build keeps the rendering it patched, so the build/ it writes has no
    overrides: the next edit's check again knows what moved without
    joining the catalog, and finds what a check without the cache finds."""
    from knoc.output import patch

    joins: list[bool] = []
    join = patch.Patch._join
    monkeypatch.setattr(patch.Patch, "_join", lambda self: joins.append(True) or join(self))
    repo, _ = rendered
    assert knoc("build", root=repo)[0] == 0
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    assert knoc("build", root=repo)[0] == 0
    assert knoc("check", root=repo)[0] == 0
    joins.clear()
    edit(repo, SEARCH, "ranked by relevance", "ranked by how well they match")
    code, out, err = knoc("check", root=repo)
    assert code == 1 and joins == []
    assert (code, out) == knoc("check", "--no-cache", root=repo)[:2]
    assert "stale: build/site/agents.possibility.space/_catalog/agents.js" in out + err


def test_edits_one_after_another_stay_warm_and_right(rendered: tuple[Path, list[bool]]) -> None:
    repo, taken = rendered
    for i in range(4):
        edit(repo, SEARCH, "catalog by name", f"catalog ({i}) by name")
        edit(repo, DOMAIN, "\n", "\n# an edit that is only a comment\n")
        assert_same(*both(repo))
        edit(repo, SEARCH, f"catalog ({i}) by name", "catalog by name")
    assert taken == [True] * 4


def test_many_edits_are_kept_and_the_next_run_starts_from_them(rendered: tuple[Path, list[bool]]) -> None:
    """A few edits are patched in again at each run; more than half the most
    the warm path takes are stored with what it rendered."""
    repo, taken = rendered
    edited = sorted((repo / "content").rglob("*.kno"))[:warm.MAX_CHANGED // 2 + 1]
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    for p in edited:  # edited a while ago: not too recent to trust once stored
        p.write_bytes(p.read_bytes() + b"\n# edited\n")
        os.utime(p, (time.time() - 60, time.time() - 60))
    os.utime(repo / SEARCH, (time.time() - 60, time.time() - 60))
    assert_same(*both(repo))
    stored = (repo / DIR / "rendered.bin").stat().st_mtime_ns
    assert_same(*both(repo))
    assert (repo / DIR / "rendered.bin").stat().st_mtime_ns == stored  # nothing changed since: nothing stored
    assert taken == [True, True]


def test_a_touched_file_is_hashed_and_nothing_changes(rendered: tuple[Path, list[bool]]) -> None:
    repo, taken = rendered
    os.utime(repo / SEARCH)
    assert_same(*both(repo))
    assert_same(*both(repo))
    assert taken == [True, True]


@pytest.mark.parametrize("change", ["add a file", "remove a file", "too many edits"])
def test_what_the_warm_path_does_not_take_is_compiled_whole(rendered: tuple[Path, list[bool]], change: str) -> None:
    repo, taken = rendered
    if change == "add a file":
        (repo / "content/perception-domains/copy.kno").write_bytes(
            (repo / DOMAIN).read_bytes().replace(b"slug: schemas", b"slug: copy-of-schemas"))
    elif change == "remove a file":
        (repo / AUDITOR).unlink()
    elif change == "too many edits":
        for p in sorted(repo.rglob("*.kno"))[:warm.MAX_CHANGED + 1]:
            p.write_bytes(p.read_bytes() + b"\n# edited\n")
    cached, cold = both(repo)
    assert taken == [False]
    assert_same(cached, cold)


@pytest.mark.parametrize("damage", ["a stored file", "the rendered layer", "a source's entry"])
def test_a_damaged_warm_layer_is_not_trusted(rendered: tuple[Path, list[bool]], damage: str) -> None:
    repo, taken = rendered
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    cache = repo / DIR
    if damage == "a stored file":
        for blob in (cache / "files").iterdir():
            blob.write_bytes(blob.read_bytes() + b" ")
    elif damage == "the rendered layer":
        (cache / "rendered.bin").write_bytes(b"not a knoc cache")
    else:
        for shard in cache.glob("sources-*.bin"):
            shard.unlink()
    cached, cold = both(repo)
    assert taken == [False]
    assert_same(cached, cold)


def test_a_warm_build_writes_what_a_cold_one_writes(rendered: tuple[Path, list[bool]], knoc: Knoc) -> None:
    repo, taken = rendered
    assert knoc("build", root=repo)[0] == 0
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    assert code == 1 and "catalog-search/.well-known/agent-card.json" in out and "manifest.json" in out
    assert knoc("build", root=repo)[0] == 0
    warm_tree = tree(repo / "build")
    assert knoc("check", root=repo)[0] == 0
    assert knoc("build", "--no-cache", root=repo)[0] == 0
    assert tree(repo / "build") == warm_tree
    assert taken[-3:] == [True, True, True]


def test_a_card_drifted_on_disk_is_shown_from_the_cache(rendered: tuple[Path, list[bool]], knoc: Knoc) -> None:
    """The warm path never read the unchanged card; the diff reads it from the cache."""
    repo, _ = rendered
    assert knoc("build", root=repo)[0] == 0
    card = repo / "build/site/agents.possibility.space/drift-sentinel/.well-known/agent-card.json"
    card.write_text(card.read_text(encoding="utf-8").replace("Drift Sentinel", "Drift Sentry"), encoding="utf-8")
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    code, out, err = knoc("check", root=repo)
    assert code == 1 and '-  "name": "Drift Sentry"' in out + err and '+  "name": "Drift Sentinel"' in out + err


def test_a_stored_file_damaged_behind_its_stat_is_rendered_afresh(rendered: tuple[Path, list[bool]],
                                                                   knoc: Knoc) -> None:
    """Damage that keeps the stored manifest's size and mtime is never
    used: its ctime gives it away, and stored again under its name (the
    edit undone) it is written afresh. Each build writes what a build
    without the cache writes."""
    repo, _ = rendered
    assert knoc("build", root=repo)[0] == 0
    manifest = (repo / "build/manifest.json").read_bytes()
    blob = repo / DIR / "files" / hashlib.sha256(manifest).hexdigest()
    st = blob.stat()
    blob.write_bytes(manifest.replace(b"sources_digest", b"SOURCES_DIGEST"))
    os.utime(blob, ns=(st.st_atime_ns, st.st_mtime_ns))
    for old, new in (("Searches the KNO", "Searches all of the KNO"), ("Searches all of the KNO", "Searches the KNO")):
        edit(repo, SEARCH, old, new)
        code, _, err = knoc("build", root=repo)
        assert code == 0 and "Traceback" not in err
        assert b"SOURCES_DIGEST" not in (repo / "build/manifest.json").read_bytes()
        warm_tree = tree(repo / "build")
        assert knoc("build", "--no-cache", root=repo)[0] == 0
        assert tree(repo / "build") == warm_tree


@pytest.mark.parametrize(("body", "pairs", "expected"), [
    (b"a-b-c", [(b"b", b"BB")], b"a-BB-c"),
    (b"a-b-c", [(b"c", b"C"), (b"a", b"")], b"-b-C"),  # in any order, one copy
    (b"a-b-c", [(b"b", b"b")], b"a-b-c"),  # unchanged: not even looked for
    (b"a-b-b", [(b"b", b"B")], None),  # twice: which one is the card's?
    (b"a-b-c", [(b"x", b"X")], None),  # not there: these are not the files it expects
    (b"abc", [(b"ab", b"1"), (b"bc", b"2")], None),  # overlapping pieces
])
def test_a_piece_is_replaced_only_where_it_is_found_once(body: bytes, pairs: list[tuple[bytes, bytes]],
                                                        expected: bytes | None) -> None:
    from knoc.output.patch import replace

    parts = replace(body, pairs)
    assert (None if parts is None else b"".join(parts)) == expected


@pytest.mark.parametrize("swap", ["a FIFO", "a link to /dev/zero", "a link out of the repo"])
def test_a_source_swapped_for_what_must_not_be_read_is_refused_not_patched(
        rendered: tuple[Path, list[bool]], knoc: Knoc, swap: str) -> None:
    """The warm path reads a changed source the way the full path does: a
    FIFO never blocks it, and what is refused is reported at its path."""
    repo, taken = rendered
    source = repo / SEARCH
    outside = repo.parent / "outside.kno"
    outside.write_bytes(source.read_bytes())
    source.unlink()
    if swap == "a FIFO":
        os.mkfifo(source)
    else:
        source.symlink_to("/dev/zero" if swap == "a link to /dev/zero" else outside)
    code, out, _ = knoc("check", "--format", "json", root=repo)
    refused = [d for d in map(json.loads, out.splitlines()) if d["code"] == "KNO-IO-REFUSED"]
    assert code == 1 and [d["file"] for d in refused] == [SEARCH]
    assert taken == [False]


def _line(rel: str, starts: str) -> tuple[str, int, str]:
    """(file, line index, key) of the first line of the example's file that starts so."""
    lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(starts))
    return rel, at, lines[at][:lines[at].index(":") + 1]


# Lines an author rewrites: descriptions, a skill's, a card's name (which the
# index lists: the full path).
REWRITTEN = [_line(f"content/agent-blueprints/{name}.kno", starts) for name, starts in (
    ("catalog-search", "  description: "), ("catalog-search", "      description: Returns"),
    ("realm-concierge", "  description: "), ("ledger-auditor", "  description: "),
    ("schema-steward", "      description: Explains"), ("quick-summarizer", "  name: "))]
step = st.tuples(st.sampled_from(["rewrite", "comment", "touch"]), st.integers(0, len(REWRITTEN) - 1),
                 st.text(alphabet=st.characters(whitelist_categories=("L", "N", "P", "S", "Zs")), max_size=40))


@settings(max_examples=int(os.environ.get("KNOC_FUZZ_EXAMPLES", "8")), deadline=None, database=None,
          derandomize="KNOC_FUZZ_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=4))
def test_any_run_of_edits_gives_on_the_warm_path_what_a_cold_run_gives(
        repo: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int, str]]) -> None:
    """Whatever edits follow one another (descriptions and names with any
    text, comments, touches), each warm run equals a cold one."""
    taken: list[bool] = []
    patch = warm.patch
    monkeypatch.setattr(warm, "patch", lambda *args: taken.append((found := patch(*args)) is not None) or found)
    with tempfile.TemporaryDirectory() as scratch:
        here = Path(scratch) / "repo"
        shutil.copytree(repo, here)
        hour_ago = time.time() - 3600
        for p in here.rglob("*.kno"):
            os.utime(p, (hour_ago, hour_ago))
        first = compile_repo(load_config(here, None), use_cache=True)
        first.cache.save()
        for what, which, text in steps:
            rel, at, key = REWRITTEN[which]
            path = here / rel
            if what == "rewrite":
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                lines[at] = f"{key} {json.dumps(text or 'x', ensure_ascii=False)}\n"
                path.write_text("".join(lines), encoding="utf-8")
            elif what == "comment":
                path.write_text(path.read_text(encoding="utf-8") + f"# {json.dumps(text)}\n", encoding="utf-8")
            else:
                os.utime(path)
            assert_same(*both(here))
    # The name is what the index lists: the full path's. Any other step leaves the link keys be.
    assert any(taken) or any(what == "rewrite" and which == len(REWRITTEN) - 1 for what, which, _ in steps)
