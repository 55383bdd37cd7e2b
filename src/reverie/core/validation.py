"""The content rules every write passes (SPEC W3, W4, W5), in one place for every path.

Two steps: :func:`check_request` looks at the batch alone, before the memory is locked;
:func:`check_result` looks at what the batch would change, before anything is written. For
credentials it scans what each file will hold around the lines the batch adds, and refuses
only a credential that touches an added line: a key written in two parts is seen whole, a line
already in memory never blocks an unrelated write, and removing a line is always possible.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

from reverie.config import Settings
from reverie.errors import RefusedInput

from . import chars, secrets
from .markdown import Applied, common_ends, lines_of
from .operations import Batch, SetBody, WriteTopic
from .paths import INDEX, check_links

__all__ = [
    "added_lines",
    "check_added_credentials",
    "check_control",
    "check_invisible",
    "check_not_secret",
    "check_request",
    "check_result",
    "check_text",
    "check_unicode",
]

# C0 and C1 control characters and DEL, carriage return included; tab and newline are text, and
# a carriage return is accepted only as part of a CRLF newline (it is normalized away). One
# character class, the CRLF case sorted out after a match: a search for a class alone scans a
# long text about twice as fast as one with an alternative in it.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Half of a UTF-16 pair on its own: not a character, and no encoding can store it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(text: str, field: str) -> None:
    """Refuse control characters and credential-shaped text in one caller-supplied string.

    Raises:
        RefusedInput: ``invalid_unicode``, ``memory_invalid_control_character`` or
            ``memory_credential_rejected``.
    """
    check_control(text, field)
    _check_credentials(text, field)


def _where(text: str, at: int) -> str:
    """Where character ``at`` of ``text`` is, as a person finds it: ``line 3, column 7``
    (``column 7`` on a one-line text)."""
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"line {line}, column {column}" if "\n" in text else f"column {column}"


def check_not_secret(value: str, what: str, code: str) -> None:
    """Refuse a name or id that looks like a credential (W4 on every path): names and ids are
    shown in lists and errors, logged, and written into commit messages (a review cites the
    conversations it read), where a secret must never go.

    Raises:
        RefusedInput: ``code``, naming the kind of credential, never quoting it.
    """
    found = _credential_in_name(value)
    if found:
        raise RefusedInput(
            f"{what} looks like it holds a credential ({found}): names and ids are shown, "
            "logged and kept in history. Choose one without a secret; nothing was written.",
            code=code,
            field=what,
        )


@lru_cache(maxsize=4096)
def _credential_in_name(value: str) -> str | None:
    # Cached: an import names the same conversation and channel on each of its records.
    found = secrets.find_credentials(value)
    return secrets.describe(found).replace(" on line 1", "") if found else None


def check_unicode(text: str, field: str, code: str = "invalid_unicode") -> None:
    """Refuse a lone surrogate (``"a\\ud800b"``, or invalid bytes decoded with surrogate
    escapes): it is not text, and SQLite, git and UTF-8 cannot store it.

    Raises:
        RefusedInput: ``code`` (``invalid_unicode``) naming the field and position.
    """
    if text.isascii():
        return
    m = _SURROGATE.search(text)
    if m:
        raise RefusedInput(
            f"{field} is not valid Unicode text: it holds a lone surrogate (U+{ord(m.group()):04X}"
            f") at {_where(text, m.start())}. Send UTF-8 text; nothing was written.",
            code=code,
            field=field,
            position=m.start(),
        )


def check_control(text: str, field: str, code: str = "memory_invalid_control_character") -> None:
    """Refuse lone surrogates and control characters other than newline and tab (W4).

    Raises:
        RefusedInput: ``invalid_unicode``, or ``code`` naming the field and position.
    """
    check_unicode(text, field)
    m = _CONTROL.search(text)
    while m and text.startswith("\r\n", m.start()):
        m = _CONTROL.search(text, m.end())
    if m:
        raise RefusedInput(
            f"{field} holds the control character U+{ord(m.group()[0]):04X} at "
            f"{_where(text, m.start())}: remove it (newline and tab are allowed).",
            code=code,
            field=field,
            position=m.start(),
        )


def check_invisible(text: str, field: str, code: str = "memory_invisible_character") -> None:
    """Refuse characters that hide or reorder text for a person while a model reads them
    (:data:`reverie.core.chars.INVISIBLE`), on every write path; nothing is stripped silently.

    Allowed where writing needs them: a zero-width joiner inside an emoji sequence
    ("👩‍💻") and a zero-width (non-)joiner between two letters of a script that uses them
    (Persian, the Indic scripts); tag characters in a flag sequence ("🏴" then tags, ended by
    U+E007F).

    Raises:
        RefusedInput: ``code`` naming the character, the field and the position.
    """
    if text.isascii():
        return
    for m in chars.INVISIBLE.finditer(text):
        at = m.start()
        if chars.allowed_invisible(text, at):
            continue
        char = text[at]
        name = unicodedata.name(char, "unnamed")
        raise RefusedInput(
            f"{field} holds the invisible character U+{ord(char):04X} ({name}) at "
            f"{_where(text, at)}: it can hide or reorder text for a person while a model still "
            "reads it. "
            "Remove it; nothing was written.",
            code=code,
            field=field,
            position=at,
        )


def check_not_sent_secret(text: str, field: str, code: str, what: str) -> None:
    """Refuse a message to a chat (``what``) holding a credential: found as the one blanking
    of credentials finds it (:func:`reverie.core.secrets.redact`, which also reads a token right
    after an escape such as ``\\t``), so that nothing queued holds what a log of it would blank.

    Raises:
        RefusedInput: ``code``, naming the kind of credential and its line, never quoting it.
    """
    if secrets.redact(text) == text:
        return
    found = secrets.find_credentials(text)
    raise RefusedInput(
        f"This {what} looks like it holds a credential "
        f"({secrets.describe(found) if found else 'credential-shaped text'}). A {what} is "
        "posted to chats and kept with them: never send a secret; say where it is kept "
        "instead. Nothing was sent.",
        code=code,
        field=field,
        kinds=sorted({f.kind for f in found}),
    )


def _check_credentials(text: str, field: str) -> None:
    found = secrets.find_credentials(text)
    if found:
        _refuse_credentials(found, field)


def _refuse_credentials(found: list[secrets.CredentialFinding], field: str) -> None:
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
        if not field.endswith(".old"):
            # ``old`` only finds a line: a line written before this rule must stay removable.
            check_invisible(value, field)
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


def added_lines(old: str | None, new: str | None) -> list[int]:
    """The 0-based numbers of the lines of ``new`` that ``old`` does not have (as a multiset:
    a line already there once and now twice counts once as added)."""
    if not new:
        return []
    old_lines, new_lines = lines_of(old or ""), lines_of(new)
    # The lines both share from the start match each other whatever follows: an appended
    # section costs its own lines, not the file's.
    head, _ = common_ends(old_lines, new_lines)
    remaining = Counter(old_lines[head:])
    added = []
    for number, line in enumerate(new_lines[head:], head):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            added.append(number)
    return added


#: Lines read on either side of the added ones: a credential that spans lines (a .netrc entry,
#: a JSON object) is found whole even when a write adds only part of it; a file that holds a
#: private key armour line is read further, as far as a key block reaches (64 KiB of base64).
CONTEXT_LINES = 8
KEY_CONTEXT_LINES = 1100


def check_added_credentials(path: str, old: str | None, new: str) -> None:
    """Scan what ``path`` will hold around the lines the write adds (:data:`CONTEXT_LINES`),
    and refuse a credential that touches one of them. Scanning the file rather than the added
    lines alone catches a key written in two parts (body first, armour later); keeping only
    findings on added lines means a line stored before never blocks an unrelated write.

    Raises:
        RefusedInput: ``memory_credential_rejected``, with the file's line numbers.
    """
    added = added_lines(old, new)
    if not added:
        return
    lines = lines_of(new)
    is_added = set(added)
    context = KEY_CONTEXT_LINES if "PRIVATE KEY" in new else CONTEXT_LINES
    windows: list[list[int]] = []
    for number in added:
        start, end = max(0, number - context), min(len(lines), number + context + 1)
        if windows and start <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    found: list[secrets.CredentialFinding] = []
    for start, end in windows:
        text = "\n".join(lines[start:end])
        for f in secrets.find_credentials(text):
            first = start + f.line - 1
            last = first + text.count("\n", f.start, f.end)
            if any(n in is_added for n in range(first, last + 1)):
                found.append(secrets.CredentialFinding(f.kind, first + 1, f.start, f.end))
    if found:
        _refuse_credentials(found, path)


def check_result(applied: Applied, settings: Settings) -> None:
    """Checks on what the batch would write: file sizes, and credentials touching added lines.

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
        check_added_credentials(path, applied.before.get(path), text)
