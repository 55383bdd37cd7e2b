"""The ``reverie`` command line (SPEC 15): parse, call the facade, format the answer.

The contract every command shares (global options, JSON errors, exit codes) is in
``_contract.py``; each command group is a module of its own.

Importing this package is light: :func:`main` loads the commands (about a second) when it
runs, inside the same answer to Ctrl-C as the rest of the command (``_interrupt.py``), so that
the ``reverie`` script ends quietly with exit 130 wherever an interrupt lands.
"""

from __future__ import annotations

import sys

from ._interrupt import KEPT, interrupted, signalled, wants_json, watching

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (mypy reads any name so called):
#: until the commands load, this package imports only what an answer to Ctrl-C needs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any

    from ._contract import app, hoist_global_options

__all__ = ["app", "hoist_global_options", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (SPEC 15)."""
    args = sys.argv[1:] if argv is None else list(argv)
    contract = None
    try:
        with watching():
            contract = _load()
            return int(contract.main(args))
    except KeyboardInterrupt:  # while the commands load, or past the contract's own answer
        return interrupted(wants_json(args), None if contract is None else KEPT)


def _load() -> ModuleType:
    """:func:`_commands`; an interrupt while they load raises ``KeyboardInterrupt`` even where
    the library then loading turned it into an error of its own (:func:`._interrupt.watching`),
    or where a callback swallowed it (importlib's module lock, whose callback's exception
    Python prints as "Exception ignored in ..." and goes on): whatever ends the loading after
    a SIGINT is one."""
    printing = sys.unraisablehook

    def on_unraisable(unraisable: Any) -> None:
        if not issubclass(unraisable.exc_type, KeyboardInterrupt):
            printing(unraisable)

    sys.unraisablehook = on_unraisable
    try:
        commands = _commands()
    except BaseException:
        if signalled():
            raise KeyboardInterrupt from None
        raise
    finally:
        sys.unraisablehook = printing
    if signalled():  # swallowed on the way, the interrupt still ends the command before it began
        raise KeyboardInterrupt
    return commands


def _commands() -> ModuleType:
    """The contract, with every command registered on its ``app``."""
    # The command modules register themselves on ``app`` when imported.
    from . import _contract, agentrun, chat, conversations, doctor, memory, review, server, slack

    del agentrun, chat, conversations, doctor, memory, review, server, slack
    return _contract


def __getattr__(name: str) -> Any:
    if name in ("app", "hoist_global_options"):
        return getattr(_commands(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
