"""The client matrix: knoc's example build, served by `knoc serve`, read by
real clients of every A2A generation, each in an environment of its own
that this suite creates and caches (KNOC_INTEROP_CACHE, by default
~/.cache/knoc-interop; delete it any time):

- a2a-sdk 1.3 client and server: every 1.0 and compat card resolves, and a
  client built from each card reaches an a2a-sdk server on loopback over
  every interface the card declares (JSON-RPC, HTTP+JSON, gRPC; 1.0 and 0.3),
  and fetches the extended card where the card announces one;
- a2a-sdk 0.3: every 0.3 and compat card parses, every interface it lists is
  one the card says speaks 0.3 and the 0.3 client reaches the server over
  it, and the extended card is fetched;
- a2a-sdk 0.2: every `agent.json` parses, whatever the target;
- the JS SDK: every 1.0 and compat card resolves, 0.3 cards in its legacy mode;
- signed builds (Ed25519 and P-256): the JS SDK's verifier accepts every 1.0
  and compat card, a2a-sdk 0.3's accepts the 0.3 signature of every compat
  card and of every agent.json, and both refuse an edited card.

A client that cannot be installed fails the suite: it never skips. The
scripts the clients run are in tests/interop/."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from tests.conftest import CACHE, EXAMPLE_PARTS, ROOT, installed_once, npm_installed
from tests.test_serve import serving

SCRIPTS = Path(__file__).parent / "interop"
PYTHON_CLIENTS = {
    "a2a-sdk-1.3": ["a2a-sdk[fastapi,grpc]==1.3.0", "uvicorn==0.38.0"],
    "a2a-sdk-0.3": ["a2a-sdk[grpc,signing]==0.3.26"],
    "a2a-sdk-0.2": ["a2a-sdk==0.2.16"],
}
JS_SDK = "@a2a-js/sdk@1.3.0"
TARGETS = ("1.0", "0.3", "compat")


def python_client(name: str) -> Path:
    requirements = PYTHON_CLIENTS[name]
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:12]
    folder = CACHE / f"{name}-{key}"
    python = folder / "bin" / "python"
    installed_once(folder, [[sys.executable, "-m", "venv", "--clear", str(folder)],
                    [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements]])
    return python


def js_client(name: str = "client_js.mjs") -> Path:
    folder = npm_installed(JS_SDK)
    script = folder / name  # beside node_modules, where node resolves the SDK
    shutil.copyfile(SCRIPTS / name, script)
    return script


MARKER = "KNOC-RESULT "  # a client whose SDK logs on stdout prints its verdict after this


def run(command: list[str], job: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(command, input=json.dumps(job), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.rsplit(MARKER, 1)[1] if MARKER in done.stdout else done.stdout
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """The example built for each target and served: target -> {base, cards, root}."""
    with ExitStack() as stack:
        out: dict[str, dict[str, Any]] = {}
        for target in TARGETS:
            root = tmp_path_factory.mktemp(f"interop-{target}")
            for part in EXAMPLE_PARTS:
                src = ROOT / part
                (shutil.copytree if src.is_dir() else shutil.copy)(src, root / part)
            built = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(root), "--a2a", target],
                                   capture_output=True, text=True)
            assert built.returncode == 0, built.stderr
            cards = json.loads((root / "build/index/agents.json").read_text(encoding="utf-8"))["agents"]
            base = stack.enter_context(serving(root))
            out[target] = {"base": base, "root": root, "cards": [{"slug": c["slug"], "card": c["card"]} for c in cards]}
        yield out


@pytest.fixture(scope="session")
def echo_server() -> Iterator[dict[str, int]]:
    """The a2a-sdk 1.3 echo agent on loopback: {"http": port, "grpc": port}."""
    proc = subprocess.Popen([str(python_client("a2a-sdk-1.3")), str(SCRIPTS / "server_v1.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, f"the echo server did not start: {proc.stderr.read() if proc.stderr else ''}"
        yield json.loads(line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def card_json(site: dict[str, Any], entry: dict[str, str], name: str = "agent-card.json") -> dict[str, Any]:
    path = site["root"] / "build/site" / entry["card"].replace("agent-card.json", name)
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("target", ["1.0", "compat"])
def test_a2a_sdk_1_3_reaches_the_agent_over_every_declared_interface(
        served: dict[str, dict[str, Any]], echo_server: dict[str, int], target: str) -> None:
    site = served[target]
    found = run([str(python_client("a2a-sdk-1.3")), str(SCRIPTS / "client_v1.py")],
                {"base": site["base"], "cards": site["cards"], **echo_server})
    seen: set[str] = set()
    for entry in site["cards"]:
        card, result = card_json(site, entry), found[entry["slug"]]
        declared = {f"{i['protocolBinding']} {i['protocolVersion']}" for i in card["supportedInterfaces"]}
        assert result["resolved"] == "ok", (entry["slug"], result)
        assert result["bindings"] == dict.fromkeys(sorted(declared), "ok"), (entry["slug"], result)
        announced = card["capabilities"].get("extendedAgentCard") is True
        assert result.get("extended") == ("ok" if announced else None), (entry["slug"], result)
        seen |= {b.split()[0] for b in declared}
    assert seen == {"JSONRPC", "HTTP+JSON", "GRPC"}  # the example exercises every binding
    assert any("extended" in r for r in found.values())


@pytest.mark.parametrize("target", ["0.3", "compat"])
def test_a2a_sdk_0_3_parses_every_card_and_speaks_every_listed_interface(
        served: dict[str, dict[str, Any]], echo_server: dict[str, int], target: str) -> None:
    site = served[target]
    found = run([str(python_client("a2a-sdk-0.3")), str(SCRIPTS / "client_v03.py")],
                {"base": site["base"], "cards": site["cards"], **echo_server})
    for entry in site["cards"]:
        card, result = card_json(site, entry), found[entry["slug"]]
        assert result["resolved"] == "ok", (entry["slug"], result)
        listed = [(card["url"], card["preferredTransport"])]
        listed += [(i["url"], i["transport"]) for i in card.get("additionalInterfaces") or []
                   if (i["url"], i["transport"]) not in listed]
        assert result["interfaces"] == {f"{t} {u}": "ok" for u, t in listed}, (entry["slug"], result)
        # Announced in either view (compat's 1.0 one too): the 0.3 client must see and fetch it.
        announced = True in (card.get("supportsAuthenticatedExtendedCard"),
                             card["capabilities"].get("extendedAgentCard"))
        assert result.get("extended") == ("ok" if announced else None), (entry["slug"], result)
    assert found["realm-concierge"]["extended"] == "ok"  # the example's agent with an extended card


@pytest.mark.parametrize("target", TARGETS)
def test_a2a_sdk_0_2_parses_every_legacy_card(served: dict[str, dict[str, Any]], target: str) -> None:
    site = served[target]
    found = run([str(python_client("a2a-sdk-0.2")), str(SCRIPTS / "client_v02.py")],
                {"base": site["base"], "cards": site["cards"]})
    assert found == {entry["slug"]: "ok" for entry in site["cards"]}


def test_an_agent_json_a2a_sdk_0_2_cannot_read_is_said(repo: Path) -> None:
    """A2A 0.2 has no mutual TLS scheme: a2a-sdk 0.2 refuses the whole
    agent.json that holds one, and the build says its clients cannot use the agent."""
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    text = source.read_text(encoding="utf-8").replace('  version: "0.2.1"\n', '  version: "0.2.1"\n'
                                                      "  security_schemes:\n    mtls: {type: mutualTLS, "
                                                      "description: Client certificates}\n  security: [{mtls: []}]\n")
    assert '  min_protocol_version: "0.3"\n' in text  # serves no 0.2 client, it says: nothing to tell them
    source.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and '"KNO-LEGACY-VIEW"' not in done.stdout
    source.write_text(text.replace('  min_protocol_version: "0.3"\n', ""), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--format", "json"],
                          capture_output=True, text=True)
    said = [json.loads(line) for line in done.stdout.splitlines() if '"KNO-LEGACY-VIEW"' in line]
    assert done.returncode == 0 and len(said) == 1 and "a2a-sdk 0.2 cannot read agent.json" in said[0]["message"]
    assert "the scheme `mtls` is mutual TLS" in said[0]["message"] and said[0]["line"] > 1
    parse = ("import sys; from a2a.types import AgentCard\n"
             "for p in sys.argv[1:]:\n"
             "    try: AgentCard.model_validate_json(open(p).read()); print('ok')\n"
             "    except Exception: print('refused')")
    site = repo / "build/site/agents.possibility.space"
    found = subprocess.run([str(python_client("a2a-sdk-0.2")), "-c", parse,
                            str(site / "drift-sentinel/.well-known/agent.json"),
                            str(site / "catalog-search/.well-known/agent.json")],
                           capture_output=True, text=True, check=True).stdout.split()
    assert found == ["refused", "ok"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_js_sdk_resolves_every_card(served: dict[str, dict[str, Any]], target: str) -> None:
    site = served[target]
    node = shutil.which("node")
    assert node is not None
    found = run([node, str(js_client())], {"base": site["base"], "cards": site["cards"], "legacy": target == "0.3"})
    for entry in site["cards"]:
        result = found[entry["slug"]]
        assert result["ok"], (entry["slug"], result)
        if target != "0.3":
            card = card_json(site, entry)
            assert set(result["interfaces"]) == {f"{i['protocolBinding']} {i['protocolVersion']}"
                                                 for i in card["supportedInterfaces"]}
        else:  # translated from the 0.3 shape: each interface stamped 0.3
            assert all(i.endswith(" 0.3") for i in result["interfaces"]), result


@pytest.mark.parametrize("target", ["1.0", "compat"])
def test_each_resolver_finds_the_cards_an_agents_url_leads_to(served: dict[str, dict[str, Any]], target: str) -> None:
    """Each host served as itself (`--site`), each resolver given what an
    application is given: an agent's url, or its host. a2a-sdk (1.3, 0.3)
    appends the well-known path to the url: every agent's own card. The JS
    SDK resolves the relative path against the url: the card of the url's
    parent folder, which is the host's root card for an agent one folder
    down, and the agent's own card for its url with a trailing slash."""
    site = served[target]
    index = json.loads((site["root"] / "build/index/agents.json").read_text(encoding="utf-8"))["agents"]
    names = {a["slug"]: card_json(site, a)["name"] for a in index}
    hosts = {a["card"].split("/", 1)[0] for a in index}
    rooted = {h: site["root"] / f"build/site/{h}/.well-known/agent-card.json" for h in hosts}
    roots = {h: json.loads(p.read_text())["name"] if p.is_file() else None for h, p in rooted.items()}
    asks, expected_js = {}, {}
    with ExitStack() as stack:
        for host in sorted(hosts):
            base = stack.enter_context(serving(site["root"], "--site", host)).rstrip("/")
            asks[host] = base + "/"
            expected_js[host] = roots[host]
            for a in (a for a in index if a["card"].startswith(host + "/")):
                path = "/" + a["card"].split("/", 1)[1].removesuffix("/.well-known/agent-card.json")
                asks[a["slug"]], asks[a["slug"] + "/"] = base + path, base + path + "/"
                expected_js[a["slug"] + "/"] = names[a["slug"]]
                parent = urljoin(path, ".well-known/agent-card.json")
                expected_js[a["slug"]] = roots[host] if parent == "/.well-known/agent-card.json" else None
        for sdk in ("a2a-sdk-1.3", "a2a-sdk-0.3") if target == "compat" else ("a2a-sdk-1.3",):
            found = run([str(python_client(sdk)), str(SCRIPTS / "resolve_v1.py")], {"asks": asks})
            assert {k: v.get("name") for k, v in found.items()} == {
                **{k: names[k.rstrip("/")] for k in asks if k not in hosts}, **{h: roots[h] for h in hosts}}, sdk
        node = shutil.which("node")
        assert node is not None
        found = run([node, str(js_client("resolve_js.mjs"))], {"asks": asks})
    assert {k: v.get("name") for k, v in found.items()} == expected_js
    # what the README says of the example: the primary is found from its url; an agent two folders down is not
    assert expected_js["catalog-search"] == names["catalog-search"] and expected_js["realm-concierge"] is None


@pytest.fixture(scope="session")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The example built for every target, signed with a fresh Ed25519 and
    P-256 key: per target, every card file with its host's keys, and the
    tampered copies of each (named "... edited WHAT")."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    folder = tmp_path_factory.mktemp("signing-keys")
    key_files = []
    for name, key in (("ed.pem", ed25519.Ed25519PrivateKey.generate()),
                      ("p256.pem", ec.generate_private_key(ec.SECP256R1()))):
        (folder / name).write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
        key_files.append(folder / name)
    out: dict[str, list[dict[str, Any]]] = {}
    for target in TARGETS:
        for key_file in key_files:
            root = tmp_path_factory.mktemp(f"signed-{target}")
            for part in EXAMPLE_PARTS:
                src = ROOT / part
                (shutil.copytree if src.is_dir() else shutil.copy)(src, root / part)
            subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(root), "--a2a", target,
                            "--sign-key", str(key_file)], check=True, capture_output=True)
            site = root / "build/site"
            built = {p.relative_to(site).as_posix(): json.loads(p.read_text(encoding="utf-8"))
                     for p in sorted(site.rglob("agent*.json"))}
            for rel, card in built.items():
                keys = json.loads((site / rel.split("/")[0] / ".well-known/jwks.json").read_text())["keys"]
                entry = {"name": f"{key_file.stem} {rel}", "card": card, "keys": keys, "original": card}
                donor = next(c for r, c in built.items() if r.endswith(rel.rsplit("/", 1)[1]) and c != card)
                out.setdefault(target, []).append(entry)
                out[target] += [{**entry, "name": f"{entry['name']} edited {what}", "card": changed}
                                for what, changed in tampered(card, donor).items()]
    return out


def tampered(card: dict[str, Any], donor: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The card with one field changed, each way, and with another card's
    signatures. Whether a client must refuse each is what it reads of it:
    a change it does not read (a compat card's 0.3 `url` for a 1.x client)
    leaves its view, and so its signature, intact."""
    out = {"name": {**card, "name": card["name"] + "!"},
           "skill": {**card, "skills": [{**card["skills"][0], "description": "Does something else."},
                                        *card["skills"][1:]]},
           "signatures": {**card, "signatures": donor["signatures"]},
           "unprotected kid": {**card, "signatures": [{**sig, "header": {"kid": "evil"}} for sig in card["signatures"]]}}
    if "supportedInterfaces" in card:
        out["url 1.0"] = {**card, "supportedInterfaces": [{**card["supportedInterfaces"][0],
                                                           "url": "https://evil.example/a2a"},
                                                          *card["supportedInterfaces"][1:]]}
    if "url" in card:
        out["url 0.3"] = {**card, "url": "https://evil.example/a2a"}
    if card.get("securitySchemes"):  # clients would then send no credentials
        out["security schemes"] = {k: v for k, v in card.items() if k != "securitySchemes"}
    for key in ("securityRequirements", "security"):
        scoped = [r for r in card.get(key) or [] if any((v.get("list") if isinstance(v, dict) else v)
                                                         for v in (r.get("schemes", r)).values())]
        if scoped:
            out[f"security requirement {key}"] = {**card, key: [r for r in card[key] if r is not scoped[0]]}
    return out


def must_verify(entry: dict[str, Any], reader: str) -> bool:
    """Whether `reader` must accept the entry: its view of the card is still
    the one the original's signatures cover, and the signatures are the
    original's. An unprotected header changes no view; the JS SDK refuses a
    signature whose unprotected header repeats a protected parameter, the
    Python SDKs ignore it (and `knoc check` refuses it in a build)."""
    from knoc.a2a import readers

    if "edited signatures" in entry["name"]:
        return False
    if "edited unprotected" in entry["name"] and reader.startswith("@a2a-js"):
        return False
    before, after = ({v.reader: v.payload for v in readers.views(c)} for c in (entry["original"], entry["card"]))
    return after.get(reader) is not None and after.get(reader) == before.get(reader)


@pytest.mark.parametrize("target", TARGETS)
def test_the_js_sdk_verifies_signed_cards(signed: dict[str, list[dict[str, Any]]], target: str) -> None:
    """As fetched and as its resolver hands the card to a client, every card knoc signed verifies."""
    node = shutil.which("node")
    assert node is not None
    script = js_client("verify_js.mjs")
    entries = [{k: v for k, v in e.items() if k != "original"} for e in signed[target]]
    found = run([node, str(script)], {"cards": entries})
    for entry in signed[target]:
        verdict = found[entry["name"]]
        assert (verdict["fetched"] == "ok") == must_verify(entry, "@a2a-js/sdk"), (entry["name"], verdict)
        assert (verdict["client"] == "ok") == must_verify(entry, "@a2a-js/sdk client"), (entry["name"], verdict)
    assert sum(" edited " not in e["name"] for e in signed[target]) == 2 * 20  # 7 cards and 3 root copies, twins, 2 keys


@pytest.mark.parametrize("target", TARGETS)
def test_a2a_sdk_0_3_verifies_signed_cards(signed: dict[str, list[dict[str, Any]]], target: str) -> None:
    entries = [{k: v for k, v in e.items() if k != "original"} for e in signed[target]]
    found = run([str(python_client("a2a-sdk-0.3")), str(SCRIPTS / "verify_v03.py")], {"cards": entries})
    readable = 0
    for entry in signed[target]:
        verdict = found[entry["name"]]
        assert (verdict == "ok") == must_verify(entry, "a2a-sdk 0.3"), (entry["name"], verdict)
        readable += verdict == "ok"
    assert readable >= (0 if target == "1.0" else 14) + 14  # every agent.json, and every 0.3-shaped card


@pytest.mark.parametrize("target", TARGETS)
def test_a2a_sdk_1_3_verifies_signed_cards(signed: dict[str, list[dict[str, Any]]], target: str) -> None:
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import create_signature_verifier
    from jwt import PyJWK

    for entry in signed[target]:
        keys = {k["kid"]: k for k in entry["keys"]}
        verifier = create_signature_verifier(lambda kid, jku, keys=keys: PyJWK(keys[kid]), ["EdDSA", "ES256"])
        try:
            verifier(parse_agent_card(json.loads(json.dumps(entry["card"]))))
            verdict = "ok"
        except Exception as exc:  # the SDK's verdict
            verdict = f"{type(exc).__name__}: {exc}"
        assert (verdict == "ok") == must_verify(entry, "a2a-sdk 1.x"), (entry["name"], verdict)


@pytest.mark.parametrize("target", TARGETS)
def test_knoc_verify_says_valid_exactly_when_every_sdk_does(signed: dict[str, list[dict[str, Any]]],
                                                            target: str, tmp_path: Path) -> None:
    """knoc verify's verdict on each card (and each tampered one) is the
    conjunction of the verdicts above: valid only when every reader verifies."""
    from knoc.a2a import readers, signing

    for entry in signed[target]:
        verdict = signing.verify(entry["card"], signing.key_set({"keys": entry["keys"]}))
        every = all(must_verify(entry, v.reader) for v in readers.views(entry["card"]))
        assert verdict.valid == every, (entry["name"], [(c.index, c.covers, c.problem) for c in verdict.checks])


def test_a_skill_a2a_sdk_0_2_reads_as_open_is_said(repo: Path) -> None:
    """a2a-sdk 0.2 has no skill `security`: from agent.json it reads an
    admin-only skill of an otherwise open card as open, and the build says so."""
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    text = source.read_text(encoding="utf-8").replace('  min_protocol_version: "0.3"\n', "")
    assert "    - id: sweep\n" in text
    source.write_text(text.replace('  version: "0.2.1"\n', '  version: "0.2.1"\n  security_schemes:\n'
                                   "    bearer: {type: http, scheme: Bearer}\n  security: [{}]\n")
                      .replace("    - id: sweep\n", "    - id: sweep\n      security: [{bearer: []}]\n"),
                      encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--format", "json"],
                          capture_output=True, text=True)
    said = [json.loads(line) for line in done.stdout.splitlines() if '"KNO-LEGACY-VIEW"' in line]
    assert done.returncode == 0 and len(said) == 1, done.stdout
    assert "skill `sweep`, none: open" in said[0]["message"] and said[0]["line"] > 1
    parse = ("import sys; from a2a.types import AgentCard\n"
             "card = AgentCard.model_validate_json(open(sys.argv[1]).read())\n"
             "print([s.model_dump(exclude_none=True).get('security') for s in card.skills])")
    found = subprocess.run([str(python_client("a2a-sdk-0.2")), "-c", parse,
                            str(repo / "build/site/agents.possibility.space/drift-sentinel/.well-known/agent.json")],
                           capture_output=True, text=True, check=True).stdout
    assert "bearer" not in found and "None" in found  # what the warning says: the skill's requirement unread


def test_the_js_sdk_reads_a_compat_cards_schemes_unconverted_and_the_build_says_so(repo: Path) -> None:
    """@a2a-js/sdk converts a card to its typed model only when its schemes
    lack 0.3's `type`: a compat card's stay raw, which KNO-COMPAT-JS says;
    the same agent's 1.0 card reads typed."""
    rel = "build/site/realms.possibility.space/agents/concierge/.well-known/agent-card.json"
    read = {}
    for target in ("compat", "1.0"):
        done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--a2a", target,
                               "--format", "json"], capture_output=True, text=True)
        said = [json.loads(line) for line in done.stdout.splitlines() if '"KNO-COMPAT-JS"' in line]
        assert done.returncode == 0 and bool(said) == (target == "compat")
        assert target == "1.0" or any(d["file"].endswith("realm-concierge.kno") and d["line"] > 1 for d in said)
        copy = repo / f"{target}.json"
        shutil.copyfile(repo / rel, copy)
        read[target] = str(copy)
    found = run(["node", str(js_client("schemes_js.mjs"))], {"cards": read})
    assert found == {"compat": {"realm-oidc": None}, "1.0": {"realm-oidc": "openIdConnectSecurityScheme"}}


SENTINEL_URL = "https://agents.possibility.space/drift-sentinel/"
CHOICES = {  # the interfaces drift-sentinel's card lists after its main url (JSONRPC, 1.0 and 0.3): what knoc says
    "a tenant at the same url": ([f"{{url: {SENTINEL_URL}, transport: JSONRPC, tenant: acme}}"],
                                 ["KNO-INTERFACE-CHOICE"]),
    "a tenant at another url": ([f"{{url: {SENTINEL_URL}v2/, transport: JSONRPC, tenant: acme}}"],
                                ["KNO-INTERFACE-CHOICE"]),
    "another url": ([f"{{url: {SENTINEL_URL}v2/, transport: JSONRPC}}"], ["KNO-INTERFACE-CHOICE"]),
    "the binding in lower case": ([f"{{url: {SENTINEL_URL}v2/, transport: jsonrpc, tenant: acme}}"],
                                  ["KNO-CARD-BINDING", "KNO-INTERFACE-CHOICE"]),
    "a tenant, then the main url again": ([f"{{url: {SENTINEL_URL}, transport: JSONRPC, tenant: acme}}",
                                           f"{{url: {SENTINEL_URL}, transport: JSONRPC}}"], []),
    "another binding": ([f"{{url: {SENTINEL_URL}rest, transport: HTTP+JSON}}"], []),
    "the main url speaking 0.2": ([f"{{url: {SENTINEL_URL}rest, transport: HTTP+JSON}}"], ["KNO-PROTOCOL-TOO-OLD"]),
}


@pytest.mark.parametrize("case", CHOICES)
def test_what_the_sdks_call_of_a_cards_interfaces_is_said_where_they_differ(repo: Path, case: str) -> None:
    """Interfaces added to a card built for 1.0: knoc warns exactly where
    a2a-sdk 1.3's client factory and @a2a-js/sdk's call different
    interfaces (url and tenant), or a2a-sdk finds none to call."""
    from a2a.client.card_resolver import parse_agent_card
    from a2a.client.client import ClientConfig
    from a2a.client.client_factory import ClientFactory

    added, codes = CHOICES[case]
    source = repo / "content/agent-blueprints/drift-sentinel.kno"
    text = source.read_text(encoding="utf-8")
    assert '  version: "0.2.1"\n' in text
    text = text.replace('  version: "0.2.1"\n', '  version: "0.2.1"\n  additional_interfaces:\n'
                        + "".join(f"    - {i[:-1]}, protocol_versions: [\"1.0\"]}}\n" for i in added), 1)
    if "KNO-PROTOCOL-TOO-OLD" in codes:
        text = text.replace('protocol_versions: ["1.0", "0.3"]', 'protocol_versions: ["0.2"]', 1).replace(
            'min_protocol_version: "0.3"', 'min_protocol_version: "0.2"')
    source.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo), "--format", "json"],
                          capture_output=True, text=True)
    said = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and sorted(d["code"] for d in said) == codes, done.stdout
    card = repo / "build/site/agents.possibility.space/drift-sentinel/.well-known/agent-card.json"
    try:
        transport = ClientFactory(ClientConfig()).create(parse_agent_card(json.loads(card.read_bytes())))._transport
        tenant = getattr(transport, "_tenant", "")
        python: dict[str, str] | None = {"url": getattr(transport, "_base", transport).url, "tenant": tenant}
    except ValueError:  # "no compatible transports found"
        python = None
    js = run(["node", str(js_client("tenant_js.mjs"))], {"card": str(card)})
    assert (python != js) == bool({"KNO-INTERFACE-CHOICE", "KNO-PROTOCOL-TOO-OLD"} & set(codes)), (python, js)
    assert (python is None) == ("KNO-PROTOCOL-TOO-OLD" in codes)
