"""`knoc import`: existing A2A Agent Cards as blueprints. `importer` turns
a card into a blueprint; `imported` is what it reads from the card, and
`card_names`, `card_fields`, `card_security` and `card_service` read each
part the way the official SDKs do, saying what does not carry over."""
