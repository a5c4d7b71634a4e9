"""Forgery and trust (the third round of hostile input, items 1 to 4): a
signed build whose key sets or signatures were tampered with fails `knoc
check`, cached or not; `knoc verify` agrees with what every SDK verifies,
fetches a card's key set only over https from the card's own host, and
stays bounded however many signatures a card carries."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from knoc.a2a import signing
from knoc.output.canonical import dumps
from tests.conftest import Knoc, json_diags
from tests.test_signing import pin, write_key

SITE = "build/site"
CARD = f"{SITE}/agents.possibility.space/catalog-search/.well-known/agent-card.json"


@pytest.fixture
def signed(repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example, its key pinned in knoc.toml, built signed (compat: cards with two views)."""
    key, _ = write_key(tmp_path_factory.mktemp("key"), "ed25519")
    pin(repo, key)
    code, _, err = knoc("build", "--a2a", "compat", "--sign-key", str(key), root=repo)
    assert code == 0, err
    assert knoc("check", "--a2a", "compat", root=repo)[0] == 0
    return repo


def _fix_manifest(repo: Path) -> None:
    """What a forger does after editing build/: make the manifest's digests match again."""
    path = repo / "build/manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["outputs"] = {rel: hashlib.sha256((repo / "build" / rel).read_bytes()).hexdigest()
                           for rel in manifest["outputs"] if (repo / "build" / rel).is_file()}
    path.write_bytes(dumps(manifest))


def _jwks_files(repo: Path) -> list[Path]:
    return sorted((repo / SITE).rglob("jwks.json"))


def _check(knoc: Knoc, repo: Path, *more: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = knoc("check", "--a2a", "compat", "--format", "json", *more, root=repo)
    assert "Traceback" not in out + err
    return code, json_diags(out)


@pytest.mark.parametrize("cache", [(), ("--no-cache",)])
def test_a_key_planted_in_every_key_set_is_drift(signed: Path, knoc: Knoc, cache: tuple[str, ...]) -> None:
    planted = signing.published(signing.public_jwk(ed25519.Ed25519PrivateKey.generate()), "planted")
    for path in _jwks_files(signed):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["keys"].append(planted)
        path.write_bytes(dumps(doc))
    _fix_manifest(signed)
    code, found = _check(knoc, signed, *cache)
    assert code == 1 and any(d["code"] == "KNO-DRIFT" and "jwks.json" in d["message"] for d in found), found


@pytest.mark.parametrize("cache", [(), ("--no-cache",)])
def test_a_card_signed_by_a_planted_key_is_refused(signed: Path, knoc: Knoc, cache: tuple[str, ...]) -> None:
    header = json.loads(_b64(json.loads((signed / CARD).read_text(encoding="utf-8"))["signatures"][0]["protected"]))
    forger = signing.Signer(ed25519.Ed25519PrivateKey.generate(), header["kid"])  # even the real key's kid
    for path in _jwks_files(signed):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["keys"] = [signing.published(signing.public_jwk(forger.key), header["kid"])]
        path.write_bytes(dumps(doc))
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))  # the card as built, signed anew by the forger
    card["signatures"] = signing.sign({k: v for k, v in card.items() if k != "signatures"}, [forger], header["jku"])
    (signed / CARD).write_bytes(dumps(card))
    _fix_manifest(signed)
    code, found = _check(knoc, signed, *cache)
    assert code == 1 and {"KNO-DRIFT", "KNO-SIGNATURE"} <= {d["code"] for d in found}, found
    assert any("catalog-search" in d["file"] for d in found if d["code"] == "KNO-SIGNATURE")


@pytest.mark.parametrize("cache", [(), ("--no-cache",)])
def test_a_signed_build_stripped_of_its_signatures_is_refused(signed: Path, knoc: Knoc,
                                                              cache: tuple[str, ...]) -> None:
    for path in sorted((signed / SITE).rglob("agent*.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        card.pop("signatures", None)
        path.write_bytes(dumps(card))
    for path in _jwks_files(signed):
        path.unlink()
    manifest = json.loads((signed / "build/manifest.json").read_text(encoding="utf-8"))
    manifest.pop("signing")
    manifest["outputs"] = {k: v for k, v in manifest["outputs"].items() if not k.endswith("jwks.json")}
    (signed / "build/manifest.json").write_bytes(dumps(manifest))
    _fix_manifest(signed)
    code, found = _check(knoc, signed, *cache)
    refused = [d for d in found if d["code"] == "KNO-SIGNATURE"]
    assert code == 1 and refused and "no signature" in refused[0]["message"], found
    assert len(refused) == 1 and "more cards" in refused[0]["message"]  # one finding, not one per card


def test_a_card_stripped_of_its_signature_is_named_not_its_root_copy(signed: Path, knoc: Knoc) -> None:
    """The host's root copy still holds the signature: the card that lost
    it is the finding, and the untouched copy is no drift."""
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))
    card.pop("signatures")
    (signed / CARD).write_bytes(dumps(card))
    code, found = _check(knoc, signed)
    [refused] = [d for d in found if d["code"] == "KNO-SIGNATURE"]
    assert code == 1 and refused["file"] == CARD, found
    root = f"{SITE}/agents.possibility.space/.well-known/agent-card.json"
    assert not [d for d in found if d["code"] == "KNO-DRIFT" and root in d["message"]], found


def test_a_root_copy_is_its_cards_bytes_however_validly_signed(signed: Path, knoc: Knoc) -> None:
    """A root copy whose signatures verify but are not the card's (their
    order swapped, one left out in a rotation) is drift, named as such."""
    root = signed / f"{SITE}/agents.possibility.space/.well-known/agent-card.json"
    before = root.read_bytes()
    card = json.loads(before)
    assert len(card["signatures"]) > 1  # compat: one for each view
    card["signatures"].reverse()
    root.write_bytes(dumps(card))
    headers = signed / f"{SITE}/agents.possibility.space/_headers"  # the forger's ETag too
    headers.write_text(headers.read_text(encoding="utf-8").replace(
        hashlib.sha256(before).hexdigest(), hashlib.sha256(root.read_bytes()).hexdigest()), encoding="utf-8")
    _fix_manifest(signed)
    code, found = _check(knoc, signed)
    assert code == 1 and any(d["code"] == "KNO-DRIFT" and d["file"] == root.relative_to(signed).as_posix()
                             for d in found), found


def test_an_unprotected_header_added_to_a_signature_is_refused(signed: Path, knoc: Knoc) -> None:
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))
    card["signatures"][0]["header"] = {"jku": "https://evil.example/jwks.json", "kid": "evil"}
    (signed / CARD).write_bytes(dumps(card))
    _fix_manifest(signed)
    code, found = _check(knoc, signed)
    assert code == 1 and any(d["code"] == "KNO-SIGNATURE" and "header" in d["message"] for d in found), found


def test_a_signed_build_is_not_checked_without_a_pin(repo: Path, knoc: Knoc,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    key, _ = write_key(tmp_path_factory.mktemp("key"), "ed25519")
    code, out, err = knoc("build", "--sign-key", str(key), "--format", "json", root=repo)
    [unpinned] = [d for d in json_diags(out) if d["code"] == "KNO-SIGNING-UNPINNED"]
    assert code == 0 and {d["code"] for d in json_diags(out)} == {"KNO-SIGNING-UNPINNED", "KNO-SIGNING-UNPROTECTED",
                                                                  "KNO-SIGNING-UNVERIFIABLE"}
    assert "public = { kty" in unpinned["hint"]  # the line to add
    code, _, err = knoc("check", root=repo)
    assert code == 2 and "KNO-SIGNING" in err and "pins no public key" in err
    other, _ = write_key(tmp_path_factory.mktemp("other"), "ed25519")
    pin(repo, other)  # now pinned, but to another key than the build's
    code, out, _ = knoc("check", "--format", "json", root=repo)
    assert code == 1 and any(d["code"] == "KNO-SIGNATURE" for d in json_diags(out)), out
    code, _, err = knoc("build", "--sign-key", str(key), root=repo)
    assert code == 2 and "is not one knoc.toml pins" in err  # and a build with an unpinned key is refused


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- 2: key sets only over https, only from the card's host -----------------------------

def _verify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "knoc", "verify", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_allow_jku_fetches_only_https_from_the_cards_own_host(signed: Path, tmp_path: Path) -> None:
    """A forged card whose jku names a plain-http key set, or one on another
    host, is never fetched: the signature is reported, the card invalid."""
    forger = signing.Signer(ed25519.Ed25519PrivateKey.generate(), "k")
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))
    card["description"] = "Forged."
    for jku in ("http://127.0.0.1:9/jwks.json", "https://evil.example/jwks.json"):
        card["signatures"] = signing.sign({k: v for k, v in card.items() if k != "signatures"}, [forger], jku)
        path = tmp_path / "forged.json"
        path.write_text(json.dumps(card), encoding="utf-8")
        done = _verify(str(path), "--allow-jku", "--format", "json")
        report = json.loads(done.stdout)
        assert done.returncode == 1 and not report["valid"], done.stdout + done.stderr
        assert jku in report["refused_key_sets"], report
        why = report["refused_key_sets"][jku]
        assert ("not an https URL" in why) if jku.startswith("http:") else ("not on the card's host" in why)


# --- 3: valid only when every client that reads the card verifies it ------------------------

def _keys(repo: Path) -> str:
    return str(_jwks_files(repo)[0].parent / "jwks.json")


def _card_file(tmp_path: Path, card: dict[str, Any]) -> str:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return str(path)


def test_a_compat_card_whose_1x_interfaces_changed_is_invalid(signed: Path, tmp_path: Path) -> None:
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))
    card["supportedInterfaces"] = [{**i, "url": "https://evil.example/a2a"} for i in card["supportedInterfaces"]]
    keyset = signed / SITE / "agents.possibility.space/.well-known/jwks.json"
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset), "--format", "json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and not report["valid"]
    covered = {r["reader"]: r["covered"] for r in report["readers"]}
    assert covered == {"a2a-sdk 1.x": False, "@a2a-js/sdk": False, "@a2a-js/sdk client": False, "a2a-sdk 0.3": True}


SDK_READS = {  # fields an SDK reads that a camelCase-only reading of the card would leave out
    "icon_url": lambda c: c.update(icon_url="https://evil.example/i.png"),
    "documentation_url": lambda c: c.update(documentation_url="https://evil.example/"),
    "legacy security": lambda c: c.update(security=[{"evil": ["admin"]}], securityRequirements=None),
    "supportsAuthenticatedExtendedCard": lambda c: (c.update(supportsAuthenticatedExtendedCard=True),
                                                    c["capabilities"].pop("extendedAgentCard", None)),
    "skill input_modes": lambda c: c["skills"][0].update(input_modes=["image/png"]),
    "implicit flow": lambda c: c.update(securitySchemes={"o": {"oauth2SecurityScheme": {"flows": {"implicit": {
        "authorizationUrl": "https://evil.example/auth", "scopes": {"r": "read"}}}}}}),
}


@pytest.mark.parametrize("change", sorted(SDK_READS))
def test_a_field_an_sdk_reads_added_after_signing_makes_the_card_invalid(
        repo: Path, knoc: Knoc, tmp_path: Path, change: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import create_signature_verifier
    from jwt import PyJWK

    key, _ = write_key(tmp_path_factory.mktemp("key"), "ed25519")
    assert knoc("build", "--sign-key", str(key), root=repo)[0] == 0
    card = json.loads((repo / CARD).read_text(encoding="utf-8"))
    SDK_READS[change](card)
    card = {k: v for k, v in card.items() if v is not None}
    keyset = repo / SITE / "agents.possibility.space/.well-known/jwks.json"
    keys = {k["kid"]: k for k in json.loads(keyset.read_text())["keys"]}
    verifier = create_signature_verifier(lambda kid, jku: PyJWK(keys[kid]), ["EdDSA"])
    with pytest.raises(Exception):  # noqa: B017 -- the SDK's own verdict, whatever it raises
        verifier(parse_agent_card(copy.deepcopy(card)))
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset))
    assert done.returncode == 1 and "invalid" in done.stdout.splitlines()[-1], done.stdout


def test_an_sdk_signed_card_with_an_implicit_flow_is_valid(tmp_path: Path) -> None:
    """The reverse: a card a2a-sdk 1.3 signs (an implicit-only OAuth scheme)
    verifies in knoc as in the SDK."""
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict
    from jwt import PyJWK

    private = ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    raw = {"name": "A", "description": "d", "version": "1.0.0",
           "supportedInterfaces": [{"url": "https://a.example/a2a", "protocolBinding": "JSONRPC",
                                    "protocolVersion": "1.0"}],
           "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
           "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
           "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"implicit": {
               "authorizationUrl": "https://a.example/auth", "scopes": {"r": "read"}}}}}}}
    signer = create_agent_card_signer(pem, {"alg": "EdDSA", "kid": "k", "typ": "JOSE", "jku": None})
    card = MessageToDict(signer(parse_agent_card(raw)))
    jwk = {**signing.published(signing.public_jwk(private), "k")}
    keyset = tmp_path / "jwks.json"
    keyset.write_text(json.dumps({"keys": [jwk]}), encoding="utf-8")
    assert PyJWK(jwk).key is not None
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset))
    # Signed over the 1.x reading only: valid for the 1.x readers, which is every reader of a 1.0 card
    # but the JS client's resolved view, which drops proto-shaped schemes and so needs a signature of its own.
    assert "a2a-sdk 1.x: covered by signature 0" in done.stdout and "@a2a-js/sdk: covered" in done.stdout, done.stdout


# --- 4: bounded cost ---------------------------------------------------------------------------

def test_a_card_with_a_thousand_kidless_signatures_is_answered_at_once(tmp_path: Path) -> None:
    keyset = tmp_path / "jwks.json"
    keys = [signing.published(signing.public_jwk(ed25519.Ed25519PrivateKey.generate()), f"k{i}") for i in range(64)]
    keyset.write_text(json.dumps({"keys": keys}), encoding="utf-8")
    card = {"name": "A", "description": "x" * (1 << 20), "version": "1", "url": "https://a.example/",
            "supportedInterfaces": [{"url": "https://a.example/", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["t"], "defaultOutputModes": ["t"],
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
            "signatures": [{"protected": "eyJhbGciOiJFZERTQSJ9", "signature": "A" * 86}] * 1000}
    start = time.monotonic()
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset))
    assert time.monotonic() - start < 10
    assert done.returncode == 1 and "at most 16" in done.stdout
    card["signatures"] = card["signatures"][:16]
    start = time.monotonic()
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset))
    assert time.monotonic() - start < 10
    assert done.returncode == 1 and "names no key (`kid`" in done.stdout
    many = tmp_path / "many.json"
    many.write_text(json.dumps({"keys": keys * 2}), encoding="utf-8")
    done = _verify(_card_file(tmp_path, card), "--jwks", str(many))
    assert done.returncode == 2 and "at most 64" in done.stderr



# --- the second look: encodings and headers the SDKs refuse, redirects ------------------------

RE_ENCODED = {
    "standard alphabet": lambda s: s.replace("_", "/").replace("-", "+") if ("_" in s or "-" in s) else "+" + s[1:],
    "trailing bits": lambda s: s[:-1] + {"A": "B", "Q": "R", "g": "h", "w": "x"}.get(s[-1], "B"),
    "junk inside": lambda s: s[:10] + "!!!!" + s[10:],
    "whitespace inside": lambda s: s[:10] + "\n  " + s[10:],
    "padding": lambda s: s + "==",
}


@pytest.mark.parametrize("how", sorted(RE_ENCODED))
def test_a_re_encoded_signature_is_refused(how: str, signed: Path, knoc: Knoc, tmp_path: Path) -> None:
    """A lenient base64 decoder takes forms a2a-sdk 1.x refuses: check and
    verify hold every signature to the strict base64url a build writes."""
    card = json.loads((signed / CARD).read_text(encoding="utf-8"))
    card["signatures"][0]["signature"] = RE_ENCODED[how](card["signatures"][0]["signature"])
    (signed / CARD).write_bytes(dumps(card))
    _fix_manifest(signed)
    code, found = _check(knoc, signed)
    assert code == 1 and any(d["code"] in ("KNO-SIGNATURE", "KNO-DRIFT") for d in found), found
    done = _verify(_card_file(tmp_path, card), "--jwks", _keys(signed), "--format", "json")
    assert json.loads(done.stdout)["signatures"][0]["valid"] is False


HEADERS = {
    "crit": {"crit": ["x-evil"], "x-evil": 1},
    "b64 false": {"b64": False, "crit": ["b64"]},
    "empty typ": {"typ": ""},
}


@pytest.mark.parametrize("extra", sorted(HEADERS))
def test_a_signature_whose_header_an_sdk_refuses_is_invalid(extra: str, tmp_path: Path) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    built = json.loads((Path(__file__).parent.parent / CARD).read_text(encoding="utf-8"))
    payload = signing.payloads(built)[0]
    header = {"alg": "EdDSA", "typ": "JOSE", "kid": "k", **HEADERS[extra]}
    protected = signing.b64url(json.dumps(header).encode())
    raw = key.sign(f"{protected}.{signing.b64url(payload)}".encode())
    card = {**built, "signatures": [{"protected": protected, "signature": signing.b64url(raw)}]}
    keyset = tmp_path / "jwks.json"
    keyset.write_text(json.dumps({"keys": [signing.published(signing.public_jwk(key), "k")]}), encoding="utf-8")
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset), "--format", "json")
    assert done.returncode == 1 and json.loads(done.stdout)["signatures"][0]["valid"] is False, done.stdout
    bom = signing.b64url(b"\xef\xbb\xbf" + json.dumps({"alg": "EdDSA", "typ": "JOSE", "kid": "k"}).encode())
    raw = key.sign(f"{bom}.{signing.b64url(payload)}".encode())
    card["signatures"] = [{"protected": bom, "signature": signing.b64url(raw)}]
    done = _verify(_card_file(tmp_path, card), "--jwks", str(keyset))
    assert done.returncode == 1, done.stdout


def test_a_key_set_redirect_leaves_neither_https_nor_the_cards_host(repo: Path, tmp_path: Path,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    """The jku is on the card's host, over https; it redirects to plain
    http elsewhere: knoc follows no such redirect."""
    import os
    import socket

    from tests.tls import certificates, https

    ca, cert, key_file = certificates(tmp_path_factory.mktemp("tls"))
    forger = signing.Signer(ed25519.Ed25519PrivateKey.generate(), "evil")
    served = tmp_path_factory.mktemp("served")
    (served / "evil.json").write_text(json.dumps({"keys": [signing.published(signing.public_jwk(forger.key),
                                                                             "evil")]}), encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with https(served, cert, key_file, port):
        for target in (f"http://127.0.0.1:{port}/evil.json", f"https://localhost:{port}/evil.json"):
            card = json.loads((Path(__file__).parent.parent / CARD).read_text(encoding="utf-8"))
            card["supportedInterfaces"][0]["url"] = f"https://127.0.0.1:{port}/agent"
            jku = f"https://127.0.0.1:{port}/redirect?to={target}"
            card["signatures"] = signing.sign({k: v for k, v in card.items() if k != "signatures"}, [forger], jku)
            done = _verify(_card_file(tmp_path, card), "--allow-jku", env={**os.environ, "SSL_CERT_FILE": str(ca)})
            assert done.returncode == 2 and "valid: every" not in done.stdout, done.stdout + done.stderr
            assert "https" in done.stderr or "host" in done.stderr, done.stderr
