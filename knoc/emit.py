"""Stage 6, emit: render the build tree in memory, then write it aside and
swap it in, so a failed or interrupted build leaves the old tree as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from knoc import __version__
from knoc.index import build_catalog, build_domains
from knoc.load import Entity
from knoc.project import Card
from knoc.resolve import Repo

CARD_FILE = ".well-known/agent-card.json"  # A2A 0.3 and 1.0
LEGACY_CARD_FILE = ".well-known/agent.json"  # A2A before 0.3, for older clients
MANIFEST = "manifest.json"


class OutputError(Exception):
    """The output directory cannot be written without losing someone's file."""


def dumps(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render(repo: Repo, cards: list[Card], entities: list[Entity], target: str) -> dict[str, bytes]:
    """Every output file, keyed by its path under the build directory."""
    files: dict[str, bytes] = {}
    card_paths: dict[str, str] = {}
    for card in cards:
        body = dumps(card.model.to_json_dict())
        base = f"site/{card.site_dir}"
        files[f"{base}/{CARD_FILE}"] = body
        files[f"{base}/{LEGACY_CARD_FILE}"] = body
        card_paths[card.agent.slug] = f"{card.site_dir}/{CARD_FILE}"
    files["index/domains.json"] = dumps(build_domains(repo, cards))
    files["index/agents.json"] = dumps(build_catalog(repo, cards, card_paths))
    files[MANIFEST] = dumps(manifest(entities, files, target))
    return dict(sorted(files.items()))


def manifest(entities: list[Entity], outputs: dict[str, bytes], target: str) -> dict[str, Any]:
    """Hashes of inputs and outputs. A private entity's path is left out (its
    name would say it exists); the sources digest still covers it."""
    everything = hashlib.sha256()
    inputs: dict[str, str] = {}
    for ent in sorted(entities, key=lambda e: e.source.rel):
        digest = sha256(ent.source.text.encode("utf-8"))
        everything.update(f"{ent.source.rel}\0{digest}\n".encode("utf-8"))
        if ent.data.get("visibility") != "private":
            inputs[ent.source.rel] = digest
    return {
        "knoc": __version__,
        "a2a_target": target,
        "sources_digest": everything.hexdigest(),
        "inputs": inputs,
        "outputs": {path: sha256(body) for path, body in sorted(outputs.items())},
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


def read_tree(out: Path) -> dict[str, bytes]:
    if not out.is_dir():
        return {}
    return {p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*")) if p.is_file()}
