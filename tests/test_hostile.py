"""knoc under hostile input: one regression test per class of attack found
by trying it as an attacker would. Each ends in a diagnostic (code, exit
code), within a time bound, with the sources untouched and nothing written
outside the repo; privacy holds throughout (tests/test_privacy.py)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from knoc.io import limits
from tests.conftest import Knoc, json_diags, tree
from tests.test_bad_input import BP, replace, write

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
                         1, "KNO-OUTPUT-COLLISION"),
    "extension-on-card-path": (replace(REVIEW_TRACE, "uri: https://possibility.space/extensions/review-trace/v1",
                                       "uri: https://agents.possibility.space/catalog-search/.well-known/agent.json"),
                               1, "KNO-OUTPUT-COLLISION"),
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


def test_an_extension_without_its_optional_required_key_builds(repo: Path, knoc: Knoc) -> None:
    replace(REVIEW_TRACE, "required: false\n", "")(repo)
    code, _, err = knoc("build", root=repo)
    assert code == 0, err
    page = repo / "build/site/possibility.space/extensions/review-trace/v1/index.html"
    assert "optional" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(("output", "why"), [
    ("x/../content", "overlaps `content`"), ("content", "overlaps `content`"), ("content/build", "overlaps `content`"),
    ("specs/../.git", "overlaps `.git`"), (".", "inside the repo"), ("..", "inside the repo"),
    ("/tmp", "inside the repo"), ("link-to-content", "overlaps `content`"),
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


def test_a_source_whose_name_has_a_newline_is_one_source(repo: Path, knoc: Knoc) -> None:
    """The cache keeps many paths in one string: one name with a newline
    in it must come back as one path, warm and cold alike."""
    body = (repo / CATALOG_SEARCH).read_text(encoding="utf-8")
    body = body.replace("catalog-search", "odd-search").replace("GSEARCH0000005", "GSEARCH0000099")
    odd = repo / BP / "odd\nsearch.kno"
    odd.write_text(body, encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0
    assert knoc("check", root=repo)[0] == 0
    odd.write_text(body.replace("Catalog Search", "Odd Search"), encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    assert code == 1 and json_diags(out) == json_diags(knoc("check", "--format", "json", "--no-cache", root=repo)[1])
    assert knoc("build", root=repo)[0] == 0 and knoc("check", root=repo)[0] == 0


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
    (repo / ".build.new-abc/site").mkdir(parents=True)  # a killed write
    (repo / ".build.old-def").mkdir()
    (repo / "build").rename(repo / ".build.old-def/tree")  # killed between the two renames
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
