"""Snapshots of every file `knoc build` writes for the example repo, one
snapshot file per output so a pull request shows card changes as plain
diffs. Update with `pytest --snapshot-update` and review the diff."""

from __future__ import annotations

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension

from tests.conftest import compile_example


class OutputSnapshot(SingleFileSnapshotExtension):
    file_extension = "json"


@pytest.fixture
def snapshot_file(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(OutputSnapshot)


OUTPUTS = [(target, path, body) for target in ("1.0", "0.3", "compat")
           for path, body in compile_example(target).files.items()]


@pytest.mark.parametrize("target,path,body", OUTPUTS,
                         ids=[f"{t}__{p.replace('/', '__')}" for t, p, _ in OUTPUTS])
def test_build_output(target: str, path: str, body: bytes, snapshot_file) -> None:  # type: ignore[no-untyped-def]
    assert body == snapshot_file


def test_snapshots_cover_every_committed_build_file() -> None:
    """build/ in the repo is the default target's output, byte for byte."""
    from tests.conftest import ROOT, tree

    assert tree(ROOT / "build") == compile_example().files
