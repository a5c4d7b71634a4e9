"""The few rules several layers share, each defined once: ULIDs, slugs,
versions, graph walks and the limits every input is held to. Pure
functions and constants; they import nothing else of knoc."""
