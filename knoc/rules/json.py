"""The types of a parsed JSON (or YAML-as-JSON) value, named once for every
layer: what `json.loads` and knoc's own YAML reader hand back, and what
knoc writes out. A value of unknown shape (hostile input) is `object`
until an isinstance check says more; these name what a check has already
established, or what knoc builds itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonScalar: TypeAlias = bool | int | float | str | None
JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]
JsonArray: TypeAlias = list[JsonValue]

# A read-only view, for a function that only reads: a dict of narrower values
# (`dict[str, str]`, `dict[str, JsonObject]`) is one, where it is not a JsonValue.
JsonReadable: TypeAlias = JsonScalar | Sequence["JsonReadable"] | Mapping[str, "JsonReadable"]
