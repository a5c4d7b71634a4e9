"""The compiler's stages, in the order data flows through them:
load -> specs -> validate -> project (one file at a time), then link
(resolve, publish, extension and delegation checks, index), driven by
`driver.compile_repo`, which keeps the cache as a collaborator."""
