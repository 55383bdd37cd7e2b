"""Who is calling: API tokens, one-time sign-in links and admin sessions (SPEC 1, 11, 15).

Each is a random secret handed to a person once and stored only as its SHA-256 hash, so the
state database never holds one that works. An **API token** (``rvt_...``) belongs to a member
until it is revoked; a **sign-in link** (``/admin/signin/<code>``) works once, within
fifteen minutes; an **admin session** is what a browser holds after signing in (a cookie), with
the CSRF secret its forms must echo. A secret of an inactive member authenticates nobody.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reverie.core import validation
from reverie.errors import NotFound

if TYPE_CHECKING:
    from .state import Member, SQLiteState

__all__ = ["SCHEMA", "AdminSession", "TokenInfo", "TokenStore", "hash_secret"]

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

TOKEN_PREFIX = "rvt_"
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
        token_id = "tok_" + uuid.uuid4().hex[:10]
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

    def open_session(self, member: Member) -> str:
        """A new browser session for ``member``; returns the cookie value."""
        value = secrets.token_urlsafe(32)
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
        """``(member_id, csrf, expires_at)`` of a live session, or None."""
        row = self.state.conn.execute(
            "SELECT member_id, csrf, expires_at FROM admin_sessions "
            "WHERE session_hash = ? AND expires_at > ?",
            (hash_secret(value), time.time()),
        ).fetchone()
        return (str(row[0]), str(row[1]), float(row[2])) if row else None

    def close_session(self, value: str) -> None:
        """Sign a browser out."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM admin_sessions WHERE session_hash = ?", (hash_secret(value),))
