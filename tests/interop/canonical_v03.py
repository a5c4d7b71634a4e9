"""a2a-sdk 0.3's canonical form of each card (what its verifier checks a
signature over), or why it cannot read the card. Reads {"cards": {name:
card}} on stdin; prints {name: {"payload": str} or {"error": str}}."""

from __future__ import annotations

import json
import sys

from a2a.types import AgentCard
from a2a.utils.helpers import canonicalize_agent_card

out = {}
for name, card in json.load(sys.stdin)["cards"].items():
    try:
        out[name] = {"payload": canonicalize_agent_card(AgentCard.model_validate(card))}
    except Exception as exc:  # the finding is the point: report, go on
        out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
print(json.dumps(out))
