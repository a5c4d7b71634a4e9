"""The few rules several layers share, each defined once: ULIDs, slugs,
versions, paths, where lines end, graph walks, the types of parsed JSON, the format of the
records a run leaves for the next one, and the limits every input is held
to. Pure functions, types and constants; they import nothing else of knoc."""
