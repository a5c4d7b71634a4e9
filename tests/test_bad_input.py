"""One test per class of bad input: the diagnostic's code, file and line,
exit code 1, and build/ byte-identical after the failed build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import json_diags, tree

BP = "content/agent-blueprints"
STEWARD = f"{BP}/schema-steward.kno"
SENTINEL = f"{BP}/drift-sentinel.kno"
CONCIERGE = f"{BP}/realm-concierge.kno"


def replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return edit


def write(rel: str, data: bytes) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return edit


def line_of(root: Path, rel: str, needle: str) -> int:
    for number, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {rel}")


BOMB = b"$schema: perception-domain@0.1.0\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" .encode() + b", ".join([f"*{chr(97 + i)}".encode()] * 10) + b"]\n"
    for i in range(8))

# A spec that, unlike the example's, does not constrain slugs: knoc itself
# still refuses a slug that is not one safe path segment.
NOTE_SPEC = b"""$schema: kno@0.0.9
id: 01KKSY7A0000000000000N0TES
slug: note-schema
type: spec
version: 0.1.0
spec:
  status: Draft
  schema:
    type: object
    properties:
      $schema: {enum: ["note@0.1.0"]}
"""
NOTE = b"$schema: note@0.1.0\nid: 01KKSY7A0000000000000N0TE1\nslug: ../../etc\n"

CASES = {
    # --- load ------------------------------------------------------------
    "yaml-syntax": (replace(SENTINEL, "  name: Drift Sentinel", "  name: [Drift Sentinel"),
                    "KNO-YAML-SYNTAX", SENTINEL, None),
    "duplicate-key": (replace(SENTINEL, "service_class: ephemeral", "service_class: ephemeral\nservice_class: utility"),
                      "KNO-YAML-DUPLICATE-KEY", SENTINEL, "service_class: utility"),
    "tab-indent": (replace(SENTINEL, "  safety_level: standard", "\tsafety_level: standard"),
                   "KNO-YAML-TAB", SENTINEL, "\tsafety_level"),
    "not-utf8": (write(f"{BP}/latin1.kno", "$schema: agent-blueprint@0.2.0\nname: Caf\u00e9\n".encode("latin-1")),
                 "KNO-YAML-ENCODING", f"{BP}/latin1.kno", 2),
    "empty-file": (write(f"{BP}/empty.kno", b"# nothing here yet\n\n"), "KNO-YAML-EMPTY", f"{BP}/empty.kno", 1),
    "not-a-mapping": (write(f"{BP}/list.kno", b"- just\n- a list\n"), "KNO-YAML-NOT-MAPPING", f"{BP}/list.kno", 1),
    "alias-bomb": (write("content/perception-domains/bomb.kno", BOMB), "KNO-YAML-ALIAS-LIMIT",
                   "content/perception-domains/bomb.kno", 1),
    "unsupported-tag": (replace(SENTINEL, "version: 0.2.1", "version: !!binary aGVsbG8="),
                        "KNO-YAML-TAG", SENTINEL, "!!binary"),
    "tag-and-value-disagree": (replace(SENTINEL, "    streaming: true", "    streaming: !!bool maybe"),
                               "KNO-YAML-TAG", SENTINEL, "!!bool maybe"),
    "merge-into-itself": (write(f"{BP}/merge.kno", b"$schema: agent-blueprint@0.2.0\nbase: &b {x: 1, <<: *b}\n"),
                          "KNO-YAML-ALIAS-CYCLE", f"{BP}/merge.kno", 2),
    "key-is-a-list": (replace(SENTINEL, "  name: Drift Sentinel", "  ? [name]\n  : Drift Sentinel"),
                      "KNO-YAML-SYNTAX", SENTINEL, "? [name]"),
    # --- specs -----------------------------------------------------------
    "spec-not-a-schema": (replace("specs/perception-domain-schema.kno", "    type: object", "    type: objekt"),
                          "KNO-SPEC-SCHEMA", "specs/perception-domain-schema.kno", "type: objekt"),
    "spec-bad-ref": (replace("specs/perception-domain-schema.kno", "document-schema#/$defs/envelope",
                             "document-schema#/$defs/envelop"),
                     "KNO-SPEC-REF", "specs/perception-domain-schema.kno", "$defs/envelop"),
    # --- validate --------------------------------------------------------
    "unknown-type": (replace(SENTINEL, "$schema: agent-blueprint@0.4.0", "$schema: agent-bluprint@0.4.0"),
                     "KNO-TYPE-UNKNOWN", SENTINEL, "$schema"),
    "unaccepted-version": (replace(SENTINEL, "$schema: agent-blueprint@0.4.0", "$schema: agent-blueprint@0.9.0"),
                           "KNO-VERSION-UNACCEPTED", SENTINEL, "$schema"),
    "missing-field": (replace(SENTINEL, "  name: Drift Sentinel\n", ""), "KNO-SCHEMA-REQUIRED", SENTINEL,
                      "a2a_projection:"),
    "mistyped-field": (replace(SENTINEL, "    streaming: true", "    streaming: [yes]"),
                       "KNO-SCHEMA-TYPE", SENTINEL, "streaming: [yes]"),
    "unknown-field": (replace(SENTINEL, "  version: \"0.2.1\"", "  verison: \"0.2.1\""),
                      "KNO-SCHEMA-UNKNOWN-FIELD", SENTINEL, "verison"),
    "enum": (replace(SENTINEL, "lifecycle: ephemeral", "lifecycle: forever"), "KNO-SCHEMA-ENUM", SENTINEL,
             "lifecycle: forever"),
    "ulid": (replace(SENTINEL, "id: 01KKV1DR1FT5ENT1NE10000002", "id: 01KKV1DR1FT5ENT1NE1000000U"),
             "KNO-ID-ULID", SENTINEL, "id: 01KKV1"),
    "target-and-query": (replace(SENTINEL, '      target: "0"', '      target: "0"\n      target_query: "drift.count"'),
                         "KNO-GOAL-TARGET", SENTINEL, "target_query"),
    "tenant-without-slug": (replace(CONCIERGE, "  possibility_slug: acme-research\n", ""),
                            "KNO-OWNERSHIP-TENANT", CONCIERGE, "ownership:"),
    "service-class-unknown": (replace(SENTINEL, "service_class: ephemeral", "service_class: unknown"),
                              "KNO-SERVICE-CLASS", SENTINEL, "service_class: unknown"),
    "service-class-other": (replace(SENTINEL, "service_class: ephemeral", "service_class: premium"),
                            "KNO-SERVICE-CLASS", SENTINEL, "service_class: premium"),
    "type-mismatch": (replace(SENTINEL, "type: agent-blueprint", "type: agent-card"), "KNO-TYPE-MISMATCH",
                      SENTINEL, "type: agent-card"),
    # --- resolve ---------------------------------------------------------
    "duplicate-id": (replace(SENTINEL, "id: 01KKV1DR1FT5ENT1NE10000002", "id: 01KKV1S7EWARD0000000000001"),
                     "KNO-ID-DUPLICATE", STEWARD, "id: 01KKV1S7"),  # the later file (by path) is flagged
    "duplicate-slug": (replace(SENTINEL, "slug: drift-sentinel", "slug: schema-steward"), "KNO-SLUG-DUPLICATE",
                       STEWARD, "slug: schema-steward"),
    "missing-domain": (replace(SENTINEL, "domains: [entity-health, drift-surfaces]",
                               "domains: [entity-health, no-such-domain]"),
                       "KNO-RESOLVE-DOMAIN", SENTINEL, "no-such-domain"),
    "dangling-xri": (replace(STEWARD, '"kno://perception-domains/schemas"', '"kno://perception-domains/schemaz"'),
                     "KNO-RESOLVE-XRI", STEWARD, "schemaz"),
    "dangling-composes": (replace(STEWARD, "xri: kno://agent-blueprints/drift-sentinel",
                                  "xri: kno://agent-blueprints/drift-sentry"),
                          "KNO-RESOLVE-XRI", STEWARD, "drift-sentry"),
    "composes-non-agent": (replace(STEWARD, "xri: kno://agent-blueprints/drift-sentinel",
                                   "xri: kno://perception-domains/schemas"),
                           "KNO-RESOLVE-COMPOSES", STEWARD, "xri: kno://perception-domains/schemas"),
    "extends-cycle": (replace("specs/document-schema.kno", "relationships:\n  depends_on:",
                              'relationships:\n  extends:\n    - xri: "kno://specs/kno-spec"\n  depends_on:'),
                      "KNO-EXTENDS-CYCLE", "specs/document-schema.kno", 'xri: "kno://specs/kno-spec"'),
    "slug-format": (replace(SENTINEL, "slug: drift-sentinel", "slug: Drift_Sentinel"), "KNO-SCHEMA-PATTERN",
                    SENTINEL, "slug: Drift_Sentinel"),
    "unsafe-slug": (lambda root: (write("specs/note-schema.kno", NOTE_SPEC)(root),
                                  write("content/notes/escape.kno", NOTE)(root)),
                    "KNO-SLUG-UNSAFE", "content/notes/escape.kno", 3),
    # --- project ---------------------------------------------------------
    "skill-without-description": (replace(SENTINEL, "      description: Rebuilds a tree in memory and lists the files that drifted.\n", ""),
                                  "KNO-PROJECT-REQUIRED", SENTINEL, "- id: sweep"),
    "service-class-twice": (replace(STEWARD, "    extensions:\n", "    extensions:\n"
                                    "      - uri: https://connect.actex.ai/extensions/service-class\n"),
                            "KNO-SERVICE-CLASS-TWICE", STEWARD, "    extensions:"),
    "contract-by-hand": (replace(STEWARD, "    extensions:\n", "    extensions:\n"
                                 "      - uri: https://possibility.space/extensions/capability-contract/v1\n"),
                         "KNO-CONTRACT-BY-HAND", STEWARD, "capability-contract/v1"),
    "protocol-range-inverted": (replace(SENTINEL, 'max_protocol_version: "1.1"', 'max_protocol_version: "0.2"'),
                                "KNO-PROTOCOL-RANGE", SENTINEL, "max_protocol_version"),
    # --- capability contract (link stage) ----------------------------------
    "chain-requirement-unmet": (replace(STEWARD, "requires: [streaming, streaming_message]",
                                        "requires: [multi_tenant]"),
                                "KNO-CHAIN-REQUIRES", STEWARD, "requires:"),
    "unknown-requirement": (replace(STEWARD, "requires: [streaming, streaming_message]", "requires: [streeming]"),
                            "KNO-CAP-UNKNOWN", STEWARD, "requires:"),
    "chain-without-shared-protocol": (lambda root: (
        replace(SENTINEL, '  protocol_versions: ["1.0", "0.3"]\n', '  protocol_versions: ["1.1"]\n')(root),
        replace(SENTINEL, '  min_protocol_version: "0.3"\n  max_protocol_version: "1.1"\n', "")(root)),
                                      "KNO-CHAIN-PROTOCOL", SENTINEL, "xri: kno://agent-blueprints/catalog-search"),
    "duplicate-url": (replace(SENTINEL, "url: https://agents.possibility.space/drift-sentinel",
                              "url: https://agents.possibility.space/schema-steward"),
                      "KNO-URL-DUPLICATE", STEWARD, "url: https://agents.possibility.space/schema-steward"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_located_diagnostic_and_build_is_untouched(case: str, repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    edit, code, rel, line = CASES[case]
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")

    edit(repo)
    exit_code, out, _ = knoc("build", "--format", "json", root=repo)

    assert exit_code == 1
    hits = [d for d in json_diags(out) if d["code"] == code]
    assert hits, json_diags(out)
    assert hits[0]["file"] == rel
    if isinstance(line, str):
        line = line_of(repo, rel, line)
    if line is not None:
        assert hits[0]["line"] == line
    assert hits[0]["column"] >= 1 and hits[0]["message"] and hits[0]["severity"] == "error"
    assert tree(repo / "build") == before


def test_boundary_wording_is_a_warning_and_the_build_succeeds(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    replace(SENTINEL, "- MUST NOT modify .kno files directly", "- Please be careful with .kno files")(repo)
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 0
    [diag] = json_diags(out)
    assert (diag["code"], diag["severity"], diag["line"]) == (
        "KNO-BOUNDARY-WORDING", "warning", line_of(repo, SENTINEL, "Please be careful"))
    assert diag["column"] == 7


def test_recursive_alias_is_refused(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    write("content/perception-domains/loop.kno", b"$schema: perception-domain@0.1.0\nsources: &s [*s]\n")(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and json_diags(out)[0]["code"] == "KNO-YAML-ALIAS-CYCLE"


def test_text_diagnostic_shows_the_source_line_and_a_caret(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    CASES["missing-domain"][0](repo)
    code, _, err = knoc("validate", root=repo)
    assert code == 1
    assert "error[KNO-RESOLVE-DOMAIN]: perception domain `no-such-domain` does not exist" in err
    assert f"--> {SENTINEL}:{line_of(repo, SENTINEL, 'no-such-domain')}:" in err
    assert "    domains: [entity-health, no-such-domain]" in err
    assert "^" * len("no-such-domain") in err
    assert "= help: did you mean" in err or "= help: add content/perception-domains/no-such-domain.kno" in err
    assert err.rstrip().endswith("(nothing written)")
