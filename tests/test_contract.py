"""Extensions are entities, and every card's capabilities.extensions entry
is checked against them: each finding comes with its code, file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import edit, findings, line_of, one

STEWARD = "content/agent-blueprints/schema-steward.kno"
TRACE = "content/extensions/review-trace.kno"
Knoc = Callable[..., Any]


def test_the_example_repo_declares_its_extensions(knoc: Knoc, repo: Path) -> None:
    assert findings(knoc, repo) == (0, [])


def test_params_that_do_not_fit_the_schema_are_an_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "format: sarif", "format: pdf")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-PARAMS")
    assert code == 1 and d["severity"] == "error" and d["file"] == STEWARD
    assert d["line"] == line_of(repo, STEWARD, "params:") and "review-trace/v1" in d["message"]


def test_an_unknown_param_is_a_warning_for_forward_compatibility(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "format: sarif", "format: sarif\n          colour: blue")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-PARAMS-UNKNOWN")
    assert code == 0 and d["severity"] == "warning" and "`colour`" in d["message"]
    assert d["line"] == line_of(repo, STEWARD, "params:")


def test_an_unknown_uri_is_a_warning_naming_it(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "extensions/review-trace/v1", "extensions/review-trail/v1")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-UNKNOWN")
    assert code == 0 and "review-trail/v1" in d["message"]
    assert (d["file"], d["line"]) == (STEWARD, line_of(repo, STEWARD, "review-trail/v1"))


def test_the_same_uri_twice_on_a_card_is_an_error(knoc: Knoc, repo: Path) -> None:
    entry = "      - uri: https://possibility.space/extensions/review-trace/v1\n"
    edit(repo, STEWARD, entry, entry + "        params: {format: junit}\n" + entry)
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-DUPLICATE")
    assert code == 1 and d["line"] == line_of(repo, STEWARD, "review-trace/v1", occurrence=2)


def test_a_required_extension_needs_its_dependencies_declared(knoc: Knoc, repo: Path) -> None:
    edit(repo, TRACE, "required: false", "required: true\ndepends_on:\n  - https://possibility.space/extensions/audit/v1")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-DEPENDENCY")
    assert code == 1 and d["file"] == STEWARD and "audit/v1" in d["message"]
    assert d["line"] == line_of(repo, STEWARD, "review-trace/v1")


def test_a_versioned_extension_without_a_version_in_its_uri_is_a_warning(knoc: Knoc, repo: Path) -> None:
    edit(repo, TRACE, "extensions/review-trace/v1", "extensions/review-trace")
    edit(repo, STEWARD, "extensions/review-trace/v1", "extensions/review-trace")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-UNVERSIONED")
    assert code == 0 and (d["file"], d["line"]) == (TRACE, line_of(repo, TRACE, "uri:"))


@pytest.mark.parametrize("after", ["?a=1", "#part"])
def test_a_versioned_uri_with_a_query_or_fragment_keeps_its_version(knoc: Knoc, repo: Path, after: str) -> None:
    edit(repo, TRACE, "extensions/review-trace/v1", f"extensions/review-trace/v1{after}")
    edit(repo, STEWARD, "extensions/review-trace/v1", f"extensions/review-trace/v1{after}")
    _, diags = findings(knoc, repo)
    assert not [d for d in diags if d["code"] == "KNO-EXT-UNVERSIONED"], diags


def test_two_entities_for_one_uri_are_an_error(knoc: Knoc, repo: Path) -> None:
    copy = (repo / TRACE).read_text(encoding="utf-8").replace("01KKV1EXTREV1EWTRACE00000A", "01KKV1EXTREV1EWTRACE00000B")
    later = "content/extensions/trace-copy.kno"  # the later file by path is the one flagged
    (repo / later).write_text(copy.replace("slug: review-trace", "slug: trace-copy"), encoding="utf-8")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-DUPLICATE")
    assert code == 1 and (d["file"], d["line"]) == (later, line_of(repo, later, "uri:")) and TRACE in d["message"]


def test_a_params_schema_that_is_not_a_schema_is_an_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, TRACE, "params_schema:\n  type: object", "params_schema:\n  type: 12")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-SCHEMA")
    assert code == 1 and (d["file"], d["line"]) == (TRACE, line_of(repo, TRACE, "params_schema:"))


def test_generated_service_class_params_are_checked_too(knoc: Knoc, repo: Path) -> None:
    # The extension entity is the one place the classes are listed: narrowing
    # it makes the generated entry of a `utility` agent fail.
    edit(repo, "content/extensions/service-class.kno", "enum: [utility, principal, ephemeral]",
         "enum: [principal, ephemeral]")
    code, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-EXT-PARAMS"]
    assert code == 1 and hits and all(d["line"] == line_of(repo, d["file"], "service_class:") for d in hits)


# --- extension pages -------------------------------------------------------

PAGE = "build/site/possibility.space/extensions/review-trace/v1/index.html"


def test_each_extension_gets_a_page_at_its_uri(knoc: Knoc, repo: Path) -> None:
    assert knoc("build", root=repo)[0] == 0
    page = (repo / PAGE).read_text(encoding="utf-8")
    assert "<code>https://possibility.space/extensions/review-trace/v1</code>" in page
    assert "versioned: a breaking change gets a new URI" in page
    assert "&#34;format&#34;" in page and "&#34;sarif&#34;" in page  # the params schema, escaped
    assert ('<a href="https://agents.possibility.space/schema-steward/.well-known/agent-card.json">'
            "Schema Steward</a>") in page
    assert (repo / "build/site/connect.actex.ai/extensions/service-class/index.html").exists()


def test_an_extension_page_escapes_what_authors_write(knoc: Knoc, repo: Path) -> None:
    edit(repo, TRACE, 'title: "Review trace"', 'title: "<script>alert(1)</script>"')
    assert knoc("build", root=repo)[0] == 0
    page = (repo / PAGE).read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_private_extension_gets_no_page(knoc: Knoc, repo: Path) -> None:
    edit(repo, TRACE, "type: extension", "type: extension\nvisibility: private")
    assert knoc("build", root=repo)[0] == 0
    assert not (repo / PAGE).exists()
    assert "review-trace" not in (repo / "build/manifest.json").read_text(encoding="utf-8")


def test_knoc_knows_the_extensions_it_generates(knoc: Knoc, repo: Path) -> None:
    """A repo without a service-class entity gets no warning for the entries
    knoc writes itself, and the built-in schema still checks them."""
    (repo / "content/extensions/service-class.kno").unlink()
    assert findings(knoc, repo) == (0, [])
    assert knoc("build", root=repo)[0] == 0
    assert not (repo / "build/site/connect.actex.ai").exists()  # no entity, no page


def test_the_catalog_pages_escape_what_authors_write(knoc: Knoc, repo: Path) -> None:
    card = "content/agent-blueprints/catalog-search.kno"
    edit(repo, card, "name: Catalog Search", "name: \"<script>alert('n')</script> & co\"")
    edit(repo, card, "name: Find entities", 'name: "<img src=x onerror=alert(1)>"')
    assert knoc("build", root=repo)[0] == 0
    for page in ("build/site/index.html", "build/site/agents.possibility.space/index.html"):
        text = (repo / page).read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<img" not in text
        assert "&lt;script&gt;alert(&#39;n&#39;)&lt;/script&gt; &amp; co</a></h3>" in text  # the agent's item
        assert "<li>&lt;img src=x onerror=alert(1)&gt;</li>" in text  # its skill's name
        assert "&lt;script&gt;alert(&#39;n&#39;)&lt;/script&gt; &amp; co</a></li>" in text  # under its domains


def test_a_required_extension_left_optional_on_a_card_is_a_warning(knoc: Knoc, repo: Path) -> None:
    """Its page says a client must activate it; the card's entry, what a
    client reads, says it need not: the two are made to agree."""
    edit(repo, TRACE, "required: false", "required: true")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-EXT-REQUIRED")
    assert code == 0 and d["severity"] == "warning" and d["line"] == line_of(repo, STEWARD, "        required: false")
    edit(repo, STEWARD, "        required: false\n", "")  # left out: false, as every client reads it
    code, diags = findings(knoc, repo)
    assert one(diags, "KNO-EXT-REQUIRED")["line"] == line_of(repo, STEWARD, "review-trace/v1")
    edit(repo, STEWARD, "        description: Attaches", "        required: true\n        description: Attaches")
    assert findings(knoc, repo) == (0, [])


def test_a_required_extension_knoc_writes_the_entry_of_is_said_too(knoc: Knoc, repo: Path) -> None:
    """The service-class entry comes from `service_class`: a repo whose own
    service-class entity says it is required hears that its cards do not."""
    edit(repo, "content/extensions/service-class.kno", "required: false", "required: true")
    code, diags = findings(knoc, repo)
    said = [d for d in diags if d["code"] == "KNO-EXT-REQUIRED"]
    assert code == 0 and said and all("which knoc writes" in d["message"] for d in said)
