"""a2a-sdk 0.3's verifier (create_signature_verifier) over knoc's signed
cards, run in the suite's 0.3 environment. Reads {"cards": [{"name",
"card", "keys"}]} on stdin; prints name -> "ok" or the error."""

from __future__ import annotations

import json
import sys

from a2a.types import AgentCard
from a2a.utils.signing import create_signature_verifier
from jwt import PyJWK

job = json.load(sys.stdin)
out = {}
for entry in job["cards"]:
    keys = {k["kid"]: k for k in entry["keys"]}
    verifier = create_signature_verifier(lambda kid, jku, keys=keys: PyJWK(keys[kid]), ["EdDSA", "ES256"])
    try:
        verifier(AgentCard.model_validate(entry["card"]))
        out[entry["name"]] = "ok"
    except Exception as exc:  # the finding is the point: report, go on
        out[entry["name"]] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out, indent=1, sort_keys=True))
