"""An author's second week: errors that point where the author is at work
and say what to write, and advice that a build can follow."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Knoc, json_diags, tree

STEWARD = "content/agent-blueprints/schema-steward.kno"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


def test_a_file_renamed_without_its_slug_is_said_at_the_slug(repo: Path, knoc: Knoc) -> None:
    """References are followed to `<slug>.kno`: a file renamed (or a
    domain's slug changed) without the other is a warning at the slug that
    names both ways to mend it; the build still writes its card."""
    (repo / STEWARD).rename(repo / "content/agent-blueprints/steward.kno")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SLUG-FILE"]
    assert code == 0 and found["file"] == "content/agent-blueprints/steward.kno" and found["line"] == 5
    assert "schema-steward.kno" in found["hint"] and "`slug: steward`" in found["hint"]
    assert (repo / "build/site/agents.possibility.space/schema-steward/.well-known/agent-card.json").is_file()
    (repo / "content/agent-blueprints/steward.kno").rename(repo / STEWARD)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-SLUG-FILE"]


@pytest.mark.parametrize("uri", ["https://possibility.space:8443/extensions/review-trace/v1",
                                 "https://possibility.space/extensions/conin$/v1"])
def test_an_extension_page_folder_windows_cannot_name_is_said(repo: Path, knoc: Knoc, uri: str) -> None:
    """An extension's page goes in the folder of its uri, as a card does."""
    rel = "content/extensions/review-trace.kno"
    text = (repo / rel).read_text(encoding="utf-8")
    (repo / rel).write_text(text.replace("uri: https://possibility.space/extensions/review-trace/v1", f"uri: {uri}"),
                            encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-PROJECT-URL-PORTABLE"]
    assert code == 0 and [d["file"] for d in found] == [rel], out


def test_the_slug_file_hint_offers_only_names_knoc_takes(repo: Path, knoc: Knoc) -> None:
    """A file name that is no slug (`Steward_v2.kno`) is not offered as
    one, and a copy beside its original is not told to take its name."""
    (repo / STEWARD).rename(repo / "content/agent-blueprints/Steward_v2.kno")
    shutil.copy(repo / "content/agent-blueprints/drift-sentinel.kno", repo / "content/agent-blueprints/copy.kno")
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    hints = {d["file"].rsplit("/", 1)[-1]: d["hint"] for d in json_diags(out) if d["code"] == "KNO-SLUG-FILE"}
    assert hints["Steward_v2.kno"] == "rename the file to schema-steward.kno", hints
    assert "copy.kno" not in hints or "rename" not in hints["copy.kno"], hints


@pytest.mark.parametrize(("url", "named"), [
    ("https://agents.possibility.space:8443/schema-steward", "`agents.possibility.space:8443` holds `:`"),
    ("https://agents.possibility.space/v1/schema-steward:review", "`schema-steward:review` holds `:`"),
    ("https://agents.possibility.space/tools/con", "`con` is a device name"),
    ("https://agents.possibility.space/tools/aux.json", "`aux.json` is a device name")])
def test_a_card_folder_windows_cannot_name_is_said(repo: Path, knoc: Knoc, url: str, named: str) -> None:
    """A Windows clone cannot check out a folder named `h:8443`, `a:b` or
    `con`: a warning that names it (the card is still written), once per
    host for a host's folder; a url without one is said nothing of."""
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    old = "  url: https://agents.possibility.space/schema-steward/\n"
    assert old in text
    source.write_text(text.replace(old, f"  url: {url}\n"), encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-PROJECT-URL-PORTABLE"]
    assert code == 0 and len(found) == 1 and named in found[0]["message"], found
    assert found[0]["file"] == STEWARD and "[accept]" in found[0]["hint"]
    source.write_text(text, encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-PROJECT-URL-PORTABLE"]


@pytest.mark.parametrize("committed", [True, False])
def test_a_copied_file_is_where_the_duplicates_are_reported(repo: Path, knoc: Knoc, committed: bool) -> None:
    """Copy an agent to start a new one: the id, slug and url it still
    shares are errors at the copy (the file not in git's HEAD), pointing at
    the original, with `knoc id` for the id. Outside git: the later file."""
    if committed:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
    copy = "content/agent-blueprints/aa-new-agent.kno" if committed else "content/agent-blueprints/zz-new-agent.kno"
    shutil.copy(repo / STEWARD, repo / copy)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = {d["code"]: d for d in json_diags(out) if d["code"].endswith("-DUPLICATE")}
    assert code == 1 and set(found) == {"KNO-ID-DUPLICATE", "KNO-SLUG-DUPLICATE", "KNO-URL-DUPLICATE"}, found
    for d in found.values():
        assert d["file"] == copy and d["message"].endswith(f"is also used by {STEWARD}")
        [other] = d["related"]
        assert other["file"] == STEWARD and other["label"] == "also used here"
    assert "`knoc id`" in found["KNO-ID-DUPLICATE"]["hint"]
    text = (repo / copy).read_text(encoding="utf-8").splitlines()
    assert text[found["KNO-ID-DUPLICATE"]["line"] - 1].startswith("id:")
    code, _, err = knoc("validate", root=repo)
    assert f"--> {copy}:" in err and f"--> {STEWARD}:" in err and "also used here" in err


def test_a_dedented_key_is_named_an_indentation_mistake(repo: Path, knoc: Knoc) -> None:
    source = repo / STEWARD
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  version: "))  # under a2a_projection
    lines[at] = lines[at].lstrip()
    source.write_text("".join(lines), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = json_diags(out)
    assert code == 1 and found["code"] == "KNO-YAML-SYNTAX" and "indentation does not line up" in found["message"]
    assert f"line {at + 1}, at column 1, may be the one out of place" in found["hint"]


@pytest.mark.parametrize(("old", "new", "hint"), [
    ("    streaming: true", "    streaming: yes", "YAML 1.2, which knoc reads, takes `yes` as a string: write `true`"),
    ("    streaming: true", "    streaming: Off", "takes `Off` as a string: write `false`"),
    ("    streaming: true", "    streaming: maybe", "write `true` or `false`, without quotes"),
    ("    streaming: true", "    streaming: [true]", "write `true` or `false`"),
    ('  version: "0.3.0"', "  version: 3", 'quote it: "3"'),
    ('  version: "0.3.0"', "  version: 1.20", 'quote it: "1.20"'),  # as written: 1.2 would be another version
    ('  version: "0.3.0"', "  version: 0o17  # octal", 'quote it: "0o17"'),
    ('  version: "0.3.0"', "  version: !!float 1.20", 'quote it: "1.20"'),
    ("  name: Schema Steward", "  name: {first: Schema}", "quote it if it holds `: `"),
    ("  name: Schema Steward", "  name: [Schema]", "write a string here"),
])
def test_every_type_error_says_what_to_write(repo: Path, knoc: Knoc, old: str, new: str, hint: str) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-TYPE"]
    assert code == 1 and found and hint in found[0]["hint"], found


@pytest.mark.parametrize(("url", "hint"), [
    ("https://agents.possibility.space/schema steward", "write an absolute http(s) URL, without spaces, a query"),
    ("agents.possibility.space/schema-steward", "write an absolute http(s) URL"),
])
def test_a_url_of_the_wrong_shape_says_what_to_write(repo: Path, knoc: Knoc, url: str, hint: str) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if line.startswith("  url: "))
    source.write_text(text.replace(old, f'  url: "{url}"', 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-PATTERN"]
    assert code == 1 and found and found[0]["hint"].startswith(hint), found


def test_a_stray_file_in_build_gets_advice_a_build_can_follow(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    stray = repo / "build/site/notes.txt"
    stray.write_text("mine\n", encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    [found] = json_diags(out)
    assert code == 1 and found["message"] == "extra: build/site/notes.txt (knoc did not write it)"
    assert found["hint"].startswith("move it out of build/")
    assert knoc("build", root=repo)[0] == 2 and stray.exists()  # what the old advice led to
    stray.rename(repo / "notes.txt")  # the advice, followed
    assert knoc("build", root=repo)[0] == 0 and knoc("check", root=repo)[0] == 0


def test_migrate_with_nothing_left_to_migrate_is_no_error(repo: Path, knoc: Knoc) -> None:
    assert knoc("migrate", root=repo)[0] == 0
    code, _, err = knoc("migrate", root=repo)
    assert code == 0 and "nothing to migrate" in err


@pytest.mark.parametrize(("target", "stated"), [("compat", '["1.0", "0.3"]'), ("0.3", '["0.3"]')])
def test_migrate_states_the_versions_the_target_implied(repo: Path, knoc: Knoc, target: str, stated: str) -> None:
    """A legacy agent that states no versions meant the build target's; a
    blueprint that states none means 1.0 everywhere: migrate writes them out."""
    legacy = repo / "content/agents/echo-agent.kno"
    legacy.write_text(legacy.read_text(encoding="utf-8").replace('protocol_versions: ["1.0", "0.3"]\n', ""),
                      encoding="utf-8")
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('a2a = "1.0"', f'a2a = "{target}"'),
                      encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0
    before = {k: v for k, v in tree(repo / "build").items() if k != "manifest.json"}
    code, _, err = knoc("migrate", root=repo)
    assert code == 0, err
    assert f"protocol_versions: {stated}" in (repo / "content/agent-blueprints/echo-agent.kno").read_text()
    assert f"`protocol_versions` written as what A2A target {target} publishes" in err  # frozen: said
    assert knoc("build", root=repo)[0] == 0  # the same cards as before
    assert {k: v for k, v in tree(repo / "build").items() if k != "manifest.json"} == before


def test_verify_names_the_repos_own_key_set_and_a_failed_download_is_exit_2(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    key = tmp_path_factory.mktemp("key") / "k.pem"
    run = [sys.executable, "-m", "knoc"]
    assert subprocess.run([*run, "keys", "new", str(key)], capture_output=True).returncode == 0
    assert subprocess.run([*run, "build", "--sign-key", str(key), "--root", str(repo)],
                          capture_output=True).returncode == 0
    card = "build/site/agents.possibility.space/catalog-search/.well-known/agent-card.json"
    done = subprocess.run([*run, "verify", card], capture_output=True, text=True, cwd=repo)
    own = "build/site/agents.possibility.space/.well-known/jwks.json"
    assert done.returncode == 2 and f"--jwks {own}" in done.stderr
    assert subprocess.run([*run, "verify", card, "--jwks", own], capture_output=True, cwd=repo).returncode == 0
    forged = json.loads((repo / card).read_text(encoding="utf-8"))
    header = {"alg": "EdDSA", "typ": "JOSE", "kid": "k", "jku": "https://nohost.invalid/.well-known/jwks.json"}
    protected = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    forged["signatures"] = [{"protected": protected, "signature": "AAAA"}]
    forged["supportedInterfaces"][0]["url"] = "https://nohost.invalid/a2a"
    path = tmp_path_factory.mktemp("card") / "card.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    done = subprocess.run([*run, "verify", str(path), "--allow-jku"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "cannot read the key set" in done.stderr, done.stderr


def test_clean_removes_only_what_knoc_made(repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert knoc("build", root=repo)[0] == 0 and (repo / ".knoc-cache").is_dir()
    mine = repo / "build/site/notes.txt"
    mine.write_text("mine\n", encoding="utf-8")
    code, _, err = knoc("clean", root=repo)
    assert code == 2 and "notes.txt" in err and mine.is_file() and (repo / ".knoc-cache").is_dir()
    mine.unlink()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "keep.txt").write_text("keep\n", encoding="utf-8")
    assert knoc("clean", "--cache-only", root=repo)[0] == 0
    assert not (repo / ".knoc-cache").exists() and (repo / "build").is_dir()
    (repo / ".knoc-cache").symlink_to(elsewhere)  # a link in the cache's place: removed, never followed
    code, _, err = knoc("clean", root=repo)
    assert code == 0 and "removed build/ and .knoc-cache/" in err
    assert not (repo / "build").exists() and not (repo / ".knoc-cache").is_symlink()
    assert (elsewhere / "keep.txt").is_file()
    assert knoc("clean", root=repo)[0] == 0  # nothing left: still fine


def test_clean_removes_only_the_cache_files_knoc_names(repo: Path, knoc: Knoc) -> None:
    """A file of the author's in `.knoc-cache/`, or in its place, stays
    where it is, and the summary says so; knoc's own files go."""
    assert knoc("build", root=repo)[0] == 0
    cache = repo / ".knoc-cache"
    (cache / "sub").mkdir()
    for mine in (cache / "notes.txt", cache / "sub/x", cache / "files/mine.txt"):
        mine.write_text("mine\n", encoding="utf-8")
    code, _, err = knoc("clean", "--cache-only", root=repo)
    assert code == 0 and ".knoc-cache/notes.txt" in err and ".knoc-cache/files/mine.txt" in err, err
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == [
        "files", "files/mine.txt", "notes.txt", "sub", "sub/x"]
    shutil.rmtree(cache)
    cache.write_text("notes\n", encoding="utf-8")
    code, _, err = knoc("clean", root=repo)
    assert code == 2 and "left it as it is" in err and cache.read_text(encoding="utf-8") == "notes\n"


@pytest.mark.parametrize(("url", "warned"), [("https://agents.example.com/x", True), ("https://a.b.test/x", True),
                                             ("https://examples.com/x", False), ("https://possibility.space/x", False)])
def test_a_public_card_on_an_example_domain_is_named(repo: Path, knoc: Knoc, url: str, warned: bool) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("url: https://agents.possibility.space/schema-steward", f"url: {url}"),
                      encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-CARD-URL-EXAMPLE"]
    assert code == 0 and bool(found) == warned and (not found or found[0]["file"] == STEWARD)


def test_a_duplicate_beside_other_findings_and_an_edited_committed_file(repo: Path, knoc: Knoc) -> None:
    """The cold look's crash (a duplicate with another finding in a committed
    file), and an id pasted into a committed file: told at the edited one."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    steward = (repo / STEWARD).read_text(encoding="utf-8")
    domain = repo / "content/perception-domains/schemas.kno"
    theirs = next(line for line in domain.read_text(encoding="utf-8").splitlines() if line.startswith("id:"))
    ours = next(line for line in steward.splitlines() if line.startswith("id:"))
    (repo / STEWARD).write_text(steward.replace(ours, theirs).replace("    streaming: true", "    streaming: yes"),
                                encoding="utf-8")
    code, out, err = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-ID-DUPLICATE"]
    assert code == 1 and found["file"] == STEWARD, out + err


def test_diff_leaves_out_a_committed_link_that_leaves_the_repo(repo: Path, knoc: Knoc) -> None:
    git(repo, "init", "-q", "-b", "main")
    (repo / "notes.md").symlink_to("/etc/hostname")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    code, out, err = knoc("diff", "--base", "HEAD", root=repo)
    assert code == 0 and "No public wire changes" in out, err


def test_serve_signing_options_without_watch_and_a_key_given_twice(
        repo: Path, knoc: Knoc, signing_key: Path) -> None:
    assert knoc("serve", "--unsigned", root=repo)[0] == 2
    key = signing_key
    code, _, err = knoc("build", "--sign-key", str(key), "--sign-key", str(key), root=repo)
    assert code == 0 and "signed with 1 key" in err
    assert subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True,
                          env={**os.environ, "KNOC_SIGNING_KEY": str(key)}).returncode == 0


def test_clean_leaves_folders_that_only_look_like_its_own(repo: Path, knoc: Knoc) -> None:
    mine = repo / ".build.old-mine/tree"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine\n", encoding="utf-8")
    code, _, err = knoc("clean", root=repo)
    assert code == 0 and (mine / "notes.txt").is_file() and "removed build/" not in err


def test_a_cleaned_build_whose_committed_build_is_signed_is_not_rebuilt_unsigned(
        repo: Path, knoc: Knoc, signing_key: Path) -> None:
    """`knoc clean` (or rm -rf build) leaves no signed manifest on disk; git's
    HEAD still has one, and a plain build must not publish without the key."""
    key = signing_key
    assert knoc("build", "--sign-key", str(key), root=repo)[0] == 0
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "signed")
    assert knoc("clean", root=repo)[0] == 0
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "KNO-UNSIGNED" in err and "as committed at HEAD is signed" in err
    assert not (repo / "build").exists()
    code, _, err = knoc("build", "--unsigned", root=repo)
    assert code == 0 and "unsigned (--unsigned): the signatures build/ had are gone" in err


def test_an_extension_page_at_a_hosts_root_is_named(repo: Path, knoc: Knoc) -> None:
    """Its page takes the host's catalog page: a warning at the extension's uri."""
    ext = repo / "content/extensions/review-trace.kno"
    text = ext.read_text(encoding="utf-8")
    ext.write_text(text.replace("uri: https://possibility.space/extensions/review-trace/v1",
                                "uri: https://agents.possibility.space/"), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CATALOG-PAGE-TAKEN"]
    assert code == 0 and found["file"] == "content/extensions/review-trace.kno" and found["line"] == 9


@pytest.mark.parametrize(("old", "new", "hint"), [
    ("      name: Review spec change", "     name: Review spec change",  # a list item's key, one short
     "between the blocks above it at column 5 (line {n}) and column 7 (line {n})"),
    ("      tags: [schemas, review, api]", "       tags: [schemas, review, api]",  # one too deep
     "deeper than the keys of line {p} (column 7): YAML reads it as the rest of that line's value"),
    ("      name: Review spec change", "       name: Review spec change",  # an item's key, one too deep
     "deeper than the keys of line {p} (column 7)"),
    ("    - id: explain-schema", "   - id: explain-schema",  # a list item, one short
     "line {a}'s item starts at column 4, but the items of its list above it (line {n}) at column 5"),
    ("    - id: explain-schema", "     - id: explain-schema",  # a list item, one too deep
     "line {a}'s item starts at column 6, but the items of its list above it (line {n}) at column 5"),
])
def test_indentation_mistakes_in_lists_name_the_columns_to_choose(repo: Path, knoc: Knoc, old: str, new: str,
                                                                  hint: str) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new, 1), encoding="utf-8")
    lines = text.splitlines()
    at = lines.index(old) + 1
    item = next(n for n in range(at - 1, 0, -1) if lines[n - 1].lstrip().startswith("- id:"))
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = json_diags(out)
    assert code == 1 and found["line"] in (at, at + 1), found  # a moved item is found on its next line
    assert hint.format(n=item, p=at - 1, a=at) in found["hint"], found["hint"]
    assert f"line {found['line']}, at column" not in found["hint"]  # the line reported is never blamed wrongly


def test_check_names_where_its_keys_came_from(repo: Path, knoc: Knoc, signing_key: Path) -> None:
    """With no pin, the key at hand stands in: the finding says so, not
    that knoc.toml pins it; a bad key says nothing was checked."""
    key = signing_key
    assert knoc("build", root=repo)[0] == 0
    done = subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True, text=True,
                          env={**os.environ, "KNOC_SIGNING_KEY": str(key)})
    assert done.returncode == 1 and "signed by the key given (KNOC_SIGNING_KEY" in done.stderr, done.stderr
    assert "knoc.toml pins" not in done.stderr
    key.write_text("not a key\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "knoc", "check", "--root", str(repo)], capture_output=True, text=True,
                          env={**os.environ, "KNOC_SIGNING_KEY": str(key)})
    assert done.returncode == 2 and "nothing was checked" in done.stderr, done.stderr


@pytest.mark.parametrize("damage", [
    lambda m: m[: len(m) // 2],  # truncated
    lambda m: m.replace('"signing": {', '"signing": null, "was": {', 1),
    lambda m: m.replace('"signing": {', '"signing": {"keys": "abc"}, "signing": {', 1),  # a key twice
    lambda m: m.replace('"signing"', '"\\u0073igning"', 1),
])
def test_a_damaged_committed_manifest_still_counts_as_signed(
        repo: Path, knoc: Knoc, signing_key: Path, damage: Callable[[str], str]) -> None:
    key = signing_key
    assert knoc("build", "--sign-key", str(key), root=repo)[0] == 0
    manifest = repo / "build/manifest.json"
    manifest.write_text(damage(manifest.read_text(encoding="utf-8")), encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "signed, then damaged")
    shutil.rmtree(repo / "build")
    code, _, err = knoc("build", root=repo)
    assert code == 2 and "KNO-UNSIGNED" in err, err


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_a_field_of_another_oauth_flow_is_named_and_left_out(repo: Path, knoc: Knoc, target: str) -> None:
    """The specs share one flow shape; a client_credentials flow with an
    authorization_url is a warning at that line, not a knoc bug."""
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    token = "          token_url: https://auth.possibility.space/realms/platform/protocol/openid-connect/token\n"
    assert token in text
    source.write_text(text.replace(token, token + "          authorization_url: https://auth.example.net/a\n"
                                   "          pkce_required: true\n"), encoding="utf-8")
    code, out, _ = knoc("build", "--a2a", target, "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-PROJECT-DROPPED"
             and "belongs to another OAuth flow" in d["message"]]
    assert code == 0 and len(found) == 2 and {d["file"] for d in found} == {STEWARD}, out
    assert "auth.example.net" not in "".join(p.read_text(encoding="utf-8") for p in (repo / "build").rglob("*.json"))


def test_the_flow_fields_are_the_1_0_models() -> None:
    from knoc.a2a import wire
    from knoc.a2a.targets import v10

    models = {name: tuple(f.annotation.__args__[0].model_fields)  # type: ignore[union-attr]
              for name, f in v10.OAuthFlows.model_fields.items()}
    assert {k: sorted(v) for k, v in models.items()} == {k: sorted(v) for k, v in wire.FLOW_FIELDS.items()}


@pytest.mark.parametrize(("written", "named"), [("grpc", "GRPC"), ("REST", "HTTP+JSON"), ("jsonrpc", "JSONRPC"),
                                                ('" GRPC"', "GRPC"), ("HTTP/JSON", "HTTP+JSON"),
                                                ("JSON-RPC2", "JSONRPC")])
def test_a_binding_written_otherwise_than_a2a_names_it_is_named(repo: Path, knoc: Knoc, written: str,
                                                                named: str) -> None:
    """Clients compare bindings exactly: `grpc` matches no client."""
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("  version: ", f"  preferred_transport: {written}\n  version: ", 1),
                      encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-BINDING"]
    assert code == 0 and found["file"] == STEWARD and f"write `{named}`" in found["hint"]


@pytest.mark.parametrize("custom", ["HTTP+JSON", "wss-stream", "gRPC-Web"])
def test_a_custom_or_exact_binding_is_not_named(repo: Path, knoc: Knoc, custom: str) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("  version: ", f"  preferred_transport: {custom}\n  version: ", 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-BINDING"]
