"""arab-mm-tasks: Arabic and culture-centred benchmarks for `datasets`, lm-eval and lighteval.

Every task variant is declared once, as a `TaskSpec` in its benchmark's module
(`arab_mm_tasks.arabculture.tasks`, ...). The harness adapters in `arab_mm_tasks.harness`
only translate those specs.
"""

__version__ = "0.1.0"
