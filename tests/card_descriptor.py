"""Makes knoc/a2a/readers/agent_card_v1.binpb, the descriptor knoc reads
1.x cards with: the messages of `lf.a2a.v1.AgentCard` from the official
proto (tests/data/a2a/a2a-v1.0.proto), compiled with protoc (grpcio-tools)
and cut down to those messages, without options or imports but
google/protobuf/struct.proto. Field names, numbers, types, json names,
presence and oneofs are protoc's own.

    python -m tests.card_descriptor          # print whether the file is current
    python -m tests.card_descriptor --write  # rewrite it
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "tests/data/a2a/a2a-v1.0.proto"
OUT = ROOT / "knoc/a2a/readers/agent_card_v1.binpb"


def generate() -> bytes:
    import google.api
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc

    include = Path(protoc.__file__).parent / "_proto"
    googleapis = Path(next(iter(google.api.__path__))).parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.binpb"
        code = protoc.main(["protoc", f"-I{PROTO.parent}", f"-I{include}", f"-I{googleapis}",
                            f"--descriptor_set_out={out}", PROTO.name])
        if code != 0:
            raise SystemExit(f"protoc failed on {PROTO}")
        full = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    by_name = {m.name: m for m in full.message_type}
    wanted, pending = [], ["AgentCard"]
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        wanted.append(name)
        fields = [*by_name[name].field, *(f for entry in by_name[name].nested_type for f in entry.field)]
        pending += [f.type_name.rsplit(".", 1)[1] for f in fields  # a map's entry is nested, not top-level
                    if f.type_name.startswith(".lf.a2a.v1.") and f.type_name.count(".") == 4]
    cut = descriptor_pb2.FileDescriptorProto(name="knoc_agent_card_v1.proto", package=full.package,
                                             syntax=full.syntax, dependency=["google/protobuf/struct.proto"])
    for message in full.message_type:  # in the proto's order
        if message.name in wanted:
            copy = cut.message_type.add()
            copy.CopyFrom(message)
            _strip(copy)
    return cut.SerializeToString(deterministic=True)


def _strip(message: object) -> None:
    """Options (google.api annotations, deprecation) say nothing to a JSON reader."""
    message.ClearField("options")  # type: ignore[attr-defined]
    for field in message.field:  # type: ignore[attr-defined]
        field.ClearField("options")
    for entry in message.nested_type:  # type: ignore[attr-defined]
        for field in entry.field:  # its own options (map_entry) stay: they make it a map
            field.ClearField("options")


if __name__ == "__main__":
    made = generate()
    if "--write" in sys.argv:
        OUT.write_bytes(made)
        print(f"wrote {OUT.relative_to(ROOT)} ({len(made)} bytes)")
    else:
        current = OUT.is_file() and OUT.read_bytes() == made
        print("current" if current else "stale: run with --write")
        sys.exit(0 if current else 1)
