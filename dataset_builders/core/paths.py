"""The release-path rule, re-exported from `arab_mm_tasks.core.paths`, where it lives below the builders and the
data sources both (docs/architecture.md, "Layers")."""

from arab_mm_tasks.core.paths import MAX_DERIVED_NAME_BYTES as MAX_DERIVED_NAME_BYTES
from arab_mm_tasks.core.paths import files_inside as files_inside
from arab_mm_tasks.core.paths import inside as inside
from arab_mm_tasks.core.paths import is_file as is_file
from arab_mm_tasks.core.paths import resolve_inside as resolve_inside
from arab_mm_tasks.core.paths import safe_file_name as safe_file_name
