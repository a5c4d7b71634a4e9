"""Versions. Two kinds, deliberately apart:

- A2A protocol versions ("1.0", "0.3.0") compare with `packaging.version`,
  so "1.0" and "1.0.0" are one version.
- Entity versions are Semantic Versioning 2.0 (document-schema's pattern).
  packaging implements PEP 440, which parses some semver strings
  differently (`1.0.0-alpha.1` is a pre-release there, `1.0.0-x.y` is
  refused), so semver validity and precedence are checked here by the
  semver grammar, and only the numeric core is ordered."""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

PROTOCOL = re.compile(r"^\d+\.\d+(\.\d+)?$")  # what a card's protocol version may be
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_UNPARSABLE = Version("0.dev0")  # sorts below every real version


@lru_cache(maxsize=256)
def protocol_key(version: str) -> Version:
    """The order of A2A protocol versions; anything malformed sorts first."""
    if not PROTOCOL.match(version):
        return _UNPARSABLE
    try:
        return Version(version)
    except InvalidVersion:  # pragma: no cover - PROTOCOL admits only dotted digits
        return _UNPARSABLE


def major_minor(version: str) -> str:
    """A protocol version as cards carry it: "1.0.0" is "1.0" (A2A 1.0,
    section 3.6: patch numbers do not appear in cards). Anything that is
    not a protocol version is returned as it is, for the checks to name."""
    return ".".join(version.split(".")[:2]) if PROTOCOL.match(version) else version


def is_semver(version: str) -> bool:
    return SEMVER.match(version) is not None


def semver_key(version: str) -> tuple[int, int, int]:
    """The numeric core of a semver, for ordering a spec's accepted versions."""
    m = SEMVER.match(version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (-1, -1, -1)
