"""knoc.toml's [accept]: a warning the repo has looked at and keeps is not
shown and does not fail `--fail-on warning`, in the files its patterns
name only; the summary counts it. An error cannot be accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Knoc, edit, json_diags

SENTINEL = "content/agent-blueprints/drift-sentinel.kno"
SEARCH = "content/agent-blueprints/catalog-search.kno"
PATCH = ('protocol_versions: ["1.0", "0.3"]', 'protocol_versions: ["1.0.0", "0.3"]')


def accept(repo: Path, table: str) -> None:
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8") + f"\n[accept]\n{table}\n", encoding="utf-8")


def test_an_accepted_warning_is_counted_not_shown_and_the_build_writes(knoc: Knoc, repo: Path) -> None:
    edit(repo, SENTINEL, *PATCH)
    code, out, err = knoc("build", "--fail-on", "warning", "--format", "json", root=repo)
    assert code == 1 and [d["code"] for d in json_diags(out)] == ["KNO-PROTOCOL-PATCH"]
    assert not (repo / "build").exists()  # a warning under --fail-on warning stops the write

    accept(repo, f'KNO-PROTOCOL-PATCH = ["{SENTINEL}"]')
    code, out, err = knoc("build", "--fail-on", "warning", "--format", "json", root=repo)
    assert code == 0 and json_diags(out) == []
    assert err.strip().splitlines()[-1].startswith("ok: 1 accepted warning (KNO-PROTOCOL-PATCH) in ")
    assert (repo / "build/site/agents.possibility.space/drift-sentinel/.well-known/agent-card.json").is_file()
    code, out, err = knoc("check", "--fail-on", "warning", root=repo)
    assert code == 0 and "warning[" not in out + err  # not shown: only named in the summary
    assert err.strip().splitlines()[-1].startswith("ok: 1 accepted warning (KNO-PROTOCOL-PATCH) in ")


def test_a_warning_in_a_file_no_pattern_names_is_still_shown(knoc: Knoc, repo: Path) -> None:
    edit(repo, SENTINEL, *PATCH)
    edit(repo, SEARCH, 'protocol_versions: ["1.0"]  # the main url', 'protocol_versions: ["1.0.0"]  # the main url')
    accept(repo, 'KNO-PROTOCOL-PATCH = ["content/*/drift-*.kno"]')
    code, out, err = knoc("validate", "--fail-on", "warning", "--format", "json", root=repo)
    assert code == 1 and [d["file"] for d in json_diags(out)] == [SEARCH]
    assert "1 warning, 1 accepted warning (KNO-PROTOCOL-PATCH) in " in err


@pytest.mark.parametrize(("table", "said"), [
    ('KNO-NO-SUCH = ["*"]', "`KNO-NO-SUCH` is not a knoc diagnostic code"),
    ('KNO-RESOLVE-DOMAIN = ["*"]', "is an error, and an error cannot be accepted"),
    ('KNO-PROTOCOL-PATCH = "*"', "takes a list of path patterns"),
    ("KNO-PROTOCOL-PATCH = []", "takes a list of path patterns"),
    ('KNO-CARD-TEXT-CREDENTIALS = ["*"]', "a credential would be published or exposed"),
])
def test_an_entry_knoc_cannot_take_is_a_configuration_error_at_its_line(knoc: Knoc, repo: Path, table: str,
                                                                        said: str) -> None:
    accept(repo, table)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [finding] = json_diags(out)
    lines = (repo / "knoc.toml").read_text(encoding="utf-8").splitlines()
    assert code == 2 and finding["code"] == "KNO-CONFIG" and said in finding["message"]
    assert finding["file"] == "knoc.toml" and lines[finding["line"] - 1] == table



def test_a_pattern_that_names_no_file_is_said_at_its_line(knoc: Knoc, repo: Path) -> None:
    """A typo (or a file renamed since) accepts nothing, and would accept the
    warning in a file added under that name later: said, at its code's line."""
    accept(repo, 'KNO-PROTOCOL-PATCH = ["content/agent-blueprints/drift-sentinal.kno", "content/*/drift-*.kno"]\n'
                 'KNO-COMPAT-JS = ["*"]')
    for command in ("validate", "build", "check"):
        _, out, _ = knoc(command, "--format", "json", root=repo)
        [found] = [d for d in json_diags(out) if d["code"] == "KNO-ACCEPT-UNMATCHED"]
        assert "`content/agent-blueprints/drift-sentinal.kno`" in found["message"] and found["file"] == "knoc.toml"
        lines = (repo / "knoc.toml").read_text(encoding="utf-8").splitlines()
        assert lines[found["line"] - 1].startswith("KNO-PROTOCOL-PATCH"), (command, found)
