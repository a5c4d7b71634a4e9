"""One test per class of bad input: the diagnostic's code, file and line,
exit code 1, and build/ byte-identical after the failed build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from knoc.app.reference import apply
from knoc.diagnostics import CODES
from knoc.diagnostics.reporters import EXCERPT_WIDTH
from knoc.features.reference import bad_input
from knoc.features.reference.bad_input import Replace, Write
from knoc.rules import limits
from tests.conftest import json_diags, tree

BP, STEWARD, SENTINEL = bad_input.BP, bad_input.STEWARD, bad_input.SENTINEL
CASES = bad_input.CASES


def replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda root: apply(root, (Replace(rel, old, new),))


def write(rel: str, data: bytes) -> Callable[[Path], None]:
    return lambda root: apply(root, (Write(rel, data),))


def line_text(root: Path, rel: str, line: int) -> str:
    return (root / rel).read_text(encoding="utf-8").splitlines()[line - 1]


def line_of(root: Path, rel: str, needle: str) -> int:
    for number, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {rel}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_located_diagnostic_and_build_is_untouched(case: str, repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    edits, code, rel, line = CASES[case]
    assert knoc("build", root=repo)[0] == 0
    before = tree(repo / "build")
    severity = CODES[code].severity.value

    apply(repo, edits)
    exit_code, out, _ = knoc("build", "--format", "json", root=repo)

    assert exit_code == (1 if severity == "error" else 0), json_diags(out)
    hits = [d for d in json_diags(out) if d["code"] == code]
    assert hits, json_diags(out)
    assert hits[0]["file"] == rel
    if isinstance(line, str):
        line = line_of(repo, rel, line)
    if line is not None:
        assert hits[0]["line"] == line
    assert hits[0]["column"] >= 1 and hits[0]["message"] and hits[0]["severity"] == severity
    if severity == "error":
        assert tree(repo / "build") == before  # a failed build writes nothing


@pytest.mark.parametrize(("url", "code"), [
    ("http://auth.possibility.space/token", "KNO-CARD-AUTH-HTTP"),
    ("token", "KNO-CARD-AUTH-URL"),
    ("ftp://auth.possibility.space/token", "KNO-CARD-AUTH-URL"),
    ("http://localhost:8080/token", "KNO-CARD-URL-LOCAL"),  # no client elsewhere gets a token there
    ("https://10.0.0.7/token", "KNO-CARD-URL-LOCAL"),
    # how a client's URL parser (and inet_aton) reads them: 127.0.0.1, 10.0.0.1, localhost
    ("https://127.1/token", "KNO-CARD-URL-LOCAL"), ("https://0x7f.1/token", "KNO-CARD-URL-LOCAL"),
    ("https://2130706433/token", "KNO-CARD-URL-LOCAL"), ("https://0177.0.0.1/token", "KNO-CARD-URL-LOCAL"),
    ("https://0xa.0.0.1/token", "KNO-CARD-URL-LOCAL"), ("https://localhost./token", "KNO-CARD-URL-LOCAL"),
    ("https://１２７.0.0.1/token", "KNO-CARD-URL-LOCAL"), ("https://127。0。0。1/token", "KNO-CARD-URL-LOCAL"),
    ('" https://auth.possibility.space/token"', "KNO-CARD-AUTH-URL"),  # whitespace urlsplit would drop
    ('"https://auth.possibility space/token"', "KNO-CARD-AUTH-URL"),
    ("https://-bad-.example/token", "KNO-CARD-AUTH-URL"),
    ("https://auth.possibility.space:0/token", "KNO-CARD-AUTH-URL"),
    ("https://svc:s3cret@auth.possibility.space/token", "KNO-CARD-AUTH-URL"),  # public: so would the password be
])
def test_a_security_schemes_endpoints_are_urls_over_tls(url: str, code: str, repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    replace(STEWARD, "token_url: https://auth.possibility.space/realms/platform/protocol/openid-connect/token",
            f"token_url: {url}")(repo)
    exit_code, out, _ = knoc("build", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"].startswith(("KNO-CARD-AUTH", "KNO-CARD-URL"))]
    [d] = found
    assert (d["code"], d["file"], d["line"]) == (code, STEWARD, line_of(repo, STEWARD, f"token_url: {url}"))
    assert d["column"] == line_text(repo, STEWARD, d["line"]).index(f": {url}") + 3  # at the value
    assert exit_code == (1 if code == "KNO-CARD-AUTH-URL" else 0)
    assert "s3cret" not in out  # a password is never repeated


def test_an_endpoint_left_out_of_the_card_is_not_held_to_it(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A client credentials flow has no authorization url: one written there
    is left out (a warning says so), and what is not published is not checked."""
    replace(STEWARD, "        client_credentials:\n", "        client_credentials:\n          authorization_url: /stray\n")(repo)
    exit_code, out, _ = knoc("build", "--format", "json", root=repo)
    assert exit_code == 0 and [d["code"] for d in json_diags(out)] == ["KNO-PROJECT-DROPPED"]


def test_boundary_wording_is_a_warning_and_the_build_succeeds(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    replace(SENTINEL, "- MUST NOT modify .kno files directly", "- Please be careful with .kno files")(repo)
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 0
    [diag] = json_diags(out)
    assert (diag["code"], diag["severity"], diag["line"]) == (
        "KNO-BOUNDARY-WORDING", "warning", line_of(repo, SENTINEL, "Please be careful"))
    assert diag["column"] == 7


def test_recursive_alias_is_refused(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    write("content/perception-domains/loop.kno", b"$schema: perception-domain@0.1.0\nsources: &s [*s]\n")(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    assert code == 1 and json_diags(out)[0]["code"] == "KNO-YAML-ALIAS-CYCLE"


def test_text_diagnostic_shows_the_source_line_and_a_caret(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    apply(repo, CASES["missing-domain"].edits)
    code, _, err = knoc("validate", root=repo)
    assert code == 1
    assert "error[KNO-RESOLVE-DOMAIN]: perception domain `no-such-domain` does not exist" in err
    assert f"--> {SENTINEL}:{line_of(repo, SENTINEL, 'no-such-domain')}:" in err
    assert "    domains: [entity-health, no-such-domain]" in err
    assert "^" * len("no-such-domain") in err
    assert "= help: did you mean" in err or "= help: add content/perception-domains/no-such-domain.kno" in err
    assert err.rstrip().endswith("(nothing written)")


def test_the_source_line_shown_is_the_whole_line_as_yaml_counts_lines(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A U+2028 ends no line in YAML 1.2, nor in what knoc shows of the
    line it is refused on (str.splitlines would cut the line there)."""
    apply(repo, CASES["line-separator"].edits)
    code, _, err = knoc("validate", root=repo)
    assert code == 1 and "error[KNO-YAML-LINE-BREAK]" in err
    assert "  name: Drift\u2028Sentinel\n" in err


def test_a_long_line_is_shown_cut_around_the_place(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """20,000 brackets on one line: the finding is at the first bracket past
    the limit, and the line shown is the part around it, not all of it."""
    deep = repo / "content/perception-domains/deep.kno"
    deep.write_text("a: " + "[" * 20000 + "]" * 20000 + "\n", encoding="utf-8")
    code, _, err = knoc("validate", root=repo)
    at = 3 + limits.NESTING_DEPTH + 1  # `a: `, the brackets within the limit, then the one past it
    assert code == 1 and f"--> content/perception-domains/deep.kno:1:{at}" in err
    lines = err.splitlines()
    shown = next(i for i, line in enumerate(lines) if line.startswith("1 | "))
    excerpt, caret = lines[shown][len("1 | "):], lines[shown + 1][len("  | "):]
    assert excerpt.startswith("...[") and excerpt.endswith("[...") and len(excerpt) <= EXCERPT_WIDTH + 6
    assert caret.strip() == "^" and excerpt[caret.index("^")] == "["


def test_the_caret_sits_under_the_field_after_wide_characters(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """CJK and emoji take two terminal columns each: the caret and its
    length follow what the terminal draws, not the count of characters."""
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    assert "\ntaxonomy:\n  topics: [schemas, governance]\n" in text
    source.write_text(text.replace("\n  topics: [schemas, governance]\n", '\n  topics: ["日本語🙂", targetx: 1]\n', 1),
                      encoding="utf-8")
    code, _, err = knoc("validate", root=repo)
    lines = err.splitlines()
    shown = next(i for i, line in enumerate(lines) if "targetx" in line and " | " in line)
    excerpt, caret = lines[shown].split(" | ", 1)[1], lines[shown + 1].split(" | ", 1)[1]
    drawn = "".join(c * (2 if c in "日本語🙂" else 1) for c in excerpt)  # as a terminal draws it
    assert code == 1 and drawn[len(caret) - len(caret.lstrip()):len(caret)] == "targetx: 1", (excerpt, caret)


@pytest.mark.parametrize(("title", "hint"), [
    (r'"C:\dir\knoc"', "write it twice"),  # a Windows path or a regex's `\d` in double quotes
    (r'"\ud83d\ude00"', "YAML has no surrogate pairs"),  # JSON's way to write an emoji
    (r'"x \u00ZZ"', "write it twice"),  # hex digits that are none
    (r'"\U00110000"', "at most U+10FFFF"),
])
def test_a_bad_escape_is_named_as_one_not_as_indentation(repo: Path, knoc, title: str, hint: str) -> None:  # type: ignore[no-untyped-def]
    (repo / STEWARD).write_text((repo / STEWARD).read_text(encoding="utf-8").replace(
        "\ntitle: ", f"\ntitle: {title}\nold_title: ", 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and "escape" in found["message"] and hint in found["hint"]
    assert "indentation" not in found["message"] + found["hint"]


def test_a_file_that_cannot_be_read_is_not_reported_again_by_what_names_it(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A domain file that is not UTF-8 is its own error; the blueprints
    naming its domain are not told to add a file that is there."""
    assert knoc("build", root=repo)[0] == 0  # a warm cache, too
    domain = repo / "content/perception-domains/schemas.kno"
    domain.write_bytes(domain.read_bytes() + b"# caf\xe9\n")
    for args in ((), ("--no-cache",)):
        code, out, _ = knoc("validate", "--format", "json", *args, root=repo)
        codes = [d["code"] for d in json_diags(out) if d["severity"] == "error"]
        assert code == 1 and codes == ["KNO-YAML-ENCODING"], (args, codes)


@pytest.mark.parametrize(("value", "hint"), [
    ("@greeter answers", "quote the value"), ("`knoc` says hi", "quote the value"), ("%x", "quote the value"),
    ("[a, b", "is not closed"), ("{a: b", "is not closed"), ("|x", "`|` or `>`"),
])
def test_a_value_yaml_reads_as_syntax_says_what_to_write(repo: Path, knoc, value: str, hint: str) -> None:  # type: ignore[no-untyped-def]
    """Text that starts like YAML syntax is not an indentation mistake."""
    (repo / STEWARD).write_text((repo / STEWARD).read_text(encoding="utf-8").replace(
        "\ntitle: ", f"\ntitle: {value}\nold_title: ", 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and hint in found["hint"] and "indentation" not in found["message"] + found["hint"]


def test_a_quote_closed_on_a_later_line_and_a_quoted_marker_are_not_blamed(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """A value quoted across lines, and a line of it that starts `>>>>>>>`,
    are valid YAML: an error below them is said as itself, not as a quote
    left open or a merge conflict."""
    replace(SENTINEL, "  name: Drift Sentinel", '  name: "Drift\n>>>>>>> Sentinel"\n   extra: bad')(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and "not closed" not in found["message"] and "merge conflict" not in found["message"], found


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_a_conflict_marker_is_found_whatever_ends_the_lines(repo: Path, knoc, end: str) -> None:  # type: ignore[no-untyped-def]
    """YAML ends a line at `\\r` too: the marker is found there, and on its line."""
    source = repo / SENTINEL
    lines = source.read_text(encoding="utf-8").splitlines()
    source.write_bytes(end.join([*lines[:5], "<<<<<<<", lines[5], "=======", lines[5], ">>>>>>> feature", *lines[6:]])
                       .encode("utf-8"))
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["file"] == SENTINEL]
    assert code == 1 and "merge conflict" in found["message"] and found["line"] == 6, found


@pytest.mark.parametrize(("old", "new"), [("\nversion: ", "\nversion "), ("\n  safety_level: ", "\n  safety_level ")])
def test_a_key_without_its_colon_is_said_at_its_own_line(repo: Path, knoc, old: str, new: str) -> None:  # type: ignore[no-untyped-def]
    """libyaml notices a missing `:` on the line after; the author is shown
    the line that lacks it."""
    source = repo / SENTINEL
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    line = text[:text.index(old)].count("\n") + 2
    assert code == 1 and found["line"] == line and "`: `" in found["hint"], found


@pytest.mark.parametrize(("text", "line", "also"), [
    ("$schema agent-blueprint@0.4.0\nid: x\n", 1, 2),  # the file's first line
    ("---\n$schema agent-blueprint@0.4.0\nid: x\n", 2, 3),  # after the document's start
    ("$schema: agent-blueprint@0.4.0\npersona:  # who\n  safety_level standard\n\n  # why\n  lifecycle: x\n", 3, 6),
    ("$schema: agent-blueprint@0.4.0\nskills:\n  - id summarize\n    name: S\n", 3, 4),  # a list item's first key
    ("$schema: agent-blueprint@0.4.0\npurpose:\n  Finds entities in the catalog,\n  note: slow.\n", 3, 4),
])
def test_a_first_key_without_its_colon_is_said_where_yaml_read_on_from(repo: Path, knoc, text: str, line: int,  # type: ignore[no-untyped-def]
                                                                       also: int) -> None:
    """YAML reads a line without its `:` and the next line's key as one
    value, and stops at that key's `:`: the line said is the one that lacks
    its colon, the `:` beside it (text that holds `: ` reads the same)."""
    (repo / "content/agent-blueprints/keyless.kno").write_text(text, encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and found["line"] == line and "holds no `key: value`" in found["message"], found
    assert f"line {also} are one text" in found["hint"], found


def test_a_key_past_yamls_length_is_said_as_one(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    (repo / "content/agent-blueprints/long-key.kno").write_text("a: 1\n" + "k" * 1100 + ": v\n", encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and found["line"] == 2 and "1,024 characters" in found["hint"], found


@pytest.mark.parametrize(("text", "line", "hint"), [
    ("a: 1\nurl https://api.possibility.space/a2a\nversion: x\n", 2, "put `: ` after its key"),  # a `:` in its value
    ("$schema: agent-blueprint@0.4.0\ntags:\n  - a\n  b\n  - c\n", 4, "start it with `- `"),  # an item's `- `
])
def test_a_line_that_holds_no_key_says_what_it_lacks(repo: Path, knoc, text: str, line: int, hint: str) -> None:  # type: ignore[no-untyped-def]
    (repo / "content/agent-blueprints/keyless.kno").write_text(text, encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and found["line"] == line and hint in found["hint"] and "1,024" not in found["hint"], found


def test_a_value_holding_a_colon_and_a_space_is_told_to_be_quoted(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """`purpose: Note: one-shot`: the commonest first mistake; YAML reads
    `: ` as the end of a key, and the value must be quoted."""
    source = repo / SENTINEL
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("\npurpose: ", "\npurpose: Note: ", 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and "quote the value" in found["hint"] and "holds `: `" in found["message"], found


@pytest.mark.parametrize(("text", "line", "column"), [
    ('a: 1\ntitle: "Quick" Summarizer\n', 2, 8),  # a key's value
    ("a: 1\ntags:\n  - 'it' s\n", 3, 5),  # a list item
    ('a: 1\ntags: [ "x" y ]\n', 2, 9),  # in a flow list: not an unclosed `[`
])
def test_text_after_a_quoted_value_is_said_at_its_opening_quote(repo: Path, knoc, text: str, line: int,  # type: ignore[no-untyped-def]
                                                                 column: int) -> None:
    """libyaml stops after the closing quote ("did not find expected key");
    the author is shown the value and told to quote all of it."""
    (repo / "content/agent-blueprints/quoted.kno").write_text(text, encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-YAML-SYNTAX"]
    assert code == 1 and (found["line"], found["column"]) == (line, column), found
    assert "text after a quoted value" in found["message"] and "quote the whole value" in found["hint"], found


def test_list_items_without_a_space_after_the_dash_are_told_so(repo: Path, knoc) -> None:  # type: ignore[no-untyped-def]
    """`-MUST ...` lines read as one text, where a list is wanted."""
    replace(SENTINEL, "    - MUST NOT modify", "    -MUST NOT modify")(repo)
    replace(SENTINEL, "    - MUST NOT exceed", "    -MUST NOT exceed")(repo)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-TYPE"]
    assert code == 1 and found["line"] == line_of(repo, SENTINEL, "-MUST NOT modify"), found
    assert "put a space after each item's `-` (`- MUST`)" in found["hint"], found
