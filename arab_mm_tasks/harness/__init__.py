"""Thin adapters that translate `arab_mm_tasks.core.spec.TaskSpec`s for each evaluation harness."""
