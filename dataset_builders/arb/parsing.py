"""ARB's release fields, re-exported from `arab_mm_tasks.arb.parsing`: the task side reads the authors' released
CSV too (`arab_mm_tasks.arb.released`), and imports never run from `arab_mm_tasks` to `dataset_builders`."""

from arab_mm_tasks.arb.parsing import FieldError as FieldError
from arab_mm_tasks.arb.parsing import StepPair as StepPair
from arab_mm_tasks.arb.parsing import parse_choices as parse_choices
from arab_mm_tasks.arb.parsing import parse_steps as parse_steps
from arab_mm_tasks.arb.parsing import steps_text as steps_text
