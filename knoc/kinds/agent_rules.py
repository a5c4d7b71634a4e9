"""The agent kind's own rules, kept beside the kind: the schema errors an
agent's author gets a code of their own for, and the one rule a schema
cannot say (how a boundary is worded). One function per code."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from knoc.diagnostics import Diagnostic, JsonPath, at
from knoc.kinds.entity import Typed

BOUNDARY_PREFIXES = ("MUST NOT", "SHOULD NOT")


class SchemaFinding(NamedTuple):
    """What a schema error means for an agent, where to point (at the key,
    or at the value) and what to do."""

    code: str
    message: str
    at: JsonPath
    key: bool
    hint: str


# (keyword, path, instance, the missing field of a `required` error) -> a finding, or None: not this rule's.
SchemaRule = Callable[[str, JsonPath, object, "str | None"], "SchemaFinding | None"]


def tenant_without_realm(keyword: str, path: JsonPath, instance: object, missing: str | None) -> SchemaFinding | None:
    if keyword != "required" or missing != "possibility_slug" or path[-1:] != ("ownership",):
        return None
    return SchemaFinding("KNO-OWNERSHIP-TENANT", "tenant-owned agent lacks `possibility_slug`", path, True,
                         "name the realm with `possibility_slug`, or use `context: platform`")


def undeclarable_service_class(keyword: str, path: JsonPath, instance: object,
                               missing: str | None) -> SchemaFinding | None:
    if keyword != "enum" or path[-1:] != ("service_class",):
        return None
    hint = ("`unknown` is what an agent without `service_class` is; it cannot be declared. "
            "Remove the key or choose utility, principal or ephemeral"
            if instance == "unknown" else "choose utility, principal or ephemeral")
    return SchemaFinding("KNO-SERVICE-CLASS", f"`{instance}` is not a service class", path, False, hint)


def goal_with_two_targets(keyword: str, path: JsonPath, instance: object, missing: str | None) -> SchemaFinding | None:
    if keyword != "not" or not isinstance(instance, dict) or not {"target", "target_query"} <= instance.keys():
        return None
    return SchemaFinding("KNO-GOAL-TARGET", "`target` and `target_query` are mutually exclusive",
                         (*path, "target_query"), True,
                         "keep `target` for a literal value or `target_query` for a dynamic one")


SCHEMA_RULES: tuple[SchemaRule, ...] = (tenant_without_realm, undeclarable_service_class, goal_with_two_targets)


def schema_finding(keyword: str, path: JsonPath, instance: object, missing: str | None = None) -> SchemaFinding | None:
    """The first agent rule that claims this schema error."""
    return next((found for rule in SCHEMA_RULES if (found := rule(keyword, path, instance, missing))), None)


def boundary_wording(t: Typed) -> Iterable[Diagnostic]:
    """KNO-BOUNDARY-WORDING: a boundary says whether it is a rule or advice."""
    persona = t.data.get("persona")
    base: tuple[str, ...] = ("persona",) if isinstance(persona, dict) else ()
    holder = persona if isinstance(persona, dict) else t.data
    boundaries = holder.get("boundaries")
    if not isinstance(boundaries, list):
        return
    for i, text in enumerate(boundaries):
        if isinstance(text, str) and not text.lstrip().startswith(BOUNDARY_PREFIXES):
            yield at(t.source, (*base, "boundaries", i), "KNO-BOUNDARY-WORDING",
                     "a boundary should start with MUST NOT or SHOULD NOT",
                     "say whether it is a hard rule (MUST NOT) or advice (SHOULD NOT)")
