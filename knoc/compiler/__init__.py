"""The compiler's stages, in the order data flows through them:
load -> specs -> validate -> project (one file at a time), then link
(resolve, publish, extension and delegation checks, index). They take
plain data and give plain data, and import no edge: the engine
(`knoc.incremental`) reads the sources, runs them and keeps the cache."""
