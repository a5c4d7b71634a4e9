"""The card fields of one agent after defaults and derivations, in no
target's shape yet: what every target's `build` turns into its wire model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knoc.a2a.wire import AgentExtension, AgentProvider, AgentSkill

DEFAULT_MODES = ["text/plain"]
DEFAULT_TRANSPORT = "JSONRPC"


@dataclass
class CardFields:
    name: str
    description: str
    url: str
    version: str
    transport: str
    main_versions: tuple[str, ...]  # protocol versions of the main url
    interfaces: list[dict[str, Any]]  # each with its `protocol_versions`
    provider: AgentProvider | None
    documentation_url: str | None
    icon_url: str | None
    streaming: bool | None
    push_notifications: bool | None
    state_transition_history: bool | None
    extended_agent_card: bool | None
    extensions: list[AgentExtension]
    schemes: dict[str, dict[str, Any]]  # security schemes, 0.3-style (`type`), snake_case
    security: list[dict[str, list[str]]]
    input_modes: list[str]
    output_modes: list[str]
    skills: list[AgentSkill] = field(default_factory=list)
