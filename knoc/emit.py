"""Stage 6, emit: render the build tree in memory, then write it aside and
swap it in, so a failed or interrupted build leaves the old tree as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable

from knoc import __version__
from knoc.cache import Snapshot, Stat
from knoc.canonical import dumps, sha256
from knoc.hosting import CARD_FILE, LEGACY_CARD_FILE, SITE, headers_files
from knoc.index import build_catalog, build_domains
from knoc.pages import catalog_page, extension_pages
from knoc.project import Card
from knoc.resolve import Repo
from knoc.validate import Typed

MANIFEST = "manifest.json"
DOMAINS = "index/domains.json"  # the runtime index: perception domain -> agents
CATALOG = "index/agents.json"
# An entity the manifest lists: (repo-relative path, sha256, private?).
Input = tuple[str, str, bool]


class OutputError(Exception):
    """The output directory cannot be written without losing someone's file."""


def render_linked(repo: Repo, cards: list[Card], typed: list[Typed]) -> dict[str, bytes]:
    """The files that read the whole repo: the runtime index, the catalog and
    extension pages, the static hosts' `_headers`. The link stage renders
    them, so the cache keeps them with its findings."""
    domains, catalog = build_domains(repo, cards), build_catalog(repo, cards, CARD_FILE)
    skills = {c.slug: c.projection.skills for c in cards}
    site = {**extension_pages(typed, cards), **catalog_page(catalog["agents"], domains["domains"], skills)}
    hosts = {c.projection.host for c in cards} | {rel[len(SITE):].split("/")[0] for rel in site if rel.count("/") > 1}
    return {DOMAINS: dumps(domains), CATALOG: dumps(catalog), **site, **headers_files(hosts)}


def render(cards: list[Card], linked: dict[str, bytes], linked_digests: dict[str, str], inputs: list[Input],
           target: str) -> tuple[dict[str, bytes], dict[str, str]]:
    """Every output file and its sha256, keyed by its path under the build
    directory: the cards, the files the link stage rendered (with their
    digests), the manifest."""
    files: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    for card in cards:
        p = card.projection
        base = f"{SITE}{p.site_dir}/"
        files[base + CARD_FILE] = files[base + LEGACY_CARD_FILE] = p.body
        digests[base + CARD_FILE] = digests[base + LEGACY_CARD_FILE] = p.digest
    files.update(linked)
    digests.update(linked_digests)
    files[MANIFEST] = dumps(manifest(inputs, digests, target))
    digests[MANIFEST] = sha256(files[MANIFEST])
    return files, digests


def manifest(inputs: list[Input], outputs: dict[str, str], target: str) -> dict[str, Any]:
    """Hashes of inputs and outputs. A private entity's path is left out (its
    name would say it exists); the sources digest still covers it."""
    everything = hashlib.sha256()
    public: dict[str, str] = {}
    for rel, digest, private in sorted(inputs):
        everything.update(f"{rel}\0{digest}\n".encode("utf-8"))
        if not private:
            public[rel] = digest
    return {
        "knoc": __version__,
        "a2a_target": target,
        "sources_digest": everything.hexdigest(),
        "inputs": public,
        "outputs": dict(sorted(outputs.items())),
    }


def check_owned(out: Path) -> None:
    """Refuse to replace a directory holding files knoc did not write."""
    if not out.exists():
        return
    if not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    present = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink()}
    if not present:
        return
    try:
        old = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        known = set(old["outputs"]) | {MANIFEST}
    except (OSError, ValueError, KeyError, TypeError):
        raise OutputError(f"{out} has files but no knoc manifest.json; knoc will not replace it") from None
    foreign = sorted(present - known)
    if foreign:
        shown = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise OutputError(f"{out} holds files knoc did not write: {shown}")


def write_tree(out: Path, files: dict[str, bytes]) -> None:
    check_owned(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        for rel, body in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        os.chmod(staging, 0o755)
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, retired / "tree")
            os.replace(staging, out)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def stat_tree(out: Path, digests: dict[str, str]) -> Snapshot:
    """The snapshot of a tree just written with these files and digests."""
    base = f"{out}/"
    snap = Snapshot()
    for rel, digest in digests.items():
        st = os.stat(base + rel)
        snap.files[rel] = (st.st_size, st.st_mtime_ns, digest)
    for rel in {""} | _parents(digests):
        snap.dirs[rel] = os.stat(base + rel).st_mtime_ns
    return snap


def scan_tree(out: Path, known: Snapshot) -> Snapshot:
    """Every file under `out` with its size, mtime and sha256.

    A file whose size and mtime match `known` is not read again. When no
    directory's mtime changed, no entry was added or removed anywhere (POSIX
    updates a directory's mtime on both), so only the known files are
    stat'ed and the tree is not listed. (Paths are plain strings here:
    pathlib's joins cost more than the stat calls on a large tree.)"""
    base = f"{out}/"
    if known.dirs:
        try:
            if all(os.stat(base + rel).st_mtime_ns == m for rel, m in known.dirs.items()):
                return Snapshot({rel: _fresh(base, rel, known) for rel in known.files}, dict(known.dirs))
        except FileNotFoundError:
            pass
    snap = Snapshot()

    def walk(prefix: str) -> None:
        snap.dirs[prefix.rstrip("/")] = os.stat(base + prefix).st_mtime_ns
        with os.scandir(base + prefix) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    walk(prefix + e.name + "/")
                else:
                    snap.files[prefix + e.name] = _fresh(base, prefix + e.name, known)

    if out.is_dir():
        walk("")
    return snap


def _fresh(base: str, rel: str, known: Snapshot) -> Stat:
    st = os.stat(base + rel)
    memo = known.files.get(rel)
    if memo is not None and memo[0] == st.st_size and memo[1] == st.st_mtime_ns:
        return memo
    with open(base + rel, "rb") as f:
        return (st.st_size, st.st_mtime_ns, sha256(f.read()))


def _parents(files: Iterable[str]) -> set[str]:
    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return dirs
