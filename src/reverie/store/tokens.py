"""Who is calling: API tokens, one-time sign-in links and admin sessions (SPEC 1, 11, 15).

Each is a random secret handed to a person once and stored only as its SHA-256 hash, so the
state database never holds one that works. An **API token** (``rvt_...``) belongs to a member
until it is revoked; a **sign-in link** (``/admin/signin/<code>``) works once, within
fifteen minutes; an **admin session** is what a browser holds after signing in (a cookie), with
the CSRF secret its forms must echo. A secret of an inactive member authenticates nobody.

A session ends when it expires (twelve hours), when its browser signs out, when its member is
deactivated (for good, reactivating the member brings none back: ``SQLiteState.update_member``
removes them, and a request that finds its member inactive removes its session too), and, for
one opened with an API token, when that token is revoked. Such a session's cookie begins with the
token's id (``tok_....<random>``); the stored hash covers the whole cookie, so the id cannot be
changed, and each request checks that token in the same query that finds the session.

Links to the admin page point where the running ``reverie serve`` of the home serves:
:func:`record_server` notes its address in the home while it runs (:data:`SERVER_FILE`), and
:func:`links_base` reads it back, unless ``REVERIE_PUBLIC_URL`` says otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.config import Settings
from reverie.core import validation
from reverie.errors import NotFound, StorageFault

from .locks import file_lock

if TYPE_CHECKING:
    from .state import Member, SQLiteState

__all__ = [
    "SCHEMA",
    "SERVER_FILE",
    "SESSIONS_MIGRATION",
    "AdminSession",
    "TokenInfo",
    "TokenStore",
    "forget_server",
    "hash_secret",
    "links_base",
    "record_server",
]

SCHEMA = """
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT,
    created_at REAL NOT NULL,
    last_used_at REAL,
    revoked_at REAL
);
CREATE TABLE sign_in_links (
    code_hash TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL
);
CREATE TABLE admin_sessions (
    session_hash TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""

#: Sessions opened before a session's cookie named the token it was opened with (revoking that
#: token could not end them): ended once, when a home takes the change (shared migration 9).
SESSIONS_MIGRATION = """
DELETE FROM admin_sessions;
"""

TOKEN_PREFIX = "rvt_"
TOKEN_ID_PREFIX = "tok_"
LINK_SECONDS = 15 * 60
SESSION_SECONDS = 12 * 3600


def hash_secret(secret: str) -> str:
    """The stored form of a secret."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    """An API token as listed (never the token itself)."""

    id: str
    member: str
    label: str | None
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    def to_dict(self) -> dict[str, Any]:
        """The token as the JSON surfaces list it."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class AdminSession:
    """A signed-in browser: its member and the CSRF secret of its forms."""

    member: Member
    csrf: str
    expires_at: float

    def csrf_ok(self, given: str | None) -> bool:
        """Whether a form echoed this session's CSRF secret (in constant time)."""
        return given is not None and hmac.compare_digest(given, self.csrf)


class TokenStore:
    """Tokens, sign-in links and admin sessions of one state database."""

    def __init__(self, state: SQLiteState) -> None:
        self.state = state

    # API tokens

    def create(self, member: Member, label: str | None = None) -> tuple[str, TokenInfo]:
        """A new API token for ``member``: the token (shown once) and its record.

        Raises:
            RefusedInput: ``invalid_name``: the label holds a control character or a
                credential (it is listed and shown).
        """
        if label is not None:
            validation.check_control(label, "The token's label", code="invalid_name")
            validation.check_not_secret(label, "The token's label", code="invalid_name")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token_id = TOKEN_ID_PREFIX + uuid.uuid4().hex[:10]
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO api_tokens (id, member_id, token_hash, label, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (token_id, member.id, hash_secret(token), label, time.time()),
            )
        return token, self.get(token_id)

    def get(self, token_id: str) -> TokenInfo:
        """One token's record.

        Raises:
            NotFound: no such token.
        """
        row = self.state.conn.execute(
            "SELECT t.id, m.name, t.label, t.created_at, t.last_used_at, t.revoked_at "
            "FROM api_tokens t JOIN members m ON m.id = t.member_id WHERE t.id = ?",
            (token_id,),
        ).fetchone()
        if row is None:
            raise NotFound(f"No token {token_id!r}; `reverie token list` shows them.")
        return TokenInfo(*row)

    def list(self, member: Member | None = None) -> list[TokenInfo]:
        """Every token (of one member), oldest first."""
        sql = (
            "SELECT t.id, m.name, t.label, t.created_at, t.last_used_at, t.revoked_at "
            "FROM api_tokens t JOIN members m ON m.id = t.member_id"
        )
        args: tuple[Any, ...] = ()
        if member is not None:
            sql += " WHERE t.member_id = ?"
            args = (member.id,)
        rows = self.state.conn.execute(sql + " ORDER BY t.created_at, t.id", args).fetchall()
        return [TokenInfo(*r) for r in rows]

    def revoke(self, token_id: str) -> TokenInfo:
        """Revoke a token at once (idempotent).

        Raises:
            NotFound: no such token.
        """
        self.get(token_id)
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                (time.time(), token_id),
            )
        return self.get(token_id)

    def member_of(self, token: str) -> str | None:
        """The id of the member an unrevoked token belongs to, or None."""
        row = self.state.conn.execute(
            "SELECT id, member_id, last_used_at FROM api_tokens "
            "WHERE token_hash = ? AND revoked_at IS NULL",
            (hash_secret(token),),
        ).fetchone()
        if row is None:
            return None
        now = time.time()
        if row[2] is None or now - row[2] > 60:  # a write a minute at most, not one per call
            with self.state.transaction() as conn:
                conn.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (now, row[0]))
        return str(row[1])

    def holder(self, token: str) -> tuple[str, str, bool] | None:
        """``(token id, member id, member active)`` of an unrevoked token, or None; nothing
        is written (it says why a token that :meth:`member_of` finds lets no one in)."""
        row = self.state.conn.execute(
            "SELECT t.id, t.member_id, m.active FROM api_tokens t "
            "JOIN members m ON m.id = t.member_id "
            "WHERE t.token_hash = ? AND t.revoked_at IS NULL",
            (hash_secret(token),),
        ).fetchone()
        return (str(row[0]), str(row[1]), bool(row[2])) if row else None

    # one-time sign-in links

    def sign_in_code(self, member: Member) -> str:
        """A code for ``/admin/signin/<code>``: one use, within fifteen minutes."""
        code = secrets.token_urlsafe(24)
        now = time.time()
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO sign_in_links (code_hash, member_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (hash_secret(code), member.id, now, now + LINK_SECONDS),
            )
        return code

    def sign_in_code_state(self, code: str) -> tuple[str, str | None]:
        """What a code is, without using it: ``("valid", member id)``, or ``("used", ...)``,
        ``("expired", ...)``, ``("unknown", None)``."""
        row = self.state.conn.execute(
            "SELECT member_id, used_at, expires_at FROM sign_in_links WHERE code_hash = ?",
            (hash_secret(code),),
        ).fetchone()
        if row is None:
            return "unknown", None
        if row[1] is not None:
            return "used", str(row[0])
        return ("expired" if row[2] <= time.time() else "valid"), str(row[0])

    def use_sign_in_code(self, code: str) -> str | None:
        """The member id of an unused, unexpired code, which is used up; else None."""
        now = time.time()
        with self.state.transaction() as conn:
            row = conn.execute(
                "SELECT member_id FROM sign_in_links WHERE code_hash = ? AND used_at IS NULL "
                "AND expires_at > ?",
                (hash_secret(code), now),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE sign_in_links SET used_at = ? WHERE code_hash = ?",
                (now, hash_secret(code)),
            )
        return str(row[0])

    # admin sessions

    def open_session(self, member: Member, token_id: str | None = None) -> str:
        """A new browser session for ``member``; returns the cookie value. ``token_id`` is
        the API token it was opened with (none for a sign-in link): revoking that token ends
        the session."""
        value = secrets.token_urlsafe(32)  # never holds a "."
        if token_id is not None:
            value = f"{token_id}.{value}"
        now = time.time()
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM admin_sessions WHERE expires_at < ?", (now,))
            conn.execute(
                "INSERT INTO admin_sessions (session_hash, member_id, csrf, created_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?)",
                (
                    hash_secret(value),
                    member.id,
                    secrets.token_urlsafe(24),
                    now,
                    now + SESSION_SECONDS,
                ),
            )
        return value

    def session(self, value: str) -> tuple[str, str, float] | None:
        """``(member_id, csrf, expires_at)`` of a live session, or None.

        One query finds the session, its member's active flag and, for a session opened with
        an API token, whether that token is still unrevoked. A session whose member is
        deactivated or whose token is revoked is ended here, for good.
        """
        head, dot, _ = value.partition(".")
        token_id = head if dot and head.startswith(TOKEN_ID_PREFIX) else ""
        row = self.state.conn.execute(
            "SELECT s.member_id, s.csrf, s.expires_at, m.active, "
            "(SELECT count(*) FROM api_tokens t WHERE t.id = ? "
            "AND t.member_id = s.member_id AND t.revoked_at IS NULL) "
            "FROM admin_sessions s JOIN members m ON m.id = s.member_id "
            "WHERE s.session_hash = ? AND s.expires_at > ?",
            (token_id, hash_secret(value), time.time()),
        ).fetchone()
        if row is None:
            return None
        if not row[3] or (token_id and not row[4]):
            with contextlib.suppress(StorageFault):  # ended all the same; expiry removes it
                self.close_session(value)
            return None
        return (str(row[0]), str(row[1]), float(row[2]))

    def close_session(self, value: str) -> None:
        """Sign a browser out."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM admin_sessions WHERE session_hash = ?", (hash_secret(value),))


# where links to the admin page point

#: In the home while ``reverie serve`` runs: ``{"servers": [note, ...]}``, a note per server
#: of the home (several may serve one home, each on its port), oldest first; a note holds its
#: public URL, where it listens and its process. A server adds its note when it starts and
#: takes only its own away when it stops, so the others' stay.
SERVER_FILE = "server.json"
#: The lock that makes one server's change of :data:`SERVER_FILE` wait for another's.
_SERVER_LOCK = ".server.json.lock"


def record_server(home: Path, url: str, host: str, port: int) -> None:
    """Note in ``home`` that this process serves it at ``url`` (listening on ``host``:``port``),
    beside the notes of the other servers of the home still running, for :func:`links_base`;
    best effort: a home that takes no files, or a PostgreSQL home with no data directory (none
    is made for this), gets no note."""
    note = {"url": url, "host": host, "port": port, "pid": os.getpid()}
    _change_servers(home, lambda notes: [*notes, note])


def forget_server(home: Path) -> None:
    """Take this process's note out of ``home``; the notes of other servers still running
    stay (the file goes with the last one)."""
    _change_servers(home, lambda notes: notes)


def links_base(settings: Settings) -> str:
    """Where links to the admin page point: ``REVERIE_PUBLIC_URL`` when it is set, else the
    address a running ``reverie serve`` of this home serves on (the newest of them), else the
    default. A note left by a server that is gone (its process ended, or nothing listens on its
    port) is passed over.

    The one rule for every link to the admin page made outside a request to the page:
    ``reverie token link``, and the Slack app's App Home and ``!forget`` (``reverie slack
    --socket`` serves no page of its own; ``slack/commands.py::admin_link``)."""
    if settings.public_url != Settings().public_url:
        return settings.public_url
    for note in reversed(_notes(settings.home / SERVER_FILE)):
        url, host, port, pid = (note.get(k) for k in ("url", "host", "port", "pid"))
        if isinstance(url, str) and url and _alive(pid) and _listening(host, port):
            return url
    return settings.public_url


def _change_servers(home: Path, change: Callable[[list[dict[str, Any]]], list[Any]]) -> None:
    """Rewrite :data:`SERVER_FILE` under its lock: ``change`` of the notes of the servers
    still running other than this process (whole or not at all; best effort)."""
    path = home / SERVER_FILE
    try:
        with file_lock(home / _SERVER_LOCK, timeout=5.0):
            others = [
                n for n in _notes(path) if n.get("pid") != os.getpid() and _alive(n.get("pid"))
            ]
            notes = change(others)
            if not notes:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                return
            part = path.with_name(f".{SERVER_FILE}.{os.getpid()}")
            try:
                part.write_text(json.dumps({"servers": notes}), encoding="utf-8")
                part.replace(path)
            except OSError:
                with contextlib.suppress(OSError):
                    part.unlink()
    except (OSError, StorageFault):
        return


def _notes(path: Path) -> list[dict[str, Any]]:
    """The notes in ``path``, oldest first (a note on its own, as a server before several
    could be noted wrote it, is a list of one)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if isinstance(found, dict) and isinstance(found.get("servers"), list):
        return [n for n in found["servers"] if isinstance(n, dict)]
    return [found] if isinstance(found, dict) else []


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    return True


def _listening(host: object, port: object) -> bool:
    if not isinstance(host, str) or not isinstance(port, int) or not 0 < port < 65536:
        return False
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
