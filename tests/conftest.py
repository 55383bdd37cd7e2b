"""Shared fixtures: a real home per test, on each backend.

A test that takes ``home`` (or ``rv``) runs twice: on the embedded default (SQLite + git in a
data directory) and on PostgreSQL (``REVERIE_DATABASE_URL``), the same test with the same
assertions. The PostgreSQL runs share one fresh database per test session, created on the
machine's server (``REVERIE_TEST_POSTGRES``, default ``postgresql://postgres@127.0.0.1:5432``)
and dropped after; each test gets a schema of its own in it. Tests of the embedded store's own
machinery (git objects, files, SQLite pages) are marked ``sqlite_only``.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie

SERVER = os.environ.get("REVERIE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432")


def unavailable(why: str) -> None:
    """Skip a test whose real fault or data this environment cannot provide, except in CI
    (``CI=true``), where a skip would hide a test that never ran: there it fails, loudly."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{why} (CI=true: a test that cannot run here fails rather than skip)")
    pytest.skip(why)


def fake(*parts: str) -> str:
    """Build credential-shaped test strings from pieces, so no file holds one whole."""
    return "".join(parts)


class PostgresServer:
    """The test session's database on the machine's PostgreSQL, made on first use."""

    def __init__(self) -> None:
        self.database = f"reverie_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.created = False
        self.failed: str | None = None
        self._count = itertools.count(1)

    def _admin(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(f"{SERVER}/{database}", autocommit=True, connect_timeout=5) as c:
            cur = c.execute(sql)
            return cur.fetchall() if cur.description else []

    def schema_url(self) -> tuple[str, str]:
        """A fresh schema: its name and the URL whose connections use it."""
        if self.failed is not None:
            unavailable(self.failed)
        if not self.created:
            try:
                self._drop_leftovers()
                self._admin(f'CREATE DATABASE "{self.database}"')
            except Exception as exc:  # no server, no psycopg
                self.failed = f"PostgreSQL is not reachable at {SERVER}: {exc}"
                unavailable(self.failed)
            self.created = True
        schema = f"t{next(self._count)}"
        self._admin(f"CREATE SCHEMA {schema}", self.database)
        options = f"-csearch_path%3D{schema}"
        url = f"{SERVER}/{self.database}?application_name={schema}&options={options}"
        return schema, url

    def _drop_leftovers(self) -> None:
        """Drop the databases of earlier test runs on this machine whose process is gone (a
        run killed before it could drop its own)."""
        rows = self._admin("SELECT datname FROM pg_database WHERE datname LIKE 'reverie_test_%'")
        for (name,) in rows:
            pid = str(name).split("_")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def drop_schema(self, schema: str) -> None:
        """End the schema's connections (a test that left a home open) and drop it."""
        self._admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{self.database}' AND application_name = '{schema}'"
        )
        self._admin(f"DROP SCHEMA {schema} CASCADE", self.database)

    def drop(self) -> None:
        if self.created:
            self._admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    yield server
    server.drop()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only")
        metafunc.parametrize(
            "backend", ["sqlite"] if only else ["sqlite", "postgres"], indirect=True
        )


@pytest.fixture
def backend(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    postgres_server: PostgresServer,
) -> Iterator[str]:
    """``sqlite`` or ``postgres``: which store the test's home uses (its environment says so,
    for the CLI processes a test starts too)."""
    if request.param == "postgres":
        schema, url = postgres_server.schema_url()
        monkeypatch.setenv("REVERIE_DATABASE_URL", url)
        yield "postgres"
        postgres_server.drop_schema(schema)
    else:
        monkeypatch.delenv("REVERIE_DATABASE_URL", raising=False)
        yield "sqlite"


@pytest.fixture
def home(tmp_path: Path, backend: str) -> Path:
    return tmp_path / "home"


@pytest.fixture
def rv(home: Path) -> Iterator[Reverie]:
    r = Reverie(home, create=True)
    r.create_agent("ada")
    yield r
    r.close()
