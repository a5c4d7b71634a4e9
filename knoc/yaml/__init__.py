"""YAML as knoc reads it: YAML 1.2 values (`yaml12`), composed by libyaml
and resolved here, within the bounds of `knoc.rules.limits`. Plain text
in, plain values or nodes out: no disk, no diagnostics."""
