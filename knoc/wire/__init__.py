"""The public contract: Pydantic models of what an A2A card may contain.

Every model forbids extra fields, so only a field named here can ever reach a
published card: persona, goals, boundaries, budgets, ownership and provenance
cannot leak by accident (seed 002's principle)."""

from knoc.wire import compat, v03, v10

TARGETS = ("1.0", "0.3", "compat")

__all__ = ["TARGETS", "compat", "v03", "v10"]
