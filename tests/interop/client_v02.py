"""a2a-sdk 0.2 against knoc's legacy path (run in the suite's 0.2
environment): reads {"base", "cards"} on stdin and parses each card's
`/.well-known/agent.json` with the SDK's own resolver. Prints one JSON
object: slug -> "ok" or the error."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver


async def main() -> None:
    job = json.load(sys.stdin)
    out = {}
    async with httpx.AsyncClient(timeout=20) as client:
        for entry in job["cards"]:
            base = job["base"] + entry["card"].removesuffix("/.well-known/agent-card.json")
            try:
                card = await A2ACardResolver(client, base, "/.well-known/agent.json").get_agent_card()
                out[entry["slug"]] = "ok" if card.url else "no url"
            except Exception as exc:  # the finding is the point: report, go on
                out[entry["slug"]] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
