"""Rendering the build tree in memory: cards, the runtime index and
catalog, HTML pages, static hosts' headers and the manifest, all in the one
JSON encoding. Its few reads (the templates, a built domain index) go
through `knoc.io.files`; it writes nothing."""
