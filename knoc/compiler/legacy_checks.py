"""What the 0.3-shaped part of a build says to the clients that read it:
what agent.json and a compat card's 0.3 fields leave out, why agent.json
is not written, and what a2a-sdk 0.2 (the client agent.json is kept for)
cannot read of it. Each finding points into the agent's entity."""

from __future__ import annotations

import json

from knoc.a2a import capability
from knoc.a2a.capability import version_key
from knoc.a2a.fields import CardFields
from knoc.a2a.targets import v03
from knoc.a2a.targets.base import Target
from knoc.compiler.card_checks import card_error
from knoc.diagnostics import Diagnostic, JsonPath
from knoc.kinds.agent import Agent


def legacy_dropped(agent: Agent, fields: CardFields, target: Target, written: object) -> list[Diagnostic]:
    """What the 0.3-shaped part of a build (agent.json, the compat card's 0.3
    fields) leaves out, what a2a-sdk 0.2 cannot read of agent.json, or why
    agent.json is not written."""
    if fields.legacy_view is None:
        return []  # no 0.3 part: KNO-LEGACY-VIEW said it
    if not written:
        return [] if target.legacy_shaped else [
            card_error(agent, path, "KNO-LEGACY-VIEW", f"agent.json is not written: in the 0.3 card it would hold, "
                       f"{what}", "give the scheme a flow A2A 0.3 has, if 0.3 clients may call it")
            for path, what in v03.refused(fields)]
    if target.legacy_shaped:  # the 0.3 target's own `dropped` says what its card leaves out
        return _unread_by_0_2(agent, fields)
    part = ("agent.json (the card 0.2 clients read)" if target.legacy
            else "the card's 0.3 fields (what 0.3 clients read)")
    # A compat card's schemes carry 1.0's flow and PKCE in their 0.3 fields too, where a2a-sdk 1.x reads them.
    carried = set() if target.legacy else {path for path, _ in v03.only_1_0(fields)}
    return _unread_by_0_2(agent, fields) + [
        card_error(agent, path, "KNO-PROJECT-DROPPED", _carried(path, what) if path in carried else
                   f"{what} cannot be carried by {part} and is left out of it; 1.0 clients still read it",
                   "nothing to do if 0.2 and 0.3 clients need not use it")
        for path, what in v03.legacy_part(fields)]


def _unread_by_0_2(agent: Agent, fields: CardFields) -> list[Diagnostic]:
    """What a2a-sdk 0.2, the client agent.json is kept for, cannot read of
    it (A2A 0.2 has none of these): a mutual TLS scheme fails the whole
    card; a skill's own requirements and an OAuth metadata url it ignores.
    None of it once the card says it serves no 0.2 client (a
    `min_protocol_version` of 0.3 or later)."""
    low = capability.optional_str(agent.card.get("min_protocol_version"))
    if low and version_key(low) >= version_key("0.3"):
        return []
    nothing = "state `min_protocol_version: \"0.3\"` if 0.2 clients need not use it"
    found = [card_error(agent, ("security_schemes", name), "KNO-LEGACY-VIEW", f"a2a-sdk 0.2 cannot read agent.json: "
                        f"the scheme `{name}` is mutual TLS, which A2A 0.2 has not, so 0.2 clients cannot use this "
                        "agent (0.3 and 1.x clients read it)", nothing)
             for name, scheme in fields.schemes.items() if scheme.get("type") == "mutualTLS"]
    found += [card_error(agent, ("skills", i, "security"), "KNO-LEGACY-VIEW", f"a2a-sdk 0.2 ignores a skill's "
                         f"`security` in agent.json: its clients read the card's requirements for skill `{s.id}`, "
                         + ("none: open" if not fields.security or {} in fields.security
                            else f"`{json.dumps(fields.security)}`"), "if 0.2 clients may call it, give the card's "
                         "`security` what this skill needs too; else state `min_protocol_version: \"0.3\"`")
              for i, s in enumerate(fields.skills) if s.security is not None and s.security != fields.security]
    found += [card_error(agent, ("security_schemes", name, "oauth2_metadata_url"), "KNO-LEGACY-VIEW",
                         f"a2a-sdk 0.2 ignores `oauth2_metadata_url` of `{name}` in agent.json: its clients find "
                         "the OAuth endpoints in the scheme's flows alone", nothing)
              for name, scheme in fields.schemes.items() if scheme.get("oauth2_metadata_url")]
    return found


def _carried(path: JsonPath, what: str) -> str:
    if len(path) == 2:  # ("security_schemes", name): a scheme whose every flow is 1.0's
        return (f"the scheme `{path[1]}` has only a flow of A2A 1.0: 0.3 clients cannot use it, so the card's 0.3 "
                "`security` leaves out every requirement alternative naming it; 1.x clients read the scheme, its "
                "flow and those requirements")
    return f"{what}: 0.3 clients ignore it (A2A 0.3 has no such flow or field); 1.x clients read it"


def compat_read_raw(agent: Agent, fields: CardFields, target: Target) -> list[Diagnostic]:
    """A compat card with security schemes: the JS SDK leaves it unconverted
    (each scheme has 0.3's `type`), so its typed schemes are none."""
    if target.name != "compat" or fields.legacy_view is None or not fields.schemes:
        return []  # no 0.3 fields (a 1.0 card, converted), or no scheme to read otherwise
    where = "security_schemes" if agent.card.get("security_schemes") else "authentication"  # the legacy one
    return [card_error(agent, (where,), "KNO-COMPAT-JS", "the JS SDK reads this compat card as it is, "
                       "unconverted (its schemes carry 0.3's `type`): an application reading a scheme's typed form "
                       "(`scheme.$case`) finds none; a2a-sdk 1.x and 0.3 read the schemes",
                       "build with `--a2a 1.0` if JS applications read the schemes (0.3 clients then read "
                       "agent.json), or read them raw there; if none do, accept it (`[accept]` in knoc.toml)")]
