"""One function per command: each takes the repo's Config and the command's
options and returns an `Outcome` (diagnostics, what happened, any answer
for stdout). No printing and no exit codes here: the CLI hands the
outcome to a reporter."""

CACHE_DIR = ".knoc-cache"  # knoc.io.cache.DIR, named here for the CLI's help
