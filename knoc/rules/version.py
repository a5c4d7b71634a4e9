"""Entity versions: Semantic Versioning 2.0 (document-schema's pattern).
packaging implements PEP 440, which parses some semver strings
differently (`1.0.0-alpha.1` is a pre-release there, `1.0.0-x.y` is
refused), so semver validity and precedence are checked here by the
semver grammar, and only the numeric core is ordered. A2A protocol
versions are the protocol's own (`knoc.a2a.protocol`)."""

from __future__ import annotations

import re

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def is_semver(version: str) -> bool:
    return SEMVER.match(version) is not None


def semver_key(version: str) -> tuple[int, int, int]:
    """The numeric core of a semver, for ordering a spec's accepted versions."""
    m = SEMVER.match(version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (-1, -1, -1)


def bump_shown(bump: str) -> str:
    """A version bump (`none`, `patch`, `minor`, `major`, `down`, `invalid`)
    as `knoc specs check` and `knoc diff` show it."""
    return "(no bump)" if bump == "none" else f"({bump} bump)"
