"""Interrupted builds: a build killed at any point (SIGKILL or SIGINT)
leaves either the old build/ or the new one, or (only a SIGKILL while an
update in place is applied: tests/test_update_in_place.py) a mix its
manifest refuses, which the next run finishes; the next run leaves no
debris. Where the system cannot swap two folders atomically
(no renameat2), a kill between the two renames leaves no build/ for a
moment, and the next run puts the old one back before anything else."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.gen_repo import generate
from knoc.io import swap
from tests.conftest import rejected_by_manifest, tree

AGENTS = 150
POINTS = 24  # kills at spread-out moments, half SIGKILL, half SIGINT
# Run knoc with the portable swap, pausing between its two renames: the
# test kills it there.
BETWEEN_RENAMES = """
import os, sys, time
import knoc.io.staging as staging
import knoc.io.swap as swap
staging.IN_PLACE_SHARE = 10**9  # the whole tree swapped in, never updated in place
swap._renameat2 = lambda: None  # the portable swap: two renames
real = os.rename
def paused(a, b):
    real(a, b)
    if str(b).endswith("/tree"):
        print("between", flush=True)
        time.sleep(60)
swap.os.rename = paused
from knoc.cli import main
sys.argv = ["knoc", *sys.argv[1:]]
main()
"""


# Ctrl-C at the moment jsonschema_rs, loading, imports `decimal` from Rust.
CTRL_C_IN_NATIVE_LOAD = """
import builtins, os, signal, sys
real = builtins.__import__
def imp(name, *a, **k):
    if name == "decimal" and "decimal" not in sys.modules:
        print("ctrl-c", flush=True)
        os.kill(os.getpid(), signal.SIGINT)
    return real(name, *a, **k)
builtins.__import__ = imp
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.__main__ import run
run()
"""


def knoc(root: Path, *args: str, script: str | None = None, **kw: object) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", script, *args] if script else [sys.executable, "-m", "knoc", *args]
    return subprocess.Popen([*command, "--root", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)  # type: ignore[call-overload]


def build(root: Path) -> None:
    proc = knoc(root, "build")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def compiled(proc: subprocess.Popen[str], files: int) -> None:
    """Wait until the workers of `proc` (slowed, saying so) compiled `files` files."""
    assert proc.stdout is not None
    seen = 0
    while seen < files:  # two workers' lines may run together
        line = proc.stdout.readline()
        assert line, "knoc ended before it was interrupted"
        seen += line.count("compiling")


def debris(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".build."))


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes], dict[str, bytes], float]:
    """A repo whose build/ is the old tree, whose sources compile to the new
    one, and how long a build takes."""
    root = tmp_path_factory.mktemp("interrupt") / "repo"
    generate(root, AGENTS)
    build(root)
    old = tree(root / "build")
    blueprint = root / "content/agent-blueprints/agent-000007.kno"
    blueprint.write_text(blueprint.read_text(encoding="utf-8").replace("  description: ", "  description: new ", 1),
                         encoding="utf-8")
    scratch = root.parent / "scratch"
    generate(scratch, AGENTS)
    (scratch / "content/agent-blueprints/agent-000007.kno").write_text(blueprint.read_text(encoding="utf-8"),
                                                                        encoding="utf-8")
    start = time.monotonic()
    build(scratch)
    took = time.monotonic() - start
    new = tree(scratch / "build")
    assert new != old
    return root, old, new, took


def test_a_build_killed_anywhere_leaves_the_old_or_the_new_tree(
        trees: tuple[Path, dict[str, bytes], dict[str, bytes], float]) -> None:
    root, old, new, took = trees
    rng = random.Random(7)
    for i in range(POINTS):
        if i % 3 == 0:  # a cold run now and then: the kill lands in other stages
            _drop_cache(root)
        proc = knoc(root, "build")
        time.sleep(rng.uniform(0.2, took * 1.5))
        proc.send_signal(signal.SIGKILL if i % 2 else signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err
        now = tree(root / "build")
        if now not in (old, new):  # killed while an update in place was applied
            assert i % 2 and rejected_by_manifest(now), f"kill {i}: build/ is a mix its manifest accepts"
            swap.recover(root / "build")  # what the next run does first
            assert tree(root / "build") == new, f"kill {i}: the update was not finished"
        if now != old:  # back to the old tree for the next kill
            _restore(root, old)
    build(root)
    assert tree(root / "build") == new and debris(root) == []
    # Where the kills land depends on the machine's speed; the swap window
    # itself is the next test's, deterministically.


def test_a_kill_between_the_two_renames_is_recovered_by_the_next_run(
        trees: tuple[Path, dict[str, bytes], dict[str, bytes], float]) -> None:
    root, old, new, _ = trees
    _restore(root, old)
    _drop_cache(root)
    proc = knoc(root, "build", script=BETWEEN_RENAMES)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "between"
    proc.kill()
    proc.wait(timeout=30)
    assert not (root / "build").exists() and debris(root)  # the window the portable swap has
    check = knoc(root, "validate")
    check.communicate(timeout=120)
    build(root)
    assert tree(root / "build") == new and debris(root) == []


def _restore(root: Path, old: dict[str, bytes]) -> None:
    """Put the old tree back as build/ (and its sources, for the next kill)."""
    import shutil

    shutil.rmtree(root / "build")
    for rel, body in old.items():
        (root / "build" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "build" / rel).write_bytes(body)


def _drop_cache(root: Path) -> None:
    import shutil

    shutil.rmtree(root / ".knoc-cache", ignore_errors=True)


def test_a_retired_tree_is_removed_whole_without_following_links(tmp_path: Path) -> None:
    from knoc.io.swap import SPREAD, remove

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    old = tmp_path / ".build.old-x"
    for i in range(SPREAD + 5):  # enough subtrees to be removed on several threads
        card = old / "site" / f"host{i % 3}" / "a2a" / f"agent-{i}" / ".well-known"
        card.mkdir(parents=True)
        (card / "agent-card.json").write_text("{}")
    (old / "manifest.json").write_text("{}")
    (old / "site" / "host0" / "a2a" / "agent-0" / "link").symlink_to(outside)
    (old / "site" / "escape").symlink_to(outside)
    remove(old)
    assert not old.exists()
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_ctrl_c_while_the_schema_engine_loads_is_a_quiet_interrupt(tmp_path: Path) -> None:
    """jsonschema_rs imports `decimal` from Rust as it loads: a Ctrl-C
    there is held until it has loaded (`knoc.io.native`), then the usual
    quiet exit 130, where it was a Rust panic printed with a traceback."""
    generate(tmp_path / "repo", 3)
    proc = knoc(tmp_path / "repo", "validate", script=CTRL_C_IN_NATIVE_LOAD)
    out, err = proc.communicate(timeout=60)
    assert out.startswith("ctrl-c")  # the Ctrl-C landed where it used to panic
    assert proc.returncode == 130 and "interrupted" in err
    assert "panicked" not in err and "Traceback" not in err


# A pool worker killed mid-task (as the OOM killer would): the first worker
# to start its third chunk kills itself.
WORKER_KILLED = """
import os, signal, sys
import knoc.incremental.driver as driver
real, seen = driver._compile, []
def dying(job, rel):
    seen.append(rel)
    if len(seen) == 70 and os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(job, rel)
PARENT = os.getpid()
driver._compile = dying
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.__main__ import run
run()
"""


def test_a_worker_killed_mid_build_fails_the_build_at_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    generate(root, 700)  # past pool.MIN_ITEMS: the files go to forked workers
    build(root)
    old = tree(root / "build")
    _drop_cache(root)
    blueprint = root / "content/agent-blueprints/agent-000007.kno"
    blueprint.write_text(blueprint.read_text(encoding="utf-8").replace("  description: ", "  description: x ", 1),
                         encoding="utf-8")
    proc = knoc(root, "build", "--jobs", "2", script=WORKER_KILLED)
    start = time.monotonic()
    _, err = proc.communicate(timeout=60)  # it used to wait for the lost chunk forever
    assert time.monotonic() - start < 30
    assert proc.returncode == 2 and "KNO-MACHINE" in err and "worker" in err and "Traceback" not in err, err
    assert tree(root / "build") == old and debris(root) == []


def slowed(when: str = "True", then: str = "") -> str:
    """A script that runs knoc with each file's compile slowed while `when`
    holds, saying so from the workers; `then`: more to patch before it runs."""
    return f"""
import os, sys, time
import knoc.incremental.driver as driver
real_compile = driver._compile
def slow(job, rel):
    if {when}:
        print("compiling", flush=True)
        time.sleep(0.02)
    return real_compile(job, rel)
driver._compile = slow
{then}
sys.argv = ["knoc", *sys.argv[1:]]
from knoc.__main__ import run
run()
"""


SLOW_WORKERS = slowed()


def test_a_ctrl_c_while_the_workers_compile_is_a_quiet_interrupt(tmp_path: Path) -> None:
    """Ctrl-C with most of the work still queued for the workers: exit 130
    and one line, not the executor's own traceback about the work it
    cancelled ("Exception in thread ... CANCELLED")."""
    root = tmp_path / "repo"
    generate(root, 700)  # past pool.MIN_ITEMS
    proc = knoc(root, "build", "--jobs", "2", "--no-cache", script=SLOW_WORKERS)
    # two workers print at once: their lines may run together
    assert proc.stdout is not None and proc.stdout.readline().startswith("compiling")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "Exception in thread" not in err, err
    assert not (root / "build").exists() and debris(root) == []


# The half-written tree's removal, slowed and announced: the test presses
# Ctrl-C again right then.
SLOW_REMOVAL = slowed(then="""
import knoc.io.swap as swap
real_remove = swap.remove
def announced(tree, *a, **k):
    print("removing", flush=True)
    time.sleep(0.5)
    return real_remove(tree, *a, **k)
swap.remove = announced
""")


def test_a_second_ctrl_c_does_not_cut_the_cleanup_short(tmp_path: Path) -> None:
    """Ctrl-C pressed twice: the second lands while the first is removing
    the cards written early beside build/. It is ignored: the removal
    finishes, and nothing is left for the next run to clean up."""
    root = tmp_path / "repo"
    generate(root, 700)  # past pool.MIN_ITEMS: the workers write cards early, into a tree beside build/
    proc = knoc(root, "build", "--jobs", "2", "--no-cache", script=SLOW_REMOVAL)
    compiled(proc, 100)  # cards written early: a tree to remove
    assert debris(root), "no tree was being written beside build/"
    proc.send_signal(signal.SIGINT)
    while not (line := proc.stdout.readline()).startswith("removing"):
        assert line, "the half-written tree was never removed"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert not (root / "build").exists() and debris(root) == []


def test_a_build_started_with_ctrl_c_ignored_keeps_ignoring_it(tmp_path: Path) -> None:
    """A script's background job (`knoc build &`) starts with Ctrl-C
    ignored, so that a Ctrl-C at the terminal leaves it running: knoc
    keeps it so, as Python does."""
    root = tmp_path / "repo"
    generate(root, 400)  # past pool.MIN_ITEMS
    proc = knoc(root, "build", "--jobs", "2", "--no-cache", script=SLOW_REMOVAL,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.stdout is not None and "compiling" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "interrupted" not in err, err
    assert (root / "build").is_dir() and debris(root) == []


def test_workers_die_quietly_with_a_killed_build(tmp_path: Path) -> None:
    """knoc killed (kill -9) while its workers compile: none lives on, none prints."""

    root = tmp_path / "repo"
    generate(root, 1500)
    proc = knoc(root, "build", "--jobs", "2", "--no-cache")
    deadline = time.monotonic() + 30
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < 2:  # wait for the workers to be forked
        time.sleep(0.05)
        children = _children(proc.pid)
    proc.kill()
    _, err = proc.communicate(timeout=30)
    assert children, "no workers were forked"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in children)
    assert "Traceback" not in err


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(p) for p in found]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("round_", range(3))
def test_two_builds_at_once_never_crash_and_leave_a_tree_check_accepts(round_: int,
                                                                       tmp_path_factory: pytest.TempPathFactory
                                                                       ) -> None:
    """What `serve --watch` beside the `knoc-build` hook does: two builds
    started a moment apart. One waits for the other; neither exits 3; the
    tree left is one `knoc check` accepts."""
    root = tmp_path_factory.mktemp("concurrent") / "repo"
    generate(root, 2000, seed=round_)
    if round_:
        build(root)  # a warm repo too
        blueprint = root / "content/agent-blueprints/agent-000009.kno"
        blueprint.write_text(blueprint.read_text(encoding="utf-8").replace("  description: ", "  description: y ", 1),
                             encoding="utf-8")
    first = knoc(root, "build")
    time.sleep(0.05 * round_)
    second = knoc(root, "build")
    for proc in (first, second):
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    check = knoc(root, "check")
    _, err = check.communicate(timeout=120)
    assert check.returncode == 0, err
    assert debris(root) == []


# `serve --watch` whose workers compile slowly once the file `slow` is in the repo.
SLOW_REBUILD = slowed('os.path.exists(os.path.join(job.config.root, "slow"))')


def test_a_ctrl_c_during_a_watch_rebuild_leaves_the_old_tree_and_no_debris(tmp_path: Path) -> None:
    """`serve --watch` stopped while its rebuild (on the watcher's thread)
    is writing a new tree beside build/: the rebuild unwinds and removes
    that tree before the exit, as an interrupted `knoc build` does."""
    root = tmp_path / "repo"
    generate(root, 700)  # past pool.MIN_ITEMS: the workers write cards early, into a tree beside build/
    build(root)
    old = tree(root / "build")
    proc = knoc(root, "serve", "--watch", "--no-cache", "--port", "0", script=SLOW_REBUILD)
    assert proc.stdout is not None and proc.stderr is not None
    while "serving" not in (line := proc.stderr.readline()):
        assert line, f"knoc serve exited with {proc.wait()}"
    (root / "slow").touch()
    blueprint = root / "content/agent-blueprints/agent-000007.kno"
    blueprint.write_text(blueprint.read_text(encoding="utf-8").replace("  description: ", "  description: new ", 1),
                         encoding="utf-8")
    compiled(proc, 100)  # the rebuild's workers at work
    assert debris(root), "the rebuild wrote no tree beside build/"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "Exception in thread" not in err, err
    assert debris(root) == [] and tree(root / "build") == old


def test_a_ctrl_c_python_can_only_ignore_still_stops_knoc_quietly() -> None:
    """Landing in a callback of an import (or a finalizer), a Ctrl-C is an
    exception Python prints as "Exception ignored" with a traceback, and the
    command would go on: knoc stops, exit 130, with its one line."""
    import subprocess
    import sys

    script = ("import sys, knoc.__main__ as m\n"
              "class Late:\n"
              "    def __del__(self):\n"
              "        raise KeyboardInterrupt\n"
              "sys.unraisablehook = m._ignored\n"
              "Late()\n"
              "print('went on')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and "went on" not in done.stdout, done
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr and done.stderr.strip()
