"""``reverie serve``, ``reverie mcp``, and who may call them: ``token ...`` and ``member ...``
(SPEC 1, 11, 15)."""

from __future__ import annotations

import importlib.util
import math
import shlex
from typing import Any

import click
from rich.table import Table

from reverie.config import Settings
from reverie.errors import RefusedInput
from reverie.store.state import MEMBER_ROLES, Member
from reverie.store.tokens import TokenInfo, links_base

from ._contract import (
    Options,
    app,
    console,
    emit,
    open_home,
    out,
    pass_opts,
    refuse_lost_database,
    stamp,
)

#: What ``reverie serve`` imports from the ``server`` extra (``reverie mcp`` needs only mcp).
_SERVER_EXTRA = ("fastapi", "uvicorn", "jinja2", "mcp")
#: What the Slack app imports from the ``slack`` extra.
SLACK_EXTRA = ("slack_bolt", "slack_sdk")


def need_extra(command: str, extra: str, modules: tuple[str, ...]) -> None:
    """Refuse ``command`` with what to install when an extra it needs is missing (a plain
    ``pip install .`` leaves the extras out), rather than fail on the first import, or after
    a first start already made and lost the owner's token.

    Raises:
        RefusedInput: ``missing_dependency``, naming the missing packages.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise RefusedInput(
            f"`reverie {command}` needs the {extra} extra (missing: {', '.join(missing)}): "
            f"pip install 'reverie[{extra}]'. Nothing was done.",
            code="missing_dependency",
        )


class _Seconds(click.FloatRange):
    """A number of seconds in the range: "nan", which every comparison lets through, is a
    usage error too."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return seconds


@app.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(min=1, max=65535),
    default=8765,
    show_default=True,
    help="Port to listen on, 1 to 65535.",
)
@click.option(
    "--tick",
    # Not 0: the scheduler would check without pause and take a core.
    type=_Seconds(min=0.1, max=86_400),
    default=30.0,
    show_default=True,
    help="Seconds between review checks, 0.1 to 86,400.",
)
@click.option("--owner", default="owner", show_default=True, help="Owner's name on a first start.")
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    default=1,
    show_default=True,
    help="Processes serving HTTP (more use more cores; MCP is then stateless).",
)
@pass_opts
def serve(opts: Options, host: str, port: int, tick: float, owner: str, workers: int) -> None:
    """Serve the HTTP API, the admin page and MCP, with review on its schedule.

    On first start with an empty home it creates an owner and an example agent and prints an
    API token; every start prints a one-time sign-in link for the admin page.
    """
    need_extra("serve", "server", _SERVER_EXTRA)
    settings = Settings.load(opts.home)
    if settings.slack_bot_token and settings.slack_signing_secret:  # it would serve Slack
        need_extra("serve", "slack", SLACK_EXTRA)
    refuse_lost_database(opts)
    from reverie.http.serve import run

    run(
        opts.home,
        host,
        port,
        tick,
        owner=owner,
        workers=workers,
        say=out.print,
    )


@app.command("mcp")
@pass_opts
def mcp_stdio(opts: Options) -> None:
    """Speak MCP over stdin and stdout, as the home's owner (for a desktop MCP client)."""
    need_extra("mcp", "server", ("mcp",))
    from reverie.mcp import serve_stdio

    serve_stdio(open_home(opts))


@app.group("token")
def token_group() -> None:
    """API tokens (for the HTTP API and MCP) and one-time sign-in links (the admin page)."""


@token_group.command("create")
@click.argument("member")
@click.option("--label", help="What the token is for.")
@pass_opts
def token_create(opts: Options, member: str, label: str | None) -> None:
    """Create an API token for MEMBER; it is shown once and stored only as a hash."""
    with open_home(opts) as rv:
        token, info = rv.create_token(member, label)
        warning = _inactive_warning(rv.member(member), "the token")
    payload: dict[str, Any] = {"token": token, **_token(info)}
    if warning:
        payload["warning"] = warning

    def human() -> None:
        out.print(
            f"{token}\n(token {info.id} for {info.member}: keep it secret; it is not shown "
            f"again. `reverie token revoke {info.id}` revokes it.)"
        )
        if warning:
            console(stderr=True).print(f"warning: {warning}", style="yellow")

    emit(opts, payload, human)


def _inactive_warning(member: Member, what: str) -> str | None:
    """What to tell whoever makes a credential for an inactive member: it is made (an admin
    may be preparing the member's return) but lets no one in until the member is active."""
    if member.active:
        return None
    return (
        f"{member.name} is not active, so {what} does not work until they are: "
        f"`reverie member set {shlex.quote(member.name)} --active`."
    )


@token_group.command("list")
@click.argument("member", required=False)
@pass_opts
def token_list(opts: Options, member: str | None) -> None:
    """List API tokens (never the tokens themselves)."""
    with open_home(opts) as rv:
        found = rv.tokens_of(member)

    def human() -> None:
        table = Table("id", "member", "label", "created", "last used", "revoked")
        for t in found:
            table.add_row(
                t.id,
                t.member,
                t.label or "",
                stamp(t.created_at),
                stamp(t.last_used_at) if t.last_used_at else "",
                stamp(t.revoked_at) if t.revoked_at else "",
            )
        out.print(table if found else "No tokens.")

    emit(opts, {"tokens": [_token(t) for t in found]}, human)


@token_group.command("revoke")
@click.argument("token_id")
@pass_opts
def token_revoke(opts: Options, token_id: str) -> None:
    """Revoke an API token at once; admin-page sessions signed in with it end too."""
    with open_home(opts) as rv:
        info = rv.revoke_token(token_id)
    emit(
        opts,
        _token(info),
        lambda: out.print(
            f"Revoked {info.id} ({info.member}); admin-page sessions signed in with it end too."
        ),
    )


@token_group.command("link")
@click.argument("member")
@click.option(
    "--url",
    help="Where the server is (default: REVERIE_PUBLIC_URL, else where `reverie serve` of this "
    "home serves, else http://127.0.0.1:8765).",
)
@pass_opts
def token_link(opts: Options, member: str, url: str | None) -> None:
    """Print a one-time sign-in link to the admin page for MEMBER (valid 15 minutes)."""
    with open_home(opts) as rv:
        code = rv.sign_in_code(member)
        warning = _inactive_warning(rv.member(member), "the link")
        base = url or links_base(rv.settings)
    link = f"{base.rstrip('/')}/admin/signin/{code}"
    payload: dict[str, Any] = {"link": link}
    if warning:
        payload["warning"] = warning

    def human() -> None:
        out.print(link)
        if warning:
            console(stderr=True).print(f"warning: {warning}", style="yellow")

    emit(opts, payload, human)


def _token(t: TokenInfo) -> dict[str, Any]:
    return {
        "id": t.id,
        "member": t.member,
        "label": t.label,
        "created": stamp(t.created_at),
        "last_used": stamp(t.last_used_at) if t.last_used_at else None,
        "revoked": stamp(t.revoked_at) if t.revoked_at else None,
    }


@app.group("member")
def member_group() -> None:
    """The workspace's members and their roles."""


@member_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(list(MEMBER_ROLES)), default="member", show_default=True)
@pass_opts
def member_add(opts: Options, name: str, role: str) -> None:
    """Add a member (owner, admin or member)."""
    with open_home(opts) as rv:
        m = rv.add_member(name, role)
    emit(opts, _member(m), lambda: out.print(f"Added {m.name} ({m.role})."))


@member_group.command("list")
@pass_opts
def member_list(opts: Options) -> None:
    """List the members."""
    with open_home(opts) as rv:
        found = rv.members()

    def human() -> None:
        table = Table("name", "role", "active")
        for m in found:
            table.add_row(m.name, m.role, "yes" if m.active else "no")
        out.print(table if found else "No members yet: `reverie member add NAME`.")

    emit(opts, {"members": [_member(m) for m in found]}, human)


@member_group.command("set")
@click.argument("name")
@click.option("--role", type=click.Choice(list(MEMBER_ROLES)))
@click.option("--active", "activate", is_flag=True, help="Reactivate the member.")
@click.option(
    "--inactive", "deactivate", is_flag=True, help="Deactivate: an inactive member can do nothing."
)
@pass_opts
def member_set(
    opts: Options, name: str, role: str | None, activate: bool, deactivate: bool
) -> None:
    """Change a member's role, or deactivate (and reactivate) one."""
    if activate and deactivate:
        raise click.UsageError(
            "--active and --inactive contradict each other: pass one. Nothing changed."
        )
    active = True if activate else False if deactivate else None
    with open_home(opts) as rv:
        m = rv.update_member(name, role=role, active=active)
    emit(
        opts,
        _member(m),
        lambda: out.print(f"{m.name}: {m.role}, {'active' if m.active else 'inactive'}."),
    )


def _member(m: Any) -> dict[str, Any]:
    return {"name": m.name, "role": m.role, "active": m.active, "created": stamp(m.created_at)}
