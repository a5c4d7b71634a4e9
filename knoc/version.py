"""knoc's version (one place: the package metadata, the manifest and `--version` read it)."""

__version__ = "0.1.0"
