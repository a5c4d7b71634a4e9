"""Property-based fuzzing (hypothesis): whatever a `.kno` file, a spec, a
`knoc.toml` or an imported card holds, knoc ends in exit 0, 1 or 2, with
no traceback, within a time bound, and the sources as they were.

CI runs a small, fixed set of examples per property; a longer run with
fresh random examples is one command (the README's "Limits" section):

    KNOC_FUZZ_EXAMPLES=2000 .venv/bin/pytest tests/test_fuzz.py
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from knoc.cli import main
from knoc.io.files import scratch_copy
from tests.conftest import EXAMPLE_PARTS, ROOT

LONG_RUN = "KNOC_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(max_examples=int(os.environ.get("KNOC_FUZZ_EXAMPLES", "15")), deadline=None,
                derandomize=not LONG_RUN, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SECONDS = 20.0
KNO_FILES = sorted(p.relative_to(ROOT).as_posix() for part in ("content", "specs") for p in (ROOT / part).rglob("*.kno"))
CARDS = sorted((ROOT / "tests/data/cards").rglob("*.json"))

scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
           | st.sampled_from(["..", "/", "https://../x", "https://./a", "kno://specs/nope", "1.0", "0.3.0",
                              "*", "&a", "%2e%2e", "\x00", "a" * 300]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=16)


def example_repo() -> AbstractContextManager[Path]:
    """A throwaway copy of the example repo (knoc's own scratch copy)."""
    return scratch_copy(ROOT, list(EXAMPLE_PARTS))


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for part in ("specs", "content") for p in sorted((root / part).rglob("*")) if p.is_file()}


def run_knoc(root: Path, *args: str) -> tuple[int, str]:
    """The CLI in-process; any exception escaping it fails the test."""
    before = digests(root)
    start = time.monotonic()
    result = CliRunner().invoke(main, [*args, "--root", str(root)], catch_exceptions=False)
    assert time.monotonic() - start < SECONDS, f"knoc {' '.join(args)} took too long"
    output = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), output
    assert "Traceback" not in output
    if args[0] != "import":
        assert digests(root) == before, "a command changed the sources"
    return result.exit_code, output


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths_of(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths_of(v, (*prefix, i))
    return found


def set_at(data: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    holder = data
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = new
    return data


def load_yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


@FUZZ
@given(data=st.data())
def test_a_source_with_any_value_anywhere(data: st.DataObject) -> None:
    """An example entity (blueprint, legacy agent, domain, extension or
    spec) with one value replaced by an arbitrary JSON value."""
    rel = data.draw(st.sampled_from(KNO_FILES), label="file")
    entity = load_yaml((ROOT / rel).read_text(encoding="utf-8"))
    path = data.draw(st.sampled_from(paths_of(entity)), label="path")
    entity = set_at(entity, path, data.draw(values, label="value"))
    with example_repo() as root:
        (root / rel).write_text(json.dumps(entity, default=str), encoding="utf-8")
        run_knoc(root, "build")
        run_knoc(root, "check")


@FUZZ
@given(data=st.data())
def test_a_source_with_any_text_edit(data: st.DataObject) -> None:
    """An example file with a slice replaced by arbitrary text or bytes:
    the parser's paths (syntax, tabs, tags, aliases, encodings)."""
    rel = data.draw(st.sampled_from(KNO_FILES), label="file")
    raw = (ROOT / rel).read_bytes()
    start = data.draw(st.integers(0, len(raw)), label="start")
    end = data.draw(st.integers(start, min(len(raw), start + 200)), label="end")
    alphabet = st.sampled_from([*":-[]{}&*!|>'\"#\n\t %@`,?", "  ", "\n  ", "- ", "*a", "&a ", "!!set"])
    insert = data.draw(st.binary(max_size=40) | st.lists(alphabet | st.text(max_size=5), max_size=20).map(
        lambda parts: "".join(parts).encode("utf-8")), label="insert")
    with example_repo() as root:
        (root / rel).write_bytes(raw[:start] + insert + raw[end:])
        run_knoc(root, "validate", "--format", "json")


@FUZZ
@given(data=st.data())
def test_any_knoc_toml(data: st.DataObject) -> None:
    keys = st.sampled_from(["specs", "content", "output", "a2a", "other"])
    paths = st.sampled_from(["build", "out", "content", "specs", ".", "..", "x/../content", "/tmp", ".git",
                             "build/../out", "content/x", "1.0", "0.3", "compat", "", "b" * 300]) | st.text(max_size=12)
    table = data.draw(st.dictionaries(keys, paths | st.integers() | st.booleans(), max_size=4), label="table")
    body = "[knoc]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    if data.draw(st.booleans(), label="garble"):
        body = body[: data.draw(st.integers(0, len(body)), label="cut")] + data.draw(st.text(max_size=10), label="junk")
    with example_repo() as root:
        (root / "knoc.toml").write_text(body, encoding="utf-8")
        listing = sorted(p.name for p in root.iterdir())
        run_knoc(root, "build")
        created = sorted(p.name for p in root.iterdir())
        assert set(listing) <= set(created) and len(set(created) - set(listing)) <= 2  # the output and the cache
        assert not (root.parent / "build").exists() or (root.parent / "build").stat().st_mtime < time.time() - 60


@FUZZ
@given(data=st.data())
def test_any_card_to_import(data: st.DataObject) -> None:
    """A real-world card with one value replaced, or arbitrary JSON."""
    if data.draw(st.booleans(), label="real"):
        try:
            card = json.loads(data.draw(st.sampled_from(CARDS), label="card").read_bytes())
        except ValueError:  # the lookalikes include broken JSON
            card = None
        path = data.draw(st.sampled_from(paths_of(card)), label="path")
        card = set_at(card, path, data.draw(values, label="value"))
    else:
        card = data.draw(values, label="json")
    with example_repo() as root:
        (root / "card.json").write_text(json.dumps(card, default=str), encoding="utf-8")
        run_knoc(root, "import", str(root / "card.json"))
        run_knoc(root, "validate")


def _signed_example() -> Path:
    """The example built for compat with a pinned Ed25519 key, once per run: (repo)."""
    import atexit
    import shutil
    import tempfile

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    global _SIGNED
    if _SIGNED is None:
        folder = Path(tempfile.mkdtemp(prefix="knoc-fuzz-signed-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # a private key is in it: never left behind
        key = ed25519.Ed25519PrivateKey.generate()
        (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                           serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))
        repo = folder / "repo"
        repo.mkdir()
        for part in EXAMPLE_PARTS:
            (shutil.copytree if (ROOT / part).is_dir() else shutil.copy)(ROOT / part, repo / part)
        from knoc.a2a import signing
        from knoc.app.signing import pin_line

        with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
            f.write(f"\n[signing]\n{pin_line(signing.public_jwk(key))}\n")
        result = CliRunner().invoke(main, ["build", "--a2a", "compat", "--sign-key", str(folder / "key.pem"),
                                           "--root", str(repo)], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        _SIGNED = repo
    return _SIGNED


_SIGNED: Path | None = None
SIGNED_FILES = ["site/agents.possibility.space/catalog-search/.well-known/agent-card.json",
                "site/agents.possibility.space/catalog-search/.well-known/agent.json",
                "site/agents.possibility.space/.well-known/jwks.json", "manifest.json"]


def _mutated(data: st.DataObject, raw: bytes) -> bytes:
    """The JSON with one value replaced, or arbitrary JSON, or arbitrary bytes."""
    choice = data.draw(st.sampled_from(["value", "json", "bytes"]), label="how")
    if choice == "bytes":
        return data.draw(st.binary(max_size=200), label="bytes")
    if choice == "json":
        return json.dumps(data.draw(values, label="json"), default=str).encode("utf-8")
    doc = json.loads(raw)
    path = data.draw(st.sampled_from(paths_of(doc)), label="path")
    return json.dumps(set_at(doc, path, data.draw(values, label="value")), default=str).encode("utf-8")


@FUZZ
@given(data=st.data())
def test_any_card_or_key_set_to_verify(data: st.DataObject, tmp_path_factory: Any) -> None:
    """knoc verify of a signed card and its key set, either with one value
    replaced (a signature's header too) or arbitrary: exit 0, 1 or 2."""
    built = _signed_example() / "build"
    folder = tmp_path_factory.mktemp("verify")
    card, keys = folder / "card.json", folder / "jwks.json"
    card.write_bytes((built / SIGNED_FILES[0]).read_bytes())
    keys.write_bytes((built / SIGNED_FILES[2]).read_bytes())
    target = data.draw(st.sampled_from([card, keys]), label="which")
    target.write_bytes(_mutated(data, target.read_bytes()))
    start = time.monotonic()
    result = CliRunner().invoke(main, ["verify", str(card), "--jwks", str(keys)], catch_exceptions=False)
    assert time.monotonic() - start < SECONDS
    assert result.exit_code in (0, 1, 2) and "Traceback" not in result.stdout + result.stderr, result.stderr


@FUZZ
@given(data=st.data())
def test_any_card_key_set_or_manifest_in_a_signed_build(data: st.DataObject) -> None:
    """knoc check of a signed build whose card, key set or manifest holds
    anything: exit 1 or 2 (or 0 when the change is one no file's bytes show)."""
    rel = data.draw(st.sampled_from(SIGNED_FILES), label="file")
    with scratch_copy(_signed_example(), [*EXAMPLE_PARTS, "build"]) as root:
        path = root / "build" / rel
        path.write_bytes(_mutated(data, path.read_bytes()))
        code, _ = run_knoc(root, "check", "--a2a", "compat")
        assert code in (1, 2)


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(alphabet="[]{}\",:0123456789.eE-+tfnul \\ud8", max_size=300).map(
    lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_json_input_rule_refuses_or_returns_a_printable_value(raw: bytes) -> None:
    from knoc.rules import jsontext

    try:
        value = jsontext.parse(raw)
    except jsontext.Refused:
        return
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # printable, every string UTF-8
