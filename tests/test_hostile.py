"""knoc under hostile input: one regression test per class of attack found
by trying it as an attacker would. Each ends in a diagnostic (code, exit
code), within a time bound, with the sources untouched and nothing written
outside the repo; privacy holds throughout (tests/test_privacy.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import knoc as knoc_api
from knoc.rules import limits
from tests.conftest import ROOT, Knoc, edit, json_diags, tree
from tests.test_bad_input import BP, replace, write
from tests.test_privacy import BLUEPRINT, line_of

CATALOG_SEARCH = f"{BP}/catalog-search.kno"
URL = "url: https://agents.possibility.space/catalog-search"
REVIEW_TRACE = "content/extensions/review-trace.kno"
SECONDS = 20  # far above any case's real time; a hang or a quadratic blow-up crosses it


def sources(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for part in ("specs", "content") for p in sorted((root / part).rglob("*"))
            if p.is_file() and not p.is_symlink() and p.name != "x.kno"}


def card_url(url: str) -> Callable[[Path], None]:
    return replace(CATALOG_SEARCH, URL, f'url: "{url}"')


def text(rel: str, body: str) -> Callable[[Path], None]:
    return write(rel, body.encode("utf-8"))


def in_schema(yaml: str) -> Callable[[Path], None]:
    """Lines added to the perception-domain spec's schema (each indented into it)."""
    return replace("specs/perception-domain-schema.kno", "  schema:\n    type: object\n", "  schema:\n    type: object\n"
                   + "".join(f"    {line}\n" for line in yaml.splitlines()))


def in_properties(yaml: str) -> Callable[[Path], None]:
    """Lines added to the perception-domain spec's `properties` (each indented into it)."""
    return replace("specs/perception-domain-schema.kno", "    properties:\n      $schema:\n", "    properties:\n"
                   + "".join(f"      {line}\n" for line in yaml.splitlines()) + "      $schema:\n")


REF_NEXT = '{{$ref: "#/$defs/L{}"}}'
REF_ANCHOR = '{{$ref: "#a{}"}}'
DOMAIN = "$schema: perception-domain@0.1.0\nid: 01KKT0A1B2C3D4E5F6G7H8J9ZZ\nslug: hostile\n"
CASES: dict[str, tuple[Callable[[Path], None], int, str]] = {
    # urls and paths: every host and segment checked in one place
    "host-dot": (card_url("https://./catalog-search"), 1, "KNO-PROJECT-URL"),
    "host-dot-dot": (card_url("https://../x"), 1, "KNO-PROJECT-URL"),
    "host-dot-dot-manifest": (card_url("https://../manifest.json"), 1, "KNO-PROJECT-URL"),
    "host-bracket": (card_url("https://agen[ts.example.com/a"), 1, "KNO-PROJECT-URL"),
    "host-fullwidth-solidus": (card_url("https://agents.example.com\uff0fa"), 1, "KNO-PROJECT-URL"),
    "host-nul": (replace(CATALOG_SEARCH, URL, 'url: "https://agents.example.com\\0/x"'), 1, "KNO-PROJECT-URL"),
    "segment-300": (card_url("https://agents.example.com/" + "a" * 300), 1, "KNO-PROJECT-URL"),
    "segment-percent": (card_url("https://agents.example.com/%2e%2e/x"), 1, "KNO-PROJECT-URL"),
    "card-on-catalog-page": (card_url("https://index.html/"), 1, "KNO-OUTPUT-COLLISION"),
    "card-inside-card": (replace(f"{BP}/quick-summarizer.kno", "url: https://agents.possibility.space/quick-summarizer",
                                 "url: https://agents.possibility.space/catalog-search/.well-known/agent-card.json"),
                         1, "KNO-PROJECT-URL"),  # a url under .well-known is no agent's
    "card-under-root-card": (replace(f"{BP}/quick-summarizer.kno", "url: https://agents.possibility.space/quick-summarizer",
                                     "url: https://solo.example.com/.well-known/agent-card.json"),
                             1, "KNO-PROJECT-URL"),  # its host's root copy would be a file and a folder at once
    # offline: no schema reaches outside the repo
    "spec-ref-http": (replace("specs/document-schema.kno", "      slug:\n",
                              '      slug:\n        $ref: "http://127.0.0.1:9/x.json"\n'), 1, "KNO-SPEC-REF"),
    "spec-ref-file": (replace("specs/document-schema.kno", "      slug:\n",
                              '      slug:\n        $ref: "file:///etc/passwd"\n'), 1, "KNO-SPEC-REF"),
    "spec-id-elsewhere": (replace("specs/document-schema.kno", "      slug:\n",
                                  '      slug:\n        $id: "https://example.com/s"\n'), 1, "KNO-SPEC-REF"),
    "params-ref-http": (replace(REVIEW_TRACE, "params_schema:\n  type: object\n",
                                'params_schema:\n  type: object\n  $ref: "http://127.0.0.1:9/x.json"\n'),
                        1, "KNO-EXT-SCHEMA"),
    "params-ref-file": (replace(REVIEW_TRACE, "params_schema:\n  type: object\n",
                                'params_schema:\n  type: object\n  $ref: "file:///etc/passwd"\n'), 1, "KNO-EXT-SCHEMA"),
    # one-line edits that crashed
    "empty-spec": (write("specs/empty.kno", b""), 1, "KNO-YAML-EMPTY"),
    "capabilities-string": (replace(CATALOG_SEARCH, "  capabilities:\n", "  capabilities: streaming\n  caps:\n"),
                            1, "KNO-SCHEMA-TYPE"),
    "mapping-in-protocol-versions": (replace(CATALOG_SEARCH, "protocol_versions: [", "protocol_versions: [{a: 1}, "),
                                     1, "KNO-SCHEMA-TYPE"),
    "integer-5000-digits": (text(f"{BP}/x.kno", DOMAIN + "n: " + "9" * 5000 + "\n"), 1, "KNO-YAML-LIMIT"),
    "infinity": (text(f"{BP}/x.kno", DOMAIN + "n: 1e99999\n"), 1, "KNO-YAML-NUMBER"),
    "lists-1000-deep": (text(f"{BP}/x.kno", DOMAIN + "n: " + "[" * 1000 + "]" * 1000 + "\n"), 1, "KNO-YAML-LIMIT"),
    "lists-100000-deep": (text(f"{BP}/x.kno", DOMAIN + "n: " + "[" * 100_000 + "]" * 100_000 + "\n"),
                          1, "KNO-YAML-LIMIT"),
    "blocks-deep": (text(f"{BP}/x.kno", DOMAIN + "n:\n" + "".join(" " * i + "k:\n" for i in range(1, 200))),
                    1, "KNO-YAML-LIMIT"),
    "chained-entries": (text(f"{BP}/x.kno", "- " * 2000 + "x\n"), 1, "KNO-YAML-LIMIT"),
    # unbounded work
    "keys-20000": (text(f"{BP}/x.kno", DOMAIN + "".join(f"k{i}: {i}\n" for i in range(20_000))),
                   1, "KNO-YAML-LIMIT"),
    "alias-1mib-400": (text(f"{BP}/x.kno", 'a: &a "' + "x" * (1 << 20) + '"\nb: [' + ", ".join(["*a"] * 400) + "]\n"),
                       1, "KNO-IO-REFUSED"),
    "alias-900kib-400": (text(f"{BP}/x.kno", 'a: &a "' + "x" * 900_000 + '"\nb: [' + ", ".join(["*a"] * 400) + "]\n"),
                         1, "KNO-YAML-ALIAS-LIMIT"),
    "card-too-large": (replace(CATALOG_SEARCH, "  description: ", "  description: " + "x" * 300_000 + " "),
                       1, "KNO-CARD-SIZE"),
    # patterns that would backtrack are evaluated in linear time, or refused
    "pattern-backtracks": (lambda root: (replace("specs/document-schema.kno", '"^[a-z0-9]+(-[a-z0-9]+)*$"',
                                                 '"^(a|a)*$"')(root),
                                         replace(CATALOG_SEARCH, "slug: catalog-search",
                                                 "slug: " + "a" * 40 + "-x")(root)), 1, "KNO-SCHEMA-PATTERN"),
    "pattern-backreference": (replace("specs/document-schema.kno", '"^[a-z0-9]+(-[a-z0-9]+)*$"', r'"^(a)\\1$"'),
                              1, "KNO-SPEC-SCHEMA"),
    # validating one document would take hours: refused as a spec
    "spec-allof-fanout": (in_schema("$ref: \"#/$defs/L0\"\n$defs:\n" + "".join(
        f"  L{i}: {{allOf: [{', '.join([REF_NEXT.format(i + 1)] * 6)}]}}\n" for i in range(12))
        + "  L12: {type: object}\n"), 1, "KNO-SPEC-SCHEMA"),
    "params-allof-fanout": (replace(REVIEW_TRACE, "params_schema:\n  type: object\n", "params_schema:\n  type: object\n"
                                    "  $ref: \"#/$defs/L0\"\n  $defs:\n" + "".join(
                                        f"    L{i}: {{allOf: [{', '.join([REF_NEXT.format(i + 1)] * 6)}]}}\n"
                                        for i in range(12)) + "    L12: {type: object}\n"), 1, "KNO-EXT-SCHEMA"),
    "spec-anchor-fanout": (in_schema("$ref: \"#a0\"\n$defs:\n" + "".join(
        f"  L{i}: {{$anchor: a{i}, allOf: [{', '.join([REF_ANCHOR.format(i + 1)] * 6)}]}}\n"
        for i in range(12)) + "  L12: {$anchor: a12, type: object}\n"), 1, "KNO-SPEC-SCHEMA"),
    "spec-items-fanout": (in_schema("$ref: \"#/$defs/L0\"\n$defs:\n" + "".join(
        f"  L{i}: {{allOf: [{', '.join([REF_NEXT.format(i + 1)] * 3)}]}}\n" for i in range(9))
        + "  L9: {items: {$ref: \"#/$defs/L0\"}}\n"), 1, "KNO-SPEC-SCHEMA"),  # each item: the fan-out again
    "spec-nested-id": (in_schema("$defs:\n  inner: {$id: \"kno://specs/perception-domain-schema/inner\", "
                                 "type: object}\n"), 1, "KNO-SPEC-SCHEMA"),
    "explained-past-its-steps": (lambda root: (
        in_properties("x: {$ref: \"#/$defs/n\"}")(root),
        in_schema("$defs:\n  n: {if: {$ref: \"#/$defs/m\"}, then: {$ref: \"#/$defs/m\"}}\n"
                  "  m: {properties: {x: {$ref: \"#/$defs/n\"}}}\n")(root),
        replace("content/perception-domains/api-surface.kno", "\nslug: ",
                "\nbogus_field: 1\nx: " + "{x: " * 24 + "{}" + "}" * 24 + "\nslug: ")(root)), 1, "KNO-SCHEMA"),
    # a schema that refers to itself in place: the Python explainer would recurse forever (a bug, exit 3)
    "spec-refers-to-itself": (lambda root: (replace("specs/perception-domain-schema.kno", "  schema:\n    type: object",
                                                    '  schema:\n    $ref: "#"\n    type: object')(root),
                                            replace("content/perception-domains/api-surface.kno", "\nslug: ",
                                                    "\nbogus_field: 1\nslug: ")(root)), 1, "KNO-SCHEMA"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_input_gets_a_diagnostic(case: str, repo: Path, knoc: Knoc) -> None:
    edit, expected_exit, expected_code = CASES[case]
    edit(repo)
    before = sources(repo)
    start = time.monotonic()
    code, out, err = knoc("build", "--format", "json", root=repo)
    assert time.monotonic() - start < SECONDS
    assert "Traceback" not in out + err
    assert code == expected_exit, err
    assert expected_code in {d["code"] for d in json_diags(out)}, json_diags(out)[:5]
    assert sources(repo) == before
    assert not (repo / "build").exists()  # a failed build writes nothing


def test_an_extension_uri_on_a_card_path_gets_no_page_there(repo: Path, knoc: Knoc) -> None:
    """An extension's page is never written under `.well-known`: the card there stays the card."""
    replace(REVIEW_TRACE, "uri: https://possibility.space/extensions/review-trace/v1",
            "uri: https://agents.possibility.space/catalog-search/.well-known/agent.json")(repo)
    code, _, err = knoc("build", root=repo)
    legacy = repo / "build/site/agents.possibility.space/catalog-search/.well-known/agent.json"
    assert code == 0 and legacy.is_file() and legacy.read_text(encoding="utf-8").startswith("{"), err
    assert "KNO-EXTENSION-NO-PAGE" in err and "`.well-known` segment" in err  # and says so


@pytest.mark.parametrize("segment", [".well-known", ".WELL-KNOWN", ".Well-Known"])
def test_no_url_under_a_well_known_folder_in_any_case(segment: str) -> None:
    """A host that folds case (a Windows or macOS share, some CDNs) serves
    `.WELL-KNOWN` as `.well-known`: no agent or page goes there either."""
    from knoc.output.hosting import locate_url

    assert "`.well-known` segment" in str(locate_url(f"https://h.example/a/{segment}/x"))


@pytest.mark.parametrize("segment", [".git", ".GIT", ".Git.", ".git ", "git~1", ".git%2e"])
def test_no_url_under_a_git_folder(segment: str) -> None:
    """git holds no file under a `.git` folder (nor one it reads as it on
    Windows): a card there would be on disk, pass `knoc check`, and be
    missing from every clone."""
    from knoc.output.hosting import locate_url

    assert "names git's own folder" in str(locate_url(f"https://h.example/a/{segment}/x"))
    assert isinstance(locate_url("https://h.example/a/.github/.gitx/x"), tuple)


@pytest.mark.parametrize("url", ["https://h.example//a", "https://h.example/a//b/", "https://h.example//"])
def test_no_url_with_an_empty_path_segment(url: str) -> None:
    """`//a` would be written to `a/`, where a static host that keeps the
    `//` (S3, GCS) does not serve it: the card's url and its file disagree."""
    from knoc.output.hosting import locate_url

    assert "`//`" in str(locate_url(url)) and isinstance(locate_url(url.replace("//", "/").replace(":/", "://")), tuple)


def test_an_agent_url_under_a_git_folder_is_refused(repo: Path, knoc: Knoc) -> None:
    edit(repo, BLUEPRINT, "url: https://agents.possibility.space/", "url: https://agents.possibility.space/.git/")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-PROJECT-URL"]
    assert code == 1 and "git's own folder" in found["message"] and not (repo / "build").exists()


def test_an_extension_without_its_optional_required_key_builds(repo: Path, knoc: Knoc) -> None:
    replace(REVIEW_TRACE, "required: false\n", "")(repo)
    code, _, err = knoc("build", root=repo)
    assert code == 0, err
    page = repo / "build/site/possibility.space/extensions/review-trace/v1/index.html"
    assert "optional" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(("output", "why"), [
    ("x/../content", "overlaps `content`"), ("content", "overlaps `content`"), ("content/build", "overlaps `content`"),
    ("specs/../.git", "names git's own folder"), (".", "inside the repo"), ("..", "inside the repo"),
    ("/tmp", "inside the repo"), ("link-to-content", "overlaps `content`"), (".knoc-cache", "overlaps `.knoc-cache`"),
    (".knoc-cache/build", "overlaps `.knoc-cache`"),
])
def test_the_output_folder_is_never_the_sources(output: str, why: str, repo: Path, knoc: Knoc) -> None:
    (repo / "link-to-content").symlink_to(repo / "content")
    (repo / "knoc.toml").write_text(f'[knoc]\noutput = "{output}"\n', encoding="utf-8")
    before = sources(repo)
    listing = sorted(p.name for p in repo.iterdir())
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "error[KNO-CONFIG]" in err and why in err
    assert sources(repo) == before and sorted(p.name for p in repo.iterdir()) == listing


def test_an_output_path_with_dot_dot_creates_nothing_else(repo: Path, knoc: Knoc) -> None:
    (repo / "knoc.toml").write_text('[knoc]\noutput = "scratch/../site-out"\n', encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 0, err
    assert (repo / "site-out/manifest.json").is_file() and not (repo / "scratch").exists()


def test_absolute_folders_through_a_link_to_the_repo_are_its_folders(repo: Path, knoc: Knoc,
                                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    """`content = "/abs/path/content"`, as a shell's `pwd` gives it through a
    link to the repo: the repo's own folders, read and written as such."""
    assert knoc("build", root=repo)[0] == 0
    cards = sorted(p.relative_to(repo / "build") for p in (repo / "build").rglob("agent-card.json"))
    via = tmp_path_factory.mktemp("elsewhere") / "via"
    via.symlink_to(repo)
    toml = (repo / "knoc.toml").read_text(encoding="utf-8")
    for key in ("specs", "content"):
        toml = toml.replace(f'{key} = "{key}"', f'{key} = "{via}/{key}"')
    assert toml.count(f"{via}/") == 2
    (repo / "knoc.toml").write_text(toml, encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "in 23 entities" in err and "removed" not in err, err
    assert sorted(p.relative_to(repo / "build") for p in (repo / "build").rglob("agent-card.json")) == cards


def test_a_missing_root_is_never_created(tmp_path: Path, knoc: Knoc) -> None:
    code, _, err = knoc("build", root=tmp_path / "no" / "such")
    assert code == 2 and "KNO-CONFIG" in err and not (tmp_path / "no").exists()


def test_only_regular_files_inside_the_repo_are_read(repo: Path, knoc: Knoc) -> None:
    os.mkfifo(repo / BP / "fifo.kno")
    (repo / BP / "zero.kno").symlink_to("/dev/zero")
    outside = repo.parent / "outside.kno"
    outside.write_text((repo / CATALOG_SEARCH).read_text(encoding="utf-8"), encoding="utf-8")
    (repo / BP / "outside.kno").symlink_to(outside)
    start = time.monotonic()
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert time.monotonic() - start < SECONDS
    refused = {d["file"] for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"}
    assert code == 1 and refused == {f"{BP}/fifo.kno", f"{BP}/zero.kno", f"{BP}/outside.kno"}


def test_a_source_whose_name_has_a_newline_is_refused_warm_and_cold(repo: Path, knoc: Knoc) -> None:
    """A name with a line break would forge lines of the report (and the
    cache keeps many paths in one string): refused, warm and cold alike."""
    body = (repo / CATALOG_SEARCH).read_text(encoding="utf-8")
    body = body.replace("catalog-search", "odd-search").replace("GSEARCH0000005", "GSEARCH0000099")
    assert knoc("build", root=repo)[0] == 0  # a cache to be warm with
    (repo / BP / "odd\nsearch.kno").write_text(body, encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    assert code == 1 and json_diags(out) == json_diags(knoc("check", "--format", "json", "--no-cache", root=repo)[1])
    assert [d["file"] for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"] == [f"{BP}/odd\\u000asearch.kno"]


def test_a_file_over_the_size_limit_is_refused(repo: Path, knoc: Knoc) -> None:
    write(f"{BP}/big.kno", b"# " + b"x" * limits.SOURCE_BYTES + b"\n")(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and [d["code"] for d in json_diags(out)] == ["KNO-IO-REFUSED"]


def test_unknown_fields_are_reported_in_bounded_number(repo: Path, knoc: Knoc) -> None:
    text(f"{BP}/x.kno", DOMAIN + "".join(f"k{i}: {i}\n" for i in range(4_900)))(repo)
    start = time.monotonic()
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert time.monotonic() - start < SECONDS
    unknown = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-UNKNOWN-FIELD"]
    assert code == 1 and len(unknown) == 21
    assert [d["message"] for d in unknown if "more" in d["message"]] == ["4,880 more unknown fields here"]


def test_a_bug_is_one_internal_diagnostic_and_exit_3(repo: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch) -> None:
    from knoc.compiler import unit

    def broken(*args: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(unit, "_one_file", broken)
    code, out, err = knoc("build", "--format", "json", root=repo)
    assert code == 3 and "Traceback" not in out + err
    found = [d for d in json_diags(out) if d["code"] == "KNO-INTERNAL"]
    assert found and all(d["file"] and "RuntimeError: a bug" in d["message"] for d in found)
    assert not (repo / "build").exists()
    code, out, _ = knoc("build", "--format", "json", "--debug", root=repo)
    assert code == 3 and "Traceback" in json_diags(out)[0]["detail"]


def test_a_bug_outside_the_compiler_is_exit_3_too(repo: Path, knoc: Knoc, monkeypatch: pytest.MonkeyPatch) -> None:
    from knoc.app import build

    def broken(*args: object, **kw: object) -> object:
        raise KeyError("a bug")

    monkeypatch.setattr(build, "stat_tree", broken)
    code, _, err = knoc("build", root=repo)
    assert code == 3 and "error[KNO-INTERNAL]" in err and "Traceback" not in err


def test_debris_of_interrupted_runs_is_removed_and_a_lost_tree_restored(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    built = tree(repo / "build")
    (repo / ".build.new-knocabc12345/site").mkdir(parents=True)  # a killed write
    (repo / ".build.old-knocdef12345").mkdir()
    (repo / "build").rename(repo / ".build.old-knocdef12345/tree")  # killed between the two renames
    assert knoc("check", root=repo)[0] == 1  # check reads, never repairs
    assert knoc("build", root=repo)[0] == 0
    assert tree(repo / "build") == built
    assert [p.name for p in repo.iterdir() if p.name.startswith(".build")] == []


def test_a_swapped_file_with_the_old_size_and_mtime_is_seen(repo: Path, knoc: Knoc) -> None:
    """git's racy-clean rule, with ctime and inode: a file replaced by one of
    the same size and mtime is still recompiled."""
    assert knoc("build", root=repo)[0] == 0
    path = repo / f"{BP}/quick-summarizer.kno"
    time.sleep(2.1)  # past the racy window, so size and mtime alone would vouch
    assert knoc("check", root=repo)[0] == 0
    st = path.stat()
    swapped = path.read_text(encoding="utf-8").replace("Condenses a document", "Shortens a documentx")
    assert len(swapped) == len(path.read_text(encoding="utf-8"))
    new = path.with_name("new.tmp")
    new.write_text(swapped, encoding="utf-8")
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    new.rename(path)
    code, _, err = knoc("check", root=repo)
    assert code == 1 and "quick-summarizer" in err


@pytest.mark.parametrize("swap", [("sources-00.bin", "link.bin"), ("outputs.bin", "sources-01.bin"),
                                  ("link.bin", "outputs.bin")])
def test_swapped_cache_files_are_misses(swap: tuple[str, str], repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    assert knoc("check", root=repo)[0] == 0
    cache = repo / ".knoc-cache"
    for name in swap:
        if not (cache / name).exists():
            (cache / name).write_bytes(b"")
    a, b = (cache / swap[0]).read_bytes(), (cache / swap[1]).read_bytes()
    (cache / swap[0]).write_bytes(b)
    (cache / swap[1]).write_bytes(a)
    for _ in range(2):  # the damaged run, and the one after it
        code, _, err = knoc("check", root=repo)
        assert code == 0 and "Traceback" not in err


# --- the third round: hostile JSON, names and the machine (item 5) -----------------------------

# Each is put where every SDK reads it (an extension's params), in a card
# that carries a signature, so that a verifier computes its views.
HOSTILE_JSON: dict[str, bytes] = {
    "an integer of 2**70": str(2**70).encode(),
    "1e999": b"1e999",
    "NaN": b"NaN",
    "a lone surrogate": b'"\\ud800"',
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "nested 600 deep": b"[" * 600 + b"]" * 600,
    "not UTF-8": b'"caf\xe9"',
    "signatures an integer": b'"x"',
}
SIGNATURE = {"protected": "eyJhbGciOiJFZERTQSIsImtpZCI6ImsiLCJ0eXAiOiJKT1NFIn0", "signature": "A" * 86}  # kid "k"
KEY = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "k"}


@pytest.mark.parametrize("case", sorted(HOSTILE_JSON))
def test_verify_and_import_answer_hostile_json_with_a_diagnostic(case: str, repo: Path,
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("hostile")
    card = json.loads((ROOT / "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json")
                      .read_text(encoding="utf-8"))
    card["capabilities"]["extensions"][0]["params"]["n"] = "@@HOSTILE@@"
    card["signatures"] = 1 if case == "signatures an integer" else [SIGNATURE]
    path = folder / "card.json"
    path.write_bytes(json.dumps(card).encode("utf-8").replace(b'"@@HOSTILE@@"', HOSTILE_JSON[case]))
    keys = folder / "jwks.json"
    keys.write_bytes(json.dumps({"keys": [KEY]}).encode("utf-8"))
    hostile_keys = folder / "hostile-jwks.json"
    hostile_keys.write_bytes(b'{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k", "x": ' + HOSTILE_JSON[case]
                             + b"}]}")
    for args in (["verify", str(path), "--jwks", str(keys)], ["verify", str(path), "--allow-jku"],
                 ["verify", str(ROOT / "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"),
                  "--jwks", str(hostile_keys)],
                 ["import", str(path), "--root", str(repo)]):
        done = subprocess.run([sys.executable, "-m", "knoc", *args], capture_output=True, text=True, timeout=SECONDS)
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, (args, done.stderr)
        assert "KNO-INTERNAL" not in done.stdout + done.stderr, (args, done.stdout + done.stderr)


BAD_KEYS: dict[str, dict[str, str]] = {
    "alg none": {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "alg": "none"},
    "EC without y": {"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"},
    "RSA": {"kty": "RSA", "n": "AQAB", "e": "AQAB"},
    "private": {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "d": "AA"},
}


@pytest.mark.parametrize("case", sorted(BAD_KEYS))
def test_a_bad_key_in_a_key_set_or_in_knoc_toml_is_a_diagnostic(case: str, repo: Path, knoc: Knoc) -> None:
    import subprocess
    import sys

    (repo / "jwks.json").write_text(json.dumps({"keys": [{**BAD_KEYS[case], "kid": "k"}]}), encoding="utf-8")
    card = next((ROOT / "build/site").rglob("agent-card.json"))
    done = subprocess.run([sys.executable, "-m", "knoc", "verify", str(card), "--jwks", str(repo / "jwks.json")],
                          capture_output=True, text=True, timeout=SECONDS)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr  # unsigned, the key skipped
    inline = ", ".join(f'{k} = "{v}"' for k, v in BAD_KEYS[case].items())
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[signing]\nretired = [{{ {inline} }}]\n")
    code, _, err = knoc("check", root=repo)
    # a private key in knoc.toml is refused as it is read, at its line
    said = "KNO-CONFIG" if case == "private" else "KNO-SIGNING"
    assert code == 2 and said in err and "Traceback" not in err, err


@pytest.mark.parametrize(("pinned", "said"), [
    ('"keys/jwks.json"', "it is a key set (`keys`), not one key"),  # the build's own jwks.json, pinned whole
    ('{ kty = "OKP" }', "a key has no `crv`"),
])
def test_a_key_set_or_a_half_written_jwk_pinned_says_what_it_is(repo: Path, knoc: Knoc, pinned: str,
                                                                said: str) -> None:
    (repo / "keys").mkdir()
    (repo / "keys/jwks.json").write_text(json.dumps({"keys": [BAD_KEYS["EC without y"]]}), encoding="utf-8")
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[signing]\npublic = {pinned}\n")
    code, _, err = knoc("check", root=repo)
    assert code == 2 and said in err and "None" not in err, err


def test_a_deeply_nested_manifest_is_no_crash_and_a_build_replaces_it(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    (repo / "build/manifest.json").write_bytes(b'{"signing": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    code, _, err = knoc("check", root=repo)
    assert code == 1 and "Traceback" not in err and "KNO-INTERNAL" not in err
    code, _, err = knoc("build", "--no-cache", root=repo)  # no memo: the manifest itself is read
    assert code == 2 and "KNO-OUTPUT" in err, err  # not a knoc manifest: knoc does not replace the folder
    assert "Traceback" not in err


def test_a_source_whose_name_is_not_utf8_is_reported_by_every_command(repo: Path, knoc: Knoc) -> None:
    body = (repo / CATALOG_SEARCH).read_bytes().replace(b"catalog-search", b"odd-search")
    (repo / BP).joinpath(os.fsdecode(b"caf\xe9.kno")).write_bytes(body)
    for command in ("validate", "check", "build"):
        code, out, err = knoc(command, "--format", "json", root=repo)
        refused = [d for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"]
        assert code == 1 and "Traceback" not in out + err, (command, err)
        assert refused and "not UTF-8" in refused[0]["message"] and "caf\\xe9" in refused[0]["file"], refused


@pytest.mark.parametrize("name", ["forged\n  --> ok.kno:1:1.kno", "hidden\x1b[2K.kno", "zero\u200bwidth.kno",
                                  "joiner\u034f.kno", "filler\u3164.kno"])
def test_a_source_whose_name_a_terminal_would_not_show_is_refused(repo: Path, knoc: Knoc, name: str) -> None:
    """A line break would forge lines of the report, an escape rewrite them."""
    (repo / BP / name).write_bytes((repo / CATALOG_SEARCH).read_bytes().replace(b"catalog-search", b"odd-search"))
    for asked in ((), (f"{BP}/{name}",)):  # the whole repo, or that file asked about: refused either way
        code, out, err = knoc("validate", *asked, root=repo)
        assert code == 1 and "KNO-IO-REFUSED" in out + err and "rename it" in out + err, asked
        assert "\n  --> ok.kno" not in out + err and "\x1b" not in out + err and "\u200b" not in out + err


def test_an_argument_that_is_not_utf8_is_a_usage_error(repo: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "knoc", "new", "agent", "cafe", "--title",
                           os.fsdecode(b"Caf\xe9"), "--root", str(repo)], capture_output=True, timeout=SECONDS)
    assert done.returncode == 2 and b"not UTF-8" in done.stderr and b"Traceback" not in done.stderr
    assert not (repo / BP / "cafe.kno").exists()


@pytest.mark.parametrize("blocker", ["file", "dangling link", "link outside"])
def test_init_and_new_refuse_a_content_folder_that_is_not_one(blocker: str, tmp_path: Path, knoc: Knoc) -> None:
    import subprocess
    import sys

    folder, outside = tmp_path / "repo", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    if blocker == "file":
        (folder / "content").write_text("x")
    elif blocker == "dangling link":
        (folder / "content").symlink_to(tmp_path / "nowhere")
    else:
        (folder / "content").symlink_to(outside)
    done = subprocess.run([sys.executable, "-m", "knoc", "init", str(folder)], capture_output=True, text=True,
                          timeout=SECONDS)
    assert done.returncode == 2 and "KNO-WRITE" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["content"]  # nothing left behind: no knoc.toml
    assert list(outside.iterdir()) == [] and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(("key", "value", "said"), [
    ("content", "contnet", "which does not exist"), ("content", "knoc.toml", "which is not a folder"),
    ("specs", "knoc.toml", "which is not a folder"), ("specs", "spec", "which does not exist"),
])
def test_a_source_folder_setting_that_names_no_folder_is_refused(repo: Path, knoc: Knoc, key: str, value: str,
                                                                  said: str) -> None:
    """A typo read no source: the build unpublished every card (or fell back to the built-in specs) with exit 0."""
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    lines = (repo / "knoc.toml").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} = "))
    lines[at] = f'{key} = "{value}"'
    (repo / "knoc.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in ("build", "check"):
        code, _, err = knoc(command, root=repo)
        assert code == 2 and f"`{key}` names `{value}`, {said}" in err and f"knoc.toml:{at + 1}:1" in err, err
    assert tree(repo / "build") == before


@pytest.mark.parametrize("key", ["content", "specs"])
def test_a_source_folder_that_is_a_link_to_nothing_is_refused(repo: Path, knoc: Knoc, key: str) -> None:
    """The default name too: a dangling `content` read no source, and the build unpublished every card."""
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    (repo / key).rename(repo / f"{key}-moved")
    (repo / key).symlink_to("nowhere")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and f"`{key}` names `{key}`, a link to nothing" in err
    assert tree(repo / "build") == before


def test_init_never_appends_through_a_gitignore_link(tmp_path: Path) -> None:
    import subprocess
    import sys

    victim = tmp_path / "bashrc"
    victim.write_text("original\n")
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / ".gitignore").symlink_to(victim)
    done = subprocess.run([sys.executable, "-m", "knoc", "init", str(folder)], capture_output=True, text=True,
                          timeout=SECONDS)
    assert done.returncode == 2 and "KNO-WRITE" in done.stderr
    assert victim.read_text() == "original\n" and sorted(p.name for p in folder.iterdir()) == [".gitignore"]


def test_init_never_appends_through_a_hard_linked_gitignore(tmp_path: Path) -> None:
    """The repo's .gitignore gains the cache's lines; the file it shares an inode with elsewhere does not."""
    victim = tmp_path / "shared"
    victim.write_text("original", encoding="utf-8")
    folder = tmp_path / "repo"
    folder.mkdir()
    os.link(victim, folder / ".gitignore")
    done = subprocess.run([sys.executable, "-m", "knoc", "init", str(folder)], capture_output=True, text=True,
                          timeout=SECONDS)
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "original"
    assert (folder / ".gitignore").read_text(encoding="utf-8").startswith("original\n# knoc's cache")


def test_new_never_writes_through_a_linked_collection_folder(repo: Path, knoc: Knoc, tmp_path_factory:
                                                             pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (repo / "content/perception-domains").rename(repo / "domains-moved")
    (repo / "content/perception-domains").symlink_to(outside)
    code, _, err = knoc("new", "domain", "weather", root=repo)
    assert code == 2 and "KNO-WRITE" in err and list(outside.iterdir()) == []


def test_force_keeps_the_mode_of_the_file_it_replaces(repo: Path, knoc: Knoc) -> None:
    spec = repo / "specs/document-schema.kno"
    spec.chmod(0o644)
    code, _, err = knoc("specs", "vendor", "--force", root=repo)
    assert code == 0, err
    assert oct(spec.stat().st_mode & 0o777) == "0o644"


def test_a_full_disk_is_the_machines_problem_and_leaves_build_as_it_was(repo: Path, knoc: Knoc,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import errno as errno_

    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    edit = repo / CATALOG_SEARCH
    edit.write_text(edit.read_text(encoding="utf-8").replace("Catalog Search", "Catalog Finder"), encoding="utf-8")
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if len(data) > 100:  # the tree's files, not a progress byte
            raise OSError(errno_.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    code, _, err = knoc("build", "--jobs", "1", root=repo)
    monkeypatch.undo()
    assert code == 2 and "KNO-MACHINE" in err and "No space left on device" in err and "bug" not in err, err
    assert tree(repo / "build") == before


# --- writing, deleting or serving outside what knoc owns (items 6 to 8, 10) ------------------------

def test_a_planted_old_tree_link_is_never_recovered_or_deleted_through(repo: Path, knoc: Knoc,
                                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("other")
    (other / "build/site").mkdir(parents=True)
    (other / "build/site/precious.json").write_text("{}")
    (other / "build/manifest.json").write_text('{"outputs": {"site/precious.json": "x"}}')
    (repo / ".build.old-knoc11111111").mkdir()
    (repo / ".build.old-knoc11111111/tree").symlink_to(other / "build")
    (repo / ".build.old-knoc22222222").symlink_to(other / "build")
    code, _, err = knoc("build", root=repo)
    assert code == 0, err
    assert (other / "build/site/precious.json").read_text() == "{}"  # the other repo's cards are all there
    assert not (repo / "build").is_symlink() and (repo / "build/manifest.json").is_file()
    assert [p.name for p in repo.iterdir() if p.name.startswith(".build")] == []


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_linked_collection_folder_is_followed_inside_the_repo_or_reported(
        where: str, repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    moved = repo / "shared-agents" if where == "inside" else tmp_path_factory.mktemp("elsewhere") / "agents"
    (repo / BP).rename(moved)
    (repo / BP).symlink_to(moved)
    code, out, err = knoc("build", "--format", "json", root=repo)
    if where == "inside":  # followed: every card published, as before the move
        assert code == 0, err
        assert len(list((repo / "build/site").rglob("agent-card.json"))) == len(list((ROOT / "build/site").rglob("agent-card.json")))
    else:  # reported, never silently dropped
        refused = [d for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"]
        assert code == 1 and refused and refused[0]["file"] == BP and "outside the repo" in refused[0]["message"]


def test_a_link_loop_in_a_collection_folder_is_reported_once(repo: Path, knoc: Knoc) -> None:
    (repo / BP / "again").symlink_to(repo / BP)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    refused = [d for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"]
    assert code == 1 and [d["file"] for d in refused] == [f"{BP}/again"] and "already reads" in refused[0]["message"]


def test_key_material_is_never_echoed(repo: Path, knoc: Knoc) -> None:
    pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINOTAREALKEYATALLNOTAREALKEYATALLNOTAREAL\n-----END PRIVATE KEY-----\n"
    for fmt in ("text", "json"):
        code, out, err = knoc("build", "--sign-key", pem, "--format", fmt, root=repo)
        assert code == 2 and "NOTAREALKEY" not in out + err and "PRIVATE KEY-----" not in out + err, out + err


@pytest.mark.parametrize("where", ["/etc/hostname", "../outside.pem", "~/key.pem"])
def test_retired_keys_are_read_only_from_inside_the_repo(where: str, repo: Path, knoc: Knoc) -> None:
    (repo / "knoc.toml").write_text(f'[signing]\nretired = ["{where}"]\n', encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "KNO-CONFIG" in err and "inside the repo" in err, err


def test_a_retired_key_linked_from_outside_is_refused(repo: Path, knoc: Knoc,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    outside = tmp_path_factory.mktemp("outside") / "public.pem"
    outside.write_bytes(ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    (repo / "retired.pem").symlink_to(outside)
    (repo / "knoc.toml").write_text('[signing]\nretired = ["retired.pem"]\n', encoding="utf-8")
    code, _, err = knoc("check", root=repo)
    assert code == 2 and "KNO-SIGNING" in err and "outside the repo" in err, err


# --- urls (item 14) --------------------------------------------------------------------------------

@pytest.mark.parametrize("twin", ["https://agents.possibility.space:443/catalog-search",
                                  "https://AGENTS.possibility.space./catalog-search",
                                  "https://agents.possibility.space/%63atalog-search"])
def test_urls_naming_one_resource_are_one_card_path(twin: str, repo: Path, knoc: Knoc) -> None:
    replace(f"{BP}/quick-summarizer.kno", "url: https://agents.possibility.space/quick-summarizer/",
            f'url: "{twin}"')(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and "KNO-URL-DUPLICATE" in {d["code"] for d in json_diags(out)}, json_diags(out)


# --- the second look at links, names and URLs ------------------------------------------------

@pytest.mark.parametrize("url", ["https://[::1/x.json", "https://[::1/"])
def test_a_malformed_url_is_exit_2_never_a_bug(url: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    card = tmp_path / "card.json"
    card.write_text('{"name": "a", "signatures": [{"protected": "e30", "signature": "AA"}]}')
    for args in (["verify", url, "--jwks", str(card)], ["verify", str(card), "--jwks", url]):
        done = subprocess.run([sys.executable, "-m", "knoc", *args], capture_output=True, text=True, timeout=SECONDS)
        assert done.returncode == 2 and "KNO-INTERNAL" not in done.stderr, done.stderr


def test_a_dangling_link_or_an_unreadable_folder_is_reported(repo: Path, knoc: Knoc,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / BP / "team").symlink_to(repo / "nowhere")
    (repo / BP / "Shouting.KNO").write_text("x")
    unreadable = repo / BP / "locked"
    unreadable.mkdir()
    (unreadable / "hidden-agent.kno").write_text((repo / CATALOG_SEARCH).read_text(encoding="utf-8"))
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if str(path).endswith("/locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, _ = knoc("build", "--format", "json", "--no-cache", root=repo)
    refused = {d["file"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IO-REFUSED"}
    assert code == 1 and set(refused) == {f"{BP}/team", f"{BP}/Shouting.KNO", f"{BP}/locked"}, refused
    assert "link to nothing" in refused[f"{BP}/team"] and "Permission denied" in refused[f"{BP}/locked"]


def test_init_refuses_a_dangling_link_for_a_folder(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "repo").symlink_to(tmp_path / "nowhere")
    done = subprocess.run([sys.executable, "-m", "knoc", "init", str(tmp_path / "repo")], capture_output=True,
                          text=True, timeout=SECONDS)
    assert done.returncode == 2 and "link to nothing" in done.stderr and not (tmp_path / "nowhere").exists()


def test_migrate_checks_every_path_before_it_writes(repo: Path, knoc: Knoc,
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    before = sources(repo)
    outside = tmp_path_factory.mktemp("outside")
    (repo / "content/agent-blueprints/echo-agent.kno").symlink_to(outside / "echo-agent.kno")  # a target blocked
    code, _, err = knoc("migrate", root=repo)
    assert code == 2 and "KNO-WRITE" in err, err
    assert sources(repo) == before and list(outside.iterdir()) == []  # nothing migrated, not even the first one
    code, _, err = knoc("migrate", str(outside / "echo-agent.kno"), root=repo)
    assert code == 2 and "KNO-CONFIG" in err and "KNO-INTERNAL" not in err, err


@pytest.mark.parametrize("command", [("migrate",), ("migrate", "--dry-run"), ("validate",)])
def test_a_path_that_climbs_out_of_content_is_refused_and_touches_nothing(
        repo: Path, tmp_path_factory: pytest.TempPathFactory, command: tuple[str, ...]) -> None:
    """`content/agents/../../../x.kno` reads as under content/ but names a
    file outside the repo: refused before anything is read, rehearsed or
    removed, there or at the same place beside a scratch copy."""
    import subprocess
    import sys

    outside = tmp_path_factory.mktemp("outside")
    legacy = (repo / "content/agents/echo-agent.kno").read_text(encoding="utf-8")
    (outside / "victim.kno").write_text(legacy.replace("slug: echo-agent", "slug: victim"), encoding="utf-8")
    climb = "/".join([".."] * (len(repo.parts) + 2)) + str(outside / "victim.kno")
    done = subprocess.run([sys.executable, "-m", "knoc", *command, f"content/agents/{climb}"], cwd=repo,
                          capture_output=True, text=True, timeout=SECONDS)
    assert done.returncode == 2 and "is outside the repo" in done.stderr, done.stderr
    assert (outside / "victim.kno").read_text(encoding="utf-8").startswith(legacy.split("slug:")[0])


def test_a_named_file_is_the_one_where_it_was_named(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`knoc migrate --root OTHER content/agents/x.kno`, run where that path
    names a file: that file, outside OTHER, is refused; OTHER's file of the
    same name is not taken instead."""
    import shutil
    import subprocess
    import sys

    here = tmp_path_factory.mktemp("here")
    shutil.copytree(repo / "content", here / "content")
    before = sources(repo)
    done = subprocess.run([sys.executable, "-m", "knoc", "migrate", "--root", str(repo), "content/agents/echo-agent.kno"],
                          cwd=here, capture_output=True, text=True, timeout=SECONDS)
    assert done.returncode == 2 and "is outside the repo" in done.stderr, done.stderr
    assert sources(repo) == before and (here / "content/agents/echo-agent.kno").is_file()


def test_writing_refuses_a_path_that_climbs(tmp_path: Path) -> None:
    from knoc.io import writing

    (tmp_path / "in").mkdir()
    for rel in ("../x.kno", "a/../../x.kno", "a/./x.kno", "a//x.kno", ".."):
        with pytest.raises(writing.Unsafe):
            writing.write_in(tmp_path / "in", rel, b"x")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["in"]


def test_a_retired_key_that_takes_a_pinned_kid_is_refused(repo: Path, knoc: Knoc) -> None:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    from knoc.a2a import signing as signing_

    a, b = (signing_.public_jwk(ed25519.Ed25519PrivateKey.generate()) for _ in range(2))
    inline = ", ".join(f'{k} = "{v}"' for k, v in a.items())
    retired = ", ".join(f'{k} = "{v}"' for k, v in b.items())
    (repo / "knoc.toml").write_text(f'[signing]\nkid = "k"\npublic = {{ {inline} }}\nretired = [{{ {retired}, kid = "k" }}]\n',
                                    encoding="utf-8")
    code, _, err = knoc("check", root=repo)
    assert code == 2 and "KNO-SIGNING" in err and "kid" in err, err


@pytest.mark.parametrize("link", ["javascript:alert(1)", "file:///etc/passwd", "/docs"])
def test_a_card_link_a_viewer_would_run_or_open_is_refused(repo: Path, knoc: Knoc, link: str) -> None:
    edit(repo, BLUEPRINT, "  version: \"0.1.0\"", f"  version: \"0.1.0\"\n  documentation_url: \"{link}\"")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 1 and [d["line"] for d in json_diags(out) if d["code"] == "KNO-CARD-LINK"] == [
        line_of(repo, "documentation_url")]


def test_an_integer_clients_cannot_hold_exactly_is_refused(repo: Path, knoc: Knoc) -> None:
    """a2a-sdk reads 12345678901234567890 as 12345678901234567168, and knoc's
    own reader refuses such a card: it is never published."""
    edit(repo, "content/agent-blueprints/schema-steward.kno", "          format: sarif",
         "          format: sarif\n          big: 12345678901234567890\n          fine: 9007199254740991")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-NUMBER"]
    text = (repo / "content/agent-blueprints/schema-steward.kno").read_text(encoding="utf-8").splitlines()
    assert code == 1 and "12345678901234567890" in text[found["line"] - 1]


def test_a_committed_link_that_climbs_out_through_another_is_not_exported(tmp_path: Path) -> None:
    """`zz -> .` makes `zz/zz/../../../..` climb out of the export however
    the text reads: a link through another committed link is left out, a
    plain one inside is made (what `knoc diff` compiles the old side from)."""
    import subprocess

    from knoc.io import git

    repo, secret = tmp_path / "repo", tmp_path / "secret.txt"
    secret.write_text("SECRET=hunter2")
    folder = repo / "content/agent-blueprints"
    folder.mkdir(parents=True)
    (folder / "real.kno").write_text("slug: real\n")
    (folder / "zz").symlink_to(".")
    (folder / "ok.kno").symlink_to("real.kno")
    (folder / "aaa.kno").symlink_to("zz/zz/zz/" + "../" * 3 + "secret.txt")  # as text: inside; as read: out
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    out = git.export(repo, "HEAD", tmp_path / "export")
    exported = out.root / "content/agent-blueprints"
    assert not (exported / "aaa.kno").is_symlink() and not (exported / "aaa.kno").exists()
    assert out.refused == (("content/agent-blueprints/aaa.kno", "a link that may lead out of the repo"),)
    assert (exported / "ok.kno").read_text() == "slug: real\n" and (exported / "zz").is_symlink()


@pytest.mark.parametrize(("old", "new"), [
    ("  name: Quick Summarizer", '  name: "Quick \\u202eSummarizer"'),
    ("      tags: [summarize, documents]", '      tags: [summarize, "docu\\u200bments"]'),
    ("    organization: Possibility", '    organization: "Possi\\u202ebility"'),
    ("  name: Quick Summarizer", '  name: "Quick \\u3164Summarizer"'),  # a blank letter
    ("  name: Quick Summarizer", '  name: "Quick \\u2800Summarizer"'),  # the Braille blank
    ("  description: Condenses a document into a short summary and a list of key points.",
     '  description: "Condenses a document.\\U000E0049\\U000E0047\\U000E004E"'),  # invisible "IGN", for a model
    ("  name: Quick Summarizer", '  name: "Quick\\e[2K\\rok: FAKE"'),  # a terminal printing the card rewrites it
    ("  name: Quick Summarizer", '  name: "Quick \\aSummarizer"'),
    ('  version: "0.1.0"', '  version: "0.1.0\\u202e"'),  # the catalog pages show it
    ("  default_output_modes: [text/markdown]", '  default_output_modes: ["text/mark\\u202edown"]'),
    ("    - id: summarize", '    - id: "summ\\u202earize"'),
])
def test_text_shown_otherwise_than_it_reads_is_a_warning(repo: Path, knoc: Knoc, old: str, new: str) -> None:
    edit(repo, BLUEPRINT, old, new)
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-HIDDEN-TEXT"]
    assert code == 0 and found["line"] == line_of(repo, "\\")  # the line with the escape


def test_hidden_text_in_what_a_client_shows_to_sign_in_is_a_warning(repo: Path, knoc: Knoc) -> None:
    """A security scheme's description and its scopes' are shown where a user signs in."""
    steward = "content/agent-blueprints/schema-steward.kno"
    edit(repo, steward, "description: Platform client credentials",
         'description: "Platform\\e[2K\\rNo authentication needed"')
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-HIDDEN-TEXT"]
    assert code == 0 and found["file"] == steward and "security_schemes" in found["message"]


@pytest.mark.parametrize(("setting", "key"), [
    ('catalog_url = "https://u:CATPW@catalog.example.org/"', "catalog_url"),
    ('[host]\ndocumentation_url = "javascript:alert(document.domain)"', "documentation_url"),
    ('[host]\nlogo_url = "https://u:LOGOPW@example.org/logo.png"', "logo_url"),
    ('catalog_url = "https://catalog.example.org/?token=CATPW0123456789abcdef"', "catalog_url"),
    ('[host]\ndocumentation_url = "https://docs.example.org/#access_token=DOCPW0123456789abcdef"',
     "documentation_url"),
    ('[host]\nlogo_url = "https://cdn.example.org/l.png?X-Amz-Signature=LOGOPW0123456789abcdef"', "logo_url"),
    ('[host]\nidentifier = "https://example.org/?api_key=IDPW0123456789abcdef"', "identifier"),
])
def test_a_published_knoc_toml_url_is_a_web_link_without_a_password(repo: Path, knoc: Knoc, setting: str,
                                                                    key: str) -> None:
    """knoc.toml's catalog url and its host's links reach the catalog pages
    and each AI Catalog: refused as a card's links are, at their line."""
    toml = repo / "knoc.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("[knoc]\n", f"[knoc]\n{setting}\n", 1) if setting.startswith("catalog")
                    else text + f"\n{setting}\n", encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    line = next(i for i, ln in enumerate(toml.read_text(encoding="utf-8").splitlines(), 1) if ln.startswith(key))
    assert code == 2 and f"`{key}`" in err and f"--> knoc.toml:{line}:1" in err and "PW" not in err
    assert not (repo / "build").exists()


def test_an_extension_uri_holding_a_password_is_refused_unrepeated(repo: Path, knoc: Knoc) -> None:
    edit(repo, "content/agent-blueprints/schema-steward.kno", "      - uri: https://possibility.space/extensions/review-trace/v1",
         "      - uri: https://x:EXTPW@possibility.space/extensions/review-trace/v1")
    code, out, err = knoc("build", "--format", "json", root=repo)
    assert code == 1 and "KNO-CARD-URL-CREDENTIALS" in out and "EXTPW" not in out + err


@pytest.mark.parametrize(("old", "new", "path"), [
    ("uri: https://possibility.space/extensions/review-trace/v1",
     "uri: https://possibility.space/extensions/review-trace/v1?token=EXTTOKEN0123456789abcdef", "uri"),
    ("evolution: versioned", "evolution: versioned\ndepends_on: ['https://bob:EXTPW@possibility.space/y/v1']",
     "depends_on"),
    ("  The agent attaches", "  See https://docs.possibility.space/?access_token=EXTTOKEN0123456789abcdef.\n"
                             "  The agent attaches", "description"),
    ("  The agent attaches", "  Call it with Authorization: Bearer EXTTOKEN0123456789abcdef.\n"
                             "  The agent attaches", "description"),
    ("  The agent attaches", "  Call it with Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.EXTTOKENsig0123.\n"
                             "  The agent attaches", "description"),
    ("      enum: [sarif, junit, markdown]", "      enum: [sarif, junit, markdown]\n"
                                             "      default: 'https://q:EXTPW@docs.possibility.space'",
     "params_schema"),
])
def test_an_extension_page_never_publishes_a_credential(repo: Path, knoc: Knoc, old: str, new: str,
                                                        path: str) -> None:
    """What the page shows (its uri, the uris it depends on, its text and
    params schema) is checked as a card's urls and text are."""
    edit(repo, "content/extensions/review-trace.kno", old, new)
    code, out, err = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-EXT-CREDENTIALS"]
    text = (repo / "content/extensions/review-trace.kno").read_text(encoding="utf-8").splitlines()
    secret = next(n for n, line in enumerate(text, 1) if "EXTPW" in line or "EXTTOKEN" in line)
    at = found["line"] if path != "description" else found["line"] + 1  # a `|` block: said at its `|`
    assert code == 1 and at == secret and path in found["message"] + text[found["line"] - 1], found
    assert "EXTPW" not in out + err and "EXTTOKEN" not in out + err and not (repo / "build").exists()


def test_an_extension_entitys_uri_holding_a_password_is_refused_before_its_page(repo: Path, knoc: Knoc,
                                                                               tmp_path: Path) -> None:
    """The extension's page shows its uri, so the entity is refused too,
    and `new extension`, `new agent` and `init` refuse such a url up front."""
    edit(repo, "content/extensions/review-trace.kno", "uri: https://possibility.space/extensions/review-trace/v1",
         "uri: https://x:EXTPW@possibility.space/extensions/review-trace/v1")
    code, out, err = knoc("build", root=repo)
    assert code == 1 and "KNO-EXT-CREDENTIALS" in out + err and "EXTPW" not in out + err
    assert not (repo / "build").exists()
    for args in (["new", "extension", "e9", "--uri", "https://x:EXTPW@ext.example.org/e9/v1"],
                 ["new", "agent", "a9", "--url", "https://x:EXTPW@agents.example.org/a9"],
                 ["new", "agent", "a9", "--url", "https://x:EXT\tEXTPW@agents.example.org/a9"],  # a tab in it
                 ["discover", "--requires", "ext:https://x:EXT EXTPW@ext.example.org/e9/v1"]):
        code, out, err = knoc(*args, root=repo)
        assert code == 2 and "user name or password" in err and "EXTPW" not in out + err, args
    assert not (repo / "content/extensions/e9.kno").exists() and not (repo / "content/agent-blueprints/a9.kno").exists()
    code, out, err = knoc("init", str(tmp_path / "new"), "--url", "https://x:EXTPW@agents.example.org/a", root=tmp_path)
    assert code == 2 and "EXTPW" not in out + err and not (tmp_path / "new").exists()


def test_a_flag_emoji_and_an_ideographic_variant_are_no_hidden_text() -> None:
    """Tag characters in a subdivision flag, and a variation selector after
    an ideograph, are what Unicode means them for."""
    from knoc.rules.text import hidden_character

    scotland = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    assert hidden_character(f"Hi {scotland} \u845b\U000E0100 \u2764\ufe0f \u05e9\u05dc\u05d5\u05dd\u200f") is None
    assert hidden_character("Hi \U000E0049\U000E0047\U000E004E") == "U+E0049"


def test_a_run_of_variation_selectors_is_hidden_text() -> None:
    """One selector picks a glyph; a run of them after an emoji or a letter
    carries bytes no viewer shows ("emoji smuggling")."""
    from knoc.rules.text import hidden_character

    assert hidden_character("Summarizer \U0001F600\ufe01\ufe0a\ufe03") == "U+FE0A"
    assert hidden_character("a\ufe0f\ufe0e") == "U+FE0E"
    assert hidden_character("\u845b\U000E0100\ufe00") == "U+FE00"
    assert hidden_character("\u2764\ufe0f \u263a\ufe0e") is None
    assert hidden_character("\U0001F600\ufe06\u200d\ufe09\u200d\ufe06") == "U+FE09"  # joiners between
    assert hidden_character("x\u180b\u180c\u180d") == "U+180C"  # Mongolian selectors
    assert hidden_character("Echo \U0001F600\ufe00\u206a\ufe01\U0001D173\ufe02") == "U+FE01"  # other blanks between
    assert hidden_character("\u1820\u180b \U0001F469\u200d\U0001F4BB\ufe0f") is None  # one each, an emoji sequence


def test_a_hidden_character_is_shown_visible_under_its_finding(repo: Path, knoc: Knoc) -> None:
    """The source line under a finding would reorder itself on the terminal:
    the character is shown as U+FFFD, one column, the caret where it was."""
    (repo / BLUEPRINT).write_text((repo / BLUEPRINT).read_text(encoding="utf-8").replace(
        "  name: Quick Summarizer", "  name: Quick \u202eSummarizer"), encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "KNO-CARD-HIDDEN-TEXT" in err and "\u202e" not in err and "Quick \ufffdSummarizer" in err


@pytest.mark.parametrize("raw", ["\x1b]0;pwned\x07", "\x1b[2Jpwned\x08"])
def test_a_terminal_escape_in_a_source_line_is_not_sent_to_the_terminal(repo: Path, knoc: Knoc, raw: str) -> None:
    """YAML refuses the raw character, and the line shown under the finding
    shows it as U+FFFD: the terminal never gets to retitle or clear itself."""
    (repo / BLUEPRINT).write_text((repo / BLUEPRINT).read_text(encoding="utf-8").replace(
        "  name: Quick Summarizer", f"  name: Quick {raw}Summarizer"), encoding="utf-8")
    code, out, err = knoc("validate", root=repo)
    assert code == 1 and "pwned" in out + err
    assert not any(c in out + err for c in "\x1b\x07\x08")


def test_what_an_answer_or_a_note_quotes_reaches_the_terminal_escaped(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """A card value in `knoc diff`'s Markdown, a branch name in its summary,
    a file name in `knoc import`'s note: each written `\\uXXXX`, never raw."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("branch", "b\u202eX")
    (repo / BLUEPRINT).write_text((repo / BLUEPRINT).read_text(encoding="utf-8").replace(
        "  name: Quick Summarizer", '  name: "Quick \\e]0;T\\a\\u202eS\\u2028ummarizer"'), encoding="utf-8")
    code, out, err = knoc("diff", "--base", "b\u202eX", root=repo)
    assert code == 0
    for raw in ("\x1b", "\x07", "\u202e", "\u2028"):
        assert raw not in out + err, (raw, out, err)
    assert "\\u001b]0;T\\u0007\\u202eS\\u2028ummarizer" in out and "b\\u202eX" in out + err
    card = tmp_path / "odd\x1b]0;F\x07.json"
    card.write_text(json.dumps({"name": "Odd", "description": "d", "url": "https://odd.example.org/a",
                                "version": "1.0.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
                                "defaultOutputModes": ["text/plain"],
                                "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}]}),
                    encoding="utf-8")
    code, out, err = knoc("import", str(card), root=repo)
    assert code == 0 and "\x1b" not in out + err and "\x07" not in out + err and "odd\\u001b]0;F\\u0007.json" in err


@pytest.mark.parametrize(("first", "other"), [("catalog-search", "Catalog-Search"),
                                              ("catalog-search", "CATALOG-SEARCH"),
                                              ("caf\u00e9", "cafe\u0301"),  # NFC and NFD: one name on macOS
                                              ("catalog-search", "Catalog-Search/v2")])  # one folder there
def test_two_cards_one_file_on_macos_or_windows_are_warned(repo: Path, knoc: Knoc, first: str, other: str) -> None:
    """URL paths are case-sensitive, so both cards are written; a checkout of
    build/ on a file system that folds case holds one, which is said."""
    edit(repo, CATALOG_SEARCH, "url: https://agents.possibility.space/catalog-search",
         f"url: https://agents.possibility.space/{first}")
    edit(repo, f"{BP}/quick-summarizer.kno", "url: https://agents.possibility.space/quick-summarizer",
         f"url: https://agents.possibility.space/{other}")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    folded = [d for d in json_diags(out) if d["code"] == "KNO-OUTPUT-CASE"]
    assert code == 0 and len(folded) == 1, json_diags(out)
    assert ("/Catalog-Search/`" in folded[0]["message"]) == other.endswith("/v2"), folded[0]["message"]
    owner = folded[0]["file"]
    assert owner in (CATALOG_SEARCH, f"{BP}/quick-summarizer.kno")
    assert folded[0]["line"] == line_of(repo, "url: https://agents.possibility.space/", owner)


def test_case_folding_is_the_simple_one_file_systems_use() -> None:
    """APFS and NTFS fold `Straße` into `straße`, never `ß` into `ss`."""
    from knoc.output.linked import case_collisions

    assert case_collisions({"site/h/straße/.well-known/agent-card.json": ["a.kno"],
                            "site/h/strasse/.well-known/agent-card.json": ["b.kno"]}) == []
    assert [(a, b) for a, _, b, _ in case_collisions({"site/h/Straße/x.json": ["a.kno"],
                                                      "site/h/straße/y.json": ["b.kno"]})] == [
        ("site/h/Straße/", "site/h/straße/")]


def test_a_spec_that_recurses_once_per_part_of_a_document_is_taken(repo: Path, knoc: Knoc) -> None:
    """A tree's recursion (`left` and `right`, a list of children, `then` or
    `else`) costs what the document's size does: the spec is taken, and a
    document deep in it is checked."""
    in_properties("tree: {$ref: \"#/$defs/node\"}")(repo)
    in_schema("$defs:\n  node:\n    if: {required: [leaf]}\n"
              "    then: {$ref: \"#/$defs/branch\"}\n    else: {$ref: \"#/$defs/branch\"}\n  branch:\n    properties:\n"
              "      left: {$ref: \"#/$defs/node\"}\n      right: {$ref: \"#/$defs/node\"}\n"
              "      kids: {items: {$ref: \"#/$defs/node\"}}\n      n: {type: integer}\n")(repo)
    domain = repo / "content/perception-domains/api-surface.kno"
    nested = "tree: " + "{left: " * 40 + "{n: oops}" + "}" * 40 + "\n"
    domain.write_text(domain.read_text(encoding="utf-8") + nested, encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = json_diags(out)
    assert code == 1 and [(d["code"], d["file"]) for d in found] == [
        ("KNO-SCHEMA-TYPE", "content/perception-domains/api-surface.kno")], found[:3]


def test_a_source_folder_swapped_for_a_link_after_listing_is_not_read(repo: Path, tmp_path_factory: pytest.TempPathFactory,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch switch (or anyone) may swap a listed source folder for a link
    out of the repo before its files are opened, which guards only the last
    step against links: the file opened is checked where the kernel found
    it, and a build publishes nothing from outside."""
    from knoc.incremental import driver
    from knoc.io import files

    outside = tmp_path_factory.mktemp("outside")
    blueprints = repo / "content/agent-blueprints"
    shutil.copytree(blueprints, outside / "agent-blueprints")
    summarizer = outside / "agent-blueprints/quick-summarizer.kno"
    summarizer.write_text(summarizer.read_text(encoding="utf-8").replace("Condenses", "OUTSIDE-TEXT"), encoding="utf-8")
    listed = driver._listed

    def swapped(*args: object, **kwargs: object) -> object:
        found = listed(*args, **kwargs)  # type: ignore[arg-type]
        blueprints.rename(repo / "content/held")  # after the listing, before any file is read
        blueprints.symlink_to(outside / "agent-blueprints", target_is_directory=True)
        return found

    monkeypatch.setattr(driver, "_listed", swapped)
    result = knoc_api.compile(repo)
    assert not result.ok and any(d.code == "KNO-IO-REFUSED" for d in result.diagnostics), result.diagnostics
    assert all(b"OUTSIDE-TEXT" not in body for body in result.files.values())
    with pytest.raises(files.Refused, match="outside the repo"):
        files.read_source(str(blueprints / "quick-summarizer.kno"), str(repo))


def test_a_source_excerpt_is_not_read_through_a_folder_swapped_for_a_link(repo: Path,
                                                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    """A report reads a source again for its excerpt: as a build reads it,
    so a folder swapped for a link out of the repo in between shows no
    excerpt, never the outside file's lines."""
    from knoc.diagnostics.source import reader

    outside = tmp_path_factory.mktemp("outside")
    (outside / "quick-summarizer.kno").write_text("OUTSIDE-TEXT: 1\n", encoding="utf-8")
    blueprints = repo / "content/agent-blueprints"
    assert reader(repo)("content/agent-blueprints/quick-summarizer.kno") is not None
    blueprints.rename(repo / "content/held")
    blueprints.symlink_to(outside, target_is_directory=True)
    assert reader(repo)("content/agent-blueprints/quick-summarizer.kno") is None
