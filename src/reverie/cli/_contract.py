"""The CLI contract (SPEC 15): the root group, global options, JSON output, exit codes.

``--home`` and ``--json`` are accepted before and after the command name; they are moved to
the front before parsing. With ``--json`` every answer, refusals included, is one JSON object
on stdout. Exit codes: 0 done, 2 usage, 3 refused input or permission, 4 revision conflict,
5 not found, 1 storage fault. The command groups live in the modules beside this one and share
the helpers here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from reverie.api import Reverie
from reverie.config import Settings
from reverie.doctor import memory_repositories
from reverie.errors import NotFound, RefusedInput, ReverieError, StorageFault
from reverie.store.state import DB_NAME

from ._interrupt import KEPT, interrupted, signalled, wants_json

__all__ = [
    "FilePath",
    "Interrupted",
    "Options",
    "app",
    "as_member_option",
    "console",
    "emit",
    "hoist_global_options",
    "main",
    "open_home",
    "out",
    "pass_opts",
    "plural",
    "read_input",
    "refuse_lost_database",
    "stamp",
]

#: Revision numbers and positions: whole numbers from 0. A negative one, or one past what
#: SQLite stores (2**63), is a usage error (exit 2), as click reports any malformed option.
NATURAL = click.IntRange(min=0, max=2**62)


def limit_range(high: int) -> click.IntRange:
    """A ``--limit`` from 1 to ``high``: outside it, a usage error (exit 2)."""
    return click.IntRange(min=1, max=high)


class FilePath(click.Path):
    """A path option: a name with a NUL character (which no file can have) is a usage error
    (exit 2) that says so, where ``click.Path`` would fail inside ``os.stat``; so is an empty
    one, which ``Path("")`` would quietly turn into the current directory."""

    def __init__(self, *args: Any, names: str = "file", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: What the path names, for the message about an empty one: "file", "directory".
        self.names = names

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if "\0" in str(value):
            self.fail("a path cannot hold a NUL character", param, ctx)
        if str(value) == "":
            self.fail(
                f"the path is empty; name a {self.names} (an empty path would mean the "
                "current directory). Nothing was done.",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


@dataclass
class Options:
    """The global options, as the root group parsed them."""

    home: Path | None = None
    json: bool = False


pass_opts = click.make_pass_decorator(Options)


def console(*, stderr: bool = False) -> Console:
    """A console that prints text as it is: names, messages and memory text hold ``[...]``
    and ``:name:`` freely, and rich would read them as markup (dropping words, or failing on
    ``[/]``) and as emoji codes. Styling the CLI intends is given as ``style=`` or a
    :class:`rich.text.Text`, never as markup inside a string."""
    return Console(stderr=stderr, soft_wrap=True, highlight=False, markup=False, emoji=False)


out = console()


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``reverie --version``: the package's version (as JSON with ``--json``, which is read
    first: both are eager and the global options stand in front)."""
    if not value or ctx.resilient_parsing:
        return
    from reverie import __version__

    if ctx.params.get("json_out"):
        sys.stdout.write(json.dumps({"version": __version__}) + "\n")
    else:
        out.print(f"reverie {__version__}")
    ctx.exit(0)


def _member_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--as NAME``: a name, never blank. A wrapper that passes ``--as "$USER"`` with the
    variable unset must not act as the owner, which leaving ``--as`` out means."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "needs a member's name; nothing was done. Leave --as out to act as the home's owner.",
            ctx=ctx,
            param=param,
        )
    return value


F = TypeVar("F", bound=Callable[..., Any])


def as_member_option(help: str) -> Callable[[F], F]:
    """The ``--as`` option of the commands that act for a member."""
    return click.option("--as", "member", help=help, callback=_member_name)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=FilePath(path_type=Path, names="directory"),
    help="Data directory (default: $REVERIE_HOME, else ./reverie-data).",
)
@click.option(
    "--json", "json_out", is_flag=True, is_eager=True, help="Machine-readable output on stdout."
)
@click.option(
    "--version",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_show_version,
    help="Print the version and exit.",
)
@click.pass_context
def app(ctx: click.Context, home: Path | None, json_out: bool) -> None:
    """Reverie: durable, revisioned memory for chat agents.

    --home and --json may stand before or after the command name.
    """
    ctx.obj = Options(home=home, json=json_out)


def refuse_lost_database(opts: Options) -> None:
    """A home whose ``reverie.db`` is gone while its memory repositories remain is no new
    home: ``reverie init`` there would start an empty database that owns none of them.

    Raises:
        NotFound: ``home_not_found``, pointing at ``reverie doctor`` and a backup.
    """
    settings = Settings.load(opts.home)
    if settings.database_url or (settings.home / DB_NAME).exists():
        return
    repos = len(memory_repositories(settings.home))
    if repos:
        raise NotFound(
            f"{settings.home} has no reverie.db, but {repos} memory "
            f"{'repository remains' if repos == 1 else 'repositories remain'} under "
            f"{settings.home / 'memories'}: the database that recorded the "
            "agents is missing. Nothing was done. Restore reverie.db from a backup, or run "
            "`reverie doctor` to see what the repositories hold; `reverie init` here would "
            "start an empty database that owns none of them (move memories/ aside first to "
            "start afresh).",
            code="home_not_found",
            home=str(settings.home),
        )


def open_home(opts: Options, create: bool = False) -> Reverie:
    """The home of ``--home`` (or ``$REVERIE_HOME``), created first with ``create``.

    Raises:
        NotFound: ``home_not_found``, saying how to create it (or that a file stands there).
        RefusedInput: ``invalid_path``, creating it failed because a file stands where the
            home (or a folder above it) should be: nothing was created.
    """
    refuse_lost_database(opts)
    try:
        return Reverie(opts.home, create=create)
    except NotFound as exc:
        if exc.code != "home_not_found":
            raise
        home = exc.details["home"]
        blocker = _file_in_the_way(Path(home))
        if blocker is not None:
            raise NotFound(
                f"No Reverie home at {home}: {blocker} is a file, not a directory. Pass --home "
                "a directory (or set REVERIE_HOME to one).",
                code=exc.code,
                home=home,
            ) from None
        raise NotFound(
            f"No Reverie home at {home}; create it with `reverie init` (or pass "
            "--home / set REVERIE_HOME to an existing one).",
            code=exc.code,
            home=home,
        ) from None
    except StorageFault as exc:
        # Making the folder failed: when a file stands in its way, the path is the problem,
        # not a damaged data directory (which `reverie doctor` would look for).
        if not create or not isinstance(exc.__cause__, OSError):
            raise
        home_path = Settings.load(opts.home).home
        blocker = _file_in_the_way(home_path)
        if blocker is None:
            raise
        raise RefusedInput(
            f"Cannot make the Reverie home at {home_path}: {blocker} is a file, not a "
            "directory. Pass --home a directory (a new one is created); nothing was created.",
            code="invalid_path",
            home=str(home_path),
        ) from None


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest of ``path`` and its parents that exists, when it is not a directory."""
    for p in (path, *path.parents):
        try:
            if p.exists():
                return None if p.is_dir() else p
        except OSError:  # cannot be looked at: nothing certain to say about it
            return None
    return None


def read_input(file: str) -> tuple[str, str]:
    """The text of FILE, or of standard input for ``-``, and what messages call it.

    The bytes are decoded as UTF-8 here, strictly: a terminal's locale (or Python's
    surrogate escapes under the C locale) never turns invalid bytes into text.

    Raises:
        click.UsageError: the file cannot be read.
        RefusedInput: ``invalid_unicode``, the bytes are not UTF-8 (as text that is not
            Unicode is refused everywhere).
    """
    name = "standard input" if file == "-" else file
    try:
        if file == "-":
            stream = getattr(sys.stdin, "buffer", None)
            # A text stream without bytes beneath (a test's StringIO): lone surrogates in it
            # become bytes that the strict decoding below refuses.
            raw = (
                stream.read()
                if stream is not None
                else sys.stdin.read().encode("utf-8", "surrogatepass")
            )
        else:
            raw = Path(file).read_bytes()
    except OSError as exc:
        raise click.UsageError(f"Cannot read {name}: {exc.strerror}.") from None
    except (UnicodeEncodeError, ValueError):  # a lone surrogate, a NUL: no file has that name
        raise click.UsageError(f"Cannot read {name!r}: it is not a file name.") from None
    try:
        return raw.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        raise RefusedInput(
            f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8.",
            code="invalid_unicode",
        ) from None


def emit(opts: Options, payload: dict[str, Any], human: Callable[[], object]) -> None:
    if opts.json:
        sys.stdout.write(_printable(json.dumps(payload, ensure_ascii=False)) + "\n")
    else:
        human()


def _printable(text: str) -> str:
    """Text any UTF-8 stream takes: a lone surrogate (echoed from an argument that was not
    Unicode) is written as its escape, ``\\udc80``."""
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def plural(count: int, noun: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def stamp(ts: float) -> str:
    """A time as ISO 8601 in UTC (``2024-05-08T13:56:00Z``), in JSON and in tables alike."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# entry point

_GLOBAL_FLAGS = {"--json"}
# Refusals that are about how the command was set up, not about its input: usage errors.
_SETUP_CODES = {"no_model": 2, "slack_not_configured": 2}
_GLOBAL_VALUES = {"--home"}


def hoist_global_options(argv: Sequence[str]) -> list[str]:
    """Move ``--home X``/``--home=X``/``--json`` to the front, wherever they stand (SPEC 15)."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    args = list(argv)
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg in _GLOBAL_FLAGS:
            front.append(arg)
        elif arg in _GLOBAL_VALUES and i + 1 < len(args):
            front += [arg, args[i + 1]]
            i += 1
        elif any(arg.startswith(f"{v}=") for v in _GLOBAL_VALUES):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


class Interrupted(Exception):
    """Ctrl-C stopped a command, which says what the interruption kept (``kept``), so that
    the person (or script) knows whether to run it again."""

    def __init__(self, kept: str) -> None:
        super().__init__(kept)
        self.kept = kept


#: ``click`` raises this for a group given no command (from 8.2; 8.1 prints the help).
_NO_COMMAND: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (SPEC 15)."""
    args = hoist_global_options(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(args)
    try:
        # Outside standalone mode click returns the code of a command's Exit instead of
        # raising it.
        code = app.main(args=args, prog_name="reverie", standalone_mode=False)
    except ReverieError as exc:
        exit_code = _SETUP_CODES.get(exc.code, exc.exit_code)
        return _fail(as_json, exc.code, exc.message, exc.details, exit_code)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except Interrupted as exc:
        return interrupted(as_json, exc.kept)
    except (click.exceptions.Abort, KeyboardInterrupt):  # click turns Ctrl-C into Abort
        return interrupted(as_json, KEPT)
    except _NO_COMMAND as exc:
        # The whole help as an error message buries the point: name the commands instead.
        group = exc.ctx.command
        names = ", ".join(group.list_commands(exc.ctx))
        message = (
            f"`{exc.ctx.command_path}` needs a command: {names}. "
            f"`{exc.ctx.command_path} --help` says what each does."
        )
        if not as_json:
            click.echo(_printable(exc.ctx.get_help()), err=True)
        return _fail(as_json, "usage_error", message, {}, 2)
    except click.UsageError as exc:
        if as_json:
            return _fail(True, "usage_error", exc.format_message(), {}, 2)
        if exc.ctx is not None:
            click.echo(_printable(exc.ctx.get_usage()), err=True)
        return _fail(False, "usage_error", exc.format_message(), {}, 2)
    except UnicodeEncodeError:  # text that reached a store without passing the facade's check
        return _fail(
            as_json,
            "invalid_unicode",
            "An argument is not valid Unicode text (it holds a lone surrogate); nothing was "
            "done. Send UTF-8 text.",
            {},
            3,
        )
    except Exception as exc:  # the last resort: a bug still answers in the contract's shape
        if signalled():  # a library made Ctrl-C an error of its own ("SchemaError: ...")
            return interrupted(as_json, KEPT)
        return _fail(
            as_json,
            "internal_error",
            f"Reverie failed unexpectedly ({type(exc).__name__}: {exc}). This is a bug: "
            "please report it with the command that caused it.",
            {},
            1,
        )
    return code if isinstance(code, int) else 0


def _fail(as_json: bool, code: str, message: str, details: dict[str, Any], exit_code: int) -> int:
    if as_json:
        error = {"error": {"code": code, "message": message, **details}}
        sys.stdout.write(_printable(json.dumps(error, ensure_ascii=False)) + "\n")
    else:
        console(stderr=True).print(_printable(f"error ({code}): {message}"))
    return exit_code
