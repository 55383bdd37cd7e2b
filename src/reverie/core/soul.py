"""Editing an agent's soul draft with the operations of memory (SPEC S1, W2-W4).

The soul is one Markdown document. A draft is edited with ``add``, ``replace``, ``remove`` and
``set_body``, parsed by the same :func:`~reverie.core.operations.parse_batch` as memory writes
and checked by the same content rules: control characters anywhere, credentials in the lines a
batch adds. ``write_topic`` and a ``source`` have no meaning here and are refused.
"""

from __future__ import annotations

from typing import Any

from reverie.config import Settings
from reverie.errors import RefusedInput

from . import validation
from .markdown import apply_batch, canonical_text
from .operations import Remove, Replace, WriteTopic, parse_batch
from .paths import INDEX

__all__ = ["SOUL", "edit_soul"]

#: How the soul is named in messages.
SOUL = "the soul"


def edit_soul(text: str, request: Any, settings: Settings) -> tuple[str, list[str]]:
    """The draft ``text`` after the operations in ``request``, with notes (entries already
    there, say). Pure: nothing is stored.

    Raises:
        RefusedInput: a malformed batch, ``no_match``/``ambiguous_match``, a control
            character (``memory_invalid_control_character``), a credential
            (``memory_credential_rejected``), or a soul over ``max_soul_bytes``
            (``soul_too_large``).
    """
    batch = parse_batch(request)
    for i, op in enumerate(batch.operations):
        if isinstance(op, WriteTopic):
            raise RefusedInput(
                f"operations[{i}]: the soul is one document, it has no topic files; use add, "
                "replace, remove or set_body.",
                code="invalid_operation",
            )
        if isinstance(op, Replace | Remove) and op.source not in (None, "", INDEX):
            raise RefusedInput(
                f"operations[{i}].source: the soul is one document; leave source out.",
                code="invalid_operation",
            )
    validation.check_request(batch, settings)
    try:
        applied = apply_batch(batch, lambda path: text if path == INDEX else None)
    except RefusedInput as exc:
        raise _of_the_soul(exc) from None
    new = canonical_text(applied.files.get(INDEX, text) or "")
    size = len(new.encode())
    if size > settings.max_soul_bytes:
        raise RefusedInput(
            f"The soul would hold {size:,} bytes; it may hold at most "
            f"{settings.max_soul_bytes:,}, as it is read into every prompt. Keep it to role, "
            "personality, tone and lasting working rules.",
            code="soul_too_large",
            limit=settings.max_soul_bytes,
            size=size,
        )
    validation.check_added_credentials(SOUL, text, new)
    return new, [_soul_words(note) for _, note in applied.notes]


def _soul_words(text: str) -> str:
    """What :func:`apply_batch` says of ``MEMORY.md`` (the path the soul's draft is edited
    under), said of the soul, which is what the model edited."""
    return text.replace(INDEX, SOUL).replace("read the file", "read the soul")


def _of_the_soul(exc: RefusedInput) -> RefusedInput:
    """A refusal of a soul edit naming the soul, not ``MEMORY.md``."""
    details = {k: SOUL if v == INDEX else v for k, v in exc.details.items()}
    return RefusedInput(_soul_words(exc.message), code=exc.code, **details)
