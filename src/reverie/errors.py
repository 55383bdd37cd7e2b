"""The one exception tree of Reverie.

Every refusal and fault that crosses the public API is one of these, with a stable ``code``
that scripts and other programs can match on, and a message that says what to do::

    ReverieError                 catch-all; never raised directly
    ├── RefusedInput             the request itself is wrong; nothing was written (exit 3)
    │                            any call: invalid_unicode (a lone surrogate), invalid_input
    │                            (nested too deep); memory writes: invalid_operation,
    │                            invalid_path, memory_too_large, memory_credential_rejected,
    │                            memory_invalid_control_character,
    │                            memory_invisible_character, no_match, ambiguous_match,
    │                            idempotency_key_reused, invalid_revision; reads:
    │                            invalid_limit, invalid_range, invalid_cursor; workspace and
    │                            import: invalid_name, invalid_id, invalid_channel,
    │                            channel_kind_mismatch, invalid_role, invalid_time,
    │                            invalid_import, message_too_large, already_exists,
    │                            invalid_tokenizer, invalid_setting, last_owner; serve:
    │                            address_unavailable; chat commands (C1, W3):
    │                            chat_command_too_large; instructions and approvals
    │                            (I1, I2): invalid_instructions, approval_decided,
    │                            approval_in_progress (a bundle being applied)
    ├── PermissionDenied         the caller, path or conversation may not do this (exit 3)
    │                            codes: permission_denied, memory_read_only (W10),
    │                            memory_off (O3, M4); chat writes (C2): no_grant,
    │                            not_in_channel, inactive_member
    ├── RevisionConflict         the memory moved since the caller read it (exit 4)
    ├── NotFound                 the agent, memory, revision, file or conversation does not
    │                            exist (exit 5); codes: not_found, home_not_found,
    │                            conversation_deleted
    └── StorageFault             the data directory is damaged or unreachable (exit 1)
                                 codes: storage_fault (the message says how to repair it),
                                 storage_full, storage_read_only (reads still work),
                                 storage_unavailable (PostgreSQL cannot be reached; retry)

Model providers add ``reverie.llm.ProviderError`` (``model_unavailable``,
``model_bad_answer``, exit 1), translated at the provider boundary.

Errors of lower libraries (sqlite3, pygit2, the operating system) are translated into
``StorageFault`` with ``raise ... from exc`` where the stores meet them, and whatever a store
did not translate is translated by the facade's guard (``reverie._guard``) on its way out;
they never reach a surface untranslated.
"""

from __future__ import annotations

from typing import Any, ClassVar

from reverie.core.secrets import redact

__all__ = [
    "NotFound",
    "PermissionDenied",
    "RefusedInput",
    "ReverieError",
    "RevisionConflict",
    "StorageFault",
]


class ReverieError(Exception):
    """Base of every Reverie error; carries a stable ``code`` and JSON-ready ``details``."""

    exit_code: ClassVar[int] = 1
    default_code: ClassVar[str] = "error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        message = shown(message, _MESSAGE_CHARS)
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details: dict[str, Any] = {
            k: shown(v, _DETAIL_CHARS) if isinstance(v, str) else v for k, v in details.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """The error as the ``{"error": {...}}`` payload of the JSON surfaces."""
        return {"code": self.code, "message": self.message, **self.details}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class RefusedInput(ReverieError):
    """The request is invalid (shape, path, size, content, match); nothing was written."""

    exit_code = 3
    default_code = "invalid_operation"


class PermissionDenied(ReverieError):
    """The caller, or the path it writes through, is not allowed to do this."""

    exit_code = 3
    default_code = "permission_denied"


class RevisionConflict(ReverieError):
    """The write expected an older revision; ``details["current_revision"]`` has the new one."""

    exit_code = 4
    default_code = "revision_conflict"


class NotFound(ReverieError):
    """The named agent, memory, revision, source or conversation does not exist."""

    exit_code = 5
    default_code = "not_found"


class StorageFault(ReverieError):
    """The data directory is damaged or unreachable; the message says how to repair it."""

    exit_code = 1
    default_code = "storage_fault"


#: How much of a message, and of a detail's text, an error keeps: a name or path the caller
#: sent is echoed to say what was wrong, never the whole of a huge one.
_MESSAGE_CHARS = 2000
_DETAIL_CHARS = 200
#: Read past each cut, so that a credential the cut would halve is still recognised whole.
_CUT_MARGIN = 256


def shown(text: str, limit: int) -> str:
    """``text`` as an error may show it: every credential-shaped span blanked (whatever a
    caller sent and an error echoes, a token pasted as an agent's name included), and cut in
    its middle when it is longer than ``limit`` characters. The one place where an error's
    words are made safe to print, log and send back."""
    if len(text) <= limit:
        return redact(text)
    head, tail = limit * 2 // 3, limit // 3
    cut = len(text) - head - tail
    return (
        redact(text[: head + _CUT_MARGIN])[:head]
        + f" [... {cut:,} characters ...] "
        + redact(text[-tail - _CUT_MARGIN :])[-tail:]
    )
