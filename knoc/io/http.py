"""HTTP reads (`knoc import URL`), within the download limits: a body of
at most DOWNLOAD_BYTES, the whole exchange within DOWNLOAD_SECONDS however
slowly the server drips bytes, and every failure one `FetchError`."""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from typing import Any

from knoc.io import limits

USER_AGENT = "knoc-import"


class FetchError(OSError):
    """The URL could not be fetched within the limits; the message says why."""


def fetch(url: str, accept: str = "application/json") -> bytes:
    max_bytes, seconds = limits.DOWNLOAD_BYTES, limits.DOWNLOAD_SECONDS
    deadline = time.monotonic() + seconds
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=min(limits.CONNECT_SECONDS, seconds)) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise FetchError(f"the body is {int(declared):,} bytes; knoc reads at most {max_bytes:,}")
            return _read(response, max_bytes, deadline, seconds)
    except FetchError:
        raise
    except urllib.error.HTTPError as exc:
        raise FetchError(f"the server answered {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"cannot reach it: {exc.reason}") from None
    except TimeoutError:
        if time.monotonic() >= deadline - 0.05:
            raise FetchError(f"the download took longer than {seconds:g} s") from None
        raise FetchError(f"no answer within {min(limits.CONNECT_SECONDS, seconds):g} s") from None
    except (http.client.HTTPException, OSError, ValueError) as exc:
        raise FetchError(f"the exchange failed ({type(exc).__name__}: {str(exc)[:200]})") from None


def _read(response: Any, max_bytes: int, deadline: float, seconds: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise FetchError(f"the download took longer than {seconds:g} s")
        if sock is not None:
            sock.settimeout(min(left, limits.CONNECT_SECONDS))  # a dripping server cannot stretch the deadline
        chunk = response.read1(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"the body is larger than {max_bytes:,} bytes, the most knoc reads")
        chunks.append(chunk)
