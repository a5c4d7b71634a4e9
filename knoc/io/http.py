"""HTTP reads (`knoc import URL`)."""

from __future__ import annotations

import urllib.request

USER_AGENT = "knoc-import"


def fetch(url: str, timeout: float = 15.0, accept: str = "application/json") -> bytes:
    """The body at `url`. OSError (urllib's errors are subclasses) or
    ValueError when it cannot be fetched."""
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
        return body
