"""Thin adapters that translate `arab_mm_tasks.spec.TaskSpec`s for each evaluation harness."""
