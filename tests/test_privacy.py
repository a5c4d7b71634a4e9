"""Nothing private reaches a published file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import ROOT, Knoc, edit, json_diags, tree


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if value is not None and not isinstance(value, bool) else []


def _load(rel: str) -> dict[str, Any]:
    return YAML(typ="safe").load((ROOT / rel).read_text(encoding="utf-8"))


def _secrets() -> list[str]:
    """Every value an outsider must never see."""
    found: list[str] = []
    private = _load("content/agent-blueprints/ledger-auditor.kno")
    found += [private["a2a_projection"]["name"], private["a2a_projection"]["url"],
              private["slug"], private["id"], private["title"]]
    for path in sorted((ROOT / "content").rglob("*.kno")):
        data = _load(path.relative_to(ROOT).as_posix())
        persona = data.get("persona", data)
        for key in ("goals", "boundaries"):
            found += _strings(persona.get(key))
        found += _strings(data.get("budget_override"))
        ownership = data.get("ownership") or {}
        found += _strings(ownership.get("possibility_slug"))
        if "credentials" in (data.get("authentication") or {}):
            found.append(data["authentication"]["credentials"])
    # Short generic values ("0", "blocked") also occur in public text by chance.
    return sorted({s for s in found if len(s) >= 8})


SECRETS = _secrets()


def test_the_secret_list_is_not_empty() -> None:
    assert "Zephyr Ledger Auditor" in SECRETS
    assert "MUST NOT write to the production ledger" in SECRETS
    assert len(SECRETS) > 20


@pytest.mark.parametrize("secret", SECRETS)
def test_no_private_value_under_build(secret: str) -> None:
    needle = secret.encode("utf-8")
    leaks = [path for path, body in tree(ROOT / "build").items() if needle in body]
    assert leaks == []


def test_private_agent_is_validated_but_not_published(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    bp = repo / "content/agent-blueprints/ledger-auditor.kno"
    bp.write_text(bp.read_text().replace("domains: [entity-health]", "domains: [no-such]"))
    code, _, err = knoc("validate", root=repo)
    assert code == 1 and "KNO-RESOLVE-DOMAIN" in err


BLUEPRINT = "content/agent-blueprints/quick-summarizer.kno"
CARD_URL = "url: https://agents.possibility.space/quick-summarizer"


@pytest.mark.parametrize("old,new,path", [
    (CARD_URL, "url: https://deploy:s3cret@agents.possibility.space/quick-summarizer", "url"),
    ("    url: https://possibility.space", "    url: https://s3cret@possibility.space", "provider.url"),
    ("  version: \"0.1.0\"", "  version: \"0.1.0\"\n  documentation_url: https://me:s3cret@docs.example.org/",
     "documentation_url"),
])
def test_a_url_holding_a_password_is_refused_and_never_repeated(repo: Path, knoc, old: str, new: str,  # type: ignore[no-untyped-def]
                                                                path: str) -> None:
    """A user name or password in any of the card's URLs would be published
    with it: an error, whose message masks them."""
    edit(repo, BLUEPRINT, old, new)
    _a_password_refused(repo, knoc, path)


def test_a_quoted_url_whose_password_holds_a_space_is_masked_under_its_finding(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """The source line shown under the finding masks it to the closing quote."""
    edit(repo, BLUEPRINT, CARD_URL, 'url: "https://deploy:s3cret and more@agents.possibility.space/quick-summarizer"')
    code, out, err = knoc("build", root=repo)
    assert code == 1 and "s3cret" not in out + err and "more@" not in out + err and "***@agents" in out + err


def test_a_grpc_address_holding_a_password_is_refused_without_repeating_it(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """No address: the schema refuses it, and its message masks the password."""
    edit(repo, "content/agent-blueprints/catalog-search.kno", "    - url: grpc.agents.possibility.space:443",
         "    - url: deploy:s3cret@grpc.agents.possibility.space:443")
    code, out, err = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-PATTERN"]
    assert code == 1 and "***@grpc.agents.possibility.space:443" in found["message"] and "s3cret" not in out + err


def _a_password_refused(repo: Path, knoc, path: str, blueprint: str = BLUEPRINT) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-URL-CREDENTIALS"]
    assert code == 1 and found["message"].startswith(f"`{path}` ") and "s3cret" not in json.dumps(found)
    assert found["line"] == line_of(repo, "s3cret", blueprint)
    assert not (repo / "build").exists()


def line_of(repo: Path, text: str, blueprint: str = BLUEPRINT) -> int:
    """The 1-based line of the blueprint that holds `text`."""
    return next(i for i, line in enumerate((repo / blueprint).read_text(encoding="utf-8").splitlines(), 1)
                if text in line)


def test_a_password_in_a_url_urllib_refuses_is_still_refused(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A port that is no number: urllib refuses to read the url, a client may
    still send it; and a quote in the password ends no mask."""
    edit(repo, "content/agent-blueprints/catalog-search.kno", "    - url: https://agents.possibility.space/catalog-search/rest",
         "    - url: \"https://bob:hunt'er2@agents.possibility.space:99999/b\"")
    code, out, err = knoc("build", "--format", "json", root=repo)
    assert code == 1 and "KNO-CARD-URL-CREDENTIALS" in out and "hunt'er2" not in out + err
    code, _, err = knoc("build", root=repo)  # the source line shown too
    assert code == 1 and "hunt'er2" not in err and "bob" not in err


def test_an_import_url_with_a_password_is_never_repeated(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    for fmt in ("json", "text", "github"):
        _, out, err = knoc("import", "--format", fmt, "https://bob:hunter2@127.0.0.1:9/card.json", root=repo)
        assert "hunter2" not in out + err and "127.0.0.1" in out + err


def test_a_card_diff_never_repeats_a_password(repo: Path, knoc, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    edit(repo, BLUEPRINT, "  description: Condenses", "  description: See https://alice:pw1@docs.example.org/x. Condenses")
    for fmt in ("markdown", "json"):
        _, out, err = knoc("diff", "--base", "HEAD", "--format", fmt, root=repo)
        assert "docs.example.org" in out and "pw1" not in out + err


@pytest.mark.parametrize(("setting", "shown"), [
    ('display_name = "Acme \\u202eevil"', "U+202E"),
    ('identifier = "https://bob:hunter2@acme.example.org"', "user name or password"),
])
def test_a_host_setting_a_catalog_publishes_is_checked(repo: Path, knoc, setting: str, shown: str) -> None:  # type: ignore[no-untyped-def]
    toml = repo / "knoc.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + f"\n[host]\n{setting}\n", encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and shown in err and "hunter2" not in err and "--> knoc.toml:" in err


def test_a_public_key_setting_holding_a_key_is_refused_unrepeated(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    from knoc.io.keys import new_key

    new_key("ed25519", repo.parent / "k.pem", lambda _: None)
    pem = (repo.parent / "k.pem").read_text(encoding="utf-8")
    toml = repo / "knoc.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + f'\n[signing]\npublic = """{pem}"""\n', encoding="utf-8")
    code, out, err = knoc("check", "--format", "json", root=repo)
    assert code == 2 and "holds a key itself" in out + err and pem.splitlines()[1][:12] not in out + err


@pytest.mark.parametrize("url", ["https:///u:IFSECRET@agents.possibility.space/b", "https:/u:IFSECRET@agents.possibility.space/b",
                                 "https://\\\\u:IFSECRET@agents.possibility.space/b"])
def test_a_password_in_a_url_a_browser_reads_past_odd_slashes_is_refused(repo: Path, knoc, url: str) -> None:  # type: ignore[no-untyped-def]
    """Browsers and fetch read `https:/u:p@h` and `https:\\\\u:p@h` as `https://u:p@h`."""
    edit(repo, "content/agent-blueprints/catalog-search.kno", "    - url: https://agents.possibility.space/catalog-search/rest",
         f'    - url: "{url}"')
    edit(repo, BLUEPRINT, '  version: "0.1.0"', '  version: "0.1.0"\n  documentation_url: "https:/doc:IFSECRET@docs.example.org/x"')
    for fmt in ("text", "json", "sarif", "github", "junit"):
        code, out, err = knoc("build", "--format", fmt, root=repo)
        assert code == 1 and "IFSECRET" not in out + err and "CREDENTIALS" in out + err, fmt


@pytest.mark.parametrize("signing", [
    "kid = '''-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIKEYSECRETKEYSECRETKEYSECRETKEYSECRETKEY\n-----END PRIVATE KEY-----'''",
    "public = '{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"x\": \"abc\", \"kid\": \"k.1\", \"d\": \"KEYSECRET\"}'",
    'public = { kty = "OKP", crv = "Ed25519", x = "abc", d = "KEYSECRET" }',
    "kid = '[{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"x\": \"abc\", \"d\": \"KEYSECRET\"}]'",  # a key set
])
def test_knoc_toml_never_holds_a_private_key_anywhere(repo: Path, knoc, signing: str) -> None:  # type: ignore[no-untyped-def]
    toml = repo / "knoc.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + f"\n[signing]\n{signing}\n", encoding="utf-8")
    for command in ("validate", "check"):
        code, out, err = knoc(command, root=repo)
        assert code == 2 and "--> knoc.toml:" in err and "KEYSECRET" not in out + err, err


def test_a_command_line_click_refuses_never_repeats_a_key() -> None:
    import subprocess
    import sys

    pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIKEYSECRETKEYSECRETKEYSECRETKEYSECRET\n-----END PRIVATE KEY-----\n"
    done = subprocess.run([sys.executable, "-m", "knoc", "keys", "public", pem], capture_output=True, text=True)
    assert done.returncode == 2 and "KEYSECRET" not in done.stdout + done.stderr and "not shown" in done.stderr


def test_a_key_setting_naming_no_file_is_named_only_when_it_reads_as_a_file(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A typo in a path is named; a value in a key form knoc does not know
    (an OpenSSH private key's body) is not repeated."""
    toml = repo / "knoc.toml"
    good = toml.read_text(encoding="utf-8")
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQKEYSECRET"
    for value, shown in (("keys/missing.pem", "keys/missing.pem"), (body, "not shown")):
        toml.write_text(good + f'\n[signing]\npublic = "{value}"\n', encoding="utf-8")
        code, out, err = knoc("check", root=repo)
        assert code == 2 and shown in err and "KEYSECRET" not in out + err, err


def test_a_password_a_tab_splits_is_never_repeated(repo: Path, knoc, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In a card to import (its interface url, and a scheme named by a url)
    and in a blueprint's source line, shown under its finding."""
    card = {"name": "Tabbed", "description": "d", "url": "https://tabbed.example.org/a2a", "version": "1",
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
            "additionalInterfaces": [{"url": "https://u5:tabPW5\t@h.example.net/a", "transport": "JSONRPC"}],
            "securitySchemes": {"https://ku:keyPW1@s.example.net/": {"type": "weird"}}}
    source = tmp_path / "tabbed.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    _, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert "PW5" not in out + err and "keyPW1" not in out + err and "s.example.net" in out
    edit(repo, BLUEPRINT, '  version: "0.1.0"', '  version: "0.1.0"\n  documentation_url: "https://doc:tab\\tPW8@docs.example.org/"')
    code, _, err = knoc("build", root=repo)
    assert code == 1 and "PW8" not in err and "docs.example.org" in err


def test_a_password_written_into_a_cards_text_is_said_and_never_repeated(repo: Path, knoc: Knoc) -> None:
    """A url with its credentials pasted into a description or an example
    would be published with the card: a warning at its line, masked."""
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    text = source.read_text(encoding="utf-8")
    assert "      description: Rebuilds a tree in memory and lists the files that drifted.\n" in text
    source.write_text(text.replace(
        "      description: Rebuilds a tree in memory and lists the files that drifted.\n",
        "      description: Rebuilds a tree from https://ci:hunter2@ci.example.com/builds and lists drift.\n"),
        encoding="utf-8")
    code, out, err = knoc("validate", "--format", "json", root=repo)
    said = [d for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"]
    assert code == 0 and len(said) == 1 and said[0]["json_path"] == "$.a2a_projection.skills[0].description"
    assert "hunter2" not in out + err and said[0]["line"] > 1
    source.write_text(text.replace(
        "      description: Rebuilds a tree in memory and lists the files that drifted.\n",
        '      description: "Rebuilds a tree. Contact support:team@example.com or ops@example.com."\n'),
        encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"]  # addresses


@pytest.mark.parametrize("url", ["https://agents.possibility.space/catalog-search/rest?api_key=s3cret&region=eu",
                                 "https://agents.possibility.space/catalog-search/rest#access_token=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest?X-Amz-Signature=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest;jsessionid=s3cret",
                                 # an Azure Functions key (the weak names need 16 characters, digits and letters)
                                 "https://agents.possibility.space/catalog-search/rest?code=s3cretAbCdEfGh12345==",
                                 # a name written with escapes, which a server decodes
                                 "https://agents.possibility.space/catalog-search/rest?%70ass=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest?%61pi%5Fkey=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest?next=/cb?%70ass=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest?db_password=s3cret",
                                 "https://agents.possibility.space/catalog-search/rest?next=https%3A%2F%2Fx%2F%3Fpassword%3Ds3cret"])
def test_a_key_or_token_in_a_url_parameter_is_refused_without_repeating_it(repo: Path, knoc, url: str) -> None:  # type: ignore[no-untyped-def]
    """A url's query or fragment parameter that carries a credential would
    be published with the card: refused, and no message, excerpt or format
    repeats its value."""
    edit(repo, "content/agent-blueprints/catalog-search.kno", "    - url: https://agents.possibility.space/catalog-search/rest",
         f'    - url: "{url}"')
    _a_password_refused(repo, knoc, "additional_interfaces[1].url", "content/agent-blueprints/catalog-search.kno")
    code, _, err = knoc("build", root=repo)  # the source line shown too
    assert code == 1 and "s3cret" not in err and "carries a credential" in err


def test_a_key_in_a_url_in_a_cards_text_is_said_masked(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A url with `?private_token=` (or `api%5Fkey=`, or `\\u0026api_key=`) pasted into a
    description is published with the card: a warning at its line, which repeats no value; a
    search url's short `?key=` (in a skill's description) is not a credential."""
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "  description: Searches the KNO content catalog by name, type, domain or tag.",
         '  description: "Try https://api.example.com/v1?private_token=s3cret1, https://a.example.com/?api%5Fkey=s3cret2,'
         ' or https://b.example.com/?x=1\\u0026api_key=s3cret3."')
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "      description: Returns entities matching a query, ranked by relevance.",
         "      description: Returns entities matching a query (https://docs.example.com/search?key=getting-started-guide).")
    code, out, err = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"]
    assert found["json_path"] == "$.a2a_projection.description" and "s3cret" not in out + err
    code, _, err = knoc("validate", root=repo)  # the source line shown too
    assert code == 0 and "KNO-CARD-TEXT-CREDENTIALS" in err and "s3cret" not in err


@pytest.mark.parametrize("secret", ["Bearer AbCd1234EfGh5678IjKl9012", "Basic dXNlcjpodW50ZXIyMDI2Z2dn",
                                    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJrbm9jIn0.Q2f9wXyZ0aBcDeFgHiJk",
                                    "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                                    "AKIAIOSFODNN7QWERTYU", "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
                                    "BEARER q8f3k2m9x7v1b4n6c0z5", "Basic YWRtaW46YWRtaW4=",
                                    "eyJhbGciOiJub25lIn0.ewogICJzdWIiOiAiMTIzIgp9.c2lnbmF0dXJl",
                                    "xoxp-123456789012-123456789012-0123456789abcdef0123456789abcdef",
                                    "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQ4MjEifQ.Xk2pQ7rT9vLm3nB8"])
def test_a_bare_credential_in_a_cards_text_is_said_masked(repo: Path, knoc: Knoc, secret: str) -> None:
    """A header value, a JWT or a well-known key pasted into a description,
    outside any url, is published with the card too: a warning at its
    line that no message, excerpt or format repeats."""
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "  description: Searches the KNO content catalog by name, type, domain or tag.",
         f'  description: "Searches the catalog. Call it with Authorization: {secret} set."')
    code, out, err = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"]
    value = secret.split()[-1]
    assert code == 0 and found["json_path"] == "$.a2a_projection.description" and value not in out + err
    code, _, err = knoc("validate", root=repo)  # the source line shown too
    assert code == 0 and "KNO-CARD-TEXT-CREDENTIALS" in err and value not in err


def test_a_credential_anywhere_in_a_card_is_said_masked(repo: Path, knoc: Knoc) -> None:
    """Every text a card publishes is read for a credential, its keys too:
    an extension entry's params, a security scheme's bearer format and
    header name, a scope's name; its source line shown escaped (`\\x42`) or
    not never repeats it."""
    edit(repo, "content/agent-blueprints/catalog-search.kno", "    streaming_message: true\n",
         "    streaming_message: true\n    extensions:\n      - uri: https://example.com/ext/notes/v1\n"
         "        params:\n          note: 'Authorization: Bearer q8f3k2m9x7v1b4n6c0z5pp'\n"
         "          ghp_AAAA1111bbbb2222cccc3333dddd4444eeee: key-as-name\n")
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "      description: Returns entities matching a query, ranked by relevance.",
         '      description: "Call it with \\x42earer r9g4l3n0y8w2c5o7d1a6qq set."')
    code, out, err = knoc("build", "--format", "json", root=repo)
    paths = sorted(d["json_path"] for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS")
    assert code == 0 and len(paths) == 3 and "$.a2a_projection.capabilities.extensions[0].params.note" in paths, paths
    assert "$.a2a_projection.skills[0].description" in paths
    for secret in ("q8f3k2m9x7v1b4n6c0z5pp", "AAAA1111bbbb2222cccc3333dddd4444eeee", "r9g4l3n0y8w2c5o7d1a6qq"):
        assert secret not in out + err
    _, _, err = knoc("validate", root=repo)  # the source lines shown
    assert "KNO-CARD-TEXT-CREDENTIALS" in err and "r9g4l3n0y8w2c5o7d1a6qq" not in err and "q8f3k2m9" not in err


def test_a_file_named_like_a_key_prefix_is_named_as_it_is(repo: Path, knoc: Knoc) -> None:
    """`sk-` begins a file's name as well as a key: a finding names the
    file as it is, not masked."""
    (repo / "content/agent-blueprints/quick-summarizer.kno").rename(
        repo / "content/agent-blueprints/sk-summarizer-slovak-v2.kno")
    _, out, err = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SLUG-FILE"]
    assert found["file"] == "content/agent-blueprints/sk-summarizer-slovak-v2.kno", out + err


@pytest.mark.parametrize("secret", ["https://0123456789abcdef0123456789abcdef01234567@github.com/acme/echo.git",
                                    "Bearer 3f2a9c1d-8e7b-4c6a-9d5e-1f2b3c4d5e6f",
                                    "postgres://admin:changeme@db.prod.possibility.space/echo",
                                    "mysql://svc:PROD_DB_2024_XK9@db.prod.possibility.space/echo",
                                    "https://api.possibility.space/a2a?access_token=Yourx9f8Kq2LmPz7Abc123XYZ"])
def test_a_real_credential_that_looks_like_a_sample_is_said(repo: Path, knoc: Knoc, secret: str) -> None:
    """A token given as a url's user name, a UUID, a default password, an
    all-caps one, one beginning `Your`: each is still a credential."""
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "  description: Searches the KNO content catalog by name, type, domain or tag.",
         f'  description: "Searches the catalog. Try {secret} first."')
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and [d["code"] for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"], out


@pytest.mark.parametrize("text", ["Send a Bearer token in the Authorization header.", "Authorization: Bearer <token>",
                                  "Set Authorization: Bearer YOUR_ACCESS_TOKEN.", "A basic search of the catalog.",
                                  "Works with scikit-learn and sk-learn-compatible models.",
                                  "Performs basic ISO-8601/RFC-3339 date validation.",
                                  "Runs a basic GPT-4o-mini-2024-07-18 model.", "Basic x86_64-linux-gnu support.",
                                  "Accepts the bearer token-exchange-v2 grant.", "Bearer Token-Authentication-v2 docs.",
                                  "Uses sk-learn-compatible-v2 estimators.", "Try Bearer xxxxxxxxxxxxxxxxxxxxxxx1.",
                                  "AWS documents AKIAIOSFODNN7EXAMPLE as its example key.",
                                  "Clones repos over ssh://git@github.com/zyx/platform.git.",
                                  "Mirror https://<user>:<token>@github.acme-corp.com/payments/ledger.git.",
                                  "See https://api.example.org/v1?apikey=demo for a sandbox.",
                                  "Send Authorization: Bearer eyJhbGciOiJSUzI1NiJ9... as usual.",
                                  "Returns a basic SHA256withRSA signature over the payload.",
                                  "Connect as https://user:password@db.example.org/ or https://u:[password]@h/.",
                                  "Pass ?client_secret=secret or ?access_token=AccessToken in tests.",
                                  "Clone https://oauth2@gitlab.com/acme/repo.git with your token."])
def test_prose_and_placeholders_about_credentials_are_no_credential(repo: Path, knoc: Knoc, text: str) -> None:
    """How to authenticate, said in words or with a placeholder, is no
    credential: no warning."""
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "  description: Searches the KNO content catalog by name, type, domain or tag.", f'  description: "{text}"')
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-TEXT-CREDENTIALS"]


def test_a_card_value_aliased_from_the_persona_is_said_at_its_key(repo: Path, knoc: Knoc) -> None:
    """A YAML alias copies the persona's value into the card, whose lines
    show only `*rule`: a warning at the card's key that names where the
    value is written (the card is still published, as written)."""
    edit(repo, "content/agent-blueprints/drift-sentinel.kno", "    - MUST NOT modify .kno files directly",
         "    - &rule MUST NOT modify .kno files directly")
    edit(repo, "content/agent-blueprints/drift-sentinel.kno", "      tags: [drift, diagnostics]",
         "      tags: [drift, *rule]")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]
    lines = (repo / "content/agent-blueprints/drift-sentinel.kno").read_text(encoding="utf-8").splitlines()
    assert code == 0 and [d["json_path"] for d in found] == ["$.a2a_projection.skills[0].tags[1]"], out
    assert found[0]["line"] == next(n for n, line in enumerate(lines, 1) if "*rule" in line)
    assert "`persona.boundaries[0]`" in found[0]["message"]


def test_a_legacy_cards_credentials_aliased_into_its_text_are_said(repo: Path, knoc: Knoc) -> None:
    """A legacy card publishes all but its `authentication.credentials`: an
    alias of them in its text is the warning, at the text's key."""
    edit(repo, "content/agents/auth-agent.kno", '  credentials: "tokenUrl=', '  credentials: &creds "tokenUrl=')
    edit(repo, "content/agents/auth-agent.kno", "\nskills:\n", "\nskills:\n  - id: creds\n    name: Creds\n"
         "    description: *creds\n    tags: [auth]\n")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]
    assert code == 0 and [d["json_path"] for d in found] == ["$.skills[0].description"], out
    assert "`authentication.credentials`" in found[0]["message"]


def _card_drafted_in_provenance(repo: Path, card: str) -> Path:
    """schema-steward with its card written under `provenance.origin.draft`
    (anchored `&card`), and `a2a_projection` set to `card`."""
    source = repo / "content/agent-blueprints/schema-steward.kno"
    head, body = source.read_text(encoding="utf-8").split("a2a_projection:\n", 1)
    drafted = "".join(f"    {line}\n" if line.strip() else "\n" for line in body.splitlines())
    head = head.replace("    tool: manual\n", "    tool: manual\n    draft: &card\n" + drafted)
    source.write_text(f"{head}a2a_projection:{card}\n", encoding="utf-8")
    return source


@pytest.mark.parametrize(("card", "said"), [(" *card", "`a2a_projection` is an alias of"),
                                            ('\n  <<: *card\n  version: "9.9.9"', "`a2a_projection` merges in")])
def test_a_whole_card_aliased_or_merged_from_outside_is_said(repo: Path, knoc: Knoc, card: str, said: str) -> None:
    """The card as a whole, taken from a mapping written elsewhere (by an
    alias, or merged in with keys of its own over it): one warning at
    `a2a_projection` that names where it is written."""
    _card_drafted_in_provenance(repo, card)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]
    assert code == 0 and len(found) == 1 and found[0]["message"].startswith(said), out
    assert "`provenance.origin.draft`" in found[0]["message"] and found[0]["json_path"] == "$.a2a_projection"


def test_an_alias_of_what_a_blueprint_publishes_is_no_warning(repo: Path, knoc: Knoc) -> None:
    """A perception domain and the service class are published (the index,
    an extension entry): an alias of one in the card publishes nothing
    else, and says nothing."""
    edit(repo, "content/agent-blueprints/schema-steward.kno", "    domains: [schemas, api-surface]",
         "    domains: [&dom schemas, api-surface]")
    edit(repo, "content/agent-blueprints/schema-steward.kno", "tags: [schemas, docs]", "tags: [*dom, docs]")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"], out


STEWARD = "content/agent-blueprints/schema-steward.kno"
TOKEN_URL = "          token_url: https://auth.possibility.space/realms/platform/protocol/openid-connect/token"


@pytest.mark.parametrize(("rel", "old", "new", "code"), [
    (STEWARD, TOKEN_URL, TOKEN_URL + "?client_secret=Zq8w7e6r5t4y3u2i1o0p", "KNO-CARD-AUTH-URL"),
    (STEWARD, "  documentation_url: https://possibility.space/docs/agents/schema-steward",
     "  documentation_url: https://possibility.space/docs/ghp_16C7e42F292c6912E7710c838347Ae178B4c/x",
     "KNO-CARD-URL-CREDENTIALS"),
    ("content/extensions/review-trace.kno", "uri: https://possibility.space/extensions/review-trace/v1",
     "uri: https://possibility.space/extensions/ghp_16C7e42F292c6912E7710c838347Ae178B4a/v1", "KNO-EXT-CREDENTIALS")])
def test_a_key_in_any_published_url_is_refused(repo: Path, knoc: Knoc, rel: str, old: str, new: str,
                                                code: str) -> None:
    """A security scheme's endpoint, a link, an extension's uri: a key in
    its query or its path is refused, and never repeated."""
    edit(repo, rel, old, new)
    status, out, err = knoc("build", "--format", "json", root=repo)
    assert status == 1 and code in {d["code"] for d in json_diags(out)}, out
    assert "Zq8w7e6r5t4y3u2i1o0p" not in out + err and "E7710c838347" not in out + err


@pytest.mark.parametrize(("rel", "anchored", "aliased", "field"), [
    # a blueprint's card credentials, which it never publishes
    ("content/agent-blueprints/catalog-search.kno", '  version: "0.4.2"\n', '  version: "0.4.2"\n  authentication:\n'
     "    schemes: [Bearer]\n    credentials: &c vault/prod/db\n", None),
    # a legacy card's purpose, goals, ownership: the agent-card reference says it publishes none of them
    ("content/agents/auth-agent.kno", "name: Possibility Auth Agent\n",
     "name: Possibility Auth Agent\npurpose: &c Internal shadow-pricing bot\n", None),
    # an extension's purpose, which its page does not show
    ("content/extensions/review-trace.kno", 'purpose: "Verdicts carry', 'purpose: &c "Verdicts carry', None)])
def test_an_alias_of_what_is_never_published_is_said(repo: Path, knoc: Knoc, rel: str, anchored: str, aliased: str,
                                                     field: str | None) -> None:
    """Wherever the value an alias copies is one its file never publishes,
    the alias is the warning: a blueprint's own card credentials, a legacy
    card's private fields, an extension's purpose on its page."""
    edit(repo, rel, anchored, aliased)
    target = {"content/extensions/review-trace.kno": ("      enum: [sarif, junit, markdown]",
                                                      "      enum: [sarif, junit, markdown]\n      description: *c"),
              "content/agent-blueprints/catalog-search.kno": ("tags: [search, catalog]", "tags: [search, *c]")}.get(
        rel, ("    tags: [", "    tags: [*c, "))
    edit(repo, rel, *target)
    code, out, _ = knoc("build", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]
    assert code == 0 and len(found) == 1 and found[0]["file"] == rel, out


@pytest.mark.parametrize(("anchored", "aliased"), [
    ("slug: schema-steward", "slug: &c schema-steward"), ("version: 0.3.0\n", "version: &c 0.3.0\n")])
def test_an_alias_of_an_entitys_identity_is_no_warning(repo: Path, knoc: Knoc, anchored: str, aliased: str) -> None:
    """Slug, id and version name the entity, and the index and the card
    publish them: keeping the card's in step by an alias says nothing."""
    edit(repo, STEWARD, anchored, aliased)
    edit(repo, STEWARD, "      tags: [schemas, docs]", "      tags: [schemas, *c]")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"], out


LEGACY = "content/agents/auth-agent.kno"


def _legacy_params_aliased(repo: Path, knoc: Knoc, anchored: str, params: str) -> list[dict[str, Any]]:
    """The KNO-CARD-ALIAS findings of the legacy card with `anchored` put
    before its `authentication:` and an extension entry holding `params`
    (capabilities moved after it: an alias follows its anchor)."""
    edit(repo, LEGACY, "capabilities:\n  streaming: true\n  push_notifications: false\n", "")
    edit(repo, LEGACY, "authentication:\n", anchored)
    edit(repo, LEGACY, "skills:\n", "capabilities:\n  streaming: true\n  push_notifications: false\n  extensions:\n"
         f"    - uri: https://possibility.space/extensions/review-trace/v1\n      params: {params}\nskills:\n")
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    return [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]


def test_keys_merged_in_are_read_for_what_they_copy(repo: Path, knoc: Knoc) -> None:
    """`<<: *auth` takes the legacy card's credentials into an extension's
    params: said, as `params: *auth` is."""
    found = _legacy_params_aliased(repo, knoc, "authentication: &auth\n", "\n        <<: *auth\n        format: sarif")
    assert [d["json_path"] for d in found] == ["$.capabilities.extensions[0].params.credentials"], found
    assert "`authentication.credentials`" in found[0]["message"] and "is an alias of" in found[0]["message"]


def test_a_merged_key_is_overridden_only_by_the_same_key_as_loaded(repo: Path, knoc: Knoc) -> None:
    """`"0x1"` in the card does not override a merged `0x1` (loaded as "1"):
    both keys are published, and the merge is said."""
    found = _legacy_params_aliased(repo, knoc, "provenance:\n  origin:\n    stash: &s {0x1: SECRETMERGEHEX}\n"
                                   "authentication:\n", '{"0x1": public, format: sarif, <<: *s}')
    assert [d["json_path"] for d in found] == ["$.capabilities.extensions[0].params"], found
    assert "merges in (`<<`) `provenance.origin.stash`" in found[0]["message"]


def test_an_alias_between_two_unpublished_fields_is_no_warning(repo: Path, knoc: Knoc) -> None:
    """A legacy card's goal that repeats its purpose publishes neither."""
    edit(repo, LEGACY, "name: Possibility Auth Agent\n", "name: Possibility Auth Agent\npurpose: &p Internal only\n"
         "goals:\n  - id: g1\n    description: *p\n")
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    assert not [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"], out


def test_an_anchor_inside_the_card_is_no_alias_from_outside(repo: Path, knoc: Knoc) -> None:
    """Card values shared inside the card publish nothing the card's lines
    do not show: no warning."""
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "  description: Searches the KNO content catalog by name, type, domain or tag.",
         "  description: &about Searches the KNO content catalog by name, type, domain or tag.")
    edit(repo, "content/agent-blueprints/catalog-search.kno",
         "      description: Returns entities matching a query, ranked by relevance.", "      description: *about")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-ALIAS"]


@pytest.mark.parametrize("query", ["?key=getting%20started", "?code=print%28%22hi%22%29", "?auth=none%2Cbasic%2Cdigest",
                                   "?code=chapter-2-getting-started-guide"])
def test_percent_encoded_text_after_a_weak_name_is_no_credential(repo: Path, knoc, query: str) -> None:  # type: ignore[no-untyped-def]
    """`key`, `code` and `auth` name a credential only before a token: an
    escaped space or punctuation is text (a search, a code sample), and so
    are the hyphened words of a page's name."""
    edit(repo, BLUEPRINT, "  description: Condenses", f"  documentation_url: https://docs.possibility.space/doc{query}\n"
                                                   "  description: Condenses")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if "CREDENTIALS" in d["code"]], json_diags(out)


def test_a_hidden_character_in_a_link_is_said_beside_the_links_own_error(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A `javascript:` documentation url stays refused (`KNO-CARD-LINK`)
    with a zero-width space in it; the hidden character is said too."""
    edit(repo, BLUEPRINT, "  description: Condenses",
         '  documentation_url: "javascript:fetch(\'//evil.example/\')\\u200b"\n  description: Condenses')
    code, out, _ = knoc("build", "--format", "json", root=repo)
    codes = {d["code"] for d in json_diags(out)}
    assert code == 1 and {"KNO-CARD-LINK", "KNO-CARD-HIDDEN-TEXT"} <= codes, codes
