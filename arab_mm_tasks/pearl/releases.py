"""Pearl's three releases: their Hub ids and the configs (one per task) each is built into."""

from __future__ import annotations

# The authors' Hub datasets (gated); the run scripts' ids are accepted by the builder as aliases.
RELEASES = {"pearl": "UBC-NLP/PEARL", "pearl_lite": "UBC-NLP/PEARL-LITE", "pearl_x": "UBC-NLP/PEARL-X"}
CONFIGS_OF = {
    "pearl": ("pearl_closed", "pearl_open"),
    "pearl_lite": ("pearl_lite_closed", "pearl_lite_open"),
    "pearl_x": ("pearl_x_single", "pearl_x_multi"),
}
