"""knoc: the compiler for KNO content repos.

The Python API is what this package exports, and nothing else:

    import knoc
    build = knoc.compile("path/to/repo")          # knoc.Build: cards, files, diagnostics
    index = knoc.DomainIndex.load("build/index/domains.json")
    index.agents_for("schemas")                   # the public agents that perceive a domain

Every module under `knoc.` is internal and may change in any release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoc.version import __version__

if TYPE_CHECKING:
    from knoc.api import Build, ConfigError, Diagnostic, DomainIndex, compile

__all__ = ["Build", "ConfigError", "Diagnostic", "DomainIndex", "__version__", "compile"]


def __getattr__(name: str) -> object:
    """The API loads on first use: `knoc --version` and the CLI's start-up
    do not pay for the compiler."""
    if name in __all__:
        from knoc import api

        return getattr(api, name)
    raise AttributeError(f"module 'knoc' has no attribute {name!r}")
