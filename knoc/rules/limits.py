"""Every limit knoc holds hostile or broken input to, declared once
(docs/concepts/limits.md lists them). Each is far above what a real
content repo needs; past one, the input gets a diagnostic, never a crash,
a hang or unbounded memory."""

from __future__ import annotations

from knoc.rules.paths import HOST_BYTES as DNS_NAME_BYTES
from knoc.rules.paths import PATH_BYTES, SEGMENT_BYTES

MiB = 1024 * 1024

# Sources
SOURCE_BYTES = 1 * MiB  # one .kno file (a large blueprint is ~10 KiB)
NESTING_DEPTH = 64  # mappings and lists inside each other in one file
INTEGER_DIGITS = 64  # digits of one integer (Python refuses to print past 4,300)
ALIAS_NODES = 100_000  # nodes a file's aliases may expand to ("billion laughs")
EXPANDED_BYTES = 4 * MiB  # text a file's aliases may expand to
MAPPING_KEYS = 5_000  # keys in one mapping
# Outputs
CARD_BYTES = 256 * 1024  # one published card (the example's largest is ~3 KiB)
# Output names: defined with the rule that checks them (knoc.rules.paths).
PATH_SEGMENT_BYTES, OUTPUT_PATH_BYTES, HOST_BYTES = SEGMENT_BYTES, PATH_BYTES, DNS_NAME_BYTES
# Patterns in specs: compiled for a linear-time engine, never a backtracking one
PATTERN_BYTES = 64 * 1024  # one compiled `pattern` (the engine's size limit)
SCHEMA_VISITS = 100_000  # subschemas a spec may hold for one value, its references followed (`allOf` fan-out)
SCHEMA_DEPTH = 512  # subschemas inside each other, its references followed
EXPLAIN_STEPS = 200_000  # subschemas applied to say what is wrong with one document (past it: the first error)
# Downloads (`knoc import URL`)
DOWNLOAD_BYTES = 5 * MiB  # one card body
DOWNLOAD_SECONDS = 20.0  # one download, start to last byte, however slowly it drips
CONNECT_SECONDS = 10.0  # waiting for any one step of the exchange
# Serving (`knoc serve`)
SERVE_PATH_BYTES = 2048  # a request path: longer gets 414
SERVE_HOST_BYTES = 255  # a Host header: longer gets 431
SERVE_BACKLOG = 128  # connections waiting to be accepted
SERVE_CONNECTIONS = 256  # connections served at once, a thread each: more are closed at once
SERVE_IDLE_SECONDS = 10.0  # a connection whose next request has not all arrived this long after is closed
