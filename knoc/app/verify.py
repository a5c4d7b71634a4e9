"""`knoc verify`: check the signatures of any A2A card (knoc's or not)
against a key set: given with --jwks (a file or a URL), or fetched from
each signature's `jku` when --allow-jku says a card may make knoc fetch.
A card is valid when every client generation that reads it verifies what
it reads (knoc.a2a.readers): the answer is given per signature and per
reader. Every read keeps the hardening limits (size, time, JSON rule)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from knoc.a2a import signing
from knoc.a2a.unprotected import in_card
from knoc.app.outcome import Outcome, UsageError
from knoc.diagnostics.source import json_path
from knoc.features import keysets
from knoc.rules.paths import origin, shown_url, split_url


def verify(source: str, jwks: str | None, allow_jku: bool, jku_hosts: tuple[str, ...] = (), *,
           fmt: str) -> Outcome:
    try:
        return _verify(source, jwks, allow_jku, jku_hosts, fmt)
    except keysets.Unreadable as exc:
        raise UsageError("KNO-VERIFY-READ", str(exc)) from None


def _verify(source: str, jwks: str | None, allow_jku: bool, jku_hosts: tuple[str, ...], fmt: str) -> Outcome:
    card = keysets.load_json(source, "the card", card=True)
    shown = shown_url(source) if keysets.is_url(source) else source  # never a url's password, in any format
    if not isinstance(card, dict):
        raise UsageError("KNO-VERIFY-READ", f"{shown} is not an A2A card (a JSON object)")
    signatures = card.get("signatures") or []
    if jwks is None and not allow_jku and signatures:
        own = _own_key_set(source, card)
        raise UsageError("KNO-CONFIG", "no key set to verify against",
                         f"give one with --jwks: `knoc verify {shown} --jwks {own}` (this repo's build has the "
                         "card's host)" if own else "give one with --jwks FILE_OR_URL (a build's own: "
                         "build/site/<host>/.well-known/jwks.json), or let the card name it: --allow-jku")
    refused: dict[str, str] = {}
    if jwks is not None:
        keys = keysets.key_set(jwks)
    elif allow_jku:
        named = keysets.named_by(signatures, _hosts(source, card, jku_hosts))
        keys, refused = named.keys, named.refused
    else:
        keys = signing.KeySet({})
    verdict = signing.verify(card, keys)
    open_to_edit = [json_path(p) for p in in_card(card)] if verdict.valid else []
    answer = (_json(shown, verdict, keys, refused, open_to_edit) if fmt == "json"
              else _text(verdict, keys, refused, open_to_edit))
    return Outcome("knoc verify", inputs=[shown], answer=answer, failed=not verdict.valid)


def _own_key_set(source: str, card: Mapping[str, object]) -> str | None:
    """The key set the repo here built for the card's host, if there is one."""
    from knoc.config import ConfigError, find_root, load_config
    from knoc.io import files
    from knoc.output.hosting import JWKS_FILE, SITE

    host = keysets.home(source, card)
    try:
        config = load_config(find_root(Path.cwd())) if host is not None else None
    except ConfigError:
        return None
    path = config.out_dir / SITE / str(host) / JWKS_FILE if config is not None else None
    return os.path.relpath(path) if path is not None and files.is_file(path) else None


def _hosts(source: str, card: Mapping[str, object], named: tuple[str, ...]) -> set[str]:
    """The hosts whose key sets a card may make knoc fetch: its own, and the ones named."""
    hosts = {h for h in [keysets.home(source, card)] if h is not None}
    for host in named:
        parts = split_url(f"https://{host}/")
        folder = origin(parts) if parts is not None else None
        if folder is None:
            raise UsageError("KNO-CONFIG", f"--jku-host `{host}` is not a host name (with an optional :port)")
        hosts.add(folder)
    return hosts


def _outside(paths: list[str]) -> str:
    """What a valid verdict adds when some values are outside every signature."""
    if not paths:
        return ""
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"; but values clients read are outside every signature: {shown} (empty values, which every SDK "
            "leaves out of what it signs: a copy without them, or with others in their place, verifies too)")


def _said(verdict: signing.Verdict, unfetched: bool) -> str:
    """The verdict; with nothing fetched to check against, not verified (no forgery was found)."""
    said = _verdict_line(verdict)
    if unfetched and said.startswith("invalid: "):
        said = f"not verified: {said.removeprefix('invalid: ')}; no key set the card names was fetched"
    return said


def _verdict_line(verdict: signing.Verdict) -> str:
    if verdict.problem:
        return f"invalid: {verdict.problem}"
    if not verdict.views:
        return "invalid: no A2A client can read this card"
    if not verdict.checks:
        return "invalid: the card is unsigned"
    missing = verdict.uncovered
    if missing:
        who = ", ".join(v.reader for v in missing)
        return f"invalid: {who} cannot verify what {'it reads' if len(missing) == 1 else 'they read'}"
    return f"valid: every client that reads this card ({', '.join(v.reader for v in verdict.views)}) verifies it"


def _text(verdict: signing.Verdict, keys: signing.KeySet, refused: dict[str, str], outside: list[str]) -> str:
    lines = [f"key set: {note}" for note in keys.skipped]
    lines += [f"key set {jku}: not fetched: {why}" for jku, why in refused.items()]
    unfetched = " (its key set was not fetched: see above)" if refused and not keys.keys else ""
    for c in verdict.checks:
        lines.append(f"signature {c.index}: " + (f"verifies with key {c.kid} what {', '.join(c.covers)} read"
                                                 if c.covers else f"not verified: {c.problem}{unfetched}"
                                                 if unfetched else f"invalid: {c.problem}"))
    by = {r: [c.index for c in verdict.checks if r in c.covers] for r in (v.reader for v in verdict.views)}
    for v in verdict.views:
        if v.payload is None:
            lines.append(f"{v.reader}: cannot verify any signature ({v.problem})")
        elif by[v.reader]:
            lines.append(f"{v.reader}: covered by signature {', '.join(map(str, by[v.reader]))}")
        else:
            lines.append(f"{v.reader}: NOT covered: no signature verifies what it reads")
    lines += [f"{why}; its clients cannot use this card" for why in verdict.unread]
    return "\n".join([*lines, _said(verdict, bool(unfetched)) + _outside(outside)]) + "\n"


def _json(source: str, verdict: signing.Verdict, keys: signing.KeySet, refused: dict[str, str],
          outside: list[str]) -> str:
    by = {v.reader: [c.index for c in verdict.checks if v.reader in c.covers] for v in verdict.views}
    doc = {
        "source": source, "valid": verdict.valid,
        "verdict": _said(verdict, bool(refused) and not keys.keys) + _outside(outside),
        "unsigned_values": outside,
        "signatures": [{"index": c.index, "kid": c.kid, "valid": bool(c.covers), "covers": list(c.covers),
                        **({"problem": c.problem} if c.problem else {})} for c in verdict.checks],
        "readers": [{"reader": v.reader, "covered": bool(by[v.reader]), "by": by[v.reader],
                     **({"problem": v.problem} if v.problem else {})} for v in verdict.views],
        "unread_by": verdict.unread,
        **({"problem": verdict.problem} if verdict.problem else {}),
        **({"skipped_keys": list(keys.skipped)} if keys.skipped else {}),
        **({"refused_key_sets": refused} if refused else {}),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
