"""How soon `knoc serve --watch` serves an edit, as a browser would see it:

    python bench/watch.py [--size 10000] [--edits 10]

It generates a repo (bench/gen_repo.py), builds it once (the build/ and
the cache someone working in the repo has), starts `knoc serve --watch`
and, for each edit, times from the blueprint saved (its card description
changed) to the first GET of its card that returns the new description.
Each edit comes after a pause, as an author's would. Prints the median and
the slowest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_repo import built, print_table, table_main

BLUEPRINT = "content/agent-blueprints/agent-000123.kno"
HOST, CARD = "agents4.example.org", "/a2a/agent-000123/.well-known/agent-card.json"  # agent 123: host 123 % 7
PAUSE = 2.0  # seconds between one timed edit and the next
POLL = 0.005
TIMEOUT = 60.0


def served(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{CARD}", timeout=TIMEOUT) as answer:
        return bytes(answer.read())


def measure(repo: Path, edits: int, env: dict[str, str] | None = None) -> list[float]:
    server = subprocess.Popen([sys.executable, "-m", "knoc", "serve", "--watch", "--port", "0", "--site", HOST,
                               "--root", str(repo)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=env or dict(os.environ))
    try:
        assert server.stderr is not None
        port = next(int(m.group(1)) for line in server.stderr
                    if (m := re.search(r"http://127\.0\.0\.1:(\d+)/", line)))
        blueprint = repo / BLUEPRINT
        times = []
        for i in range(edits):
            time.sleep(PAUSE)
            mark = f"(watched {i})"
            text = blueprint.read_text(encoding="utf-8")
            saved = time.perf_counter()
            blueprint.write_text(re.sub(r"\n  description: .*", f"\n  description: {mark}", text, count=1),
                                 encoding="utf-8")
            while mark.encode() not in served(port):
                if time.perf_counter() - saved > TIMEOUT:
                    raise SystemExit(f"edit {i} was not served within {TIMEOUT:.0f} s")
                time.sleep(POLL)
            times.append(time.perf_counter() - saved)
        return times
    finally:
        server.terminate()
        server.wait(timeout=60)


def watch_table(size: int, edits: int, env: dict[str, str] | None = None) -> None:
    """Print the table (`env`: where knoc is imported from, as `bench/run.py` measures a copy)."""
    with built(size, "knoc-bench-watch-", env) as repo:
        times = measure(repo, edits, env)
    print_table(f"`knoc serve --watch`, {size:,} agents, {edits} edits (from the file saved to its card served)",
                {"an edited card served": times})


if __name__ == "__main__":
    table_main(watch_table)
