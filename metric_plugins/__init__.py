"""Metrics and breakdowns for the arab-mm-tasks benchmarks (plain Python: no harness imports)."""
