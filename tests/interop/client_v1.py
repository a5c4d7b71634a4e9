"""The a2a-sdk 1.x client against knoc's cards (run in the suite's 1.x
environment). Reads {"base", "cards", "http", "grpc"} on stdin; for each
card: resolve it from `knoc serve` with the SDK's resolver, then for each
interface it declares build a client from the card, its address moved to
the loopback echo server (same binding, same protocol version), send a
message and read the reply; fetch the extended card where announced.
Prints one JSON object: slug -> findings."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any
from uuid import uuid4

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import GetExtendedAgentCardRequest, Message, Part, Role, SendMessageRequest, TaskState
from a2a.types.a2a_pb2 import AgentCard, AgentInterface


def loopback(binding: str, http: int, grpc_port: int) -> str:
    return {"JSONRPC": f"http://127.0.0.1:{http}/jsonrpc/", "HTTP+JSON": f"http://127.0.0.1:{http}/rest/",
            "GRPC": f"127.0.0.1:{grpc_port}"}[binding]


async def client_for(card: AgentCard, iface: AgentInterface, http: int, grpc_port: int) -> Any:
    """A client built from `card`, its one interface `iface` moved to the loopback server."""
    moved = AgentCard()
    moved.CopyFrom(card)
    del moved.supported_interfaces[:]
    moved.supported_interfaces.append(AgentInterface(url=loopback(iface.protocol_binding, http, grpc_port),
                                                     protocol_binding=iface.protocol_binding,
                                                     protocol_version=iface.protocol_version))
    config = ClientConfig(streaming=False, supported_protocol_bindings=[iface.protocol_binding],
                          httpx_client=httpx.AsyncClient(timeout=20), grpc_channel_factory=grpc.aio.insecure_channel)
    return await create_client(moved, client_config=config)


async def talk(card: AgentCard, iface: AgentInterface, http: int, grpc_port: int) -> str:
    client = await client_for(card, iface, http, grpc_port)
    message = Message(role=Role.ROLE_USER, message_id=str(uuid4()), parts=[Part(text="hello")])
    async for event in client.send_message(request=SendMessageRequest(message=message)):
        status = event.task.status if event.HasField("task") else (
            event.status_update.status if event.HasField("status_update") else None)
        if status is not None and status.state == TaskState.TASK_STATE_COMPLETED:
            reply = status.message.parts[0].text
            return "ok" if reply == "echo: hello" else f"unexpected reply {reply!r}"
    return "no completed task"


async def extended(card: AgentCard, http: int, grpc_port: int) -> str:
    client = await client_for(card, card.supported_interfaces[0], http, grpc_port)
    got = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    return "ok" if got.name.endswith("(extended)") else f"got {got.name!r}"


async def main() -> None:
    job = json.load(sys.stdin)
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=20) as http_client:
        for entry in job["cards"]:
            found: dict[str, Any] = {"bindings": {}}
            out[entry["slug"]] = found
            base = job["base"] + entry["card"].removesuffix("/.well-known/agent-card.json")
            try:
                card = await A2ACardResolver(http_client, base).get_agent_card()
            except Exception as exc:  # the finding is the point: report, go on
                found["resolved"] = f"{type(exc).__name__}: {exc}"
                continue
            found["resolved"] = "ok"
            for iface in card.supported_interfaces:
                key = f"{iface.protocol_binding} {iface.protocol_version}"
                try:
                    found["bindings"][key] = await talk(card, iface, job["http"], job["grpc"])
                except Exception as exc:
                    found["bindings"][key] = f"{type(exc).__name__}: {exc}"
            if card.capabilities.extended_agent_card:
                try:
                    found["extended"] = await extended(card, job["http"], job["grpc"])
                except Exception as exc:
                    found["extended"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
