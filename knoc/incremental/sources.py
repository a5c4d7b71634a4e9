"""Sources on disk: read (only as regular files inside the repo), and
compiled through the cache, which keeps each file's result by its bytes."""

from __future__ import annotations

from pathlib import Path

from knoc.compiler.load import parse_source, source_file
from knoc.compiler.records import FileResult
from knoc.compiler.unit import one_file
from knoc.config import Config
from knoc.diagnostics import Diagnostic, SourceFile, diag
from knoc.io import files
from knoc.io.cache import Cache
from knoc.kinds.entity import Entity
from knoc.kinds.spec import SpecSet
from knoc.rules import limits
from knoc.rules.records import Encoded


def source_at(root: Path, relpath: str, shown: str | None = None) -> SourceFile | Diagnostic:
    """The file at `relpath` under `root`, or why it cannot be read."""
    path = f"{root}/{relpath}"
    try:
        raw = files.read_source(path, str(root))
    except files.Refused as exc:
        return _refused(relpath, exc)
    except OSError as exc:
        return diag("KNO-IO-READ", f"cannot read file: {exc.strerror}", file=relpath)
    return source_file(path, relpath, raw, shown)


def source_of_text(root: Path, relpath: str, text: str) -> SourceFile | Diagnostic:
    """The file at `relpath` as an editor holds it (`text`, perhaps
    unsaved), or why a build would not read it (a link out of the repo, the
    same size limit). A lone surrogate, which the protocol's JSON can carry
    and UTF-8 cannot, is read as the bytes a file holding it would have:
    not UTF-8."""
    refused = files.source_refusal(f"{root}/{relpath}", str(root))  # what is on disk there, as a build reads it
    if refused is not None:
        return _refused(relpath, refused)
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > limits.SOURCE_BYTES:
        return _refused(relpath, files.too_large(len(raw)))
    return source_file(f"{root}/{relpath}", relpath, raw)


def _refused(relpath: str, exc: files.Refused) -> Diagnostic:
    return diag("KNO-IO-REFUSED", f"knoc does not read this file: {exc}", file=relpath, hint=exc.hint)


def compile_source(config: Config, specs: SpecSet, cache: Cache, rel: str) -> tuple[str, Encoded] | Diagnostic:
    """One file the cache could not vouch for: read it, and reuse what the
    cache kept for the same bytes or compile it. Returns its sha256 and the
    encoded FileResult, or why it could not be read."""
    src = source_at(config.root, rel)
    if isinstance(src, Diagnostic):
        return src
    kept = cache.get(rel, src.digest)  # the same bytes with a new mtime, say after a checkout
    if isinstance(kept, tuple) and FileResult.decode(kept) is not None:
        return src.digest, kept
    return src.digest, one_file(src, None, specs, config.a2a, config.layout).encode()


def entities(config: Config, declaring: tuple[str, ...] = ()) -> list[Entity]:
    """Every content entity of the repo that reads and parses (what does
    not is the build's to report); with `declaring`, of those types only (a
    text that holds no `<type>@` nor an escape that could spell one is not parsed)."""
    found, declared = [], tuple(f"{kind}@" for kind in declaring)
    for rel in files.listed(config.root, [config.content]).found:
        source = source_at(config.root, rel)
        if not isinstance(source, SourceFile):
            continue
        text = source.text or ""
        if declared and "\\" not in text and not any(mark in text for mark in declared):
            continue
        if isinstance(ent := parse_source(source, config.layout), Entity) and \
                str(ent.data.get("$schema")).startswith(declared or ""):
            found.append(ent)
    return found
