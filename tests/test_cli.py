"""The command line as a user meets it: exit codes, root discovery, the
build directory's safety, determinism and the runtime domain index."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from knoc.cli import main
from knoc.features import drift
from knoc.io import staging as staging_module
from knoc.io.staging import Staging, Writing, check_owned, write_tree
from knoc.output.index import DomainIndex
from knoc.version import __version__
from tests.conftest import ROOT, edit, json_diags, tree


def test_version_and_help() -> None:
    runner = CliRunner()
    assert __version__ in runner.invoke(main, ["--version"]).output
    for command in ([], ["build"], ["validate"]):
        result = runner.invoke(main, [*command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_build_finds_the_root_by_walking_up(repo: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "knoc", "build"], cwd=repo / "content" / "agents",
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("(wrote 7 cards (A2A 1.0) to build/; not published: 1 private agent (ledger-auditor))")
    assert (repo / "build/site/api.possibility.space/a2a/.well-known/agent-card.json").is_file()
    assert "Traceback" not in done.stderr


def test_a_root_that_is_no_content_repo_is_named(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(tmp_path)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "is no content repo" in done.stderr and not (tmp_path / "build").exists()


def test_a_knoc_toml_that_is_no_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "knoc.toml").mkdir()
    done = subprocess.run([sys.executable, "-m", "knoc", "validate"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "knoc.toml is not a regular file" in done.stderr


def test_an_encrypted_signing_key_is_named_and_said_encrypted(repo: Path, knoc,  # type: ignore[no-untyped-def]
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = tmp_path_factory.mktemp("outside") / "locked.pem"  # outside the repo
    key.write_bytes(ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw-Zq81")))
    code, _, err = knoc("build", "--sign-key", str(key), root=repo)
    assert code == 2 and f"({key}) is encrypted" in err and "pw-Zq81" not in err
    plain = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key.write_bytes(plain.replace(plain[40:48], b"AAAAAAAA"))  # damaged, not encrypted: said so
    code, _, err = knoc("build", "--sign-key", str(key), root=repo)
    assert code == 2 and f"({key}) is not an unencrypted PEM private key" in err, err


def test_outside_a_content_repo_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "knoc", "validate"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "no content repo here" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("toml,message", [
    ('[knoc]\na2a = "2.0"\n', "unknown A2A target"),
    ('[knoc]\noutput = "../elsewhere"\n', "inside the repo"),
    ('[knoc]\ncolour = "red"\n', "unknown setting"),
    ('[knoc]\n[signing]\na2a = "1.0"\n', "`a2a` under [signing]; a key belongs to the table whose header"),
    ('[primary]\n"a.example" = "x"\na2a = "0.3"\n', "`a2a` is under [primary], but it is a [knoc] setting"),
    ("[knoc\n", "knoc.toml"),
    ('[knoc]\n[accept\n', "a table declaration; close the table's header on its line: `[name]`\n --> knoc.toml:2:8\n"
                          "  |\n2 | [accept\n  |        ^"),  # the line shown, and what to do
    ('[knoc]\nspecs = specs\n', "Invalid value; quote text: `key = \"text\"`"),
    ('[knoc]\n[[knoc]]\n', "not both\n --> knoc.toml:2:"),  # not "a key is set twice"
    ('[knoc]\nx = [1, 2\n', "Unclosed array; close the list's `[` with `]`\n --> knoc.toml:2:"),  # at the end
    ('[knoc]\noutput = "build"\na2a = 1.0.x\n', "--> knoc.toml:3:10"),  # not TOML: where it stops reading
    ('# settings\n[knoc]\n  output = "../elsewhere"\n', "--> knoc.toml:3:3"),  # read, but wrong: at its key
    ('[primary]\n"agents.example.org/x" = "a"\n', "--> knoc.toml:2:1"),
    ('[signing]\npublic = "a.pem"\npublic = "b.pem"\n', "`public = [..., ...]`"),  # a second key pinned
    ('[knoc]\n# caf\udce9\n', "not UTF-8 text (byte 0xe9); save it as UTF-8\n --> knoc.toml:2:6"),
    ('[knoc]\noutput = "build"\n"" = 1\n', 'unknown setting(s): "" under [knoc]'),  # an empty key, at its line
    ('[knoc]\noutput = "build"\n"" = 1\n', "--> knoc.toml:3:1"),
    ('[knoc]\n"a`b" = 1\n', 'unknown setting(s): "a`b" under [knoc]'),  # quoted as TOML, not in backticks
    ('[knoc]\noutput = "knoc.toml/x"\n', "inside knoc.toml, which is a file, not a folder"),
    ('[knoc]\noutput = "~"\n', "not your home folder"),
    ('[knoc]\noutput = "x/../../elsewhere"\n', "inside the repo"),
    ('[knoc]\nspecs = "/nowhere/specs"\n', "inside the repo (`/nowhere/specs`)"),  # as written, not made relative
    ('[knoc]\noutput = "' + "/".join(["a" * 200] * 30) + '"\n', "knoc takes at most 2,048"),  # past PATH_MAX
    ('[knoc]\ncontent = "' + "/".join(["c" * 200] * 30) + '"\n', "knoc takes at most 2,048"),
    # tomllib reads nested values by recursion: no traceback, at the line where they start to nest
    ('[knoc]\n\n[x]\na = ' + "[" * 600 + "]" * 600 + "\n", "nest hundreds deep; flatten them\n --> knoc.toml:4:5"),
    ('[x]\na = ' + "{b=" * 600 + "1" + "}" * 600 + "\n", "nest hundreds deep; flatten them\n --> knoc.toml:2:5"),
])
def test_bad_configuration_exits_2(repo: Path, knoc, toml: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (repo / "knoc.toml").write_bytes(toml.encode("utf-8", "surrogateescape"))
    code, _, err = knoc("build", root=repo)
    assert code == 2 and message in err


def test_a_knoc_toml_that_is_not_toml_is_placed_in_sarif(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    (repo / "knoc.toml").write_text('[knoc]\na2a = 1.0.x\n')
    code, out, _ = knoc("check", "--format", "sarif", root=repo)
    [result] = json.loads(out)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert code == 2 and location["artifactLocation"]["uri"] == "knoc.toml"
    assert location["region"] == {"startLine": 2, "startColumn": 10}


def test_a2a_flag_overrides_knoc_toml(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", "--a2a", "0.3", root=repo)[0] == 0
    card = (repo / "build/site/api.possibility.space/a2a/.well-known/agent-card.json").read_text()
    assert '"protocolVersion": "0.3"' in card
    assert '"a2a_target": "0.3"' in (repo / "build/manifest.json").read_text()


def test_validate_writes_nothing_and_filters_by_file(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    bp = repo / "content/agent-blueprints/drift-sentinel.kno"
    bp.write_text(bp.read_text().replace("lifecycle: ephemeral", "lifecycle: forever"))
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and not (repo / "build").exists()
    assert {d["file"] for d in json_diags(out)} == {"content/agent-blueprints/drift-sentinel.kno"}
    other = str(repo / "content/agents/echo-agent.kno")
    assert knoc("validate", other, root=repo)[0] == 0


def test_same_sources_same_bytes(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    first = tree(repo / "build")
    for path in sorted((repo / "content").rglob("*.kno")):  # touch every input
        path.write_bytes(path.read_bytes())
    assert knoc("build", root=repo)[0] == 0
    assert tree(repo / "build") == first == tree(ROOT / "build")


def test_files_no_longer_produced_disappear(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    (repo / "content/agent-blueprints/realm-concierge.kno").unlink()
    assert knoc("build", root=repo)[0] == 0
    assert not (repo / "build/site/agents.possibility.space/realm-concierge").exists()
    assert "realm-concierge" not in (repo / "build/index/agents.json").read_text()


def test_build_refuses_to_replace_files_it_did_not_write(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    (repo / "build/NOTES.md").write_text("mine")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "NOTES.md" in err
    assert (repo / "build/NOTES.md").read_text() == "mine"


def test_build_refuses_a_foreign_output_folder(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    (repo / "build").mkdir()
    (repo / "build/index.html").write_text("<h1>my site</h1>")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "no knoc manifest.json" in err
    assert (repo / "build/index.html").read_text() == "<h1>my site</h1>"


@pytest.mark.parametrize(("folder", "reported", "refused"), [
    ("build/index", "extra: build/index", "holds files knoc did not write: index"),
    ("build", "missing: build/ (none of its", "build exists and is not a directory"),
])
def test_a_file_where_build_or_one_of_its_folders_was_is_reported_not_a_crash(  # type: ignore[no-untyped-def]
        repo: Path, knoc, folder: str, reported: str, refused: str) -> None:
    """The memo lists folders; a file in the place of one is found by the
    scan (as no folder), reported by a check, and never replaced by a build."""
    assert knoc("build", root=repo)[0] == 0
    shutil.rmtree(repo / folder)
    (repo / folder).write_text("mine\n", encoding="utf-8")
    code, _, err = knoc("check", root=repo)
    assert code == 1 and reported in err and "KNO-INTERNAL" not in err
    code, _, err = knoc("build", root=repo)
    assert code == 2 and refused in err
    assert (repo / folder).read_text(encoding="utf-8") == "mine\n"


def test_a_tree_knoc_wrote_is_replaced_without_reading_its_manifest(repo: Path, knoc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A build's tree, unchanged since, is known to be knoc's from the memo
    and a stat of each folder; a file that appears in it while a build runs
    is never lost: an update in place leaves it, and the next build, which
    finds it, refuses to replace the tree."""
    assert knoc("build", root=repo)[0] == 0
    listed: list[Path] = []
    monkeypatch.setattr(staging_module, "check_owned", lambda out, manifest: listed.append(out) or check_owned(out, manifest))
    edit(repo, "content/agent-blueprints/catalog-search.kno", "Searches the KNO", "Searches all of the KNO")
    assert knoc("build", root=repo)[0] == 0 and listed == []
    writing = Staging.writing

    def meanwhile(staging: Staging, *args: object) -> Writing:  # someone writes into build/ as the build runs
        (repo / "build/index/notes.txt").write_text("mine\n", encoding="utf-8")
        return writing(staging, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Staging, "writing", meanwhile)
    edit(repo, "content/agent-blueprints/catalog-search.kno", "Searches all of the KNO", "Searches the KNO")
    assert knoc("build", root=repo)[0] == 0
    assert (repo / "build/index/notes.txt").read_text(encoding="utf-8") == "mine\n"
    monkeypatch.setattr(Staging, "writing", writing)
    edit(repo, "content/agent-blueprints/catalog-search.kno", "Searches the KNO", "Searches all of the KNO")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "holds files knoc did not write: index/notes.txt" in err and listed == [repo / "build"]
    assert (repo / "build/index/notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_what_a_killed_build_left_beside_build_goes_even_when_nothing_is_written(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    (repo / ".build.new-knocabcd1234" / "site").mkdir(parents=True)  # a run killed after its swap: the old tree
    (repo / ".build.old-mine").mkdir()  # not a name knoc gives its folders: someone's
    (repo / ".build.old-20240101").mkdir()  # a dated backup, with mkdtemp's 8 characters: someone's too
    (repo / ".build.old-20240101/notes.txt").write_text("backup\n", encoding="utf-8")
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "nothing written" in err
    assert not (repo / ".build.new-knocabcd1234").exists() and (repo / ".build.old-mine").is_dir()
    assert (repo / ".build.old-20240101/notes.txt").read_text(encoding="utf-8") == "backup\n"


def test_an_interrupted_write_leaves_the_old_tree(repo: Path, knoc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")

    class Interrupted(dict[str, bytes]):  # Ctrl-C as the third file is written
        reads = 0

        def __getitem__(self, key: str) -> bytes:
            Interrupted.reads += 1
            if Interrupted.reads == 3:
                raise KeyboardInterrupt
            return super().__getitem__(key)

    with pytest.raises(KeyboardInterrupt):
        write_tree(repo / "build", Interrupted({"a.json": b"1", "b.json": b"2", "c.json": b"3"}), writers=1)
    assert tree(repo / "build") == before
    assert [p.name for p in repo.iterdir() if p.name.startswith(".build")] == []


def test_domain_index_answers_which_agents_watch_a_domain() -> None:
    index = DomainIndex.load(ROOT / "build/index/domains.json")
    assert index.agents_for("schemas") == ["catalog-search", "schema-steward"]
    assert index.agents_for("billing-events") == []  # listed though nobody watches it
    assert "no-such-domain" not in index
    with pytest.raises(KeyError):
        index.agents_for("no-such-domain")


def test_check_is_clean_on_the_committed_example(knoc) -> None:  # type: ignore[no-untyped-def]
    code, _, err = knoc("check", root=ROOT)
    assert code == 0 and err.strip().endswith("(build/ is up to date)")


def test_check_names_stale_missing_and_extra_files(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    bp = repo / "content/agent-blueprints/drift-sentinel.kno"
    bp.write_text(bp.read_text().replace('version: "0.2.1"', 'version: "0.2.2"'))
    (repo / "build/site/api.possibility.space/a2a/.well-known/agent.json").unlink()
    (repo / "build/index/stray.json").write_text("{}")
    code, _, err = knoc("check", root=repo)
    assert code == 1
    assert "stale: build/site/agents.possibility.space/drift-sentinel/.well-known/agent-card.json" in err
    assert '+  "version": "0.2.2",' in err
    assert "missing: build/site/api.possibility.space/a2a/.well-known/agent.json" in err
    assert "extra: build/index/stray.json" in err
    assert "run `knoc build`" in err



def test_a_large_file_with_far_apart_changes_gets_the_whole_file_diff() -> None:
    # The manifest has thousands of lines, and one edit changes a few of them
    # far apart. knoc diffs only windows around them; the result must be what
    # difflib says of the whole file, hunk numbers included.
    old = [f'    "content/agents/a-{i:05}.kno": "{i:064x}",' for i in range(20000)]
    new = list(old)
    new[3], new[12345], new[12349] = '    "sources_digest": "new",', "    edited", "    also edited"
    whole = difflib.unified_diff(old, new, "build/manifest.json (on disk)", "build/manifest.json (from sources)",
                                 n=drift.CONTEXT, lineterm="")
    detail = drift._diff("build/manifest.json", "\n".join(old).encode(), "\n".join(new).encode())
    assert detail == "\n".join(whole)
    assert [line for line in detail.splitlines() if line.startswith("@@")] == ["@@ -2,5 +2,5 @@",
                                                                               "@@ -12344,9 +12344,9 @@"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "", "{", "}", '  "x": 1,']), min_size=0, max_size=120),
       st.lists(st.tuples(st.integers(0, 130), st.sampled_from(["edit", "insert", "delete"]),
                          st.sampled_from(["a", "z", "", "}"])), max_size=4),
       st.booleans(), st.booleans())
def test_a_diff_of_the_changed_part_of_a_file_is_the_diff_of_all_its_lines(
        old: list[str], edits: list[tuple[int, str, str]], old_newline: bool, new_newline: bool) -> None:
    # knoc splits into lines only the part of two files that differs (plus
    # the lines a diff shows and aligns on); the diff must be the one of all
    # their lines, hunk numbers included.
    new = list(old)
    for at, how, line in edits:
        at = min(at, len(new))
        if how == "insert" or at == len(new):
            new.insert(at, line)
        elif how == "edit":
            new[at] = line
        else:
            del new[at]
    old_bytes = ("\n".join(old) + ("\n" if old_newline else "")).encode()
    new_bytes = ("\n".join(new) + ("\n" if new_newline else "")).encode()
    all_old, all_new = old_bytes.decode().splitlines(), new_bytes.decode().splitlines()
    lines: list[str] = []
    for lo, old_hi, new_hi in drift._windows(all_old, all_new):
        hunks = difflib.unified_diff(all_old[lo:old_hi], all_new[lo:new_hi], "f (on disk)", "f (from sources)",
                                     n=drift.CONTEXT, lineterm="")
        lines += [drift._shift(line, lo) for i, line in enumerate(hunks) if i >= 2 or not lines]
    if len(lines) > drift.MAX_DIFF_LINES:
        lines = [*lines[:drift.MAX_DIFF_LINES], f"... {len(lines) - drift.MAX_DIFF_LINES} more lines"]
    assert drift._diff("f", old_bytes, new_bytes) == "\n".join(lines)


def test_a_build_with_nothing_changed_rewrites_nothing(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """The second build finds build/ holding exactly what the sources give
    and leaves it alone: same folder, same files, not one rewritten."""
    assert knoc("build", root=repo)[0] == 0
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (repo / "build").rglob("*")}
    folder = (repo / "build").stat().st_ino
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "build/ is up to date with 7 cards (A2A 1.0): nothing written" in err
    assert (repo / "build").stat().st_ino == folder
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (repo / "build").rglob("*")} == before
    (repo / "build/index/agents.json").write_text("{}\n", encoding="utf-8")  # one file off: rebuilt
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "build/ updated to 7 cards (A2A 1.0): 1 file written;" in err
    assert (repo / "build/index/agents.json").read_text() != "{}\n"
    (repo / "build/index/agents.json").unlink()  # one file gone: rebuilt
    code, _, err = knoc("build", root=repo)
    assert code == 0 and "build/ updated to 7 cards (A2A 1.0): 1 file written;" in err
    assert (repo / "build/index/agents.json").is_file()
    (repo / "build/index/notes.txt").write_text("mine\n", encoding="utf-8")  # one file too many: not replaced
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "holds files knoc did not write: index/notes.txt" in err
    assert (repo / "build/index/notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_cards_written_during_a_link_stage_that_fails_never_land(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    # A recompiled card (written while the link stage runs) in a build the link stage fails.
    edit(repo, "content/agent-blueprints/catalog-search.kno", "domains: [schemas, entity-health]",
         "domains: [schemas, entity-health, no-such-domain]")
    code, _, err = knoc("build", root=repo)
    assert code == 1 and "KNO-RESOLVE-DOMAIN" in err
    assert tree(repo / "build") == before
    assert [p.name for p in repo.iterdir() if p.name.startswith(".build")] == []


def test_a_failed_build_leaves_no_folder_it_made_for_its_output(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """With `output = "dist/site/build"` and no dist/, a build whose link
    stage fails after its cards began to be written leaves no dist/."""
    edit(repo, "knoc.toml", 'output = "build"', 'output = "dist/site/build"')
    edit(repo, "content/agent-blueprints/catalog-search.kno", "domains: [schemas, entity-health]",
         "domains: [schemas, entity-health, no-such-domain]")
    code, _, err = knoc("build", root=repo)
    assert code == 1 and "KNO-RESOLVE-DOMAIN" in err
    assert not (repo / "dist").exists()


def test_an_interrupted_link_stage_leaves_the_old_tree(repo: Path, knoc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from knoc.incremental import driver

    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    edit(repo, "content/agent-blueprints/catalog-search.kno", "domains: [schemas, entity-health]",
         "domains: [schemas]")

    writing: list[str] = []

    def interrupted(*args: object, **kw: object) -> object:
        writing.extend(p.name for p in repo.iterdir() if p.name.startswith(".build.new-"))
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "link_repo", interrupted)
    code, _, _ = knoc("build", root=repo)
    assert code == 130 and writing  # the recompiled card was being written when Ctrl-C came
    assert tree(repo / "build") == before
    assert [p.name for p in repo.iterdir() if p.name.startswith(".build")] == []


def test_a_file_written_early_that_the_tree_does_not_hold_is_removed_with_its_folders(tmp_path: Path) -> None:
    out = tmp_path / "build"
    staging = Staging(out)
    staging.begin()
    early = {"site/a/.well-known/card.json": b"early", "site/b/c/.well-known/card.json": b"gone"}
    assert staging.write_card(early)
    staging.written_early(early)
    staging.finish({"site/a/.well-known/card.json": b"final", "manifest.json": b"{}"},
                   unchanged=())
    assert tree(out) == {"site/a/.well-known/card.json": b"final", "manifest.json": b"{}"}
    assert not (out / "site/b").exists()


SEARCH_CARD = "site/agents.possibility.space/catalog-search/.well-known/agent-card.json"
STEWARD_CARD = "site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
SENTINEL_CARD = "site/agents.possibility.space/drift-sentinel/.well-known/agent-card.json"


def _edit_search_description(repo: Path, mark: str) -> None:
    edit(repo, "content/agent-blueprints/catalog-search.kno", "  description: Searches",
         f"  description: {mark} Searches")


# Through the cache, an unchanged card is linked as the scan of build/ saw
# it; uncached, every card is compiled again and its worker compares it
# with the old tree's file before linking that.
REBUILDS = pytest.mark.parametrize("rebuild", [(), ("--no-cache",)], ids=["cached", "uncached"])


@REBUILDS
def test_a_rebuild_links_the_files_it_would_write_unchanged(repo: Path, knoc,  # type: ignore[no-untyped-def]
                                                            rebuild: tuple[str, ...]) -> None:
    """After one edit, the old tree's unchanged files are hard-linked into
    the new one (same inode, same mtime), the edited card is written anew,
    and the tree is byte for byte what a build from scratch gives."""
    assert knoc("build", root=repo)[0] == 0
    build = repo / "build"
    steward = (build / STEWARD_CARD).stat()
    search = (build / SEARCH_CARD).stat()
    _edit_search_description(repo, "Edited.")
    assert knoc("build", *rebuild, root=repo)[0] == 0
    now = (build / STEWARD_CARD).stat()
    assert (now.st_ino, now.st_mtime_ns) == (steward.st_ino, steward.st_mtime_ns)
    assert (build / SEARCH_CARD).stat().st_ino != search.st_ino
    assert b"Edited. Searches" in (build / SEARCH_CARD).read_bytes()
    assert all(p.stat().st_nlink == 1 for p in build.rglob("*") if p.is_file())  # the old tree is gone
    linked = tree(build)
    shutil.rmtree(build)
    shutil.rmtree(repo / ".knoc-cache")
    assert knoc("build", root=repo)[0] == 0
    assert tree(build) == linked


@REBUILDS
def test_a_rebuild_writes_afresh_what_it_may_not_link(repo: Path, knoc, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      rebuild: tuple[str, ...]) -> None:
    """A file linked from elsewhere (a deploy copy made with hard links) is
    never written through: an update in place leaves it as it is, or moves
    a new file in its place; a symlink, even to the right bytes, is
    replaced by a plain file."""
    assert knoc("build", root=repo)[0] == 0
    build = repo / "build"
    deployed = tmp_path / "deployed.json"
    os.link(build / STEWARD_CARD, deployed)
    outside = tmp_path / "outside.json"
    outside.write_bytes((build / SENTINEL_CARD).read_bytes())
    (build / SENTINEL_CARD).unlink()
    (build / SENTINEL_CARD).symlink_to(outside)
    deployed_bytes = deployed.read_bytes()
    _edit_search_description(repo, "Edited.")
    assert knoc("build", *rebuild, root=repo)[0] == 0
    assert (build / STEWARD_CARD).read_bytes() == deployed.read_bytes() == deployed_bytes
    assert not (build / SENTINEL_CARD).is_symlink()
    assert (build / SENTINEL_CARD).read_bytes() == outside.read_bytes()
    assert outside.stat().st_nlink == 1


@pytest.mark.parametrize(("table", "key", "place"), [
    ("knoc", "output", (3, 3)), ("knoc", "a2a", (4, 1)), ("primary", "agents.example.org", (7, 1)),
    ("primary", None, (6, 1)), ("knoc", "catalog_url", None), ("host", "output", None), ("knoc", "", (9, 1)),
])
def test_a_knoc_toml_key_is_found_in_its_table(table: str, key: str | None, place: tuple[int, int] | None) -> None:
    from knoc.rules.toml import key_place

    text = ('# settings\n[knoc]\n  output = "build"  # a = 1\n"a2a" = "1.0"\n\n[ primary ]\n'
            '"agents.example.org" = "a"\n[knoc]\n"" = 1\n')
    assert key_place(text, table, key) == place


@pytest.mark.parametrize(("text", "table", "key", "place"), [
    ('# \u2028 a separator\n[knoc]\n\noutput = "../x"\n', "knoc", "output", (4, 1)),  # a line as TOML ends it
    ('[host]\ndisplay_name = """\n[knoc]\noutput = "ok"\n"""\n[knoc]\noutput = "../x"\n', "knoc", "output", (7, 1)),
    ('knoc.output = "/tmp"\n', "knoc", "output", (1, 1)),
    ('[primary]\nagents.example.org = "a"\n', "primary", "agents", (2, 1)),
    ('[knoc.output]\nx = 1\n', "knoc", "output", (1, 1)),
    ('knoc = { output = "/tmp" }\n', "knoc", "output", None),
    ('[host]\nname = """ab\\""" still"""\n[knoc]\na2a = "9"\n', "knoc", "a2a", (4, 1)),  # an escaped quote
])
def test_a_knoc_toml_key_is_found_however_it_is_written(text: str, table: str, key: str,
                                                        place: tuple[int, int] | None) -> None:
    from knoc.rules.toml import key_place

    assert key_place(text, table, key) == place


def test_masking_a_password_leaves_the_rest_of_a_message() -> None:
    """A url's user name and password are masked; an `@` elsewhere (a spec's
    slug@version, an address) is left as written."""
    from knoc.rules.masking import masked

    assert masked("is not `agent-blueprint@<semver>`; see ops@acme.example") == (
        "is not `agent-blueprint@<semver>`; see ops@acme.example")
    assert masked("`https://bob:hunt'er2@h.example/x` and `dave:pw@grpc.example:443`") == (
        "`https://***@h.example/x` and `***@grpc.example:443`")


def test_a_key_is_told_from_a_key_id_or_a_path() -> None:
    """knoc.toml's [signing] values: a key's PEM, its body or it as JSON are
    refused; an RFC 7638 key id and a long path without a dot are not."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    from knoc.rules.text import holds_key

    pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    body = "".join(pem.splitlines()[1:-1])
    assert holds_key(pem) and holds_key(body) and holds_key('{"kty": "OKP", "d": "x"}')
    assert not holds_key("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    assert not holds_key("keys/rotation/2026-11-public-signing-key-b") and not holds_key("~/.config/knoc/k.pem")


def test_a_folder_setting_is_named_as_the_folder_it_is(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """`x/../out` is `out`, in every message; `../repo/out` too."""
    for written in ("x/../out", f"../{repo.name}/out"):
        (repo / "knoc.toml").write_text(f'[knoc]\noutput = "{written}"\n', encoding="utf-8")
        code, _, err = knoc("build", root=repo)
        assert code == 0 and "wrote 7 cards (A2A 1.0) to out/" in err and (repo / "out/manifest.json").is_file(), err
        assert knoc("clean", root=repo)[0] == 0


def test_check_without_build_says_it_once(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """Not a line for each of its files: build/ is missing, and the hint."""
    code, _, err = knoc("check", root=repo)
    assert code == 1 and err.count("KNO-DRIFT") == 1 and "missing: build/ (none of its" in err, err


def test_check_names_a_merge_conflict_left_in_build(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A merge leaves git's markers in a file of build/: said as such."""
    assert knoc("build", root=repo)[0] == 0
    manifest = repo / "build/manifest.json"
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    manifest.write_text("".join([*lines[:3], "<<<<<<< HEAD\n", lines[3], "=======\n", lines[3], ">>>>>>> feature\n",
                                 *lines[4:]]), encoding="utf-8")
    code, _, err = knoc("check", root=repo)
    assert code == 1 and "stale: build/manifest.json (an unresolved merge conflict" in err, err


@pytest.mark.parametrize(("toml", "near"), [('[knoc]\nouput = "build"\n', "did you mean `output`?"),
                                            ('[sigining]\nkid = "x"\n', "did you mean `signing`?")])
def test_a_misspelt_knoc_toml_key_is_told_its_near_name(repo: Path, knoc, toml: str, near: str) -> None:  # type: ignore[no-untyped-def]
    (repo / "knoc.toml").write_text(toml, encoding="utf-8")
    code, _, err = knoc("validate", root=repo)
    assert code == 2 and near in err, err
