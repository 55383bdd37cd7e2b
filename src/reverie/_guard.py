"""The facade's boundary: what every call of :class:`reverie.Reverie` passes on its way in and
out, so that no caller, of any surface, ever sees anything but a :class:`ReverieError`.

On the way in, every text argument (also inside the mappings, lists and dataclasses of a batch,
of import records or of a chat command) must be Unicode: a lone surrogate (``"a\\ud800b"``, or
invalid bytes decoded with surrogate escapes) is refused with ``invalid_unicode`` before
anything runs, and arguments nested deeper than :data:`MAX_DEPTH` with ``invalid_input``.

On the way out, an error of a lower library that the stores did not translate (sqlite3,
pygit2, the operating system) becomes a :class:`StorageFault` with a message that says what
to do; a full disk is ``storage_full``, read-only storage ``storage_read_only``. A recursion
too deep for Python (hostile nesting that got past the checks) is refused as input.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import pygit2

from .core.validation import check_unicode
from .errors import RefusedInput, ReverieError
from .store.faults import is_corruption, storage_fault

__all__ = ["MAX_DEPTH", "check_arguments", "guarded"]

#: Deeper than this, an argument is refused: no batch, record or setting nests this far.
MAX_DEPTH = 64

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


def check_arguments(arguments: dict[str, Any]) -> None:
    """Refuse lone surrogates in any text of the arguments, and nesting past MAX_DEPTH.

    Raises:
        RefusedInput: ``invalid_unicode`` naming the argument, or ``invalid_input``.
    """
    stack: list[tuple[str, Any, int]] = [(k, v, 0) for k, v in arguments.items()]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, str):
            check_unicode(value, where)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack += [
                (f"{where}.{f.name}", getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value)
            ]
        elif isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise RefusedInput(
                    f"{where} nests more than {MAX_DEPTH} levels deep; nothing was done.",
                    code="invalid_input",
                    field=where,
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    check_unicode(key, f"{where} (a key)")
                stack.append((f"{where}[{key!r}]", item, depth + 1))


def guarded(cls: C) -> C:
    """Wrap every public method of ``cls`` (and ``__init__``) in :func:`_guard`."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (not name.startswith("_") or name == "__init__"):
            setattr(cls, name, _guard(member))
    return cls


def _guard(fn: Callable[P, R]) -> Callable[P, R]:
    signature = inspect.signature(fn)
    kinds = [p.kind for p in signature.parameters.values()]
    # The names of the arguments passed by position, when no ``*args`` can take them: the
    # arguments are then named without ``bind_partial``, which costs more than most calls.
    positional = (
        None
        if inspect.Parameter.VAR_POSITIONAL in kinds
        else [
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    )

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if positional is not None and len(args) <= len(positional):
            arguments = dict(zip(positional, args, strict=False))
            arguments.update(kwargs)  # a wrong name is Python's TypeError, from the call
        else:
            arguments = dict(signature.bind_partial(*args, **kwargs).arguments)
        owner = arguments.pop("self", None)
        check_arguments(arguments)
        _calls.depth = getattr(_calls, "depth", 0) + 1
        try:
            return _call(fn, owner, *args, **kwargs)
        finally:
            _calls.depth -= 1
            if _calls.depth == 0:  # the outermost call: this thread's connection goes back
                release = getattr(getattr(owner, "state", None), "release", None)
                if release is not None:
                    release()

    return call


#: How deep this thread is in guarded calls (a facade method calls others).
_calls = threading.local()


def _call(fn: Callable[P, R], owner: Any, *args: P.args, **kwargs: P.kwargs) -> R:
    try:
        try:
            return fn(*args, **kwargs)
        except (ReverieError, sqlite3.DatabaseError) as exc:
            # A damaged search index is rebuilt from the truth, and the call made again
            # once (what failed was undone: a write refused after its commit point too).
            # When the check finds nothing damaged, another process has rebuilt the index
            # meanwhile, or the page was read from an older snapshot that a newer one
            # supersedes: the call is made again once all the same, and a damage that stays
            # is raised then.
            repair = getattr(owner, "_repair_index", None)
            if fn.__name__ == "__init__" or repair is None or not is_corruption(exc):
                raise
            repair()
            return fn(*args, **kwargs)
    except ReverieError:
        raise
    except RecursionError:
        raise RefusedInput(
            "The input nests too deeply to be read; nothing was done.", code="invalid_input"
        ) from None
    except UnicodeEncodeError:  # text from an iterable, read after the arguments' check
        raise RefusedInput(
            "The input holds text that is not valid Unicode (a lone surrogate); nothing was done.",
            code="invalid_unicode",
        ) from None
    except OverflowError:
        raise RefusedInput(
            "A number in the input is too large; nothing was done.", code="invalid_input"
        ) from None
    except (sqlite3.Error, pygit2.GitError, OSError) as exc:
        raise storage_fault(exc) from exc
