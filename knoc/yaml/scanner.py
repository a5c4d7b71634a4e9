"""libyaml's parser (PyYAML's C binding), or PyYAML's own where it was
built without libyaml: the same tokens and nodes, slower. What knoc reads
YAML with (`knoc.yaml.yaml12`), and where a scalar ends (`plain_ends`)."""

from __future__ import annotations

from collections.abc import Iterator

from yaml import ScalarToken, YAMLError

try:
    from yaml._yaml import CParser as Parser  # libyaml
except ImportError:  # pragma: no cover - PyYAML built without libyaml: same values, slower
    from yaml.composer import Composer
    from yaml.parser import Parser as _Events
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class Parser(Reader, Scanner, _Events, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            _Events.__init__(self)
            Composer.__init__(self)

        def dispose(self) -> None:
            pass


def plain_ends(text: str) -> Iterator[tuple[int, int, int]]:
    """Where each plain (unquoted) scalar of a text ends: (line, column),
    0-based, and the line it starts on. For a text that composes: a
    scanner error ends the walk."""
    scanner = Parser(text)
    try:
        while (token := scanner.get_token()) is not None:
            if type(token) is ScalarToken and token.plain:
                yield token.end_mark.line, token.end_mark.column, token.start_mark.line
    except YAMLError:
        return
    finally:
        scanner.dispose()


__all__ = ["Parser", "plain_ends"]
