"""`lf.a2a.v1.AgentCard` as protoc compiles it from the official proto
(A2A v1.0.1): `agent_card_v1.binpb` holds the messages of the card, cut
from the compiled proto by `tests/card_descriptor.py`. Loaded into a pool
of knoc's own, so it never meets another copy (a2a-sdk's) in one process."""

from __future__ import annotations

import functools

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, message_factory, struct_pb2
from google.protobuf.message import Message

from knoc.io import files


@functools.cache
def pool() -> descriptor_pool.DescriptorPool:
    own = descriptor_pool.DescriptorPool()
    own.Add(descriptor_pb2.FileDescriptorProto.FromString(struct_pb2.DESCRIPTOR.serialized_pb))
    own.Add(descriptor_pb2.FileDescriptorProto.FromString(files.resource(__package__, "agent_card_v1.binpb")))
    return own


def message(name: str) -> descriptor.Descriptor:
    """The descriptor of `lf.a2a.v1.<name>`."""
    return pool().FindMessageTypeByName(f"lf.a2a.v1.{name}")


def card_class() -> type[Message]:
    """The generated class of `lf.a2a.v1.AgentCard`."""
    return message_factory.GetMessageClass(message("AgentCard"))
