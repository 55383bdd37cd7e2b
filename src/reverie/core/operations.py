"""The write operations of SPEC W2 and how a request becomes a batch of them.

A request is ``{"operations": [...]}`` or, as a fallback, one operation's fields at the top
level. Parsing refuses missing and unknown fields with ``invalid_operation`` and a message that
names the field, so that a model calling the tool can correct itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from reverie.errors import RefusedInput

__all__ = [
    "Add",
    "Batch",
    "Operation",
    "Remove",
    "Replace",
    "SetBody",
    "WriteTopic",
    "parse_batch",
]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Add(_Op):
    """Add one entry (a list item) under a section of ``MEMORY.md`` (created at the end if the
    index has none of that name), or at its end."""

    action: Literal["add"] = "add"
    text: str
    #: A section heading's text: one line, at most 80 characters, no leading '#'.
    section: str | None = Field(default=None, max_length=80, pattern=r"^[^#\n][^\n]*$|^$")


class Replace(_Op):
    """Replace the line holding the unique substring ``old`` with the full new line ``text``."""

    action: Literal["replace"]
    old: str
    text: str
    source: str | None = None


class Remove(_Op):
    """Remove every line holding the substring ``old``."""

    action: Literal["remove"]
    old: str
    source: str | None = None


class WriteTopic(_Op):
    """Write a whole topic file ``memory/<topic>.md``; empty ``content`` deletes it."""

    action: Literal["write_topic"]
    topic: str
    content: str


class SetBody(_Op):
    """Replace the whole body of ``MEMORY.md`` (admin editor, MCP, chat ``update``)."""

    action: Literal["set_body"]
    text: str


Operation = Annotated[Add | Replace | Remove | WriteTopic | SetBody, Field(discriminator="action")]


class Batch(BaseModel):
    """Operations applied all together or not at all, with an optional commit message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operations: tuple[Operation, ...] = Field(min_length=1)
    message: str | None = None

    def texts(self) -> list[tuple[str, str]]:
        """Every caller-supplied string as ``(field, value)``, for content validation."""
        out: list[tuple[str, str]] = []
        for i, op in enumerate(self.operations):
            for name, value in op:
                if isinstance(value, str) and name != "action":
                    out.append((f"operations[{i}].{name}", value))
        if self.message is not None:
            out.append(("message", self.message))
        return out

    def digest(self) -> str:
        """A stable hash of the batch, to tell a replayed idempotency key from a reused one."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()


_OP_FIELDS = {"action", "text", "section", "old", "source", "topic", "content"}
_operation_adapter: TypeAdapter[Any] = TypeAdapter(Operation)


def parse_batch(request: Any) -> Batch:
    """Turn a request (a mapping, or an already parsed :class:`Batch`) into a batch.

    Raises:
        RefusedInput: ``invalid_operation`` naming the missing, unknown or mistyped field.
    """
    if isinstance(request, Batch):
        return request
    if not isinstance(request, Mapping):
        raise RefusedInput(
            'A write is a JSON object: {"operations": [{"action": "add", "text": ...}]}.',
            code="invalid_operation",
        )
    data = dict(request)
    if "operations" not in data and "action" in data:
        # SPEC W2 fallback: one operation's fields at the top level.
        op = {k: data.pop(k) for k in list(data) if k in _OP_FIELDS}
        data["operations"] = [op]
    if isinstance(data.get("operations"), list):
        for i, op in enumerate(data["operations"]):
            if isinstance(op, Mapping) and "action" not in op:
                raise RefusedInput(
                    f"operations[{i}] has no 'action': use one of add, replace, remove, "
                    "write_topic, set_body.",
                    code="invalid_operation",
                )
    try:
        return Batch.model_validate(data)
    except ValidationError as exc:
        raise RefusedInput(_explain(exc), code="invalid_operation") from None


def _explain(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = _path(first["loc"])
    kind = first["type"]
    if kind == "missing":
        return f"{where} is missing: this operation needs it."
    if kind == "extra_forbidden":
        return f"{where} is not a field of this operation; remove it or check its spelling."
    if kind == "union_tag_invalid":
        return (
            f"{where or 'action'}: unknown action; use one of add, replace, remove, "
            "write_topic, set_body."
        )
    if kind == "string_pattern_mismatch" and where.endswith(".section"):
        return f"{where}: a section is named by one line of text that does not start with '#'."
    if kind == "too_short" and where == "operations":
        return "operations is empty: a write needs at least one operation."
    return f"{where}: {first['msg']}."


def _path(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as this module writes field paths: ``operations[0].text``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _is_union_tag(part):
            out += f".{part}" if out else str(part)
    return out


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {"add", "replace", "remove", "write_topic", "set_body"}
