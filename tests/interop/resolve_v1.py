"""a2a-sdk's card resolver given an agent's url, as an application calls it
(run in the suite's 1.x or 0.3 environment). Reads {"asks": {key: url}} on
stdin; prints key -> {"name"} of the card it found, or {"error"}."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from a2a.client import A2ACardResolver


async def main() -> None:
    job = json.load(sys.stdin)
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=20) as client:
        for key, url in job["asks"].items():
            try:
                out[key] = {"name": (await A2ACardResolver(client, url).get_agent_card()).name}
            except Exception as exc:  # the finding is the point: report, go on
                out[key] = {"error": f"{type(exc).__name__}: {exc}"}
    print("KNOC-RESULT " + json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
