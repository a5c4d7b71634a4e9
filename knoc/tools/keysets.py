"""Key sets for checking signatures (`knoc verify`, `knoc import`): a JWKS
from a file or URL, or the ones a card's signatures name in `jku`, fetched
only when the user allows it, at most MAX_JKU of them, within the download
limits."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from knoc.a2a import signing
from knoc.io import files, http, limits

MAX_JKU = 4  # distinct key-set urls one card may make knoc fetch


class Unreadable(ValueError):
    """A card or key set that cannot be read or is not what it should be."""


def read_card(source: str) -> bytes:
    """The bytes of a card file, or of a URL (a base URL gets the well-known
    card path), within the download limits. OSError when it cannot be read."""
    if not source.startswith(("http://", "https://")):
        return files.read_source(source, limit=limits.DOWNLOAD_BYTES)
    url = source if urlsplit(source).path.endswith(".json") else source.rstrip("/") + "/.well-known/agent-card.json"
    return http.fetch(url)


def load_json(source: str, what: str, card: bool = False) -> Any:
    """JSON from a file or URL (a card URL gets its well-known path); a
    Unreadable when it cannot be read."""
    try:
        raw = read_card(source) if card else _read(source)
        return json.loads(raw.decode("utf-8-sig"))
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Unreadable(f"cannot read {what} from {source}: {why}") from None


def _read(source: str) -> bytes:
    if source.startswith(("http://", "https://")):
        return http.fetch(source)
    return files.read_source(source, limit=limits.DOWNLOAD_BYTES)


def key_set(source: str) -> list[dict[str, Any]]:
    """The keys of a JWKS file or URL."""
    doc = load_json(source, "the key set")
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list):
        raise Unreadable(f"{source} is not a JWK set (a JSON object with `keys`)")
    return [k for k in keys if isinstance(k, dict)]


def named_by(signatures: Any) -> list[dict[str, Any]]:
    """The keys of every key set the signatures name, fetched once each."""
    urls = []
    for entry in signatures if isinstance(signatures, list) else []:
        header = signing.protected_header(entry)
        jku = header.get("jku") if header else None
        if isinstance(jku, str) and jku.startswith(("https://", "http://")) and jku not in urls:
            urls.append(jku)
    keys: list[dict[str, Any]] = []
    for url in urls[:MAX_JKU]:
        try:
            keys += key_set(url)
        except Unreadable:
            continue  # that signature then names a key nobody could fetch: it is reported invalid
    return keys
