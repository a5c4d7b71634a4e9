"""Signed cards (issue: authenticity a client can verify): every card of the
example, signed with a fresh Ed25519 and a fresh P-256 key, for 1.0 and
compat, verifies with a2a-sdk's own verifier against the published key set;
any change to a signed field, or a signature moved to another card, makes
it fail; an Ed25519 build is byte-identical when rebuilt; `knoc check`
needs no key; private keys never reach the repo, build/ or the cache.
The JS SDK's and a2a-sdk 0.3's verifiers run in tests/test_interop.py."""

from __future__ import annotations

import base64
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import create_signature_verifier
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from jwt import PyJWK

from knoc.a2a import signing
from knoc.app.signing import pin_line
from tests.conftest import Knoc, json_diags, tree

KINDS = {"ed25519": ed25519.Ed25519PrivateKey.generate, "p256": lambda: ec.generate_private_key(ec.SECP256R1())}


def write_key(folder: Path, kind: str) -> tuple[Path, bytes]:
    key = KINDS[kind]()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path = folder / f"{kind}.pem"
    path.write_bytes(pem)
    path.chmod(0o600)  # as `knoc keys new` writes one
    raw = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return path, raw


@pytest.fixture
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, bytes]]:
    """Fresh keys, outside every repo the tests use."""
    folder = tmp_path_factory.mktemp("keys")
    return {kind: write_key(folder, kind) for kind in KINDS}


def cards(repo: Path) -> dict[str, dict[str, Any]]:
    site = repo / "build/site"
    return {p.relative_to(site).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(site.rglob("agent*.json"))}


def jwks(repo: Path, rel: str) -> list[dict[str, Any]]:
    host = rel.split("/", 1)[0]
    return json.loads((repo / f"build/site/{host}/.well-known/jwks.json").read_text())["keys"]  # type: ignore[no-any-return]


def sdk_verifies(card: dict[str, Any], keyset: list[dict[str, Any]]) -> bool:
    """a2a-sdk 1.x's own verifier, fed the key the protected header names."""
    by_kid = {k["kid"]: k for k in keyset}
    verifier = create_signature_verifier(lambda kid, jku: PyJWK(by_kid[kid]), ["EdDSA", "ES256"])
    try:
        verifier(parse_agent_card(copy.deepcopy(card)))
    except Exception:  # its errors: NoSignatureError, InvalidSignaturesError, a missing kid
        return False
    return True


@pytest.mark.parametrize("target", ["1.0", "compat"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_card_verifies_with_the_sdk_and_the_published_keys(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], target: str, kind: str) -> None:
    code, _, err = knoc("build", "--a2a", target, "--sign-key", str(keys[kind][0]), root=repo)
    assert code == 0 and "signed with 1 key" in err, err
    built = {rel: c for rel, c in cards(repo).items() if rel.endswith("agent-card.json")}
    assert len(built) == 10  # 7 agents, and the root copies of three hosts' primaries
    for rel, card in built.items():
        header = json.loads(_b64(card["signatures"][0]["protected"]))
        host = rel.split("/", 1)[0]
        assert header["typ"] == "JOSE" and header["alg"] == ("EdDSA" if kind == "ed25519" else "ES256")
        assert header["jku"] == f"https://{host}/.well-known/jwks.json" and header["kid"] == jwks(repo, rel)[0]["kid"]
        # One signature per distinct view its clients verify (compat: its 0.3 view too; a card with
        # security schemes: the JS client's resolved view, which has none), the 1.x SDK's first.
        assert len(card["signatures"]) == len(signing.payloads(card)) >= (2 if target == "compat" else 1)
        assert sdk_verifies(card, jwks(repo, rel))
        for i, one in enumerate(card["signatures"]):  # each alone: only the first covers a2a-sdk 1.x's view
            assert sdk_verifies({**card, "signatures": [one]}, jwks(repo, rel)) == (i == 0), (rel, i)


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


TAMPER = {
    "name": lambda c: c.update(name=c["name"] + "!"),
    "url": lambda c: c["supportedInterfaces"][0].update(url="https://evil.example/a2a"),
    "skill": lambda c: c["skills"][0].update(description="Does something else."),
    "security requirement": lambda c: c.update(securityRequirements=[]),
    "security schemes": lambda c: c.pop("securitySchemes"),  # its clients would send no credentials
}


@pytest.mark.parametrize("change", sorted(TAMPER))
def test_changing_a_signed_field_or_moving_a_signature_fails_verification(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], change: str) -> None:
    assert knoc("build", "--sign-key", str(keys["ed25519"][0]), root=repo)[0] == 0
    built = cards(repo)
    rel = next(r for r, c in built.items() if r.endswith("agent-card.json") and c.get("securityRequirements"))
    card = copy.deepcopy(built[rel])
    assert sdk_verifies(card, jwks(repo, rel))
    TAMPER[change](card)
    assert not sdk_verifies(card, jwks(repo, rel))
    other = next(r for r in built if r.endswith("agent-card.json") and r != rel)
    swapped = {**built[rel], "signatures": built[other]["signatures"]}
    assert not sdk_verifies(swapped, jwks(repo, rel))
    path = repo / "tampered.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(path), "--jwks",
                           str(repo / f"build/site/{rel.split('/')[0]}/.well-known/jwks.json")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "cannot verify what they read" in done.stdout


def test_a_client_that_verifies_less_than_it_reads_gets_no_signature_and_the_build_says_so(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    """The JS client verifies a 1.0 card without its security schemes: a
    signature over that would verify the card stripped of them everywhere."""
    pin(repo, keys["ed25519"][0])
    code, out, _ = knoc("build", "--sign-key", str(keys["ed25519"][0]), "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SIGNING-UNVERIFIABLE"]
    assert code == 0 and found["file"].endswith(".kno") and "`$.securitySchemes`" in found["message"]
    assert "--a2a compat" in found["hint"] and knoc("check", root=repo)[0] == 0
    code, out, _ = knoc("build", "--sign-key", str(keys["ed25519"][0]), "--a2a", "compat", "--format", "json",
                        root=repo)
    assert code == 0 and "KNO-SIGNING-UNVERIFIABLE" not in out


@pytest.mark.parametrize(("target", "slug", "field"), [
    ("1.0", "catalog-search", "supportedInterfaces[1].protocolVersion"),
    ("compat", "schema-steward", "capabilities.pushNotifications"),
])
def test_a_field_renamed_where_the_js_client_reads_it_as_written_is_invalid(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], target: str, slug: str, field: str) -> None:
    """The JS verifier reads `protocol_version` as `protocolVersion`; its
    ClientFactory picks the interface (and its Client asks for push) by the
    property as written, so it would act on another card than the one the
    signature vouched for."""
    assert knoc("build", "--sign-key", str(keys["ed25519"][0]), "--a2a", target, root=repo)[0] == 0
    rel = f"agents.possibility.space/{slug}/.well-known/agent-card.json"
    card = cards(repo)[rel]
    moved = copy.deepcopy(card)
    if field.startswith("supportedInterfaces"):
        moved["supportedInterfaces"][1]["protocol_version"] = moved["supportedInterfaces"][1].pop("protocolVersion")
        assert sdk_verifies(card, jwks(repo, rel)) and sdk_verifies(moved, jwks(repo, rel))  # a2a-sdk reads it alike
    else:
        assert card["capabilities"]["pushNotifications"] is True
        moved["capabilities"]["push_notifications"] = moved["capabilities"].pop("pushNotifications")
    path = repo / "moved.json"
    path.write_text(json.dumps(moved), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(path), "--jwks",
                           str(repo / "build/site/agents.possibility.space/.well-known/jwks.json")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and f"`{field}` as written" in done.stdout, done.stdout


def test_a_signed_repo_whose_build_is_gone_is_told_missing_not_unsigned(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    pin(repo, keys["ed25519"][0])
    assert knoc("build", "--sign-key", str(keys["ed25519"][0]), root=repo)[0] == 0
    assert knoc("clean", root=repo)[0] == 0
    code, out, _ = knoc("check", "--format", "json", root=repo)
    found = {d["code"] for d in json_diags(out)}
    assert code == 1 and "KNO-DRIFT" in found and "KNO-SIGNATURE" not in found  # missing, not "unsigned"


def pin(repo: Path, key: Path) -> None:
    """Pin the key's public half in the repo's knoc.toml, as `knoc keys public` says to."""
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[signing]\n{pin_line(signing.public_jwk(private))}\n")  # type: ignore[arg-type]


def test_keys_public_in_a_repo_that_pins_keys_gives_the_list_that_adds_it(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    """A second `public = ...` line would not parse: the line to paste holds both keys."""
    pin(repo, keys["ed25519"][0])

    def public(kind: str) -> str:
        done = subprocess.run([sys.executable, "-m", "knoc", "keys", "public", str(keys[kind][0])], cwd=repo,
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()[-1]

    assert public("ed25519") == "knoc.toml pins it already, under [signing] `public`"
    line = public("p256").split("under [signing]: ")[1]
    assert line.startswith("public = [{ ") and line.count("{") == 2
    made = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(keys["p256"][0].parent / "third.pem")],
                          cwd=repo, capture_output=True, text=True, check=True)  # a new key: the same list
    assert "beside the keys pinned there" in made.stdout and "public = [{ " in made.stdout, made.stdout
    assert f"knoc build --sign-key CURRENT.pem --sign-key {keys['p256'][0].parent / 'third.pem'}" in made.stdout
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:  # knoc.toml names the current key: so does the advice
        f.write(f'key = "{keys["ed25519"][0]}"\n')
    made = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(keys["p256"][0].parent / "fourth.pem")],
                          cwd=repo, capture_output=True, text=True, check=True)
    assert f"knoc build --sign-key {keys['ed25519'][0]} --sign-key {keys['p256'][0].parent / 'fourth.pem'}" in \
        made.stdout, made.stdout
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")  # a key knoc.toml names, not on this machine
    (repo / "knoc.toml").write_text(settings.replace(str(keys["ed25519"][0]), str(repo.parent / "gone.pem")),
                                    encoding="utf-8")
    made = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(keys["p256"][0].parent / "fifth.pem")],
                          cwd=repo, capture_output=True, text=True, check=True)
    assert "knoc build --sign-key CURRENT.pem --sign-key" in made.stdout and "gone.pem" not in made.stdout
    (repo / "knoc.toml").write_text(settings, encoding="utf-8")
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text("\n".join(line if ln.startswith("public = ") else ln
                                              for ln in settings.splitlines()) + "\n", encoding="utf-8")
    assert public("p256") == public("ed25519") == "knoc.toml pins it already, under [signing] `public`"
    code, out, err = knoc("build", "--sign-key", str(keys["p256"][0]), root=repo)
    assert code == 0 and "KNO-SIGNING-UNPINNED" not in out + err and "signed with 1 key" in out + err
    [idle] = [line for line in err.splitlines() if "KNO-SIGNING-PIN-IDLE" in line]  # mid-rotation: one key left out
    assert "which does not sign this build: its cards lose that key's signature" in idle
    code, out, err = knoc("build", "--sign-key", str(keys["p256"][0]), "--sign-key", str(keys["ed25519"][0]),
                          root=repo)
    assert code == 0 and "KNO-SIGNING-PIN-IDLE" not in err and "signed with 2 keys" in out + err
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:  # `kid` with two keys: still read, and said
        f.write('kid = "mine"\n')
    assert public("ed25519") == "knoc.toml pins it already, under [signing] `public`"
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:  # a knoc.toml that does not read: said
        f.write("[broken\n")
    assert "does not read (`knoc validate` says why)" in public("ed25519")


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
def test_a_signed_build_is_byte_identical_and_check_needs_no_key(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], kind: str) -> None:
    """ES256 too (RFC 6979's nonce): a rebuild rewrites no card, and the hook stages none."""
    key = str(keys[kind][0])
    pin(repo, keys[kind][0])
    assert knoc("build", "--sign-key", key, root=repo)[0] == 0
    first = tree(repo / "build")
    assert knoc("build", "--sign-key", key, "--no-cache", root=repo)[0] == 0
    assert tree(repo / "build") == first
    assert "KNOC_SIGNING_KEY" not in os.environ
    code, out, err = knoc("check", root=repo)  # no key anywhere
    assert code == 0, out + err
    card = repo / "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"
    card_text = card.read_text(encoding="utf-8")
    signed = json.loads(card_text)
    sig = signed["signatures"][0]["signature"]
    signed["signatures"][0]["signature"] = ("A" if sig[0] != "A" else "B") + sig[1:]
    card.write_text(json.dumps(signed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SIGNATURE"]
    assert code == 1 and "does not verify" in found["message"]
    signed["signatures"][0]["signature"] = sig
    signed["description"] = "Edited by hand after signing."
    card.write_text(json.dumps(signed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    assert code == 1 and any(d["code"] == "KNO-DRIFT" and "catalog-search" in d["message"] for d in json_diags(out))
    # Its diff shows what changed in the card, not the signatures a build with the key writes again.
    [stale] = [d for d in json_diags(out) if "stale" in d["message"] and "catalog-search" in d["message"]]
    assert "Edited by hand" in stale["detail"] and "signature" not in stale["detail"]
    signed["description"] = json.loads(card_text)["description"]  # the card as signed, written otherwise:
    card.write_text(json.dumps(signed, separators=(",", ":")), encoding="utf-8")  # its diff shows how
    code, out, _ = knoc("check", "--format", "json", root=repo)
    [stale] = [d for d in json_diags(out) if "stale" in d["message"] and "catalog-search" in d["message"]]
    assert code == 1 and '-{"' in stale["detail"]
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(settings.split("\n[signing]")[0] + "\n", encoding="utf-8")  # no pin: a key
    env = {**os.environ, "KNOC_SIGNING_KEY": "not a key"}  # stands in, and this one is unusable: check says
    done = subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True,
                          text=True, env=env)  # what it takes (it has no --sign-key)
    assert done.returncode == 2 and "--sign-key" not in done.stderr and "pin the public keys" in done.stderr
    (repo / "knoc.toml").write_text(settings, encoding="utf-8")
    (repo / "build/site/agents.possibility.space/.well-known/jwks.json").unlink()  # and with no key set
    assert knoc("check", root=repo)[0] == 1


def test_several_keys_and_retired_ones_are_published(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    retired_key = ed25519.Ed25519PrivateKey.generate().public_key()
    (repo / "retired.pem").write_bytes(retired_key.public_bytes(serialization.Encoding.PEM,
                                                                serialization.PublicFormat.SubjectPublicKeyInfo))
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('\n[signing]\nretired = ["retired.pem"]\n')
    code, _, err = knoc("build", "--sign-key", str(keys["ed25519"][0]), "--sign-key", str(keys["p256"][0]),
                        root=repo)
    assert code == 0 and "signed with 2 keys" in err, err
    rel = "agents.possibility.space/catalog-search/.well-known/agent-card.json"
    keyset = jwks(repo, rel)
    assert [k["alg"] for k in keyset] == ["EdDSA", "ES256", "EdDSA"]  # the signers, then the retired key
    card = cards(repo)[rel]
    assert len(card["signatures"]) == 2 * len(signing.payloads(card)) and sdk_verifies(card, keyset)
    manifest = json.loads((repo / "build/manifest.json").read_text())
    assert manifest["signing"]["keys"] == [k["kid"] for k in keyset[:2]]


def test_a_private_key_never_enters_the_repo_or_the_output(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    inside, _ = write_key(repo, "ed25519")
    code, _, err = knoc("build", "--sign-key", str(inside), root=repo)
    assert code == 2 and "KNO-SIGNING" in err and "inside the repo" in err
    assert "PRIVATE KEY" not in err and not (repo / "build").exists()
    path, raw = keys["p256"]
    pem = path.read_text(encoding="utf-8")
    monkeypatch.setenv("KNOC_SIGNING_KEY", pem)  # the PEM itself, as a CI secret holds it
    code, out, err = knoc("build", root=repo)
    assert code == 0 and "signed with 1 key" in err
    body = pem.split("-----")[2].replace("\n", "")
    for folder in (repo / "build", repo / ".knoc-cache"):
        for name, data in tree(folder).items():
            assert body.encode() not in data and raw not in data and b"PRIVATE KEY" not in data, name
            assert b'"d":' not in data, name  # no private JWK member
    assert body not in out + err
    monkeypatch.setenv("KNOC_SIGNING_KEY", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "KNOC_SIGNING_KEY is not an unencrypted PEM private key" in err and "not a key" not in err


def test_a_key_given_encoded_signs_or_is_refused_without_being_repeated(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI secret often holds the PEM file base64-encoded: it signs. The
    key's body alone (a PEM's middle line), or base64 of anything else, is
    refused, and no message repeats it (it was taken for a path and quoted)."""
    path, _ = keys["ed25519"]
    pem = path.read_bytes()
    encoded = base64.b64encode(pem).decode()
    for given in (encoded, "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76))):  # as `base64` wraps
        monkeypatch.setenv("KNOC_SIGNING_KEY", given)
        code, _, err = knoc("build", root=repo)
        assert code == 0 and "signed with 1 key" in err, err
    body = pem.decode().splitlines()[1]
    jwk = '{"kty": "OKP", "crv": "Ed25519", "d": "' + body[:43] + '"}'
    for given in (body, f"{body[:20]} {body[20:]}", jwk, base64.b64encode(b"not a key at all, but long enough").decode()):
        monkeypatch.setenv("KNOC_SIGNING_KEY", given)
        code, _, err = knoc("build", root=repo)
        assert code == 2 and "KNOC_SIGNING_KEY names no file and holds no PEM private key" in err
        assert body[:12] not in err and body[-12:] not in err
        monkeypatch.delenv("KNOC_SIGNING_KEY")
        code, out, err = knoc("build", "--sign-key", given, "--format", "sarif", root=repo)
        assert code == 2 and body[:12] not in out + err and body[-12:] not in out + err


def test_knoc_toml_never_holds_the_private_key_itself(repo: Path, knoc: Knoc,
                                                      keys: dict[str, tuple[Path, bytes]]) -> None:
    """knoc.toml is committed: its `[signing] key` names a file outside the
    repo, and one holding the key (PEM or base64) is refused by every
    command, unrepeated, at its line."""
    path, _ = keys["ed25519"]
    pem = path.read_text(encoding="utf-8")
    good = (repo / "knoc.toml").read_text(encoding="utf-8")
    for held in (pem, base64.b64encode(pem.encode()).decode()):
        (repo / "knoc.toml").write_text(good + f'\n[signing]\nkey = """\n{held}"""\n', encoding="utf-8")
        for args in (("build",), ("build", "--unsigned"), ("validate",)):  # refused whichever key signs, if any
            code, _, err = knoc(*args, root=repo)
            assert code == 2 and "[signing] `key` holds a key itself" in err and "--> knoc.toml:" in err, err
            assert pem.splitlines()[1][:12] not in err and not (repo / "build").exists()


def test_knoc_keys_new_and_knoc_verify(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp_path = tmp_path_factory.mktemp("outside")  # `repo` is the test's own tmp_path
    key = tmp_path / "signing.pem"
    made = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(key)], capture_output=True, text=True,
                          cwd=repo)
    assert made.returncode == 0 and oct(key.stat().st_mode & 0o777) == "0o600"
    kid = made.stdout.split("key id (RFC 7638 thumbprint): ")[1].split()[0]
    again = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(key)], capture_output=True, text=True)
    assert again.returncode == 2 and "KNO-EXISTS" in again.stderr
    inside = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", "signing.pem"], capture_output=True,
                            text=True, cwd=repo)
    assert inside.returncode == 2 and not (repo / "signing.pem").exists()
    from_outside = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(repo / "content/k.pem")],
                                  capture_output=True, text=True, cwd=tmp_path)  # a repo not stood in is one too
    assert from_outside.returncode == 2 and not (repo / "content/k.pem").exists()
    (tmp_path / "dangling.pem").symlink_to(tmp_path / "elsewhere" / "planted.pem")
    linked = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(tmp_path / "dangling.pem")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert linked.returncode == 2 and "link" in linked.stderr and not (tmp_path / "elsewhere").exists()
    card, keyset, report = _built_and_verified(repo, key, "--a2a", "compat")
    assert [s["kid"] for s in report["signatures"]] == [kid, kid]  # a compat card: its 1.x view and its 0.3 one
    assert {r["reader"]: r["covered"] for r in report["readers"]} == {
        "a2a-sdk 1.x": True, "@a2a-js/sdk": True, "@a2a-js/sdk client": True, "a2a-sdk 0.3": True}
    assert report["unsigned_values"] == []
    # A requirement with no scopes is left out of every signed form: its scheme swapped, the card verifies.
    open_card = repo / "build/site/api.possibility.space/a2a/auth/v1/.well-known/agent-card.json"
    swapped = json.loads(open_card.read_text())
    [gap] = [i for i, r in enumerate(swapped["securityRequirements"]) if r["schemes"] and not any(
        s["list"] for s in r["schemes"].values())]
    swapped["securityRequirements"][gap] = {"schemes": {"anything": {"list": []}}}
    (tmp_path / "swapped.json").write_text(json.dumps(swapped))
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(tmp_path / "swapped.json"), "--jwks",
                           str(repo / "build/site/api.possibility.space/.well-known/jwks.json")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "outside every signature" in done.stdout  # valid, and said what it is not
    assert "$.securityRequirements" in done.stdout
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps({k: v for k, v in json.loads(card.read_text()).items() if k != "signatures"}))
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(unsigned)], capture_output=True, text=True)
    assert done.returncode == 1 and "unsigned" in done.stdout
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(card)], capture_output=True, text=True)
    assert done.returncode == 2 and "--allow-jku" in done.stderr  # no key set: say where to get one
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(tmp_path / "missing.json"), "--jwks",
                           str(keyset)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_verify_and_import_fetch_the_key_set_the_card_names_only_when_allowed(
        repo: Path, keys: dict[str, tuple[Path, bytes]], tmp_path_factory: pytest.TempPathFactory) -> None:
    """A card served over https at 127.0.0.1:PORT names its key set there
    (`jku`): `knoc verify --allow-jku` fetches it, and `knoc import
    --allow-jku` says the original's signatures verified."""
    import re
    import socket

    from tests.tls import certificates, https

    ca, cert, key = certificates(tmp_path_factory.mktemp("tls"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    blueprint = repo / "content/agent-blueprints/catalog-search.kno"
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(re.sub(r"\n  url: .*\n", f"\n  url: https://127.0.0.1:{port}/search\n", text, count=1),
                         encoding="utf-8")
    config = repo / "knoc.toml"  # it is no longer agents.possibility.space's primary agent
    config.write_text(config.read_text(encoding="utf-8").split("[primary]")[0], encoding="utf-8")
    subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key",
                    str(keys["ed25519"][0])], check=True, capture_output=True)
    env = {**os.environ, "SSL_CERT_FILE": str(ca)}
    with https(repo / f"build/site/127.0.0.1:{port}", cert, key, port):
        base = f"https://127.0.0.1:{port}/search"
        refused = subprocess.run([sys.executable, "-m", "knoc", "verify", base], capture_output=True, text=True,
                                 env=env)
        assert refused.returncode == 2  # nothing fetched unless allowed
        done = subprocess.run([sys.executable, "-m", "knoc", "verify", base, "--allow-jku"], capture_output=True,
                              text=True, env=env)
        assert done.returncode == 0 and "valid: every client that reads this card" in done.stdout, done.stdout
        other = repo.parent / "importer"
        other.mkdir()
        (other / "knoc.toml").write_text("[knoc]\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "knoc", "import", base, "--allow-jku", "--root", str(other),
                               "--format", "json"], capture_output=True, text=True, env=env)
        [signed] = [d for d in json_diags(done.stdout) if d["code"] == "KNO-IMPORT-SIGNATURE"]
        assert signed["message"].startswith("its signatures verify for every client that reads it"), signed
        said = [d["json_path"] for d in json_diags(done.stdout) if d.get("json_path", "").startswith("$.signatures")]
        assert said == ["$.signatures"], said  # once, as signatures: not again as a credential's value
        written = (other / "content/agent-blueprints/catalog-search.kno").read_text(encoding="utf-8")
        assert "signatures" not in written and "protected" not in written


def test_a_signed_repo_is_never_built_unsigned_by_accident(repo: Path, knoc: Knoc,
                                                             keys: dict[str, tuple[Path, bytes]]) -> None:
    """A build without the key over a signed build/ is refused (exit 2,
    build/ untouched) and says how to give the key; --unsigned drops the
    signatures on purpose, and says so."""
    assert knoc("build", "--sign-key", str(keys["ed25519"][0]), root=repo)[0] == 0
    before = tree(repo / "build")
    code, out, err = knoc("build", "--format", "json", root=repo)
    [refused] = json_diags(out)
    assert code == 2 and refused["code"] == "KNO-UNSIGNED" and "nothing was written" in refused["message"]
    assert all(way in refused["hint"] for way in ("--sign-key", "KNOC_SIGNING_KEY", "[signing]", "--unsigned"))
    assert tree(repo / "build") == before
    assert knoc("build", "--unsigned", "--sign-key", str(keys["ed25519"][0]), root=repo)[0] == 2
    code, _, err = knoc("build", "--unsigned", root=repo)
    assert code == 0 and "unsigned (--unsigned): the signatures build/ had are gone" in err
    assert not list((repo / "build/site").rglob("jwks.json"))
    assert "signatures" not in (repo / "build/site/agents.possibility.space/catalog-search/.well-known/"
                                "agent-card.json").read_text(encoding="utf-8")
    assert "pins signing keys" not in err
    pin(repo, keys["ed25519"][0])  # the drift guard will hold an unsigned build/ to the pinned key: said
    code, _, err = knoc("build", "--unsigned", root=repo)
    assert code == 0 and "`knoc check` refuses these unsigned cards" in err
    assert knoc("check", root=repo)[0] == 1


def test_a_repo_that_pins_a_key_signs_with_the_key_knoc_toml_names(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    """`[signing] key` (with `~`) is the key every command that builds takes;
    a pinned repo without any key is refused, whatever build/ holds."""
    path, _ = keys["ed25519"]
    monkeypatch.setenv("HOME", str(path.parent))
    monkeypatch.delenv("KNOC_SIGNING_KEY", raising=False)
    pin = pin_line(signing.public_jwk(serialization.load_pem_private_key(path.read_bytes(), None)))
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[signing]\n{pin}\n")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 2 and json_diags(out)[0]["code"] == "KNO-UNSIGNED" and not (repo / "build").exists()
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f'key = "~/{path.name}"\n')
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "signed with 1 key" in err
    assert knoc("check", root=repo)[0] == 0
    (repo / "content/agent-blueprints/drift-sentinel.kno").write_text(
        (repo / "content/agent-blueprints/drift-sentinel.kno").read_text(encoding="utf-8").replace(
            "Compares derived", "Now compares derived"), encoding="utf-8")
    code, out, err = knoc("check", "--format", "json", root=repo)
    assert code == 1 and "run `knoc build`" in err  # the key is at hand: the plain command works
    monkeypatch.setenv("HOME", str(repo.parent / "nobody"))  # a teammate without the key file
    code, out, err = knoc("build", "--format", "json", root=repo)
    [refused] = json_diags(out)
    assert code == 2 and refused["code"] == "KNO-SIGNING" and "--unsigned" in refused["hint"]


def test_check_names_the_command_that_rebuilds_a_signed_repo(repo: Path, knoc: Knoc,
                                                              keys: dict[str, tuple[Path, bytes]]) -> None:
    key = str(keys["ed25519"][0])
    pin = pin_line(signing.public_jwk(serialization.load_pem_private_key(keys["ed25519"][0].read_bytes(), None)))
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[signing]\n{pin}\n")
    assert knoc("build", "--sign-key", key, root=repo)[0] == 0
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    source.write_text(source.read_text(encoding="utf-8").replace("Compares derived", "Now compares derived"),
                      encoding="utf-8")
    code, out, err = knoc("check", "--format", "json", root=repo)
    assert code == 1 and "run `knoc build --sign-key KEY`" in err
    assert all("knoc build --sign-key KEY" in d["hint"] for d in json_diags(out) if d["code"] == "KNO-DRIFT")
    assert knoc("build", "--sign-key", key, root=repo)[0] == 0  # the advice works
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:  # a key knoc.toml names, not on this machine
        f.write(f'key = "{repo.parent}/no-such-key.pem"\n')
    source.write_text(source.read_text(encoding="utf-8").replace("Now compares", "Compares"), encoding="utf-8")
    code, _, err = knoc("check", root=repo)
    assert code == 1 and "run `knoc build --sign-key KEY`" in err, err


def test_a_signed_build_names_the_values_no_signature_protects(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    """A requirement with no scopes is left out of the signed form by every
    SDK: deleting it still verifies, so a signed build says so, per card."""
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    source.write_text(source.read_text(encoding="utf-8").replace("  version: \"0.2.1\"\n", """  version: "0.2.1"
  security_schemes:
    bearer: {type: http, scheme: bearer}
    oauth: {type: oauth2, flows: {client_credentials: {token_url: "https://auth.possibility.space/token",
            scopes: {"drift:read": "", "drift:write": "Write"}}}}
    mtls: {type: mutualTLS}
  security: [{bearer: []}, {oauth: ["drift:write"]}]
"""), encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)  # unsigned: nothing to say
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-SIGNING-UNPROTECTED"]
    code, out, _ = knoc("build", "--format", "json", "--sign-key", str(keys["ed25519"][0]), root=repo)
    found = {d["file"]: d for d in json_diags(out) if d["code"] == "KNO-SIGNING-UNPROTECTED"}
    assert code == 0 and set(found) == {"content/agent-blueprints/drift-sentinel.kno", "content/agents/auth-agent.kno"}
    drift = found["content/agent-blueprints/drift-sentinel.kno"]
    assert "3 values" in drift["message"] and "`$.a2a_projection.security[0].bearer`" in drift["message"]
    assert "`$.a2a_projection.security_schemes.mtls`" in drift["message"]
    assert "scope `drift:read`" in drift["message"] and drift["line"] > 30
    assert "`$.authentication.schemes[0]`" in found["content/agents/auth-agent.kno"]["message"]
    # what the warning says is true: the SDK verifies the card without the requirement
    rel = "agents.possibility.space/drift-sentinel/.well-known/agent-card.json"
    card = cards(repo)[rel]
    assert {"bearer": {"list": []}} in [r["schemes"] for r in card["securityRequirements"]] or \
        {"bearer": {}} in [r["schemes"] for r in card["securityRequirements"]]
    stripped = copy.deepcopy(card)
    stripped["securityRequirements"] = [r for r in card["securityRequirements"] if "bearer" not in r["schemes"]]
    assert sdk_verifies(card, jwks(repo, rel)) and sdk_verifies(stripped, jwks(repo, rel))
    unschemed = {**card, "securitySchemes": {k: v for k, v in card["securitySchemes"].items() if k != "mtls"}}
    assert sdk_verifies(unschemed, jwks(repo, rel))  # the mutual TLS scheme, likewise
    damaged = copy.deepcopy(card)
    damaged["securityRequirements"] = [r for r in card["securityRequirements"] if "oauth" not in r["schemes"]]
    assert not sdk_verifies(damaged, jwks(repo, rel))  # a scoped requirement is protected


def test_a_browser_verifier_may_fetch_the_key_set(repo: Path, knoc: Knoc,
                                                  keys: dict[str, tuple[Path, bytes]]) -> None:
    """A card's `jku` is fetched cross-origin by a browser verifier: the key
    set is served, and written into `_headers`, with CORS and cache headers."""
    from tests.test_serve import get, serving
    assert knoc("build", "--sign-key", str(keys["ed25519"][0]), root=repo)[0] == 0
    host = "agents.possibility.space"
    rules = (repo / f"build/site/{host}/_headers").read_text(encoding="utf-8")
    rule = rules[rules.index("/.well-known/jwks.json\n"):].split("\n/", 1)[0]
    assert "Access-Control-Allow-Origin: *" in rule and "Cache-Control: public, max-age=300" in rule
    with serving(repo) as base:
        status, headers, body = get(base + ".well-known/jwks.json", host=host)
    assert status == 200 and json.loads(body)["keys"]
    assert headers["Access-Control-Allow-Origin"] == "*" and headers["Cache-Control"] == "public, max-age=300"
    assert headers["Content-Type"] == "application/jwk-set+json" and headers["ETag"]


def test_serve_watch_builds_a_signed_repo_with_its_key(repo: Path, knoc: Knoc,
                                                       keys: dict[str, tuple[Path, bytes]]) -> None:
    from tests.test_serve import get, serving
    key = str(keys["ed25519"][0])
    assert knoc("build", "--sign-key", key, root=repo)[0] == 0
    env = {k: v for k, v in os.environ.items() if k != "KNOC_SIGNING_KEY"}
    refused = subprocess.run([sys.executable, "-m", "knoc", "serve", "--watch", "--port", "0", "--root", str(repo)],
                             capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode == 2 and "KNO-UNSIGNED" in refused.stderr
    with serving(repo, "--watch", "--sign-key", key) as base:
        status, _, body = get(base + "catalog-search/.well-known/agent-card.json", host="agents.possibility.space")
    assert status == 200 and json.loads(body)["signatures"]


def test_a_relative_key_path_in_knoc_toml_is_read_from_the_repo(repo: Path, knoc: Knoc,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`key = "../keys/k.pem"` names the same file wherever knoc runs (it was
    read from the folder knoc ran in)."""
    (repo.parent / "keys").mkdir()
    write_key(repo.parent / "keys", "ed25519")
    toml = repo / "knoc.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[signing]\nkey = "../keys/ed25519.pem"\n', encoding="utf-8")
    monkeypatch.delenv("KNOC_SIGNING_KEY", raising=False)
    monkeypatch.chdir(repo / "content")
    code, _, err = knoc("build", "--format", "json", root=repo)
    assert code == 0 and "signed with 1 key" in err, err


def test_validate_reads_the_keys_a_build_would_sign_with(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    """`validate` is every check of `build`: a pinned key that does not read
    is the repo's error; the signing key given here, this machine's warning
    (a teammate without it can still validate), as FILES are asked about too."""
    config = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(config + '\n[signing]\nkey = "../no-such-key.pem"\n', encoding="utf-8")
    for files in ((), ("content/agent-blueprints/catalog-search.kno",)):
        code, out, _ = knoc("validate", "--format", "json", *files, root=repo)
        [found] = [d for d in json_diags(out) if d["code"] == "KNO-SIGNING-KEY"]
        assert code == 0 and "no-such-key.pem" in found["message"] and found["severity"] == "warning"
        assert found["file"] == "knoc.toml" and found["line"] == config.count("\n") + 3  # at its `key` line
        assert knoc("validate", "--fail-on", "warning", *files, root=repo)[0] == 1
    assert knoc("build", root=repo)[0] == 2
    (repo / "knoc.toml").write_text(config + '\n[signing]\npublic = ["keys/gone.jwk"]\n', encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and any("keys/gone.jwk" in d["message"] and d["file"] == "knoc.toml"
                             for d in json_diags(out) if d["code"] == "KNO-SIGNING")
    (repo / "knoc.toml").write_text(config, encoding="utf-8")
    pin(repo, keys["p256"][0])
    monkeypatch.setenv("KNOC_SIGNING_KEY", str(keys["ed25519"][0]))  # not the pinned one
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and any("is not one knoc.toml pins" in d["message"] for d in json_diags(out)
                             if d["code"] == "KNO-SIGNING-KEY")
    monkeypatch.setenv("KNOC_SIGNING_KEY", str(keys["p256"][0]))
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"].startswith("KNO-SIGNING")]


def test_validate_calls_a_private_key_inside_the_repo_the_repos_error(
        repo: Path, knoc: Knoc, keys: dict[str, tuple[Path, bytes]]) -> None:
    """knoc.toml is committed, and so is the key it names inside the repo: not this machine's warning."""
    (repo / "keys").mkdir()
    (repo / "keys/priv.pem").write_bytes(keys["ed25519"][0].read_bytes())
    config = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(config + '\n[signing]\nkey = "keys/priv.pem"\n', encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"].startswith("KNO-SIGNING")]
    assert code == 1 and found["code"] == "KNO-SIGNING" and "inside the repo" in found["message"]
    assert found["file"] == "knoc.toml"


def test_verify_names_the_clients_that_cannot_read_the_card(repo: Path, tmp_path_factory: pytest.TempPathFactory
                                                            ) -> None:
    """A 1.0 card is valid to the clients that read it; a2a-sdk 0.3's cannot
    read it at all, and verify says so, with the field it stops at."""
    key = tmp_path_factory.mktemp("outside") / "signing.pem"
    subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(key)], check=True, capture_output=True)
    card, keyset, report = _built_and_verified(repo, key)
    assert report["unread_by"] == ["a2a-sdk 0.3 cannot read it: url: Field required"]
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(card), "--jwks", str(keyset)],
                          capture_output=True, text=True)
    assert "a2a-sdk 0.3 cannot read it: url: Field required; its clients cannot use this card\n" in done.stdout


def _built_and_verified(repo: Path, key: Path, *build: str) -> tuple[Path, Path, dict[str, Any]]:
    """A signed build of `repo`, and `knoc verify --format json` of catalog-search's card: valid."""
    subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), *build, "--sign-key", str(key)],
                   check=True, capture_output=True)
    card = repo / "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"
    keyset = repo / "build/site/agents.possibility.space/.well-known/jwks.json"
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(card), "--jwks", str(keyset), "--format",
                           "json"], capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["valid"] is True, done.stdout + done.stderr
    return card, keyset, report


def test_verify_quotes_a_hostile_card_a_line_at_most(tmp_path: Path) -> None:
    """A reader's reason may quote the card (a scheme's type): a line's worth of it."""
    card = {"name": "E", "description": "d", "url": "https://h.example/a", "version": "1", "protocolVersion": "0.3.0",
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
            "securitySchemes": {"s": {"type": "B" * 100_000}}}
    (tmp_path / "card.json").write_text(json.dumps(card), encoding="utf-8")
    (tmp_path / "jwks.json").write_text('{"keys": []}', encoding="utf-8")
    for fmt in ("text", "json"):
        done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(tmp_path / "card.json"), "--jwks",
                               str(tmp_path / "jwks.json"), "--format", fmt], capture_output=True, text=True)
        assert done.returncode == 1 and "@a2a-js/sdk cannot convert it" in done.stdout, done.stdout[:500]
        assert max(map(len, done.stdout.splitlines())) < 400


def test_check_says_what_the_signed_build_said_of_clients_that_cannot_verify(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A 1.0 card with security schemes has no form the JS client verifies:
    the build warns, and so does the check that guards it in CI."""
    key = tmp_path_factory.mktemp("outside") / "signing.pem"
    subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(key)], check=True, capture_output=True)
    built = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                           capture_output=True, text=True)
    checked = subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True,
                             text=True, env={**os.environ, "KNOC_SIGNING_KEY": str(key)})
    said = [line for line in built.stderr.splitlines() if line.startswith("warning[KNO-SIGNING-UNVERIFIABLE]")]
    assert built.returncode == 0 and said
    assert checked.returncode == 0 and "build/ is up to date" in checked.stderr
    assert [line for line in checked.stderr.splitlines() if line.startswith("warning[KNO-SIGNING-UNVERIFIABLE]")] \
        == said


def test_a_key_dropped_from_the_pins_without_retiring_it_is_said(
        repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """Replacing the pinned key instead of retiring it drops it from every
    jwks.json at once: copies of the cards it signed stop verifying."""
    pin(repo, keys["ed25519"][0])
    subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(keys["ed25519"][0])],
                   check=True, capture_output=True)
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(settings.split("\n[signing]\n")[0] + "\n", encoding="utf-8")
    pin(repo, keys["p256"][0])  # the new key pinned in the old one's place
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key",
                           str(keys["p256"][0])], capture_output=True, text=True)
    assert done.returncode == 0 and "warning[KNO-SIGNING-KEY-GONE]" in done.stderr and "retired" in done.stderr


def test_a_retired_key_is_named_retired_wherever_it_is_met(
        repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """After a rotation, the old key is in `retired`: building with it,
    asking for its pin line, or checking a build it signed says so, rather
    than to pin it (which would undo the rotation)."""

    old, new = keys["ed25519"][0], keys["p256"][0]
    pin(repo, old)
    subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(old)], check=True,
                   capture_output=True)
    rotate(repo, old, new)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "knoc", *args], cwd=repo, capture_output=True, text=True)

    assert "knoc.toml retires it" in run("keys", "public", str(old)).stdout
    built = run("build", "--sign-key", str(old))
    assert built.returncode == 2 and "retires in [signing] `retired`" in built.stderr and "pin this one" not in built.stderr
    checked = run("check")  # build/ is still the one the old key signed
    assert checked.returncode == 1 and "which knoc.toml retires" in checked.stderr, checked.stderr


def test_a_rotation_as_the_guide_says_passes_the_review_gate(repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:


    old, new = keys["ed25519"][0], keys["p256"][0]
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=repo, capture_output=True, text=True, env=env)

    pin(repo, old)
    assert run(sys.executable, "-m", "knoc", "build", "--sign-key", str(old)).returncode == 0
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "signed")):
        run("git", *args)
    rotate(repo, old, new)
    assert run(sys.executable, "-m", "knoc", "build", "--sign-key", str(new)).returncode == 0
    done = run(sys.executable, "-m", "knoc", "diff", "main", "--fail-on", "breaking", "--format", "json")
    kinds = {(c["kind"], c["class"]) for c in json.loads(done.stdout)["changes"]}
    assert done.returncode == 0 and ("signing-keys-rotated", "cosmetic") in kinds, done.stdout[-2000:]


def rotate(repo: Path, old: Path, new: Path) -> None:
    """The signing guide's rotation in knoc.toml: `new` pinned, `old` retired."""
    from cryptography.hazmat.primitives import serialization

    from knoc.a2a import signing as signing_
    from knoc.app.signing import pin_line

    settings = (repo / "knoc.toml").read_text(encoding="utf-8").split("\n[signing]\n")[0]
    old_jwk = signing_.public_jwk(serialization.load_pem_private_key(old.read_bytes(), password=None))  # type: ignore[arg-type]
    (repo / "knoc.toml").write_text(settings + "\n", encoding="utf-8")
    pin(repo, new)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(pin_line(old_jwk).replace("public = ", "retired = ") + "\n")


def test_a_key_swapped_under_the_same_kid_is_said_and_keys_new_keeps_the_kid(
        repo: Path, keys: dict[str, tuple[Path, bytes]], tmp_path_factory: pytest.TempPathFactory) -> None:
    """With `kid` set, a new key pinned in the old one's place signs under the
    old kid: copies of the old cards name a key the key sets no longer hold
    under it. The build says so; `knoc keys new` gives the list that keeps
    the old key's kid in its pin, and the rotation it gives verifies both."""
    old, new = keys["ed25519"][0], keys["p256"][0]
    pin(repo, old)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('kid = "2026-11"\n')
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")

    def build(*keys_given: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo),
                               *(a for k in keys_given for a in ("--sign-key", str(k)))],
                              capture_output=True, text=True)

    assert build(old).returncode == 0
    (repo / "knoc.toml").write_text(settings.split("\n[signing]\n")[0] + "\n", encoding="utf-8")
    pin(repo, new)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('kid = "2026-11"\n')
    swapped = build(new)
    assert swapped.returncode == 0 and "another key under that kid" in swapped.stderr, swapped.stderr

    (repo / "knoc.toml").write_text(settings, encoding="utf-8")  # undone: as the guide says, instead
    assert build(old).returncode == 0
    fresh = tmp_path_factory.mktemp("outside") / "fresh.pem"
    said = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(fresh)], cwd=repo, capture_output=True,
                          text=True, check=True).stdout
    assert "remove `kid`" in said
    line = said[said.index("public = ["):].splitlines()[0]
    (repo / "knoc.toml").write_text(settings.split("\n[signing]\n")[0] + f"\n[signing]\n{line}", encoding="utf-8")
    rotated = build(old, fresh)
    assert rotated.returncode == 0 and "KNO-SIGNING-KEY-GONE" not in rotated.stderr, rotated.stderr
    jwks = json.loads(next((repo / "build" / "site").glob("*/.well-known/jwks.json")).read_text(encoding="utf-8"))
    assert "2026-11" in [k["kid"] for k in jwks["keys"]] and len(jwks["keys"]) == 2
    checked = subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stderr


def test_kid_names_the_pinned_key_over_its_jwks_own_and_retired_kids_are_one_each(
        repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """`[signing] kid` names the one pinned key, whatever `kid` its JWK file
    holds (the line `keys new` prints has the thumbprint): an upgrade never
    renames it. Two retired keys under one kid would publish one of them
    unchecked: refused, as two pinned ones are."""
    key = keys["ed25519"][0]
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    jwk = signing.public_jwk(private)  # type: ignore[arg-type]
    (repo / "keys").mkdir()
    (repo / "keys/k1.jwk").write_text(json.dumps({**jwk, "kid": signing.thumbprint(jwk)}), encoding="utf-8")
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('\n[signing]\npublic = "keys/k1.jwk"\nkid = "2026-11"\n')
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rel = "agents.possibility.space/drift-sentinel/.well-known/agent-card.json"
    assert [k["kid"] for k in jwks(repo, rel)] == ["2026-11"]
    other = signing.public_jwk(serialization.load_pem_private_key(keys["p256"][0].read_bytes(), password=None))  # type: ignore[arg-type]
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(settings + "retired = [" + ", ".join(
        "{ " + ", ".join(f'{k} = "{v}"' for k, v in {**j, "kid": "2025-01"}.items()) + " }" for j in (other, jwk))
        + "]\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "two keys with kid '2025-01'" in done.stderr, done.stderr


def test_a_key_retired_without_the_kid_it_signed_under_is_said_with_that_kid(
        repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """Retired as the guide says, but without the `kid` it signed under, the
    old key is published under its thumbprint: the old cards' kid finds no
    key. The warning names the kid to give its entry."""
    old, new = keys["ed25519"][0], keys["p256"][0]
    pin(repo, old)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('kid = "2026-11"\n')
    subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(old)], check=True,
                   capture_output=True)
    rotate(repo, old, new)
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(new)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "which this build publishes as" in done.stderr, done.stderr
    assert 'kid = "2026-11"' in done.stderr


def test_a_key_file_others_can_read_is_used_and_said(repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """A PEM written under the usual umask (0644) signs, with a warning that
    other users of the machine can read it; at 0600, nothing is said."""
    key = keys["ed25519"][0]
    key.chmod(0o644)
    try:
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and "warning[KNO-SIGNING-KEY-EXPOSED]" in done.stderr and "(mode 644)" in done.stderr
        assert f"chmod 600 {key}" in done.stderr and "PRIVATE KEY" not in done.stderr
        checked = subprocess.run([sys.executable, "-m", "knoc", "validate", "--root", str(repo)], capture_output=True,
                                 text=True, env={**os.environ, "KNOC_SIGNING_KEY": str(key)})
        assert checked.returncode == 0 and "warning[KNO-SIGNING-KEY-EXPOSED]" in checked.stderr  # as a build reads it
        assert "is open to other users of this machine (mode 644)" in done.stderr
        key.chmod(0o640)  # its group's members only: named as such
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)
        assert f"is open to the members of group {key.stat().st_gid} (mode 640)" in done.stderr
    finally:
        key.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "KNO-SIGNING-KEY-EXPOSED" not in done.stderr


def test_a_key_file_with_a_second_name_is_said(repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """A hard link cannot be followed to its other name, which may lie in a
    repo (a symlink there is refused): a key with two names is said."""
    linked = keys["ed25519"][0].parent / "linked.pem"
    os.link(keys["ed25519"][0], linked)
    try:
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(linked)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and "has 2 names (hard links)" in done.stderr, done.stderr
    finally:
        linked.unlink()


def test_a_retired_key_renamed_by_a_later_build_is_said(repo: Path, keys: dict[str, tuple[Path, bytes]]) -> None:
    """Retired under the kid it signed under, then (a later edit) under its
    thumbprint: build/ is signed with the new key alone by then, but its key
    sets still publish the old one under the old kid, whose cards stop
    verifying. Said, with the kid to give back."""
    old, new = keys["ed25519"][0], keys["p256"][0]
    pin(repo, old)
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('kid = "2025"\n')

    def build(key: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)

    assert build(old).returncode == 0
    rotate(repo, old, new)
    settings = (repo / "knoc.toml").read_text(encoding="utf-8")
    (repo / "knoc.toml").write_text(settings.replace('retired = { ', 'retired = { kid = "2025", '), encoding="utf-8")
    done = build(new)
    assert done.returncode == 0 and "KNO-SIGNING-KEY-GONE" not in done.stderr, done.stderr  # as the guide says
    (repo / "knoc.toml").write_text(settings, encoding="utf-8")  # the retired entry loses its kid
    done = build(new)
    assert done.returncode == 0 and "publishes key '2025', which this build publishes as" in done.stderr, done.stderr


def test_a_key_file_in_a_folder_others_can_write_to_is_said(repo: Path, keys: dict[str, tuple[Path, bytes]],
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    """A 0600 key in a folder others may write to (no sticky bit) can be
    replaced by them: said, with the folder; a sticky one (/tmp's way) is not."""
    shared = tmp_path_factory.mktemp("shared")  # outside the repo, as a key must be
    key = shared / "signing.pem"
    key.write_bytes(keys["ed25519"][0].read_bytes())
    key.chmod(0o600)
    for mode, said in ((0o777, True), (0o1777, False), (0o755, False)):
        shared.chmod(mode)
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and ("KNO-SIGNING-KEY-EXPOSED" in done.stderr) == said, done.stderr
        assert not said or f"is reached through {shared}, a folder other users of this machine may write to" \
            in done.stderr
    safe = tmp_path_factory.mktemp("safe")  # a link to a safe key, in the open folder: replaceable all the same
    (safe / "signing.pem").write_bytes(key.read_bytes())
    (safe / "signing.pem").chmod(0o600)
    key.unlink()
    key.symlink_to(safe / "signing.pem")
    shared.chmod(0o777)
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and f"is reached through {shared}, a folder other users" in done.stderr, done.stderr
    if os.getuid() == 0:  # a folder of another user's (root can make one)
        shared.chmod(0o755)
        os.chown(shared, 65534, 65534)
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and "uid 65534" in done.stderr, done.stderr
        shared.chmod(0o1777)  # a link of another user's, in a folder all may write to (as /tmp is)
        os.chown(shared, 0, 0)
        os.lchown(key, 65534, 65534)
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key", str(key)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and f"is reached through {key}, a link of another user's" in done.stderr
        (shared / "sub").mkdir()  # `link/..`: the parent of where the link leads, another user's folder
        os.chown(shared, 65534, 65534)
        (safe / "to-sub").symlink_to(shared / "sub")
        (shared / "signing.pem").unlink()
        (shared / "signing.pem").write_bytes((safe / "signing.pem").read_bytes())
        os.chown(shared / "signing.pem", 0, 0)
        (shared / "signing.pem").chmod(0o600)
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key",
                               f"{safe}/to-sub/../signing.pem"], capture_output=True, text=True)
        assert done.returncode == 0 and f"is reached through {shared}, a folder of another user's" in done.stderr
        os.chown(safe / "signing.pem", 65534, 65534)
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--sign-key",
                               str(safe / "signing.pem")], capture_output=True, text=True)
        assert done.returncode == 0 and "belongs to another user of this machine (uid 65534)" in done.stderr


def test_keys_new_into_a_folder_others_can_write_to_says_so_at_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The key is theirs to swap from the moment it is written: said by
    `knoc keys new`, not first by the next build; a folder of one's own is quiet."""
    shared = tmp_path_factory.mktemp("open")
    shared.chmod(0o777)
    done = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(shared / "signing.pem")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and (shared / "signing.pem").is_file(), done.stderr
    assert f"warning[KNO-SIGNING-KEY-EXPOSED]: the signing key {shared}/signing.pem is reached through {shared}" \
        in done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"ok: 1 warning (wrote {shared}/signing.pem)"
    team = tmp_path_factory.mktemp("team")
    team.chmod(0o770)  # its group's members may swap it: named as such
    done = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(team / "signing.pem")],
                          capture_output=True, text=True)
    assert f"is reached through {team}, a folder the members of group {team.stat().st_gid} may write to (mode 770)" \
        in done.stderr, done.stderr
    own = tmp_path_factory.mktemp("own")
    own.chmod(0o700)
    done = subprocess.run([sys.executable, "-m", "knoc", "keys", "new", str(own / "signing.pem")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
