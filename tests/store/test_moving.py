"""Moving a home between backends (SPEC D2): embedded -> PostgreSQL -> git, every revision."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from reverie import Reverie, Settings
from reverie.cli import main
from reverie.errors import RefusedInput, StorageFault
from reverie.index import postings
from reverie.store.dbmemories import DatabaseMemoryStore
from tests.conftest import PostgresServer

BATCHES: list[dict[str, object]] = [
    {"operations": [{"action": "add", "section": "Decisions", "text": "We deploy on Fridays."}]},
    {"operations": [{"action": "write_topic", "topic": "vpn", "content": "# VPN\n- wg0\n"}]},
    {
        "operations": [
            {"action": "replace", "old": "We deploy on Fridays.", "text": "We deploy on Tuesdays."}
        ]
    },
    {"operations": [{"action": "write_topic", "topic": "scratch", "content": "# S\n- tmp\n"}]},
    {"operations": [{"action": "add", "section": "Facts", "text": "Ada leads the billing team."}]},
]


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Reverie:
    monkeypatch.delenv("REVERIE_DATABASE_URL", raising=False)
    rv = Reverie(tmp_path / "home", create=True)
    rv.create_agent("ada")
    rv.create_agent("bob")
    for batch in BATCHES:
        rv.memory_apply("ada", batch)
    rv.memory_apply("bob", {"operations": [{"action": "add", "text": "Bob likes green tea."}]})
    record = {
        "conversation": "c1",
        "agent": "ada",
        "channel": {"kind": "dm", "id": "D1"},
        "author": "sam",
        "role": "user",
        "text": "Deploys need the VPN",
        "time": "2024-05-08T13:56:00Z",
    }
    rv.import_conversations([json.dumps(record)])
    return rv


def bodies(rv: Reverie, agent: str) -> list[dict[str, str]]:
    """Every file's text at every revision, oldest first."""
    latest = rv.memory_read(agent).revision
    return [
        {path: rv.memory_read(agent, path, revision=n).text for path in rv.memory_files(agent, n)}
        for n in range(latest + 1)
    ]


def git_bodies(folder: Path) -> list[dict[str, str]]:
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    out = []
    for commit in commits:
        files: dict[str, str] = {}
        for entry in commit.tree:
            if entry.type_str == "blob":
                files[entry.name] = repo[entry.id].data.decode()
            else:
                for sub in repo[entry.id]:
                    files[f"{entry.name}/{sub.name}"] = repo[sub.id].data.decode()
        out.append(files)
    return out


def test_d2_a_database_holding_only_a_member_is_not_empty(
    embedded: Reverie, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """A member made in the target first (and their token) would keep their rights over the
    migrated agents: such a database is refused like one holding agents, and nothing is
    copied."""
    schema, url = postgres_server.schema_url()
    try:
        with Reverie(settings=Settings.load(tmp_path / "pg", database_url=url), create=True) as pg:
            pg.add_member("carol", "admin")
            pg.create_token("carol")
            with pytest.raises(RefusedInput) as refused:
                embedded.migrate_to(url)
            assert refused.value.code == "target_not_empty" and "members" in refused.value.message
            assert pg.agents() == [] and [m.name for m in pg.members()] == ["carol"]
    finally:
        postgres_server.drop_schema(schema)


def test_d2_embedded_to_postgres_to_git_keeps_every_revision(
    embedded: Reverie, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    schema, url = postgres_server.schema_url()
    try:
        want = {a: bodies(embedded, a) for a in ("ada", "bob")}
        history = [(h.revision, h.writer, h.message) for h in embedded.memory_history("ada")]
        counts = embedded.migrate_to(url)
        assert counts["agents"] == 2 and counts["messages"] == 1
        assert counts["revisions_with_files"] == len(want["ada"]) + len(want["bob"])
        with pytest.raises(RefusedInput) as again:
            embedded.migrate_to(url)
        assert again.value.code == "target_not_empty"

        moved = Reverie(settings=Settings.load(tmp_path / "pg", database_url=url), create=True)
        try:
            for agent in ("ada", "bob"):
                assert bodies(moved, agent) == want[agent]
            assert [(h.revision, h.writer, h.message) for h in moved.memory_history("ada")] == (
                history
            )
            assert moved.memory_diff("ada", 2, 3).count("+- We deploy on Tuesdays.") == 1
            assert moved.memory_search("ada", "tuesdays")[0].excerpt == "- We deploy on Tuesdays."
            for agent in ("ada", "bob"):  # the search postings were filled with the lines
                memory_id = moved.state.memory_of(moved.agent(agent).id)
                assert postings.check(moved.state.conn, memory_id)
                assert moved.state.conn.execute(
                    f"SELECT count(*) > 0 FROM ({postings.kept_sql()}) k", (memory_id,)
                ).fetchone() == (True,)
            assert [h.conversation for h in moved.context_search("ada", "vpn")] == ["c1"]
            # the moved memory takes writes, revisions continuing where they were
            out = moved.memory_apply(
                "ada", {"operations": [{"action": "add", "text": "After the move."}]}
            )
            assert out.revision == len(want["ada"])
            # the database keeps the batch that made each revision it wrote
            memory_id = moved.state.memory_of(moved.agent("ada").id)
            assert isinstance(moved.memories, DatabaseMemoryStore)
            batch = moved.memories.batch_of(memory_id, out.revision)
            assert batch is not None and "After the move." in batch
            folder = tmp_path / "exported"
            assert moved.export_git("ada", folder) == len(want["ada"]) + 1
            exported = git_bodies(folder)
            assert exported[:-1] == want["ada"]
            assert "- After the move." in exported[-1]["MEMORY.md"]
            with pytest.raises(RefusedInput) as taken:
                moved.export_git("ada", folder)
            assert taken.value.code == "invalid_path"
        finally:
            moved.close()
    finally:
        postgres_server.drop_schema(schema)


def test_export_from_the_embedded_home_through_the_cli(
    embedded: Reverie, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ada-git"
    code = main(["--home", str(embedded.home), "export", "ada", "--git", str(folder), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["commits"] == len(bodies(embedded, "ada"))
    assert git_bodies(folder) == bodies(embedded, "ada")


def test_migrate_refuses_a_url_that_is_not_postgresql(embedded: Reverie) -> None:
    with pytest.raises(RefusedInput) as bad:
        embedded.migrate_to("mysql://root@127.0.0.1/x")
    assert bad.value.code == "invalid_url"


def test_an_unreachable_database_is_a_clear_fault_without_the_password(embedded: Reverie) -> None:
    with pytest.raises(StorageFault) as down:
        embedded.migrate_to("postgresql://reverie:hunter2secret@127.0.0.1:1/reverie")
    assert down.value.code == "storage_unavailable"
    assert "127.0.0.1:1" in down.value.message and "hunter2secret" not in str(down.value)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://reverie@127.0.0.1:5432/reverie?password=hunter2secret&sslmode=disable",
        "host=127.0.0.1 port=5432 password=hunter2secret dbname=reverie",
        "postgresql://reverie:hunter2secret@127.0.0.1:5432/reverie",
    ],
)
def test_a_database_password_is_never_shown_however_it_is_given(url: str) -> None:
    """A password given as a parameter (?password=) or in a key/value string was printed as
    it was: only the one before the host was blanked."""
    from reverie.store.postgres import redact

    assert "hunter2secret" not in redact(url) and "***" in redact(url)


def test_init_names_its_database_without_the_password(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    postgres_server: PostgresServer,
) -> None:
    from reverie.cli import main

    schema, real = postgres_server.schema_url()
    try:
        given = real + ("&" if "?" in real else "?") + "password=hunter2secret"
        monkeypatch.setenv("REVERIE_DATABASE_URL", given)
        assert main(["--home", str(tmp_path / "h"), "init"]) == 0
        shown = capsys.readouterr()
        assert "hunter2secret" not in shown.out + shown.err and "password=***" in shown.out
    finally:
        postgres_server.drop_schema(schema)


def test_a_lock_timeout_says_another_write_held_the_memory() -> None:
    """A small write waiting past the lock timeout behind a large batch said that the
    database failed; the database was fine, the memory was busy."""
    import psycopg.errors

    from reverie.store.postgres import _fault

    fault = _fault(
        psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"), "writing"
    )
    assert fault.code == "storage_unavailable" and "Another write held" in fault.message
    assert "database itself is fine" in fault.message
