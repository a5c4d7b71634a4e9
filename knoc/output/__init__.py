"""Rendering the build tree in memory: cards, the runtime index and
catalog, HTML pages, static hosts' headers and the manifest, all in the one
JSON encoding. Pure: nothing here touches the disk."""
