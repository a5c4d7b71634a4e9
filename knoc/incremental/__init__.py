"""The engine beside the compiler: it runs the compiler's stages over a
repo on disk, on every core, and reuses what the cache kept (per-file
results, the link stage's, the last run's rendering), holding a large
run's results compact. It must give the bytes the stages give."""
