"""What reading a release raises, shared by the builders (which raise it) and the data sources (which catch it).

These live below both packages' readers so `arab_mm_tasks` never imports `dataset_builders`
(docs/architecture.md, "Layers"); `dataset_builders.core.reading` and `.release` re-export them.
"""

from __future__ import annotations

from arab_mm_tasks.core.spec import RecordError


class BadRecord(RecordError):
    """A release record a builder cannot use; the message names the record and the field.

    ``field`` is None when the whole record is unusable (a .jsonl line that is no JSON object):
    then ``record_id`` is ``<file>:<line>`` and the message is ``<file>:<line>: <problem>``.
    """

    def __init__(self, record_id: str, field: str | None, problem: str) -> None:
        super().__init__(f"{record_id}: {problem}" if field is None else f"{record_id}: field {field!r} {problem}")
        self.record_id, self.field, self.problem = record_id, field, problem

    @property
    def reason(self) -> str:
        """The message without the record id (what a report lists next to the skipped record)."""
        return self.problem if self.field is None else f"field {self.field!r} {self.problem}"


class ReleaseUnavailable(RuntimeError):
    """The release cannot be fetched; the message is one line that says why and what to do."""
