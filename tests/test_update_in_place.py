"""A build after a small change updates build/ in place through a journal
(`knoc.io.journal`): only the files that differ are written, the others
keep their inode; a kill between any two of its steps leaves the old
tree, the new one, or a mix that neither a reader checking the manifest
nor `knoc check` accepts, and the next run finishes it; a link planted
in build/ or a forged journal is never followed out of the tree."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.gen_repo import generate
from knoc.io import journal, swap
from knoc.io.journal import Update
from knoc.io.outputs import OutputMemo
from knoc.io.tree import stat_tree
from tests.conftest import rejected_by_manifest, tree

AGENTS = 40


def run(root: Path, *args: str, script: str | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", script] if script else [sys.executable, "-m", "knoc"]
    return subprocess.run([*command, *args, "--root", str(root)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def build(root: Path, *args: str) -> str:
    done = run(root, "build", *args)
    assert done.returncode == 0, done.stderr
    return done.stderr


def edit(root: Path, agent: str, mark: str) -> None:
    blueprint = root / f"content/agent-blueprints/{agent}.kno"
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(text.replace("\n  description: ", f"\n  description: {mark} ", 1), encoding="utf-8")


def three_changes(root: Path) -> None:
    """An agent edited, one made private, one added."""
    edit(root, "agent-000005", "edited")
    private = root / "content/agent-blueprints/agent-000011.kno"
    private.write_text(private.read_text(encoding="utf-8").replace("\ntitle:", "\nvisibility: private\ntitle:", 1),
                       encoding="utf-8")
    _add_agent(root, "agent-000099", like="agent-000012")


def _add_agent(root: Path, slug: str, like: str) -> None:
    """A new blueprint, a copy of another with its own slug and id."""
    text = (root / f"content/agent-blueprints/{like}.kno").read_text(encoding="utf-8").replace(like, slug)
    (root / f"content/agent-blueprints/{slug}.kno").write_text(
        re.sub(r"\nid: \w+", "\nid: 01ZZZZZZZZZZZZZZZZZZZZZZZZ", text, count=1), encoding="utf-8")


def inodes(out: Path) -> dict[str, int]:
    return {p.relative_to(out).as_posix(): p.stat().st_ino for p in out.rglob("*") if p.is_file()}


def folders(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()}


def debris(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".build."))


def fresh_build(root: Path, scratch: Path) -> dict[str, bytes]:
    """What a build from nothing makes of the same sources."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns("build", ".knoc-cache"))
    build(scratch, "--no-cache")
    return tree(scratch / "build")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    generate(root, AGENTS)
    build(root)
    return root


def test_an_edit_rewrites_only_what_changed_and_gives_the_bytes_of_a_fresh_build(repo: Path, tmp_path: Path) -> None:
    before = inodes(repo / "build")
    edit(repo, "agent-000003", "edited")
    build(repo)
    after = inodes(repo / "build")
    rewritten = {p for p in after if after[p] != before.get(p)}
    assert "site/agents3.example.org/a2a/agent-000003/.well-known/agent-card.json" in rewritten
    assert "manifest.json" in rewritten
    assert len(rewritten) < len(after) // 4  # the other cards are the same files, as git's index knows them
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh")
    assert debris(repo) == []
    memo = OutputMemo.open(repo)  # what was stat'ed again is what a stat of every file and folder finds
    assert memo.owned and memo.columns == stat_tree(repo / "build", memo.digests())
    assert "up to date" in build(repo)
    assert run(repo, "check").returncode == 0


def test_an_agent_made_private_goes_with_its_folders_and_a_new_one_comes(repo: Path, tmp_path: Path) -> None:
    gone = repo / "content/agent-blueprints/agent-000003.kno"
    gone.write_text(gone.read_text(encoding="utf-8").replace("\ntitle:", "\nvisibility: private\ntitle:", 1),
                    encoding="utf-8")
    build(repo)
    assert not (repo / "build/site/agents3.example.org/a2a/agent-000003").exists()  # no empty folders left
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh")
    (repo / "content/agent-blueprints/agent-000003.kno").write_text(
        gone.read_text(encoding="utf-8").replace("\nvisibility: private\n", "\n", 1), encoding="utf-8")
    build(repo)
    assert (repo / "build/site/agents3.example.org/a2a/agent-000003/.well-known/agent-card.json").is_file()
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh")
    memo = OutputMemo.open(repo)  # folders made and removed, in the memo too
    assert memo.columns == stat_tree(repo / "build", memo.digests())
    assert debris(repo) == []


# knoc build, killed (SIGKILL) just before the K-th step of its update
# in place that changes the disk (KNOC_KILL_AT=K); "steps N" when done.
KILLED_AT_STEP = """
import os, signal, sys
import knoc.io.journal as journal
limit, steps, armed = int(os.environ["KNOC_KILL_AT"]), [0], [False]
def step(name, real):
    def wrapped(*args, **kw):
        if armed[0] and not (name == "mkdir" and _exists(args[0], kw.get("dir_fd"))):
            steps[0] += 1
            if steps[0] == limit:
                os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kw)
    return wrapped
def _exists(path, fd):
    try:
        os.stat(path, dir_fd=fd, follow_symlinks=False)
        return True
    except OSError:
        return False
for name in ("mkdir", "rename", "unlink", "rmdir", "fsync", "write"):
    setattr(os, name, step(name, getattr(os, name)))
real_update = journal.update_in_place
def update(*args):
    armed[0] = True
    real_update(*args)
    armed[0] = False
journal.update_in_place = update
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.cli import main
try:
    main()
finally:
    print("steps", steps[0], flush=True)
"""


def test_a_kill_between_any_two_steps_leaves_no_tree_a_reader_accepts(repo: Path, tmp_path: Path) -> None:
    """Every state an update in place passes through, by killing it at each
    step in turn: an agent edited, one made private, one added."""
    old = tree(repo / "build")
    three_changes(repo)
    new = fresh_build(repo, tmp_path / "fresh")
    new_folders = folders(tmp_path / "fresh/build")  # none left empty: a removed card's folders go too
    states = set()
    for at in range(1, 200):
        shutil.rmtree(repo / "build")
        for rel, body in old.items():
            (repo / "build" / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / "build" / rel).write_bytes(body)
        done = run(repo, "build", script=KILLED_AT_STEP, env={"KNOC_KILL_AT": str(at)})
        if done.returncode == 0:  # it took fewer steps than `at`: every state was seen
            assert tree(repo / "build") == new and debris(repo) == []
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        now = tree(repo / "build")
        if now not in (old, new):
            assert rejected_by_manifest(now), f"killed at step {at}: a mix its manifest accepts"
            if "mix" not in states:  # once: knoc check refuses it too (a check takes a second)
                checked = run(repo, "check")
                assert checked.returncode == 1 and "half updated" in checked.stderr, checked.stderr
            states.add("mix")
        else:
            states.add("old" if now == old else "new")
        swap.recover(repo / "build")  # what the next run does first: a committed update is finished
        after = tree(repo / "build")
        assert after == new if now != old else after in (old, new), f"killed at step {at}"
        assert after != new or folders(repo / "build") == new_folders, f"killed at step {at}: folders left"
        assert debris(repo) == []
    else:
        pytest.fail("the update never finished")
    assert states >= {"old", "mix"}
    build(repo)
    assert tree(repo / "build") == new and debris(repo) == []


# knoc build, sent Ctrl-C by itself once it has moved its first file in.
CTRL_C_MID_UPDATE = """
import os, signal, sys
import knoc.io.journal as journal
real = journal._move
def move(*args):
    real(*args)
    os.kill(os.getpid(), signal.SIGINT)
journal._move = move
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.__main__ import run
run()
"""


def test_a_ctrl_c_mid_update_waits_for_it_to_finish(repo: Path, tmp_path: Path) -> None:
    edit(repo, "agent-000005", "edited")
    done = run(repo, "build", script=CTRL_C_MID_UPDATE)
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh") and debris(repo) == []


def _staged_update(repo: Path, update: Update, files: dict[str, bytes]) -> Path:
    staged = repo / ".build.new-knocabcdefgh"
    for rel, body in files.items():
        (staged / rel).parent.mkdir(parents=True, exist_ok=True)
        (staged / rel).write_bytes(body)
    return journal.commit(staged, repo / "build", update)


def test_a_link_planted_in_build_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    host = repo / "build/site/agents3.example.org"
    shutil.rmtree(host)
    host.symlink_to(outside)  # after the scan, as a second process could
    card = "site/agents3.example.org/a2a/agent-000003/.well-known/agent-card.json"
    done = _staged_update(repo, Update([card], ["site/agents3.example.org/index.html"]), {card: b"{}"})
    with pytest.raises(OSError, match="link"):
        journal.apply(done, repo / "build")
    assert list(outside.iterdir()) == [] and done.exists()  # kept, for the run after the link is gone
    host.unlink()
    journal.apply(done, repo / "build")
    assert (repo / "build" / card).read_bytes() == b"{}" and not done.exists()


def _forge(repo: Path, body: dict[str, object]) -> None:
    """A journal beside build/ that knoc did not write (one committed to git, say)."""
    (repo / ".build.new-knocabcdefgh").mkdir(exist_ok=True)
    (repo / ".build.update-knocabcdefgh").write_text(json.dumps({"journal": journal.VERSION, **body}))


@pytest.mark.parametrize("forged", [
    {"replace": ["../outside/planted"], "remove": []},
    {"replace": [], "remove": ["../outside/keep.txt"]},
    {"replace": [], "remove": "manifest.json"},
    {"replace": ["/etc/passwd"], "remove": []},
    {"replace": ["through/keep.txt"], "remove": []},  # `through` a link to outside, in the staged folder
    {"replace": ["victim"], "remove": []},  # a folder of files, staged
    {"replace": [], "remove": ["site"]},  # a folder of the tree
    {"replace": [], "remove": ["index/notes.txt"]},  # a file of the author's that build/ holds
])
def test_a_forged_journal_touches_nothing_but_what_knoc_wrote(repo: Path, tmp_path: Path,
                                                              forged: dict[str, object]) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/keep.txt").write_text("mine")
    _forge(repo, forged)
    (repo / ".build.new-knocabcdefgh/planted").write_text("x")
    (repo / ".build.new-knocabcdefgh/through").symlink_to(tmp_path / "outside")
    (repo / ".build.new-knocabcdefgh/victim").mkdir()
    (repo / ".build.new-knocabcdefgh/victim/secret").write_text("x")
    (repo / "build/index/notes.txt").write_text("mine")
    before = tree(repo / "build")
    swap.recover(repo / "build")  # what build and clean do first
    assert tree(repo / "build") == before and debris(repo) == []
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["keep.txt"]
    assert (tmp_path / "outside/keep.txt").read_text() == "mine"


def test_a_forged_journal_never_replaces_a_file_knoc_did_not_write(repo: Path) -> None:
    _forge(repo, {"replace": ["index/notes.txt"], "remove": []})
    (repo / ".build.new-knocabcdefgh/index").mkdir()
    (repo / ".build.new-knocabcdefgh/index/notes.txt").write_text("forged")
    (repo / "build/index/notes.txt").write_text("mine")
    done = run(repo, "build")
    assert done.returncode == 2 and "knoc did not write" in done.stderr and ".build.update-knocabcdefgh" in done.stderr
    assert "Traceback" not in done.stderr
    assert (repo / "build/index/notes.txt").read_text() == "mine"


# knoc build, killed (SIGKILL) once its update has moved in a card knoc never wrote before.
KILLED_AFTER_A_NEW_CARD = """
import os, signal, sys
import knoc.io.journal as journal
real = journal._move
def move(staged, root, rel, owned):
    real(staged, root, rel, owned)
    if "agent-000099" in rel:
        os.kill(os.getpid(), signal.SIGKILL)
journal._move = move
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.cli import main
main()
"""


def test_an_update_killed_midway_is_finished_in_a_copy_of_the_repo(repo: Path, tmp_path: Path) -> None:
    """The journal names paths, not inodes: a repo copied (or restored from
    a backup) after a kill still finishes its update."""
    three_changes(repo)
    new = fresh_build(repo, tmp_path / "fresh")
    assert run(repo, "build", script=KILLED_AFTER_A_NEW_CARD).returncode == -signal.SIGKILL
    mixed = tree(repo / "build")
    assert mixed != new and rejected_by_manifest(mixed)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    build(copy)
    assert tree(copy / "build") == new and debris(copy) == []


def test_an_empty_folder_made_where_a_file_goes_is_replaced(repo: Path, tmp_path: Path) -> None:
    twin = repo / "build/site/agents5.example.org/a2a/agent-000005/.well-known/agent.json"
    twin.unlink()
    twin.mkdir()
    edit(repo, "agent-000005", "edited")
    build(repo)
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh") and twin.is_file()


def test_a_journal_past_its_size_bound_is_dropped_unread(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    card = "site/agents3.example.org/a2a/agent-000003/.well-known/agent-card.json"
    before = tree(repo / "build")
    done = _staged_update(repo, Update([card], []), {card: b"{}"})
    monkeypatch.setattr(journal, "MOST_BYTES", 10)
    swap.recover(repo / "build")
    assert tree(repo / "build") == before and not done.exists() and debris(repo) == []


# knoc serve --watch, whose rebuilds move each file in slowly, saying so.
SLOW_MOVES = """
import sys, time
import knoc.io.journal as journal
real = journal._move
def move(*args):
    print("moving", flush=True)
    time.sleep(0.3)
    real(*args)
journal._move = move
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.__main__ import run
run()
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_stopping_serve_watch_mid_update_waits_for_the_update(repo: Path, tmp_path: Path, stop: int) -> None:
    """The rebuild runs on the watcher's thread, where Ctrl-C cannot be
    held: the server waits for it to finish updating build/ before it
    exits, through a second signal too."""
    proc = subprocess.Popen([sys.executable, "-c", SLOW_MOVES, "serve", "--watch", "--port", "0", "--root", str(repo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        while "serving" not in proc.stderr.readline():
            assert proc.poll() is None
        edit(repo, "agent-000005", "edited")
        assert proc.stdout.readline().strip() == "moving"
        proc.send_signal(stop)
        assert proc.stdout.readline().strip() == "moving"  # still moving files in: a second signal comes
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert tree(repo / "build") == fresh_build(repo, tmp_path / "fresh") and debris(repo) == []


def test_a_staged_folder_that_is_a_link_drops_its_journal(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/manifest.json").write_text("{}")
    (repo / ".build.new-knocabcdefgh").symlink_to(tmp_path / "outside")
    (repo / ".build.update-knocabcdefgh").write_text(json.dumps({"journal": journal.VERSION,
                                                              "replace": ["manifest.json"], "remove": []}))
    before = tree(repo / "build")
    assert "up to date" in build(repo)
    assert tree(repo / "build") == before and debris(repo) == []
    assert (tmp_path / "outside/manifest.json").read_text() == "{}"
