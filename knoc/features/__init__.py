"""The features around the compiler, each in its own module or package:
`drift` (knoc check), `diff` (knoc diff), `discover`, `serve`, `migrate`,
`importing` (knoc import: a card's fields read as the SDKs read them),
`keysets` (key sets for verify and import), `authoring` (what the commands
that write sources share) and `reference` (the reference pages made from
the code). A feature imports only the shared `authoring` and `keysets`
of the others."""
