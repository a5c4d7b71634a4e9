"""Cards written early: each by the worker that compiled its file, into the
new tree beside build/, before the link stage has run. Only the cards of
valid, public agents; what the link stage does not publish is removed
before the swap, and nothing of the new tree is shared with the old one
but a file with the very bytes wanted."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from knoc.incremental import driver
from knoc.io import pool
from knoc.io.staging import Staging
from tests.conftest import Knoc, edit, tree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_repo import generate

PRIVATE_CARD = "site/agents.possibility.space/ledger-auditor/.well-known/agent-card.json"


def _cards(files: set[str]) -> set[str]:
    """The agents' own card files (a host's root copy of its primary's card is the link stage's, not early)."""
    return {p for p in files if p.endswith(("/agent-card.json", "/agent.json")) and p.count("/") > 3}


def _written_before_the_link_stage(repo: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch,
                                   *args: str) -> dict[str, int]:
    """Build, and give the files the new tree held when the link stage
    began, with their inodes."""
    link_repo, seen = driver.link_repo, {}

    def spy(*a: object, **kw: object) -> object:
        for new in repo.glob(".build.new-*"):
            seen.update((p.relative_to(new).as_posix(), p.stat().st_ino) for p in new.rglob("*") if p.is_file())
        return link_repo(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "link_repo", spy)
    code, _, err = knoc("build", *args, root=repo)
    assert code == 0, err
    return seen


def test_the_cards_written_early_are_those_published_and_never_a_private_one(
        repo: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch) -> None:
    early = _written_before_the_link_stage(repo, knoc, monkeypatch)
    assert early and early.keys() == _cards(set(tree(repo / "build")))
    assert PRIVATE_CARD not in early and not (repo / "build" / PRIVATE_CARD).exists()


def test_pool_workers_write_the_cards_and_the_tree_is_what_one_process_writes(
        tmp_path: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, writers = tmp_path / "repo", tmp_path / "writers"
    generate(repo, 2 * pool.MIN_ITEMS)  # private agents among them
    write_card = Staging.write_card

    def noted(staging: Staging, files: Mapping[str, bytes]) -> bool:
        with open(writers, "a", encoding="utf-8") as f:  # appended to by each worker
            f.write(f"{os.getpid()}\n")
        return write_card(staging, files)

    monkeypatch.setattr(Staging, "write_card", noted)
    early = _written_before_the_link_stage(repo, knoc, monkeypatch, "--no-cache", "--jobs", "2")
    assert len(set(writers.read_text().split())) == 2 and str(os.getpid()) not in writers.read_text().split()
    built = tree(repo / "build")
    assert len(early) > pool.MIN_ITEMS and early.keys() == _cards(set(built))
    assert all((repo / "build" / path).stat().st_ino == inode for path, inode in early.items())  # kept, not redone
    code, _, err = knoc("build", "--no-cache", "--jobs", "1", root=repo)
    assert code == 0 and "private agent" in err
    assert tree(repo / "build") == built


def test_a_card_the_link_stage_refuses_is_not_in_the_tree(repo: Path, knoc: Knoc) -> None:
    """Written early, then refused by the link stage (a domain that does
    not exist): the build fails, and build/ is left as it was, with no
    new tree beside it."""
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    edit(repo, "content/agent-blueprints/catalog-search.kno", "domains: [schemas, entity-health]",
         "domains: [schemas, entity-health, no-such-domain]")
    code, _, err = knoc("build", "--no-cache", root=repo)
    assert code == 1 and "KNO-RESOLVE-DOMAIN" in err
    assert tree(repo / "build") == before
    assert list(repo.glob(".build.*")) == []


def test_a_card_that_cannot_be_written_early_leaves_none_of_its_files(tmp_path: Path) -> None:
    """A path already taken (two cards at one folder) or unsafe: write_card
    says no and leaves nothing of that card; the first card stays whole."""
    staging = Staging(tmp_path / "build")
    staging.begin()
    assert staging.new is not None
    first = {"site/a/.well-known/agent-card.json": b"first", "site/a/.well-known/agent.json": b"first twin"}
    assert staging.write_card(first)
    assert not staging.write_card({"site/b/.well-known/agent-card.json": b"second",
                                   "site/a/.well-known/agent.json": b"second twin"})
    assert not staging.write_card({"site/c/.well-known/agent-card.json": b"c", "site/../escape.json": b"x"})
    assert tree(staging.new) == first
    staging.abort()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("rebuild", [(), ("--no-cache",)], ids=["cached", "uncached"])
@pytest.mark.parametrize("mode", [0o755, 0o4644, 0o200])
def test_a_card_given_a_mode_knoc_never_writes_is_drift_and_is_written_anew(repo: Path, knoc: Knoc,
                                                                              rebuild: tuple[str, ...],
                                                                              mode: int) -> None:
    """An executable bit (git commits it), a set-id bit, or a card its
    owner cannot read (a server behind a copy of build/ could not serve
    it): the bytes are right, the file is not. A check says so; a build
    writes it anew, with the mode knoc gives every file."""
    assert knoc("build", root=repo)[0] == 0
    card = repo / "build" / "site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
    usual = card.stat().st_mode
    card.chmod(mode)
    code, _, err = knoc("check", *rebuild, root=repo)
    assert code == 1 and "schema-steward/.well-known/agent-card.json (its mode: knoc writes no file executable" \
        in err, err
    code, _, err = knoc("build", *rebuild, root=repo)
    assert code == 0 and card.stat().st_mode == usual, err
    assert knoc("check", *rebuild, root=repo)[0] == 0


@pytest.mark.parametrize("rebuild", [(), ("--no-cache",)], ids=["cached", "uncached"])
def test_a_fifo_where_a_card_was_is_drift_and_is_replaced_without_a_hang(repo: Path, knoc: Knoc,
                                                                         rebuild: tuple[str, ...]) -> None:
    """The scan hashes build/'s files and an uncached rebuild reads the
    old card to compare it: a fifo in its place is neither waited on nor
    linked. A check reports the drift; a build writes the card."""
    assert knoc("build", root=repo)[0] == 0
    card = repo / "build" / "site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
    want = card.read_bytes()
    card.unlink()
    os.mkfifo(card)
    code, _, err = knoc("check", *rebuild, root=repo)
    assert code == 1 and "schema-steward/.well-known/agent-card.json (not a regular file)" in err, err
    code, _, err = knoc("build", *rebuild, root=repo)
    assert code == 0, err
    assert card.is_file() and card.read_bytes() == want
