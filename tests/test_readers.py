"""knoc's readers (knoc.a2a.readers) held to the SDKs themselves: for every
card of the example, built for each target, and for each of its variants
below (proto field names, legacy fields, wrong types, nulls, every OAuth
flow, nested params), each reader computes exactly the bytes its SDK
verifies a signature over, or fails to read the card where the SDK does:
a2a-sdk 1.3 (in this process), a2a-sdk 0.3.26 and @a2a-js/sdk 1.3.0 (in the
interop suite's environments). The descriptor the readers use is the one
protoc makes of the official proto."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knoc.a2a import readers
from tests.conftest import EXAMPLE_PARTS, ROOT
from tests.test_interop import SCRIPTS, js_client, python_client, run


def test_the_card_descriptor_is_what_protoc_makes_of_the_official_proto() -> None:
    from tests import card_descriptor

    assert card_descriptor.OUT.read_bytes() == card_descriptor.generate()


def _edit(card: dict[str, Any], change: Any) -> dict[str, Any]:
    out = copy.deepcopy(card)
    change(out)
    return out


def _first_skill(card: dict[str, Any]) -> dict[str, Any]:
    return card["skills"][0]  # type: ignore[no-any-return]


VARIANTS: dict[str, Any] = {
    "as built": lambda c: None,
    "snake icon_url": lambda c: c.update(icon_url="https://evil.example/i.png"),
    "snake documentation_url": lambda c: c.update(documentation_url="https://evil.example/docs"),
    "both doc names": lambda c: c.update(documentationUrl="https://a.example/", documentation_url="https://b.example/"),
    "snake default_input_modes": lambda c: c.update(default_input_modes=["text/html"]),
    "snake skill input_modes": lambda c: _first_skill(c).update(input_modes=["image/png"]),
    "legacy security": lambda c: c.update(security=[{"bearer": []}]),
    "legacy extended card": lambda c: c.update(supportsAuthenticatedExtendedCard=True),
    "legacy url": lambda c: c.update(url="https://evil.example/a2a", preferredTransport="HTTP+JSON"),
    "legacy protocol version": lambda c: c.update(protocolVersion="0.3.0"),
    # JavaScript's `trim` and Python's `strip` take different spaces
    "protocol version after a BOM": lambda c: c.update(protocolVersion="\ufeff0.3.0", supportedInterfaces=[]),
    "protocol version after a separator": lambda c: c.update(protocolVersion="\x1c0.3.0", supportedInterfaces=[]),
    "protocol version after U+0085": lambda c: c.update(protocolVersion="\x850.3", supportedInterfaces=[]),
    "protocol version with a plus": lambda c: c.update(protocolVersion="+0.3", supportedInterfaces=[]),
    "protocol version of minus zero": lambda c: c.update(protocolVersion="-0.3", supportedInterfaces=[]),
    "protocol version below zero": lambda c: c.update(protocolVersion="-1.3", supportedInterfaces=[]),
    "protocol version past a double": lambda c: c.update(protocolVersion="0." + "9" * 400, supportedInterfaces=[]),
    "protocol version of many zeros": lambda c: c.update(protocolVersion="-" + "0" * 5000 + ".0" + "0" * 5000 + "3",
                                                         supportedInterfaces=[]),
    "implicit flow": lambda c: c.update(securitySchemes={"o": {"oauth2SecurityScheme": {"flows": {"implicit": {
        "authorizationUrl": "https://a.example/auth", "scopes": {"r": "read"}}}}}}),
    "implicit flow 0.3": lambda c: c.update(securitySchemes={"o": {"type": "oauth2", "flows": {"implicit": {
        "authorizationUrl": "https://a.example/auth", "scopes": {"r": "read"}}}}}),
    "password and code flows": lambda c: c.update(securitySchemes={"o": {"type": "oauth2", "flows": {
        "password": {"tokenUrl": "https://a.example/t", "scopes": {}},
        "authorizationCode": {"authorizationUrl": "https://a.example/a", "tokenUrl": "https://a.example/t",
                              "scopes": {"r": "read"}}}}}),
    "api key 0.3": lambda c: c.update(securitySchemes={"k": {"type": "apiKey", "in": "header", "name": "X-Key"}}),
    "api key snake": lambda c: c.update(security_schemes={"k": {"api_key_security_scheme": {
        "location": "header", "name": "X-Key"}}}, security_requirements=[{"schemes": {"k": {"list": []}}}]),
    "name a number": lambda c: c.update(name=5),
    "streaming a string": lambda c: c["capabilities"].update(streaming="yes"),
    "tags a string": lambda c: _first_skill(c).update(tags="abc"),
    "description null": lambda c: c.update(description=None),
    "icon null": lambda c: c.update(iconUrl=None),
    "provider a number": lambda c: c.update(provider=5),
    "capabilities a list": lambda c: c.update(capabilities=[]),
    "a null interface": lambda c: c.update(supportedInterfaces=[None]),
    "a null skill": lambda c: c.update(skills=[None]),
    "params nested and floats": lambda c: c["capabilities"].update(extensions=[{
        "uri": "https://x.example/e", "required": False, "params": {"a": [1.5, 2.0, {"b": [[], {}, ""]}], "c": 0}}]),
    "empty values": lambda c: c.update(documentationUrl="", defaultOutputModes=[]),
    "unknown fields": lambda c: c.update(extra={"a": 1}, tenant="t"),
    "unprotected header": lambda c: c.update(signatures=[{"protected": "e30", "signature": "AA", "header": {"kid": "x"}}]),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every card file of the example, built for each target, each variant of each."""
    cards: dict[str, dict[str, Any]] = {}
    for target in ("1.0", "0.3", "compat"):
        root = tmp_path_factory.mktemp(f"readers-{target}")
        for part in EXAMPLE_PARTS:
            src = ROOT / part
            (shutil.copytree if src.is_dir() else shutil.copy)(src, root / part)
        subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(root), "--a2a", target],
                       check=True, capture_output=True)
        site = root / "build/site"
        for path in sorted(site.rglob("agent*.json")):
            card = json.loads(path.read_text(encoding="utf-8"))
            for name, change in VARIANTS.items():
                cards[f"{target} {path.relative_to(site)} {name}"] = _edit(card, change)
    return cards


def _knoc(card: dict[str, Any], reader: str) -> str | None:
    """What knoc computes one reader verifies (None: it cannot read or
    canonicalize the card), signed or not."""
    view = next((v for v in readers.readings(card) if v.reader == reader), None)
    return view.payload.decode("utf-8") if view is not None and view.payload is not None else None


def _sdk_1x(card: dict[str, Any]) -> str | None:
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import _canonicalize_agent_card

    try:
        return _canonicalize_agent_card(parse_agent_card(copy.deepcopy(card)))
    except Exception:  # what the SDK raises is its verdict: it cannot read this card
        return None


def _compare(corpus: dict[str, dict[str, Any]], reader: str, sdk: dict[str, str | None]) -> None:
    wrong = {name: (sdk[name], _knoc(card, reader)) for name, card in corpus.items() if _knoc(card, reader) != sdk[name]}
    assert not wrong, f"{len(wrong)} of {len(corpus)} differ, e.g. {next(iter(wrong.items()))}"
    assert sum(v is not None for v in sdk.values()) > len(corpus) // 3  # most cards are read at all


def test_a2a_sdk_1x_reads_as_knoc_does(corpus: dict[str, dict[str, Any]]) -> None:
    _compare(corpus, "a2a-sdk 1.x", {name: _sdk_1x(card) for name, card in corpus.items()})


def test_a2a_sdk_0_3_reads_as_knoc_does(corpus: dict[str, dict[str, Any]]) -> None:
    found = run([str(python_client("a2a-sdk-0.3")), str(SCRIPTS / "canonical_v03.py")], {"cards": corpus})
    _compare(corpus, "a2a-sdk 0.3", {name: found[name].get("payload") for name in corpus})


@pytest.mark.parametrize(("reader", "key"), [("@a2a-js/sdk", "fetched"), ("@a2a-js/sdk client", "client")])
def test_the_js_sdk_reads_as_knoc_does(corpus: dict[str, dict[str, Any]], reader: str, key: str) -> None:
    node = shutil.which("node")
    assert node is not None
    script = Path(js_client()).parent / "canonical_js.mjs"
    shutil.copyfile(SCRIPTS / "canonical_js.mjs", script)
    found = run([node, str(script)], {"cards": corpus})
    _compare(corpus, reader, {name: found[name][key].get("payload") for name in corpus})
