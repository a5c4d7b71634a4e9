"""Entity kinds: what each kind of entity (agent, perception domain,
extension, spec) means, which facts the link stage reads from it, its
checks and what it contributes to the output. The compiler's stages ask
the kind; a kind never calls a stage."""
