"""Credentials masked in messages (knoc.rules.masking): everything the
regular expressions knoc used before masked is masked still, and a hostile
line a megabyte long is masked in one pass, not one per `[` of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knoc.rules.masking import masked, masked_line

# The rules as regular expressions (what knoc masked before), each applied to the text as written.
URL_OR_BARE = re.compile(r"(?P<lead>(?i:\b(?:https?|wss?|ftp):)[/\\]*|//|\\\\)[^/?#\s]*@"
                         r"|(?<![^\s\"'`(\[,])(?!(?i:mailto):)[^\s\"'`/\\?#@:]+:[^\s\"'`/\\?#@]*@")
QUOTED = re.compile(r"""(?P<lead>(?P<q>["'])(?i:https?|wss?|ftp):[/\\]*)(?:(?!(?P=q))[^/?#\\])*@""")
PIECES = ["https:", "http:", "wss:", "ftp:", "mailto:", "MAILTO:", "/", "\\", "@", ":", "a", "b", " ", "\t", '"',
          "'", "`", "(", "[", ",", "?", "#", "//", "é"]


def _meant(text: str) -> set[int]:
    """The characters the rules mask: each match but its lead and its `@`."""
    return {i for rx in (URL_OR_BARE, QUOTED) for m in rx.finditer(text)
            for i in range(m.start() + len(m.group("lead") or ""), m.end() - 1)}


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16).map("".join))
def test_every_character_the_rules_mask_is_masked(text: str) -> None:
    shown = masked(text, keep_width=True)
    assert len(shown) == len(text)
    assert [i for i in _meant(text) if shown[i] != "*" and text[i] != "*"] == []


def test_a_credential_is_masked_and_the_rest_is_left() -> None:
    assert masked("see ops@acme.example and agent-blueprint@0.4.0") == "see ops@acme.example and agent-blueprint@0.4.0"
    assert masked('"https://a b:c@d.example/x@y" (https:\\\\u:p@h) mailto:a,b:c@d') == (
        '"https://***@d.example/x@y" (https:\\\\***@h) mailto:a,***@d')
    assert masked("grpc user:pass@host:443", keep_width=True) == "grpc *********@host:443"


def test_a_hostile_line_is_masked_in_one_pass() -> None:
    """Lines that made the regular expressions try a match at each
    character (a megabyte of `[` took hours): each is read once now."""
    for line in ("[" * 1_000_000 + "@", "[a" * 500_000 + "@", "http:" * 200_000 + "@x", "\\\\" * 500_000 + "@",
                 "mailto:(" * 125_000 + ":@", '"https:\'' * 125_000 + "@", "?" * 500_000 + " =%",
                 "?a" * 250_000 + "=%", "?" + "\\x41" * 200_000 + "%=x", "&" * 500_000 + "a%="):
        shown = masked(line, keep_width=True, named=True)
        assert len(shown) == len(line)


def test_an_escaped_at_a_dropped_tab_and_an_at_in_a_secret_are_masked() -> None:
    """A YAML or JSON escape of `@` is one; a url drops a tab or a line
    break (so a secret goes on past it); a secret may hold an `@`."""
    assert masked('url: "https://alice:hunter2\\u0040h.example/q"') == 'url: "https://***\\u0040h.example/q"'
    assert masked('"https://alice:hunter2\\x40h"', keep_width=True) == '"https://*************\\x40h"'
    assert masked("https://alice:hun\tter2@host/x") == "https://***@host/x"
    assert masked("grpc gina:g@na@host:443") == "grpc ***@host:443"
    assert masked("a\\u0040b and C:\\dir\\x40") == "a\\u0040b and C:\\dir\\x40"  # no credential: as written


def test_a_source_line_is_masked_with_the_line_its_value_goes_on_to() -> None:
    """A quoted YAML value may break a line with `\\`: the `@` ending the
    secret is then on the next line."""
    from knoc.rules.masking import masked_line

    line = '  url: "https://alice:hunter2\\'
    assert masked_line(line, '    @agents.example.org/q"') == '  url: "https://**************'
    assert masked_line("  url: https://agents.example.org", "owner: a@b") == "  url: https://agents.example.org"


def test_a_credential_in_what_a_finding_names_as_its_file_is_masked(tmp_path: Path) -> None:
    """`knoc import ftp://u:p@h/x` names the source it could not read: in
    every format, without its password."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    for fmt in ("text", "json", "sarif", "junit", "github"):
        done = subprocess.run([sys.executable, "-m", "knoc", "import", "ftp://alice:hunter2@127.0.0.1:9/x",
                               "alice:hunter2@127.0.0.1:9", "--format", fmt, "--root", str(ROOT)],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 1 and "hunter2" not in done.stdout + done.stderr, (fmt, done.stdout + done.stderr)


def test_a_weak_name_before_a_page_name_is_text_and_before_a_token_a_credential() -> None:
    """`key`, `token`, `sig`, `auth` and `code` name other things too: the
    hyphened words of a page's name, or an escaped space, are text; a UUID
    or a key of digits and letters (a SAS `sig` with its escapes) is not."""
    from knoc.rules.masking import credential_param

    for text in ("?code=chapter-2-getting-started-guide", "?key=getting%20started", "?key=agent-card"):
        assert credential_param(f"https://docs.example.org/{text}") is None, text
    for text in ("?token=123e4567-e89b-12d3-a456-426614174000", "?sig=Ab%2FcdEfGh0123456789%3D",
                 "?key=sk-proj-AbCdEfGh1234567890xyz", "?code=Az1%7E0123456789abcdef"):
        assert credential_param(f"https://docs.example.org/{text}") is not None, text
        assert "=***" in masked(f"https://docs.example.org/{text}"), text


def test_a_credential_name_written_with_escapes_is_read_decoded() -> None:
    """A server decodes a parameter's name before it reads it: `%70ass` is
    `pass`. An escape elsewhere in the url does not make a name."""
    from knoc.rules.masking import credential_param

    assert credential_param("https://a.example/x?%70ass=hunter2") == "pass"
    assert masked("https://a.example/x?q=1&%61pi%5Fkey=hunter2&r=2") == "https://a.example/x?q=1&%61pi%5Fkey=***&r=2"
    assert masked("https://a.example/x?k%65y=AbCdEf0123456789xyz") == "https://a.example/x?k%65y=***"
    for text in ("?q=%70ass", "?k%65y=getting-started-now-x", "?%70age=2", "?%2570ass=x", "?x%26pass=x"):
        assert credential_param(f"https://a.example/x{text}") is None, text  # decoded once, a name whole
    # a parameter inside another's value; a name written with YAML's escapes, as a source line holds it
    assert masked("https://a.example/login?next=/cb?%70ass=hunter2") == "https://a.example/login?next=/cb?%70ass=***"
    for line in ('url: "https://a.example/x?%\\x370ass=hunter2"', 'url: "https://a.example/x?\\u0070ass=hunter2"'):
        assert credential_param(line) == "pass" and "hunter2" not in masked(line, named=True), line


def test_a_credential_named_with_words_before_it_is_one_and_a_page_name_is_not() -> None:
    """`db_password`, `user[password]`, `aws_secret_access_key`: a
    credential's name after words that say whose. A yes or no is no
    secret; a file's path or a page's name after a weak name is text."""
    from knoc.rules.masking import credential_param, secret_param

    for text in ("?db_password=hunter2", "?user[password]=hunter2", "?aws_secret_access_key=AKIAX", "?pass[]=x1",
                 "?passphrase=hunter2", "?app_secret=x1"):
        assert credential_param(f"https://a.example/x{text}") is not None, text
    for text in ("?reset_password=true", "?password=1", "?compass=north", "?first_pass=q", "?sort_key=name",
                 "?key=reports/2024/q1.pdf", "?key=Getting-Started-2", "?key=getting_started_v2",
                 "?code=ISO-3166-1-alpha-2", "?response_type=code&client_id=abc"):
        assert credential_param(f"https://a.example/x{text}") is None, text
    # import leaves out any parameter a credential's word names, but for words of their own and OAuth's public ones
    assert [p for p in ("code_challenge_method=S256", "keyword=a2a", "postcode=1", "api_key=x", "auth=x")
            if secret_param(p)] == ["api_key=x", "auth=x"]


def test_a_source_line_with_escaped_separators_is_masked() -> None:
    """YAML's escapes of `?`, `;` and `=` in a quoted url: a source excerpt
    shows the line as written, and masks the value all the same."""
    for line in ('url: "https://a.example/d\\x3Fpass=hunter2"', 'url: "https://a.example/d\\u003fpass=hunter2"',
                 'url: "https://a.example/d?a=1\\x3Bpass=hunter2"', 'url: "https://a.example/d?pass\\x3Dhunter2"'):
        assert "hunter2" not in masked(line, keep_width=True, named=True), line
    assert masked("https://a.example/d?pass= hunter2") == "https://a.example/d?pass= ***"  # folded onto a next line


@pytest.mark.parametrize("text", ["?password='hunter2'", "?app_key=a8f5f167f44f4964e6c998dee827110c", "?_password=h",
                                  "?password[0]=h", "?key=H7KQ2-9MXPT-4RVJW-8YBN3-6CGDF", "?client_assertion=e.x",
                                  "?passcode=h", "?sas_token=sv2020Ab12cdEF34ghIJ56", "?dbPassword=h",
                                  "?hapikey=a8f5f167f44f4964e6c998dee827110c"])
def test_a_credential_a_url_carries_is_found(text: str) -> None:
    from knoc.rules.masking import credential_param

    assert credential_param(f"https://a.example/x{text}") is not None
    assert "hunter2" not in masked(f"https://a.example/x{text}")


@pytest.mark.parametrize("text", ["?key=docs/quickstart-v2", "?token=release/2024.06/notes", "?key=getting-started2",
                                  "?code=python3-quickstart", "?key=agent-card-v0.3.0-draft", "?key=com.example.agent.v2"])
def test_words_after_a_weak_name_are_text(text: str) -> None:
    """A page's name, a version or a path after `key`, `token` or `code`:
    a card's documentation url may hold one, and it is published."""
    from knoc.rules.masking import credential_param

    assert credential_param(f"https://docs.example.org/view{text}") is None


def test_import_leaves_out_parameters_named_by_a_credentials_word_not_words_that_hold_one() -> None:
    from knoc.rules.masking import secret_param

    kept = ["authuser=0", "design=dark", "signup=1", "postal_code=1", "countryCode=x", "search_keyword=x", "sessions=2"]
    dropped = ["apiKey=x", "X-Auth-Token=x", "hapikey=x", "code=x", "oauth_token=x"]
    assert [p for p in kept + dropped if secret_param(p)] == dropped
    assert masked("x?password=it's-secret") == "x?password=***"


def test_a_credential_in_a_url_a_parameter_carries_encoded_is_found() -> None:
    """`?next=https%3A%2F%2F...%3Fpassword%3D...`: a redirect's url, decoded
    as its server reads it; the whole value is masked."""
    from knoc.rules.masking import credential_param, secret_param

    url = "https://a.example/login?next=https%3A%2F%2Fa.example%2Fapp%3Fpassword%3Dhunter2"
    assert credential_param(url) == "password" and masked(url) == "https://a.example/login?next=***"
    assert secret_param("next=https%3A%2F%2Fa.example%2Fapp%3Fpassword%3Dhunter2")


@pytest.mark.parametrize("text", ["?api_key=YOUR_API_KEY", "?api_key=<YOUR_API_KEY>", "?api_key={api_key}",
                                  "?apiKey=${API_KEY}", "?api_key=xxxxxxxx", "?key=pk_live_51H8abcDEFghiJKLmnoPQR",
                                  "?nextPageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0cTMwNA",
                                  "?cache_key=da39a3ee5e6b4b0d3255bfef95601890afd80709", "?api_key={{api_key}}",
                                  "?access_token=your-access-token", "?api_key=%API_KEY%"])
def test_a_placeholder_or_a_key_public_by_design_is_no_credential(text: str) -> None:
    """An API's docs show where the key goes; a page token, a cache key and
    Stripe's publishable key are public: none is refused."""
    from knoc.rules.masking import credential_param

    assert credential_param(f"https://docs.example.org/api{text}") is None


@pytest.mark.parametrize("text", ["?token=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "?appid=b6907d289e10d714a6e88b30761fae22",
                                  "?key=sk-proj-AbCdEfGhIjKlMnOp1234", "?hmac=4f9d1a2b3c4d5e6f7a8b9c0d"])
def test_a_known_secret_after_a_weak_name_is_one(text: str) -> None:
    from knoc.rules.masking import credential_param

    assert credential_param(f"https://a.example/x{text}") is not None


def test_import_keeps_a_plain_value_after_a_credentials_word() -> None:
    """`knoc import` leaves out what may carry a credential: any value after
    a credential's word as the whole name (`key=`, however short), not a
    plain one after a name that holds it beside other words (`sort_key=name`)."""
    from knoc.rules.masking import secret_param

    kept = ["sort_key=name", "token_type=bearer", "primary_key=id", "sessionTimeout=30", "sid=3"]
    dropped = ["api_key=abc123", "password=secret", "token=hunter2", "key=agent-card", "code=SEKRET-10"]
    assert [p for p in kept + dropped if secret_param(p)] == dropped


def test_a_user_name_and_password_in_a_url_carried_encoded_twice_or_in_its_host_is_found() -> None:
    from knoc.rules.masking import credential_param

    for url in ("https://a.example/a?redirect=https%3A%2F%2Fadmin%3AS3cret%40intra.example%2F",
                "https://a.example/a?next=https%253A%252F%252Fb%252Fcb%253Fpassword%253DS3cret"):
        assert credential_param(url) is not None and "S3cret" not in masked(url), url
    assert credential_param("https://a.example/?next=%2Fhome%3Fpage%3D2") is None


def test_an_import_message_masks_only_what_import_leaves_out() -> None:
    """A drop's message shows the url as it came: the parameters kept stay readable."""
    assert masked("?sort_key=name&token_type=bearer&key=7&api_key=zz", named=True) == (
        "?sort_key=name&token_type=bearer&key=7&api_key=***")


@pytest.mark.parametrize("line", [
    'public = { kty = "OKP", crv = "Ed25519", x = "abc", d = "KEYSECRET" }',  # a JWK inline in knoc.toml
    '  example: \'{"kty": "OKP", "x": "abc", "d": "KEYSECRET"}\'',  # pasted into a source
    "kid = '''-----BEGIN PRIVATE KEY-----MC4CAQAwBQYDK2VwBCIEIKEYSECRETKEYSECRETKEYSECRET",
    "    MC4CAQAwBQYDK2VwBCIEIKEYSECRETKEYSECRETKEYSECRETKEYSECRETKEY",  # a PEM body line
    'public = { kty = "OKP", d = """nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A""" }',  # TOML's triple quotes
    'public = { d = "nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A',  # its quote left open
    "d = nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A",  # not quoted at all
    "      d: nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A",  # YAML's own form
    'nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A""" x',  # a multi-line string's line
    'public = { x = "abc", "\\u0064" = "nWGxne_9WmC6hEr0kuwsKEYSECRETl7MmkZcDusAxyuf2A" } x',  # an escaped name
    'api_token = "ghp_R4nd0mT0kenKEYSECRET1234567890abcdEFGH"',  # under a key knoc does not know
    'passphrase = "correct horse KEYSECRET staple"',  # a setting named as a secret
])
def test_an_excerpt_never_shows_private_key_material(line: str) -> None:
    shown = masked_line(line, "")
    assert "KEYSECRET" not in shown and len(shown) == len(line)


@pytest.mark.parametrize(("text", "code"), [
    ("purpose: Mirror #https://deploy:PWSECRET9zLw3KvB2nR8ySXq7TmP9zLw3KvB2nR8yS@git.example.com/r\n",
     "KNO-YAML-COMMENT"),
    ("tags:\n  -https://deploy:PWSECRET9zLw3KvB2nR8ySXq7TmP9zLw3KvB2nR8yS@git.example.com/r\n", None),
])
def test_a_message_that_quotes_a_word_masks_it_whole_before_cutting_it(text: str, code: str | None) -> None:
    """A quoted word is cut to a few dozen characters: cut first, its
    password's `@` would be gone, and the password shown."""
    from knoc.compiler.comments import cut_values
    from knoc.compiler.load import source_file
    from knoc.compiler.validate import _type_hint

    source = source_file("/x.kno", "x.kno", text.encode("utf-8"))
    said = [d.message for d in cut_values(source)] if code else [_type_hint("array", text.split("  ", 1)[1].strip())]
    assert said and all("PWSECRET" not in s and ("stops before" in s or "put a space" in s) for s in said), said


@pytest.mark.parametrize("line", ["  token_url: https://auth.example.org/oauth/token", 'key = "~/.config/knoc/signing.pem"',
                                  "id: 01KKV1QV1CKSVMMAR1ZER00004", "description: Tokens are refreshed hourly",
                                  "  digest: 4f5472de23465dff10dc9dd163fd959296bbd9ed3255820b549a75343e10d928"])
def test_an_excerpt_shows_what_is_no_secret(line: str) -> None:
    assert masked_line(line, "") == line

