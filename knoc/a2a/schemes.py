"""What a client can use of a security scheme, whatever the card's A2A
version: an API key it can send (a name, and a header or cookie name HTTP
allows), an HTTP authentication scheme it can name, and an OAuth flow A2A
1.0 lets it ask a token of (at least one scope: a2a-sdk 1.x refuses a card
whose flow lists none)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from knoc.a2a.wire import FLOW_FIELDS

# RFC 9110's token: an HTTP authentication scheme, a header name; a cookie name (RFC 6265) is one too.
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


def unusable(scheme: Mapping[str, object], a2a_1_0: bool) -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(path inside the scheme, what no client can do with it, what to do)
    for each such value of a scheme given as 0.3 fields, snake_case.
    `a2a_1_0`: the card is read in A2A 1.0's shape, whose flows need a scope."""
    kind = scheme.get("type")
    if kind == "apiKey":
        name, where = scheme.get("name"), scheme.get("in")
        if not isinstance(name, str) or not name:
            yield ("name",), "the API key has no `name`: a client cannot tell where to send it", \
                f"name the {where or 'header'} that carries the key"
        elif where in ("header", "cookie") and not TOKEN.match(name):
            yield ("name",), f"`{name}` cannot be the name of a {where}: HTTP names are tokens (no spaces, " \
                "colons or quotes), so no client can send the key", f"give the {where}'s name, as in `X-API-Key`"
    elif kind == "http":
        given = scheme.get("scheme")
        if not isinstance(given, str) or not given:
            yield ("scheme",), "the HTTP scheme has no name: no client can send it", \
                "name the authentication scheme, as in `scheme: Bearer`"
        elif not TOKEN.match(given):
            yield ("scheme",), f"`{given}` is not an HTTP authentication scheme's name (one token, as in `Bearer` " \
                "or `Basic`): no client can send it", "name the scheme alone, as in `scheme: Bearer`"
    elif kind == "oauth2" and a2a_1_0:
        flows = scheme.get("flows")
        for flow, fields in flows.items() if isinstance(flows, Mapping) else ():
            if flow in FLOW_FIELDS and isinstance(fields, Mapping) and not fields.get("scopes"):
                yield ("flows", flow, "scopes"), f"the `{flow}` flow lists no scope: A2A 1.0 marks `scopes` " \
                    "REQUIRED (an empty map is none in its JSON), and a2a-sdk 1.x's check of required fields " \
                    "refuses the card", \
                    "list the scopes a token of this flow grants (`scopes: {name: what it allows}`)"
