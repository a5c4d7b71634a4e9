"""The reference pages made from the code: `pages` (commands, codes,
knoc.toml keys, output files), `fields` (every field of every entity type,
from the specs) and `bad_input` (one bad edit per class of mistake, whose
diagnostics the codes page shows)."""
