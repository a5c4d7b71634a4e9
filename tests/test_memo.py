"""The memos that keep a warm `knoc check` cheap: of build/
(`knoc.io.outputs`), which a check compares only where something changed
since, and of the sources' listing (`knoc.io.source_list`). Whatever a user
did to the sources or to build/, a check through them reports exactly
what a check without any cache reports."""

from __future__ import annotations

import os
import shutil
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knoc.app import check as check_module
from knoc.app.scan import InBuild, Scan
from knoc.config import load_config
from knoc.incremental.driver import compile_repo
from knoc.io import files, outputs, tree
from tests.conftest import Knoc, edit, json_diags

SEARCH = "content/agent-blueprints/catalog-search.kno"
CARD = "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"
SCRIPT = "build/site/agents.possibility.space/_catalog/agents.js"


@pytest.fixture
def built(repo: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[bool]]:
    """The example, built through the cache with its sources an hour old;
    and, for each later check, whether it compared only what changed."""
    hour_ago = time.time() - 3600
    for p in repo.rglob("*.kno"):
        os.utime(p, (hour_ago, hour_ago))
    assert knoc("build", root=repo)[0] == 0
    narrow: list[bool] = []

    class Spied(Scan):  # the check's scan only, not a build's
        def in_build(self, *args: Any) -> InBuild:
            found = super().in_build(*args)
            if self.memo.path is not None:  # the cached check's, not the --no-cache one's beside it
                narrow.append(found.where is not None)
            return found

    monkeypatch.setattr(check_module, "Scan", Spied)
    return repo, narrow


def same_check(knoc: Knoc, repo: Path) -> list[str]:
    """`knoc check` through the memos, asserted to report what one without
    them does; its messages."""
    code, out, _ = knoc("check", "--format", "json", root=repo)
    cold_code, cold_out, _ = knoc("check", "--format", "json", "--no-cache", root=repo)
    assert (code, json_diags(out)) == (cold_code, json_diags(cold_out))
    return [d["message"] for d in json_diags(out)]


def rewrite(repo: Path, rel: str, change: Callable[[bytes], bytes]) -> None:
    path = repo / rel
    path.write_bytes(change(path.read_bytes()))


def card_edited(repo: Path) -> None:
    rewrite(repo, CARD, lambda b: b.replace(b'"name": "', b'"name": "(by hand) ', 1))


def stray_file(repo: Path) -> None:
    (repo / CARD).with_name("extra.json").write_text("{}\n", encoding="utf-8")


def mtime_kept(change: Callable[[Path], None], rel: str) -> Callable[[Path], None]:
    """`change`, with the mtime of `rel` put back after it (as `touch -r`,
    `cp -p` or tar can): what a memo of mtimes would never see."""
    def changed(repo: Path) -> None:
        st = (repo / rel).stat()
        change(repo)
        os.utime(repo / rel, ns=(st.st_atime_ns, st.st_mtime_ns))
    return changed


def card_removed(repo: Path) -> None:
    (repo / CARD).unlink()


def touched(repo: Path) -> None:
    os.utime(repo / CARD)  # the same bytes, a new mtime


def script_edited(repo: Path) -> None:
    rewrite(repo, SCRIPT, lambda b: b + b"// by hand\n")


ON_DISK = {"a card edited by hand": (card_edited, ["stale: build/site/agents.possibility.space/catalog-search"
                                                   "/.well-known/agent-card.json"]),
           "a stray file in a card's folder": (stray_file, ["extra: build/site/agents.possibility.space/"
                                                            "catalog-search/.well-known/extra.json (knoc did not write it)"]),
           "a same-size edit with its mtime put back": (
               mtime_kept(lambda repo: rewrite(repo, CARD, lambda b: b.replace(b'"name": "C', b'"name": "K', 1)), CARD),
               ["stale: build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"]),
           "a stray file in a folder whose mtime is put back": (
               mtime_kept(stray_file, str(Path(CARD).parent)),
               ["extra: build/site/agents.possibility.space/catalog-search/.well-known/extra.json "
                "(knoc did not write it)"]),
           "a card removed": (card_removed, ["missing: build/site/agents.possibility.space/catalog-search"
                                             "/.well-known/agent-card.json"]),
           "a card touched": (touched, []),
           "the catalog script edited by hand": (script_edited, ["stale: build/site/agents.possibility.space/_catalog/agents.js"])}


@pytest.mark.parametrize("name", list(ON_DISK))
def test_what_changed_in_build_is_found_as_without_the_memo(built: tuple[Path, list[bool]], knoc: Knoc,
                                                           name: str) -> None:
    repo, narrow = built
    change, expected = ON_DISK[name]
    change(repo)
    messages = same_check(knoc, repo)
    assert messages == expected
    assert narrow == [True]  # the memo followed from the rendering the check compiled from
    assert same_check(knoc, repo) == expected  # and again, from the memo that check updated


def test_a_source_edit_is_compared_only_where_it_changed_the_build(built: tuple[Path, list[bool]],
                                                                  knoc: Knoc) -> None:
    repo, narrow = built
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    messages = same_check(knoc, repo)
    assert messages[0].startswith("stale: build/site/agents.possibility.space/catalog-search/.well-known/"
                                  "agent-card.json")
    # The files that join every card are named without a diff: the card's says it.
    assert "stale: build/site/agents.possibility.space/_catalog/agents.js (it joins the drifted cards)" in messages
    assert messages[-1] == "stale: build/manifest.json (it lists the digests of the drifted files)"
    assert narrow == [True]
    assert knoc("build", root=repo)[0] == 0
    assert same_check(knoc, repo) == [] and narrow == [True, True]


def test_edits_builds_and_hand_edits_in_turn(built: tuple[Path, list[bool]], knoc: Knoc) -> None:
    """A build after an edit writes the memo with the files it overrides in
    the rendering the cache still keeps; the next check starts from both."""
    repo, narrow = built
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    assert knoc("build", root=repo)[0] == 0
    edit(repo, SEARCH, "Searches all of the KNO", "Searches the KNO")  # back: build/ is one edit behind
    assert same_check(knoc, repo)[0].startswith("stale: build/site/agents.possibility.space/catalog-search/")
    assert knoc("build", root=repo)[0] == 0
    assert same_check(knoc, repo) == []
    card_edited(repo)
    assert len(same_check(knoc, repo)) == 1
    assert narrow == [True, True, True]


def test_a_memo_from_another_rendering_is_read_whole_once(built: tuple[Path, list[bool]], knoc: Knoc) -> None:
    """A check on the full path keeps a new rendering, and the memo follows
    from the old one: that check reads the memo's every digest, and the
    memo follows from the new rendering after it."""
    repo, narrow = built
    (repo / ".knoc-cache" / "link.bin").unlink()  # the link stage again: the full path, a new rendering
    card_edited(repo)
    assert len(same_check(knoc, repo)) == 1
    assert narrow == [False]
    assert len(same_check(knoc, repo)) == 1
    edit(repo, SEARCH, "Searches the KNO", "Searches all of the KNO")
    assert len(same_check(knoc, repo)) > 1
    assert knoc("build", root=repo)[0] == 0
    card_edited(repo)
    assert len(same_check(knoc, repo)) == 1
    assert narrow == [False, True, True, True]


def test_a_memo_far_from_the_rendering_is_not_rebased(built: tuple[Path, list[bool]], knoc: Knoc,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo, narrow = built
    monkeypatch.setattr(outputs, "REBASE_MOST", 0)
    (repo / ".knoc-cache" / "link.bin").unlink()
    card_edited(repo)
    assert len(same_check(knoc, repo)) == 1
    assert len(same_check(knoc, repo)) == 1
    assert narrow == [False, False]


def test_a_source_added_or_removed_is_listed_through_the_memo(repo: Path) -> None:
    config = load_config(repo, None)

    def inputs() -> tuple[list[str], list[str]]:
        cached = compile_repo(config, use_cache=True)
        cached.cache.save()
        return cached.inputs, compile_repo(config).inputs

    first, _ = inputs()
    (repo / "content" / "agent-blueprints" / "copy").mkdir()
    (repo / "content" / "agent-blueprints" / "copy" / "twin.kno").write_bytes((repo / SEARCH).read_bytes())
    cached, cold = inputs()
    assert cached == cold and "content/agent-blueprints/copy/twin.kno" in cached
    (repo / SEARCH).unlink()
    cached, cold = inputs()
    assert cached == cold and SEARCH not in cached
    (repo / "content" / "agent-blueprints" / "copy" / "twin.kno").rename(repo / SEARCH)
    cached, cold = inputs()
    assert cached == cold == first
    folder = repo / "content" / "agent-blueprints"
    st = folder.stat()
    (folder / "third.kno").write_bytes((repo / SEARCH).read_bytes())
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))  # its mtime put back: its ctime still moved
    cached, cold = inputs()
    assert cached == cold and "content/agent-blueprints/third.kno" in cached


def test_a_build_that_writes_nothing_leaves_the_memo_true_to_the_tree(built: tuple[Path, list[bool]],
                                                                     knoc: Knoc) -> None:
    """With the per-source cache lost (an upgrade, say), a build compiles
    every card again and writes each early, linking build/'s own file of
    the same bytes (which moves its ctime), then finds build/ up to date:
    the memo still follows the tree, so the next check reads no card."""
    repo, _ = built
    for kept in [*(repo / ".knoc-cache").glob("sources-*.bin"), repo / ".knoc-cache" / "rendered.bin"]:
        kept.unlink()
    code, out, err = knoc("build", root=repo)
    assert code == 0 and "up to date" in out + err
    memo = outputs.OutputMemo.open(repo)
    assert memo.columns == tree.stat_tree(repo / "build", memo.digests())


def test_a_file_in_another_files_place_is_read_though_its_size_and_ctime_match(built: tuple[Path, list[bool]]
                                                                                ) -> None:
    """Two files of one size written in the same clock tick share a ctime:
    moved into each other's places (with their folders), only their inodes
    tell. A memo whose inode for a card is another's has the card read."""
    repo, _ = built
    known = outputs.OutputMemo.open(repo).columns
    card = known.paths.index(CARD.removeprefix("build/"))
    everything = slice(0, len(known.paths))
    assert tree.changed_files(repo / "build", known, everything, known.paths) == {}
    inodes = array("q", known.inodes)
    inodes[card] += 1
    joined, dirs = known.encode()[0], known.encode()[5]
    other = outputs.Columns(joined, known.sizes, known.ctimes, inodes, known.digests, dirs, known.dir_ctimes)
    changed = tree.changed_files(repo / "build", other, everything, other.paths)
    assert list(changed) == [known.paths[card]] and changed[known.paths[card]][2] == known.stat_at(card)[2]
    assert tree.scan_tree(repo / "build", other.snapshot()).files[known.paths[card]] != other.stat_at(card)


@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=64), st.data())
def test_differing_rows_are_the_rows_that_differ(values: list[int], data: st.DataObject) -> None:
    width = data.draw(st.sampled_from([1, 2, 4]))
    values = values[:len(values) // width * width]
    a = array("q", values)
    b = array("q", values)
    for i in data.draw(st.lists(st.integers(0, max(len(values) - 1, 0)), max_size=8)) if values else []:
        b[i] += 1 if b[i] < 2**63 - 1 else -1
    expected = [row for row in range(len(values) // width) if a[row * width:(row + 1) * width]
                != b[row * width:(row + 1) * width]]
    assert files.differing_rows(a, b, width) == expected


def test_stats_are_side_by_side_and_none_when_one_is_gone(tmp_path: Path) -> None:
    for name, body in (("a", b"1"), ("b", b"22")):
        (tmp_path / name).write_bytes(body)
    with files.stat_in(tmp_path) as stat_one:
        got = files.stats(["a", "b"], ("st_size", "st_mtime_ns"), stat_one)
        assert files.stats(["a", "gone"], ("st_size",), stat_one) is None
    assert got is not None and list(got) == [1, (tmp_path / "a").stat().st_mtime_ns,
                                             2, (tmp_path / "b").stat().st_mtime_ns]


def test_a_listing_made_elsewhere_is_not_used(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A repo could ship a `.knoc-cache/listing.bin` whose folder mtimes
    match (a copy keeps them): only a listing this knoc made of this very
    folder counts."""
    compile_repo(load_config(repo, None), use_cache=True).cache.save()
    other = tmp_path_factory.mktemp("other") / "repo"
    shutil.copytree(repo, other)  # the .knoc-cache too, and every folder's mtime
    folder = (other / SEARCH).parent
    kept = folder.stat().st_mtime_ns
    (other / SEARCH).unlink()
    os.utime(folder, ns=(kept, kept))  # as if nothing had changed in it
    config = load_config(other, None)
    assert compile_repo(config, use_cache=True).inputs == compile_repo(config).inputs
