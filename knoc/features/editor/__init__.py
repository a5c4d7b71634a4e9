"""What `knoc lsp` answers an editor with, from a repo kept compiled in
memory (`knoc.incremental.live`): completion, hover, definitions,
document symbols and quick fixes. Plain data, 0-based lines and
characters as the Language Server Protocol counts them; `knoc.app.lsp`
speaks the protocol."""
