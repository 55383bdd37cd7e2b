"""The content rules every write passes (SPEC W3, W4, W5), in one place for every path.

Two steps: :func:`check_request` looks at the batch alone, before the memory is locked;
:func:`check_result` looks at what the batch would change, before anything is written. Only
the lines a batch adds are scanned for credentials, so a line already in memory never blocks an
unrelated write, and removing a line is always possible.
"""

from __future__ import annotations

import re
from collections import Counter

from reverie.config import Settings
from reverie.errors import RefusedInput

from . import secrets
from .markdown import Applied
from .operations import Batch, SetBody, WriteTopic
from .paths import INDEX, check_links

__all__ = ["added_text", "check_control", "check_request", "check_result", "check_text"]

# C0 and C1 control characters and DEL; tab and newline are text, and a carriage return is
# accepted only as part of a CRLF newline (it is normalized away).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def check_text(text: str, field: str) -> None:
    """Refuse control characters and credential-shaped text in one caller-supplied string.

    Raises:
        RefusedInput: ``memory_invalid_control_character`` or ``memory_credential_rejected``.
    """
    check_control(text, field)
    _check_credentials(text, field)


def check_control(text: str, field: str) -> None:
    """Refuse control characters other than newline and tab (W4).

    Raises:
        RefusedInput: ``memory_invalid_control_character`` naming the field and position.
    """
    m = _CONTROL.search(text)
    if m:
        raise RefusedInput(
            f"{field} holds the control character U+{ord(m.group()[0]):04X} at position "
            f"{m.start()}: remove it (newline and tab are allowed).",
            code="memory_invalid_control_character",
            field=field,
            position=m.start(),
        )


def _check_credentials(text: str, field: str) -> None:
    found = secrets.find_credentials(text)
    if found:
        raise RefusedInput(
            f"{field} looks like it holds a credential ({secrets.describe(found)}). "
            "Memory is read into prompts and kept in git history: keep secrets in typed "
            "settings or a secret manager, and remember only where they live.",
            code="memory_credential_rejected",
            field=field,
            kinds=sorted({f.kind for f in found}),
        )


def check_request(batch: Batch, settings: Settings) -> None:
    """Checks on the batch alone: sizes, control characters, links (W3, W4, W5).

    Raises:
        RefusedInput: with the code of the first rule the batch breaks.
    """
    texts = batch.texts()
    total = sum(len(value.encode()) for _, value in texts)
    if total > settings.max_batch_bytes:
        raise RefusedInput(
            f"The batch holds {total:,} bytes; the limit is {settings.max_batch_bytes:,}. "
            "Split it into several writes.",
            code="memory_too_large",
            limit=settings.max_batch_bytes,
            size=total,
        )
    for field, value in texts:
        check_control(value, field)
        size = len(value.encode())
        if size > settings.max_file_bytes:
            raise RefusedInput(
                f"{field} holds {size:,} bytes; a memory file may hold at most "
                f"{settings.max_file_bytes:,}.",
                code="memory_too_large",
                field=field,
                limit=settings.max_file_bytes,
                size=size,
            )
    for i, op in enumerate(batch.operations):
        if isinstance(op, SetBody):
            _check_index_size(op.text, f"operations[{i}].text", settings)
        body = op.content if isinstance(op, WriteTopic) else getattr(op, "text", "")
        check_links(body)
    if batch.message is not None:
        _check_credentials(batch.message, "message")


def _check_index_size(text: str, field: str, settings: Settings) -> None:
    size = len(text.encode())
    if size > settings.max_index_bytes:
        raise RefusedInput(
            f"{field}: {INDEX} would hold {size:,} bytes; it may hold at most "
            f"{settings.max_index_bytes:,}. Move detail into topic files "
            "(write_topic) and link them with [[memory/<slug>.md]].",
            code="memory_too_large",
            field=field,
            limit=settings.max_index_bytes,
            size=size,
        )


def added_text(old: str | None, new: str | None) -> str:
    """The lines of ``new`` that ``old`` does not have (as a multiset), joined by newlines."""
    if not new:
        return ""
    remaining = Counter((old or "").split("\n"))
    added = []
    for line in new.split("\n"):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            added.append(line)
    return "\n".join(added)


def check_result(applied: Applied, settings: Settings) -> None:
    """Checks on what the batch would write: file sizes and credentials in added lines.

    Raises:
        RefusedInput: ``memory_too_large`` or ``memory_credential_rejected``.
    """
    for path, text in applied.files.items():
        if text is None:
            continue
        if path == INDEX:
            _check_index_size(text, INDEX, settings)
        elif len(text.encode()) > settings.max_file_bytes:
            raise RefusedInput(
                f"{path} would hold {len(text.encode()):,} bytes; a memory file may hold at "
                f"most {settings.max_file_bytes:,}. Split it into several topics.",
                code="memory_too_large",
                path=path,
                limit=settings.max_file_bytes,
            )
        _check_credentials(added_text(applied.before.get(path), text), path)
