"""Plain data that outlives a run: versioned records stored as plain tuples
(`records`), and paths and digests kept as columns. No disk: the cache
(knoc.io) stores what these encode, the engine (knoc.incremental) and the
compiler's results are made of them."""
