"""The few rules several layers share, each defined once: ULIDs, slugs,
versions and graph walks. Pure functions; they import nothing of knoc."""
