"""`knoc import` keeps what clients read. Every real card of the corpus
(tests/data/cards/wild, sources in SOURCES.md) is imported, built for 1.0
and for compat, and read by a2a-sdk 1.3 before and after: its interfaces
(binding, url, Major.Minor version), security schemes and requirements,
default modes and documentation url come out alike, or each difference is
a warning of the import naming the JSON path of what changed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from google.protobuf.json_format import MessageToDict

from knoc.rules.version import major_minor
from tests.conftest import Knoc, json_diags
from tests.test_import import WILD, imported_cards

# What a client reads, by aspect, and the source paths whose warning may account for a difference.
ASPECTS = {
    "interfaces": ("$.url", "$.supportedInterfaces", "$.supported_interfaces", "$.additionalInterfaces",
                   "$.preferredTransport", "$.protocolVersion"),
    "schemes": ("$.securitySchemes", "$.security_schemes", "$.authentication"),
    "requirements": ("$.security", "$.securityRequirements", "$.security_requirements", "$.securitySchemes",
                     "$.security_schemes", "$.authentication"),
    "input modes": ("$.defaultInputModes", "$.default_input_modes"),
    "output modes": ("$.defaultOutputModes", "$.default_output_modes"),
    "documentation": ("$.documentationUrl", "$.documentation_url"),
}


def read(card: dict[str, Any]) -> dict[str, Any] | None:
    """What a2a-sdk 1.3 reads of a card, by aspect (None: it cannot read it)."""
    try:
        parsed = MessageToDict(parse_agent_card(copy.deepcopy(card)))
    except Exception:  # the SDK's verdict: it cannot read this card
        return None
    interfaces = sorted({(i.get("protocolBinding", ""), i.get("url", "").rstrip("/"),
                          major_minor(i["protocolVersion"]) if i.get("protocolVersion") else "")
                         for i in parsed.get("supportedInterfaces", [])})
    requirements = sorted(json.dumps(r.get("schemes", {}), sort_keys=True) for r in parsed.get("securityRequirements", []))
    return {"interfaces": interfaces, "schemes": parsed.get("securitySchemes", {}), "requirements": requirements,
            "input modes": parsed.get("defaultInputModes", []), "output modes": parsed.get("defaultOutputModes", []),
            "documentation": parsed.get("documentationUrl")}


def warned_paths(repo: Path, knoc: Knoc) -> dict[str, list[str]]:
    """Each corpus file's import warnings, by the JSON path they name (a
    card with no url of its own imported with `--url`, as `imported_cards` does)."""
    _, out, _ = knoc("import", *map(str, WILD), "--format", "json", "--force", root=repo)
    diags = json_diags(out)
    for name in [d["file"] for d in diags if d["code"] == "KNO-IMPORT-NOT-CARD" and "--url" in d["message"]]:
        diags += json_diags(knoc("import", name, "--url", f"https://imported.example/{Path(name).stem}", "--force",
                                 "--format", "json", root=repo)[1])
    found: dict[str, list[str]] = {}
    for d in diags:
        if d.get("json_path"):
            found.setdefault(Path(d["file"]).name, []).append(d["json_path"])
    return found


@pytest.mark.parametrize("target", ["1.0", "compat"])
def test_a2a_sdk_reads_the_rebuilt_card_as_the_original_or_a_warning_says_why(repo: Path, knoc: Knoc,
                                                                               target: str) -> None:
    built = imported_cards(repo, knoc, target)
    warned = warned_paths(repo, knoc)
    unexplained = []
    compared = 0
    for path in WILD:
        before = read(json.loads(path.read_text(encoding="utf-8")))
        if before is None:
            continue
        after = read(built[path.name])
        assert after is not None, path.name  # knoc's card is always readable
        compared += 1
        for aspect, sources in ASPECTS.items():
            if before[aspect] != after[aspect] and not any(w.startswith(sources) for w in warned.get(path.name, [])):
                unexplained.append((path.name, aspect, before[aspect], after[aspect]))
    assert compared >= 15
    assert not unexplained, "\n".join(map(str, unexplained))
