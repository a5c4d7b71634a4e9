"""knoc: the compiler for KNO content repos."""

__version__ = "0.1.0"
