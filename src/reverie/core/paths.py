"""Which files a memory may hold (SPEC W5, M1): ``MEMORY.md`` and ``memory/<slug>.md``.

Pure functions: every surface and the store call these, so the rule lives here only.
"""

from __future__ import annotations

import re

from reverie.errors import RefusedInput

__all__ = [
    "INDEX",
    "TOPIC_DIR",
    "check_links",
    "is_topic",
    "link_targets",
    "normalize_source",
    "topic_path",
]

INDEX = "MEMORY.md"
TOPIC_DIR = "memory"

# A slug is a plain file name: lower-case letters, digits, '-' and '_', not starting with a
# separator, so that no slug can name a directory, a hidden file or a path outside memory/.
_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}")
_LINK = re.compile(r"\[\[([^\[\]\n]{1,300})\]\]")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def topic_path(slug: str) -> str:
    """The repository path of a topic, from its slug (``deploys`` or ``memory/deploys.md``).

    Raises:
        RefusedInput: ``invalid_path`` when the slug is not a plain lower-case name.
    """
    name = slug.strip()
    if name.startswith(f"{TOPIC_DIR}/"):
        name = name[len(TOPIC_DIR) + 1 :]
    name = name.removesuffix(".md")
    if not _SLUG.fullmatch(name):
        raise RefusedInput(
            f"{slug!r} is not a topic slug: use lower-case letters, digits, '-' or '_' "
            "(at most 80), for example 'deploys'; the file becomes memory/<slug>.md.",
            code="invalid_path",
            path=slug,
        )
    return f"{TOPIC_DIR}/{name}.md"


def normalize_source(source: str | None) -> str:
    """The canonical path of a readable or writable file; ``None`` means ``MEMORY.md``.

    Raises:
        RefusedInput: ``invalid_path`` for anything but ``MEMORY.md`` and ``memory/<slug>.md``.
    """
    if source is None or source.strip() in {"", INDEX}:
        return INDEX
    text = source.strip()
    if text.startswith(f"{TOPIC_DIR}/") and text.endswith(".md"):
        return topic_path(text)
    raise RefusedInput(
        f"{source!r} is not a memory file: only MEMORY.md and memory/<slug>.md can be read "
        "or written.",
        code="invalid_path",
        path=source,
    )


def is_topic(path: str) -> bool:
    """Whether ``path`` is a canonical topic path."""
    prefix = f"{TOPIC_DIR}/"
    if not (path.startswith(prefix) and path.endswith(".md")):
        return False
    return _SLUG.fullmatch(path[len(prefix) : -3]) is not None


def link_targets(text: str) -> list[str]:
    """The targets of the ``[[...]]`` links in ``text``, in order."""
    return [m.group(1).strip() for m in _LINK.finditer(text)]


def check_links(text: str) -> None:
    """Refuse links that point out of the repository (W5): absolute, ``..``, ``~``, URLs.

    Links to names that are not memory files yet are allowed: a topic may be written later.

    Raises:
        RefusedInput: ``invalid_path`` naming the link.
    """
    for target in link_targets(text):
        parts = target.replace("\\", "/").split("/")
        if target.startswith(("/", "~", "\\")) or ".." in parts or _SCHEME.match(target):
            raise RefusedInput(
                f"The link [[{target}]] points out of the memory: links may only name "
                "MEMORY.md or memory/<slug>.md.",
                code="invalid_path",
                path=target,
            )
