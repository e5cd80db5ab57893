"""A judge prompt as versioned data: id, version, system text, user template, reply format.

A prompt is what a judged score means, so it is data with an identity. Its `content_hash`
covers everything that can change a judgement (texts, fields, reply format, image placement);
cache keys include it, and `tests/judge/test_judge_prompts.py` pins each registered prompt's hash
next to its version, so editing a template without bumping `version` fails a test.

Templates use ``{NAME}`` placeholders for the declared `fields` only and are filled in one
pass, so braces elsewhere (JSON examples in a prompt) need no escaping and a value that
itself contains ``{NAME}`` is inserted as it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

from metric_plugins.judge.media import image_ref
from metric_plugins.judge.parsing import Parsed, ReplyFormat
from metric_plugins.judge.schema import JudgeItem, Message


def read_text(name: str) -> str:
    """A prompt text file shipped in this folder, exactly as stored (UTF-8, no newline added or removed)."""
    return (resources.files("metric_plugins.judge.prompts") / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class JudgePrompt:
    """One judge prompt. Bump `version` whenever any field but `source` changes.

    Args:
        id: stable name, e.g. ``gimmick_ckqa``.
        version: integer, starting at 1.
        system: the system turn, or None for prompts without one.
        user_template: the user turn with ``{FIELD}`` placeholders.
        reply_format: what the judge must answer and how it is parsed (`metric_plugins.judge.parsing`).
        fields: the placeholder names every item must provide.
        images_first: images go before the user text (True) or after it.
        source: where the text comes from (paper lines, upstream file at a commit); not hashed.
    """

    id: str
    version: int
    system: str | None
    user_template: str
    reply_format: ReplyFormat
    fields: tuple[str, ...]
    images_first: bool = True
    source: str = ""

    def __post_init__(self) -> None:
        if self.version < 1:
            raise ValueError(f"judge prompt {self.id}: version must be >= 1, got {self.version}")
        text = (self.system or "") + self.user_template
        missing = [name for name in self.fields if "{" + name + "}" not in text]
        if missing:
            raise ValueError(f"judge prompt {self.id} v{self.version}: fields {missing} appear in no template")

    @property
    def primary_score(self) -> str:
        """The score `Judgement.score` reports: the reply format's first name."""
        return self.reply_format.score_names[0]

    @cached_property
    def content_hash(self) -> str:
        """sha256 over everything that can change a judgement (not the version, not the source note)."""
        content = {
            "id": self.id,
            "system": self.system,
            "user_template": self.user_template,
            "reply_format": self.reply_format.spec(),
            "fields": list(self.fields),
            "images_first": self.images_first,
        }
        return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()

    def fill(self, template: str, item: JudgeItem) -> str:
        """`template` with each ``{FIELD}`` replaced by the item's value, in one pass."""
        values: dict[str, str] = {}
        for name in self.fields:
            if name not in item.fields:
                raise KeyError(
                    f"judge prompt {self.id} v{self.version}: item {item.id!r} has no field {name!r} "
                    f"(it has {sorted(item.fields)})"
                )
            value = item.fields[name]
            if not isinstance(value, str):
                raise TypeError(
                    f"judge prompt {self.id}: item {item.id!r} field {name!r} must be a string, "
                    f"got {type(value).__name__}"
                )
            values[name] = value
        if not values:
            return template
        pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
        return pattern.sub(lambda match: values[match.group(1)], template)

    def render(self, item: JudgeItem) -> list[Message]:
        """The chat turns for `item`: the system turn (if any), then the user turn with the item's images."""
        messages = [Message("system", self.fill(self.system, item))] if self.system is not None else []
        images = tuple(image_ref(image) for image in item.images)
        messages.append(Message("user", self.fill(self.user_template, item), images, self.images_first))
        return messages

    def parse(self, text: str) -> Parsed:
        return self.reply_format.parse(text)

    def describe(self) -> dict[str, object]:
        """Identity for results files: id, version, content hash."""
        return {"id": self.id, "version": self.version, "content_hash": self.content_hash}
