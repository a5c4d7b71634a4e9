"""A2A protocol versions ("1.0", "0.3.0"), which cards carry and compare
with `packaging.version`, so "1.0" and "1.0.0" are one version (entity
versions are semver: `knoc.rules.version`)."""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

PROTOCOL = re.compile(r"^\d+\.\d+(\.\d+)?$")  # what a card's protocol version may be
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
