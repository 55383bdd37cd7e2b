"""Ctrl-C in the command line (SPEC 15): one way to end, wherever it lands.

Light on purpose (the standard library only): ``reverie.cli.main`` imports the commands, about
a second of work, inside a ``try`` that answers an interrupt with :func:`interrupted`, so that
an interrupt while they load ends as one anywhere else does (``_contract.main``): no traceback,
one line (or the contract's JSON error), exit 130.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # ``typing``'s, without importing it: see ``reverie/cli/__init__.py``
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "INTERRUPTED",
    "INTERRUPTED_EXIT",
    "KEPT",
    "interrupted",
    "signalled",
    "wants_json",
    "watching",
]

#: The error code of an interrupted command.
INTERRUPTED = "interrupted"
#: Its exit code: 128 + SIGINT, as shells report a process that SIGINT ended.
INTERRUPTED_EXIT = 130
#: What an interrupt before the command began says: everything is as it was.
BEFORE = "Interrupted before the command began; nothing was done."
#: What an interruption keeps, when the command does not say more (each write commits whole
#: or not at all: a database transaction, a memory revision).
KEPT = "what had been written stays, and a write under way was not made."


#: The SIGINTs this run received while :func:`watching` (a list, so that the handler needs no
#: ``global``).
_SEEN: list[int] = []


def _on_interrupt(signum: int, frame: object) -> None:
    """Python's own answer to SIGINT (raise ``KeyboardInterrupt``), noted first."""
    _SEEN.append(signum)
    raise KeyboardInterrupt


class watching:  # used as ``with watching():``, like a function
    """While it lasts (in the main thread), a SIGINT is noted as well as raised: a library that
    turns the ``KeyboardInterrupt`` into an error of its own (pydantic's compiled core answers
    it with a ``SchemaError`` while it builds a model) or a callback that swallows it still
    leaves :func:`signalled` true, so the command ends as interrupted, not as a bug."""

    def __enter__(self) -> None:
        import signal

        self._previous: object = None
        self._set = False
        try:
            self._previous = signal.signal(signal.SIGINT, _on_interrupt)
            self._set = True
        except ValueError:  # not the main thread: Python's handler stays, and its answers
            pass

    def __exit__(self, *exc: object) -> None:
        import signal

        # (None: a handler not set from Python, left as it was)
        if self._set and self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
        _SEEN.clear()


def signalled() -> bool:
    """Whether a SIGINT came while :func:`watching`."""
    return bool(_SEEN)


def wants_json(args: Sequence[str]) -> bool:
    """Whether ``--json`` is among the arguments (before a ``--``), wherever it stands."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def interrupted(as_json: bool, kept: str | None = None) -> int:
    """Say that the command was interrupted and what that kept (``kept``; ``None``: it had not
    begun), in the contract's shape: ``error (interrupted): ...`` on stderr, or the JSON error
    on stdout with ``--json``. Returns the exit code, 130."""
    # An interrupt that landed in code run from a string (``exec``, as ``dataclasses`` makes
    # methods while a module loads) leaves CPython's note of an unhandled KeyboardInterrupt
    # set although it was handled here, and ``python -m reverie.cli`` would then end by
    # SIGINT instead of with this exit code. Running a string clears the note.
    exec("pass")
    message = BEFORE if kept is None else f"Interrupted; {kept}"
    if as_json:
        import json

        error = {"error": {"code": INTERRUPTED, "message": message}}
        text, stream = json.dumps(error, ensure_ascii=False), sys.stdout
    else:
        text, stream = f"error ({INTERRUPTED}): {message}", sys.stderr
    try:
        stream.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the exit code still says it
        pass
    return INTERRUPTED_EXIT
