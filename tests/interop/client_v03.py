"""The a2a-sdk 0.3 client against knoc's 0.3 and compat cards (run in the
suite's 0.3 environment). Reads {"base", "cards", "http", "grpc"} on stdin;
for each card: resolve and parse it with the SDK; for the main url and each
listed `additionalInterfaces` entry, check the card itself says it speaks
0.3 (compat: a 0.3 `supportedInterfaces` entry; 0.3: the capability
contract's interface versions, when stated), then talk to the loopback echo
server over that transport; fetch the extended card where announced.
Prints one JSON object: slug -> findings."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any
from uuid import uuid4

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import AgentCard, Message, Part, Role, TaskState, TextPart

CONTRACT = "https://possibility.space/extensions/capability-contract/v1"


def loopback(transport: str, http: int, grpc_port: int) -> str:
    return {"JSONRPC": f"http://127.0.0.1:{http}/jsonrpc/", "HTTP+JSON": f"http://127.0.0.1:{http}/rest/",
            "GRPC": f"127.0.0.1:{grpc_port}"}[transport]


def speaks_0_3(raw: dict[str, Any], url: str, transport: str) -> bool | None:
    """What the card says about (url, transport) and 0.3; None: it does not say."""
    if "supportedInterfaces" in raw:
        return any(i.get("url") == url and i.get("protocolBinding") == transport
                   and str(i.get("protocolVersion", "")).startswith("0.3") for i in raw["supportedInterfaces"])
    for ext in raw.get("capabilities", {}).get("extensions") or []:
        if ext.get("uri") == CONTRACT:
            for i in (ext.get("params") or {}).get("interfaces") or []:
                if i.get("url") == url:
                    return any(str(v).startswith("0.3") for v in i.get("protocolVersions", []))
    return None


def client_for(card: AgentCard, transport: str, http: int, grpc_port: int) -> Any:
    moved = card.model_copy(update={"url": loopback(transport, http, grpc_port), "preferred_transport": transport,
                                    "additional_interfaces": None})
    config = ClientConfig(streaming=False, supported_transports=[transport],
                          httpx_client=httpx.AsyncClient(timeout=20), grpc_channel_factory=grpc.aio.insecure_channel)
    return ClientFactory(config).create(moved)


async def talk(card: AgentCard, transport: str, http: int, grpc_port: int) -> str:
    client = client_for(card, transport, http, grpc_port)
    message = Message(role=Role.user, message_id=str(uuid4()), parts=[Part(root=TextPart(text="hello"))])
    async for event in client.send_message(message):
        task = event[0] if isinstance(event, tuple) else None
        if task is not None and task.status.state == TaskState.completed and task.status.message:
            reply = task.status.message.parts[0].root.text
            return "ok" if reply == "echo: hello" else f"unexpected reply {reply!r}"
    return "no completed task"


async def main() -> None:
    job = json.load(sys.stdin)
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=20) as http_client:
        for entry in job["cards"]:
            found: dict[str, Any] = {"interfaces": {}}
            out[entry["slug"]] = found
            base = job["base"] + entry["card"].removesuffix("/.well-known/agent-card.json")
            try:
                card = await A2ACardResolver(http_client, base).get_agent_card()
                raw = (await http_client.get(base + "/.well-known/agent-card.json")).json()
            except Exception as exc:  # the finding is the point: report, go on
                found["resolved"] = f"{type(exc).__name__}: {exc}"
                continue
            found["resolved"] = "ok"
            listed = [(card.url, card.preferred_transport or "JSONRPC")]
            listed += [(i.url, i.transport) for i in card.additional_interfaces or [] if (i.url, i.transport)
                       not in listed]
            for url, transport in listed:
                says = speaks_0_3(raw, url, transport)
                if says is False:
                    found["interfaces"][f"{transport} {url}"] = "listed, but the card says it does not speak 0.3"
                    continue
                try:
                    found["interfaces"][f"{transport} {url}"] = await talk(card, transport, job["http"], job["grpc"])
                except Exception as exc:
                    found["interfaces"][f"{transport} {url}"] = f"{type(exc).__name__}: {exc}"
            if card.supports_authenticated_extended_card:
                try:
                    client = client_for(card, card.preferred_transport or "JSONRPC", job["http"], job["grpc"])
                    got = await client.get_card()
                    found["extended"] = "ok" if got.name.endswith("(extended)") else f"got {got.name!r}"
                except Exception as exc:
                    found["extended"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
