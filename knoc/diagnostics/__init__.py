"""Diagnostics: the one type every stage produces (`model`), the declared
codes (`codes`), where in a source a diagnostic points (`source`), and the
reporters that write them (`reporters`)."""

from knoc.diagnostics.codes import CODES, Code, diag
from knoc.diagnostics.model import Diagnostic, Report, Severity, Span, from_dict
from knoc.diagnostics.source import JsonPath, SourceFile, at, json_path

__all__ = ["CODES", "Code", "Diagnostic", "JsonPath", "Report", "Severity", "SourceFile", "Span", "at", "diag",
           "from_dict", "json_path"]
