"""The shared core: task specs, benchmark declarations and their registry, data sources, media, scoring."""
