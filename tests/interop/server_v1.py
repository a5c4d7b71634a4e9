"""An a2a-sdk 1.x agent on loopback for the interop suite: JSON-RPC at
/jsonrpc/, HTTP+JSON at /rest/ and gRPC on its own port, each also speaking
0.3 (the SDK's compat layer), with an extended card. It answers every
message with "echo: <text>". Run in the suite's a2a-sdk 1.x environment;
prints one JSON line with its ports when it is ready."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import grpc
import uvicorn
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.server.tasks import TaskUpdater
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState
from fastapi import FastAPI


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = new_task_from_user_message(context.message)
        task.id, task.context_id = context.task_id, context.context_id
        await event_queue.enqueue_event(task)
        text = " ".join(p.text for p in context.message.parts if p.text)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.update_status(TaskState.TASK_STATE_COMPLETED,
                                    message=updater.new_agent_message([Part(text=f"echo: {text}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def card(http: int, grpc_port: int, name: str) -> AgentCard:
    interfaces = [AgentInterface(protocol_binding=b, url=u, protocol_version=v)
                  for b, u in (("JSONRPC", f"http://127.0.0.1:{http}/jsonrpc/"),
                               ("HTTP+JSON", f"http://127.0.0.1:{http}/rest/"),
                               ("GRPC", f"127.0.0.1:{grpc_port}"))
                  for v in ("1.0", "0.3")]
    return AgentCard(name=name, description="Echoes what it is sent.", version="1.0.0",
                     supported_interfaces=interfaces,
                     capabilities=AgentCapabilities(streaming=True, extended_agent_card=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["echo"])])


async def main() -> None:
    http, grpc_port = free_port(), free_port()
    public = card(http, grpc_port, "Interop echo")
    handler = DefaultRequestHandler(Echo(), InMemoryTaskStore(), public,
                                    extended_agent_card=card(http, grpc_port, "Interop echo (extended)"))
    app = FastAPI()
    cards = create_agent_card_routes(agent_card=public, card_url="/.well-known/agent-card.json")
    app.mount("/jsonrpc", FastAPI(routes=create_jsonrpc_routes(request_handler=handler, rpc_url="/",
                                                               enable_v0_3_compat=True) + cards))
    app.mount("/rest", FastAPI(routes=create_rest_routes(request_handler=handler, enable_v0_3_compat=True) + cards))
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=http, log_level="warning"))
    task = asyncio.create_task(web.serve())
    while not web.started:
        await asyncio.sleep(0.05)
    print(json.dumps({"http": http, "grpc": grpc_port}), flush=True)
    await task


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
