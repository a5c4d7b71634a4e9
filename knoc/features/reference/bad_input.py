"""Bad input, one case per class of mistake, as edits to the example
content repo (knoc's own `content/` and `specs/`): the test suite holds
each to its code, file, line and severity (an error fails the build and
leaves build/ as it was; a warning does neither), and the diagnostics
reference shows what knoc prints for it
(`knoc.app.reference.diagnostic_examples`)."""

from __future__ import annotations

from typing import NamedTuple


class Replace(NamedTuple):
    """Replace the first `old` in the file at `rel` with `new`."""

    rel: str
    old: str
    new: str


class Write(NamedTuple):
    """Write the file at `rel`."""

    rel: str
    data: bytes


Edit = Replace | Write


class Case(NamedTuple):
    edits: tuple[Edit, ...]
    code: str  # the code it gives
    rel: str  # the file the finding names
    line: int | str | None  # its line, or text on that line (None: not checked)


BP = "content/agent-blueprints"
STEWARD = f"{BP}/schema-steward.kno"
SENTINEL = f"{BP}/drift-sentinel.kno"
REALM = f"{BP}/realm-concierge.kno"
CONCIERGE = f"{BP}/realm-concierge.kno"
SEARCH = f"{BP}/catalog-search.kno"
REVIEW_TRACE = "content/extensions/review-trace.kno"

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

_RAW: dict[str, tuple[Edit | tuple[Edit, ...], str, str, int | str | None]] = {
    # --- load ------------------------------------------------------------
    "yaml-syntax": (Replace(SENTINEL, "  name: Drift Sentinel", "  name: [Drift Sentinel"),
                    "KNO-YAML-SYNTAX", SENTINEL, None),
    "duplicate-key": (Replace(SENTINEL, "service_class: ephemeral", "service_class: ephemeral\nservice_class: utility"),
                      "KNO-YAML-DUPLICATE-KEY", SENTINEL, "service_class: utility"),
    "tab-indent": (Replace(SENTINEL, "  safety_level: standard", "\tsafety_level: standard"),
                   "KNO-YAML-TAB", SENTINEL, "\tsafety_level"),
    "line-separator": (Replace(SENTINEL, "  name: Drift Sentinel", "  name: Drift\u2028Sentinel"),
                       "KNO-YAML-LINE-BREAK", SENTINEL, "name: Drift"),
    "not-utf8": (Write(f"{BP}/latin1.kno", "$schema: agent-blueprint@0.2.0\nname: Caf\u00e9\n".encode("latin-1")),
                 "KNO-YAML-ENCODING", f"{BP}/latin1.kno", 2),
    "empty-file": (Write(f"{BP}/empty.kno", b"# nothing here yet\n\n"), "KNO-YAML-EMPTY", f"{BP}/empty.kno", 1),
    "not-a-mapping": (Write(f"{BP}/list.kno", b"- just\n- a list\n"), "KNO-YAML-NOT-MAPPING", f"{BP}/list.kno", 1),
    "alias-bomb": (Write("content/perception-domains/bomb.kno", BOMB), "KNO-YAML-ALIAS-LIMIT",
                   "content/perception-domains/bomb.kno", 1),
    "unsupported-tag": (Replace(SENTINEL, "version: 0.2.1", "version: !!binary aGVsbG8="),
                        "KNO-YAML-TAG", SENTINEL, "!!binary"),
    "tag-and-value-disagree": (Replace(SENTINEL, "    streaming: true", "    streaming: !!bool maybe"),
                               "KNO-YAML-TAG", SENTINEL, "!!bool maybe"),
    "merge-into-itself": (Write(f"{BP}/merge.kno", b"$schema: agent-blueprint@0.2.0\nbase: &b {x: 1, <<: *b}\n"),
                          "KNO-YAML-ALIAS-CYCLE", f"{BP}/merge.kno", 2),
    "key-is-a-list": (Replace(SENTINEL, "  name: Drift Sentinel", "  ? [name]\n  : Drift Sentinel"),
                      "KNO-YAML-SYNTAX", SENTINEL, "? [name]"),
    "unclosed-quote": (Replace(SENTINEL, "  name: Drift Sentinel", '  name: "Drift Sentinel'), "KNO-YAML-SYNTAX",
                       SENTINEL, 'name: "Drift Sentinel'),
    "merge-conflict": (Replace(SENTINEL, "  name: Drift Sentinel", "<<<<<<< HEAD\n  name: Drift Sentinel\n=======\n"
                                                                   "  name: Drift Watch\n>>>>>>> feature"),
                       "KNO-YAML-SYNTAX", SENTINEL, "<<<<<<< HEAD"),
    # --- specs -----------------------------------------------------------
    "spec-not-a-schema": (Replace("specs/perception-domain-schema.kno", "    type: object", "    type: objekt"),
                          "KNO-SPEC-SCHEMA", "specs/perception-domain-schema.kno", "type: objekt"),
    "spec-bad-ref": (Replace("specs/perception-domain-schema.kno", "document-schema#/$defs/envelope",
                             "document-schema#/$defs/envelop"),
                     "KNO-SPEC-REF", "specs/perception-domain-schema.kno", "$defs/envelop"),
    # --- validate --------------------------------------------------------
    "unknown-type": (Replace(SENTINEL, "$schema: agent-blueprint@0.4.0", "$schema: agent-bluprint@0.4.0"),
                     "KNO-TYPE-UNKNOWN", SENTINEL, "$schema"),
    "unaccepted-version": (Replace(SENTINEL, "$schema: agent-blueprint@0.4.0", "$schema: agent-blueprint@0.9.0"),
                           "KNO-VERSION-UNACCEPTED", SENTINEL, "$schema"),
    "missing-field": (Replace(SENTINEL, "  name: Drift Sentinel\n", ""), "KNO-SCHEMA-REQUIRED", SENTINEL,
                      "a2a_projection:"),
    "mistyped-field": (Replace(SENTINEL, "    streaming: true", "    streaming: [yes]"),
                       "KNO-SCHEMA-TYPE", SENTINEL, "streaming: [yes]"),
    "unknown-field": (Replace(SENTINEL, "  version: \"0.2.1\"", "  verison: \"0.2.1\""),
                      "KNO-SCHEMA-UNKNOWN-FIELD", SENTINEL, "verison"),
    "enum": (Replace(SENTINEL, "lifecycle: ephemeral", "lifecycle: forever"), "KNO-SCHEMA-ENUM", SENTINEL,
             "lifecycle: forever"),
    "ulid": (Replace(SENTINEL, "id: 01KKV1DR1FT5ENT1NE10000002", "id: 01KKV1DR1FT5ENT1NE1000000U"),
             "KNO-ID-ULID", SENTINEL, "id: 01KKV1"),
    "target-and-query": (Replace(SENTINEL, '      target: "0"', '      target: "0"\n      target_query: "drift.count"'),
                         "KNO-GOAL-TARGET", SENTINEL, "target_query"),
    "tenant-without-slug": (Replace(CONCIERGE, "  possibility_slug: acme-research\n", ""),
                            "KNO-OWNERSHIP-TENANT", CONCIERGE, "ownership:"),
    "service-class-unknown": (Replace(SENTINEL, "service_class: ephemeral", "service_class: unknown"),
                              "KNO-SERVICE-CLASS", SENTINEL, "service_class: unknown"),
    "service-class-other": (Replace(SENTINEL, "service_class: ephemeral", "service_class: premium"),
                            "KNO-SERVICE-CLASS", SENTINEL, "service_class: premium"),
    "type-mismatch": (Replace(SENTINEL, "type: agent-blueprint", "type: agent-card"), "KNO-TYPE-MISMATCH",
                      SENTINEL, "type: agent-card"),
    # --- resolve ---------------------------------------------------------
    "duplicate-id": (Replace(SENTINEL, "id: 01KKV1DR1FT5ENT1NE10000002", "id: 01KKV1S7EWARD0000000000001"),
                     "KNO-ID-DUPLICATE", STEWARD, "id: 01KKV1S7"),  # the later file (by path) is flagged
    "duplicate-slug": (Replace(SENTINEL, "slug: drift-sentinel", "slug: schema-steward"), "KNO-SLUG-DUPLICATE",
                       STEWARD, "slug: schema-steward"),
    "missing-domain": (Replace(SENTINEL, "domains: [entity-health, drift-surfaces]",
                               "domains: [entity-health, no-such-domain]"),
                       "KNO-RESOLVE-DOMAIN", SENTINEL, "no-such-domain"),
    "auth-url-relative": (Replace(STEWARD, "token_url: https://auth.possibility.space/realms/platform/protocol/"
                                           "openid-connect/token", "token_url: /protocol/openid-connect/token"),
                          "KNO-CARD-AUTH-URL", STEWARD, "token_url: /protocol"),
    "dangling-xri": (Replace(STEWARD, '"kno://perception-domains/schemas"', '"kno://perception-domains/schemaz"'),
                     "KNO-RESOLVE-XRI", STEWARD, "schemaz"),
    "dangling-composes": (Replace(STEWARD, "xri: kno://agent-blueprints/drift-sentinel",
                                  "xri: kno://agent-blueprints/drift-sentry"),
                          "KNO-RESOLVE-XRI", STEWARD, "drift-sentry"),
    "composes-non-agent": (Replace(STEWARD, "xri: kno://agent-blueprints/drift-sentinel",
                                   "xri: kno://perception-domains/schemas"),
                           "KNO-RESOLVE-COMPOSES", STEWARD, "xri: kno://perception-domains/schemas"),
    "extends-cycle": (Replace("specs/document-schema.kno", "relationships:\n  depends_on:",
                              'relationships:\n  extends:\n    - xri: "kno://specs/kno-spec"\n  depends_on:'),
                      "KNO-EXTENDS-CYCLE", "specs/document-schema.kno", 'xri: "kno://specs/kno-spec"'),
    "slug-format": (Replace(SENTINEL, "slug: drift-sentinel", "slug: Drift_Sentinel"), "KNO-SCHEMA-PATTERN",
                    SENTINEL, "slug: Drift_Sentinel"),
    "unsafe-slug": ((Write("specs/note-schema.kno", NOTE_SPEC), Write("content/notes/escape.kno", NOTE)),
                    "KNO-SLUG-UNSAFE", "content/notes/escape.kno", 3),
    # --- project ---------------------------------------------------------
    "skill-without-description": (Replace(SENTINEL, "      description: Rebuilds a tree in memory and lists the "
                                          "files that drifted.\n", ""),
                                  "KNO-PROJECT-REQUIRED", SENTINEL, "- id: sweep"),
    "skill-id-twice": (Replace(REALM, "    - id: role-admin\n", "    - id: account-help\n"), "KNO-SKILL-DUPLICATE",
                       REALM, 49),
    "api-key-nameless": (Replace(REALM, "      type: openIdConnect\n      open_id_connect_url: https://auth.possibility."
                                 "space/realms/acme/.well-known/openid-configuration\n",
                                 "      type: apiKey\n      in: header\n      name: \"\"\n"),
                         "KNO-PROJECT-AUTH", REALM, 'name: ""'),
    "service-class-twice": (Replace(STEWARD, "    extensions:\n", "    extensions:\n"
                                    "      - uri: https://connect.actex.ai/extensions/service-class\n"),
                            "KNO-SERVICE-CLASS-TWICE", STEWARD, "    extensions:"),
    "contract-by-hand": (Replace(STEWARD, "    extensions:\n", "    extensions:\n"
                                 "      - uri: https://possibility.space/extensions/capability-contract/v1\n"),
                         "KNO-CONTRACT-BY-HAND", STEWARD, "capability-contract/v1"),
    "protocol-range-inverted": (Replace(SENTINEL, 'max_protocol_version: "1.1"', 'max_protocol_version: "0.2"'),
                                "KNO-PROTOCOL-RANGE", SENTINEL, "max_protocol_version"),
    # --- capability contract (link stage) ----------------------------------
    "chain-requirement-unmet": (Replace(STEWARD, "requires: [streaming, streaming_message]",
                                        "requires: [multi_tenant]"),
                                "KNO-CHAIN-REQUIRES", STEWARD, "requires:"),
    "unknown-requirement": (Replace(STEWARD, "requires: [streaming, streaming_message]", "requires: [streeming]"),
                            "KNO-CAP-UNKNOWN", STEWARD, "requires:"),
    "chain-without-shared-protocol": ((
        Replace(SENTINEL, '  protocol_versions: ["1.0", "0.3"]\n', '  protocol_versions: ["1.1"]\n'),
        Replace(SENTINEL, '  min_protocol_version: "0.3"\n  max_protocol_version: "1.1"\n', "")),
                                      "KNO-CHAIN-PROTOCOL", SENTINEL, "xri: kno://agent-blueprints/catalog-search"),
    "duplicate-url": (Replace(SENTINEL, "url: https://agents.possibility.space/drift-sentinel",
                              "url: https://agents.possibility.space/schema-steward"),
                      "KNO-URL-DUPLICATE", STEWARD, "url: https://agents.possibility.space/schema-steward"),
    "declaration-missing": (Replace(SENTINEL, "$schema: agent-blueprint@", "schema: agent-blueprint@"),
                            "KNO-DECL-MISSING", SENTINEL, 1),
    "declaration-format": (Replace(SENTINEL, "$schema: agent-blueprint@", "$schema: agent blueprint@"),
                           "KNO-DECL-FORMAT", SENTINEL, "$schema: agent blueprint@"),
    "number-too-large": (Replace(SENTINEL, '  version: "0.2.1"', "  version: 1e999"),
                         "KNO-YAML-NUMBER", SENTINEL, "version: 1e999"),
    # --- warnings: the build goes on, and says what a client will see -----
    "comment-cuts-value": (Replace(SENTINEL, "  description: ", "  description: Fixes issue #42: "),
                           "KNO-YAML-COMMENT", SENTINEL, "Fixes issue #42"),
    "comment-line-cuts-value": (Replace(SENTINEL, "and reports drift.\n", "and reports drift,\n    #1 in its class.\n"),
                                "KNO-YAML-COMMENT", SENTINEL, "#1 in its class."),
    "url-local": (Replace(SENTINEL, "url: https://agents.possibility.space/drift-sentinel",
                          "url: http://localhost:8080/drift-sentinel"),
                  "KNO-CARD-URL-LOCAL", SENTINEL, "url: http://localhost"),
    "url-http": (Replace(SEARCH, "url: https://agents.possibility.space/catalog-search",
                         "url: http://agents.possibility.space/catalog-search"),
                 "KNO-CARD-URL-HTTP", SEARCH, "url: http://agents"),
    "grpc-url": (Replace(SEARCH, "url: grpc.agents.possibility.space:443", "url: https://grpc.agents.possibility.space"),
                 "KNO-CARD-GRPC-ADDRESS", SEARCH, "url: https://grpc.agents"),
    "binding-spelling": (Replace(SEARCH, "transport: HTTP+JSON", "transport: REST"),
                         "KNO-CARD-BINDING", SEARCH, "transport: REST"),
    "protocol-patch": (Replace(SEARCH, 'protocol_versions: ["1.0"]  # the main',
                               'protocol_versions: ["1.0.1"]  # the main'),
                       "KNO-PROTOCOL-PATCH", SEARCH, '["1.0.1"]'),
    "capability-left-out": (Replace(SEARCH, "    streaming_message: true",
                                    "    streaming_message: true\n    state_transition_history: true"),
                            "KNO-PROJECT-DROPPED", SEARCH, "state_transition_history"),
    "placeholder": (Replace(SEARCH, "description: Returns entities matching a query, ranked by relevance.",
                            "description: What the skill does."),
                    "KNO-CARD-PLACEHOLDER", SEARCH, "description: What the skill does."),
    "auth-url-http": (Replace(STEWARD, "token_url: https://auth.possibility.space",
                              "token_url: http://auth.possibility.space"),
                      "KNO-CARD-AUTH-HTTP", STEWARD, "token_url: http://"),
    "extension-unknown": (Replace(REVIEW_TRACE, "review-trace/v1", "review-trace/v2"),
                          "KNO-EXT-UNKNOWN", STEWARD, "review-trace/v1"),
    "extension-no-page": (Replace(REVIEW_TRACE, "uri: https://possibility.space/extensions/review-trace/v1",
                                  "uri: https://possibility.space/.well-known/review-trace/v1"),
                          "KNO-EXTENSION-NO-PAGE", REVIEW_TRACE, "uri: "),
    "extension-page-on-host-root": (Replace(REVIEW_TRACE, "uri: https://possibility.space/extensions/review-trace/v1",
                                            "uri: https://agents.possibility.space"),
                                    "KNO-CATALOG-PAGE-TAKEN", REVIEW_TRACE, "uri: "),
}

CASES = {name: Case((edits,) if isinstance(edits, (Replace, Write)) else edits, code, rel, line)
         for name, (edits, code, rel, line) in _RAW.items()}
