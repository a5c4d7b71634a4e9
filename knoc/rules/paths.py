"""What may become a path on disk: one rule for a path segment and one for
a host, each checked in this one place, so that no url, slug or URI from a
source can name a file outside the build tree or one it does not own."""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

from knoc.rules.bare_secrets import bare_secrets
from knoc.rules.masking import credential_param, masked

SEGMENT_BYTES = 255  # most file systems' limit for one name
PATH_BYTES = 1024  # a whole relative output path, well under PATH_MAX
HOST_BYTES = 253  # RFC 1035
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 3986 2.3: an escaped unreserved character is the character itself.
_UNRESERVED_ESCAPE = re.compile(r"%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\%]")


# `.git` in any case, with trailing dots or spaces, or as its 8.3 name: what git refuses in a path (`core.protectNTFS`).
_GIT_DIR = re.compile(r"(?:\.git|git~1)[. ]*", re.I)


def segment_problem(segment: str) -> str | None:
    """Why `segment` cannot be one folder or file name under the build tree, or None."""
    if segment in ("", ".", ".."):
        return f"`{segment}` is not a name (empty, `.` or `..`)"
    if _UNSAFE.search(segment):
        return "it holds a separator, `%`, NUL or another control character"
    if _GIT_DIR.fullmatch(segment):
        return f"`{segment}` names git's own folder (as git reads names on every system): git cannot hold the " \
               "files under it, so the build could not be committed"
    if len(segment.encode("utf-8")) > SEGMENT_BYTES:
        return f"a segment is {len(segment.encode('utf-8'))} bytes long; the limit is {SEGMENT_BYTES}"
    return None


# What Windows cannot name, so a clone there cannot check out a file under it: a device name (with or without an
# extension), `<>:"|?*`, and a name ending in a dot or a space (which it drops).
_WINDOWS_DEVICE = re.compile(r"(?i:con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?")
_WINDOWS_CHAR = re.compile(r'[<>:"|?*]')


def unportable(segment: str) -> str | None:
    """Why Windows cannot name `segment` (a folder or file name), or None."""
    if (char := _WINDOWS_CHAR.search(segment)) is not None:
        return f"`{segment}` holds `{char.group()}`, which Windows does not allow in a name"
    if segment.endswith((".", " ")):
        return f"`{segment}` ends in a dot or a space, which Windows drops from a name"
    if _WINDOWS_DEVICE.fullmatch(segment):
        return f"`{segment}` is a device name on Windows, not a file"
    return None


def path_problem(rel: str) -> str | None:
    """Why `rel` (forward slashes) cannot be a path inside the build tree, or None."""
    if len(rel.encode("utf-8")) > PATH_BYTES:
        return f"the path is longer than {PATH_BYTES} bytes"
    for segment in rel.split("/"):
        problem = segment_problem(segment)
        if problem is not None:
            return problem
    return None


def split_url(url: object) -> SplitResult | None:
    """The parts of a URL, or None for anything urllib refuses (a bad IPv6
    literal, a port that is not a number, characters NFKC turns into `/`)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        return None
    return parts


def shown_url(url: str) -> str:
    """A URL as a message may repeat it: never its user name and password
    (all of its authority before its last `@`, spaces and all), never all
    of a huge value."""
    found = _authority(url)
    if found is not None and "@" in url[found[0]:found[1]]:
        url = url[:found[0]] + "***" + url[found[0] + url[found[0]:found[1]].rindex("@"):]
    url = masked(url)
    return url if len(url) <= _SHOWN else url[:_SHOWN] + "..."


def credential_in(url: str) -> str | None:
    """How a url would publish a credential: it holds a user name or
    password, or a parameter that carries a key or token (None: neither)."""
    if has_userinfo(url):
        return "holds a user name or password"
    name = credential_param(url)
    if name is not None:
        return f"carries a credential in its `{name}` parameter"
    return "holds a key or token (`Bearer ...`, a JWT, `ghp_...`)" if bare_secrets(url) else None


def has_userinfo(url: str) -> bool:
    """Whether a URL holds a user name or password, however else it is
    written: a port that is no number, a broken IPv6 host (urllib refuses
    those), or the slashes after a web scheme missing, doubled or turned
    (browsers and fetch read `https:/u:p@h` and `https:\\u:p@h` as
    `https://u:p@h`), or a tab or line break in it (which they drop)."""
    url = url.translate(_DROPPED)
    found = _authority(url)
    return found is not None and "@" in url[found[0]:found[1]]


_DROPPED = str.maketrans("", "", "\t\n\r")  # what the URL standard removes from a url before reading it


def without_userinfo(url: str) -> str:
    """The URL without the user name and password `has_userinfo` finds (and
    without the tabs and line breaks browsers drop)."""
    url = url.translate(_DROPPED)
    found = _authority(url)
    if found is None or "@" not in url[found[0]:found[1]]:
        return url
    return url[:found[0]] + url[found[0] + url[found[0]:found[1]].rindex("@") + 1:]


def _authority(url: str) -> tuple[int, int] | None:
    """Where a URL's authority is (start, end): after a web scheme and any
    run of slashes and backslashes, as the WHATWG URL standard reads one,
    else after `//`; None when it has none."""
    special = _WEB_SCHEME.match(url)
    if special is not None:
        start = special.end()
    elif (at := url.find("//")) >= 0:
        start = at + 2
    else:
        return None
    end = _AUTHORITY_END.search(url, start)
    return start, end.start() if end is not None else len(url)


_WEB_SCHEME = re.compile(r"\s*(?i:https?|wss?|ftp):[/\\]*")
_AUTHORITY_END = re.compile(r"[/\\?#]")
_SHOWN = 200  # characters of a URL a message repeats
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")  # what urllib drops from a url silently


def web_link(url: str, image: bool = False) -> bool:
    """An absolute http(s) URL with a host (or, for an image, a `data:image/`
    URL), with no whitespace or control character (urllib drops some
    silently): what a card viewer may show as a link or an image."""
    if _SPACE_OR_CONTROL.search(url) is not None:
        return False
    if image and url[:11].lower() == "data:image/":
        return True
    where = split_url(url)
    return where is not None and where.scheme.lower() in ("http", "https") and bool(where.netloc)


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`host` as an IP address, or None. Most hosts are names, told apart
    here without the exception ipaddress raises for each."""
    if ":" not in host and host.strip("0123456789."):  # neither IPv6 nor dotted decimal
        return None
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def ipv4_as_read(host: str) -> ipaddress.IPv4Address | None:
    """`host` as the IPv4 address a client's URL parser (WHATWG's, and
    inet_aton) reads in it, or None: one to four parts, each decimal, `0x`
    hex or `0`-led octal, the last one filling the bytes left (`127.1`,
    `0x7f.1`, `2130706433`, `0177.0.0.1` are all 127.0.0.1)."""
    parts = host.removesuffix(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        if re.fullmatch(r"0[xX][0-9a-fA-F]*", part):
            numbers.append(int(part[2:] or "0", 16))
        elif re.fullmatch(r"0[0-7]+", part):
            numbers.append(int(part, 8))
        elif re.fullmatch(r"0|[1-9][0-9]*", part):
            numbers.append(int(part))
        else:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    return ipaddress.IPv4Address(sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last)


@functools.lru_cache(maxsize=1024)  # a repo's cards share a few hosts, and each card's url is read twice
def host_folder(host: str) -> str | None:
    """A host as a folder name: a DNS name (IDNA, lowercase, no trailing dot)
    or an IP literal, else None. Ports are the caller's."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    ip = ip_literal(host)
    if ip is not None:
        return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    try:
        name = host.rstrip(".").encode("idna").decode("ascii").lower()
    except (UnicodeError, ValueError):
        return None
    if not name or len(name) > HOST_BYTES or not all(_LABEL.match(label) for label in name.split(".")):
        return None
    return name


def origin(parts: SplitResult) -> str | None:
    """The host of a URL as a folder name, with its port unless it is the
    scheme's default (`https://h:443/` and `https://H./` are `h`), or None."""
    host = host_folder(parts.hostname or "")
    if host is None:
        return None
    port = parts.port
    return host if port is None or port == DEFAULT_PORTS.get(parts.scheme.lower()) else f"{host}:{port}"


def path_segments(path: str) -> list[str]:
    """A URL path's segments, escaped unreserved characters decoded
    (`/%7Ea` is `/~a`); other escapes stay, for `segment_problem` to refuse."""
    decoded = _UNRESERVED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), path)
    return [s for s in decoded.split("/") if s]


def local_host(host: str) -> bool:
    """Whether only this machine or its network reaches `host` (a client's reading of it)."""
    host = (host_folder(host) or host).strip("[]")  # as a client reads it: `localhost.`, `１２７.0.0.1` (IDNA)
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    ip = ip_literal(host) or ipv4_as_read(host)  # `127.1` and `0x7f.1` reach this machine too
    if ip is None:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified
