"""Slugs: an entity's name within its kind, used as one output path segment."""

from __future__ import annotations

import re

PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # document-schema's `slug` (kebab-case)
WHAT = "lowercase letters, digits and single hyphens (kebab-case, e.g. `night-watch`)"
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
MAX_LENGTH = 100  # document-schema's `maxLength`


def is_slug(value: str) -> bool:
    return PATTERN.match(value) is not None


def slugify(text: str) -> str:
    """The slug of a free-text name ("Night Watch!" -> "night-watch"); "" if none."""
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:MAX_LENGTH].strip("-")
