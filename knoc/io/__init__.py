"""The edge: every contact with the outside world. Reading sources, writing
and scanning the build tree, the cache files, git, HTTP, serving, watching
files and child processes all happen in this folder and nowhere else, so
this is where the hardening lives (the limits it holds input to are
`knoc.rules.limits`). Nothing here knows what an entity or a card is."""
