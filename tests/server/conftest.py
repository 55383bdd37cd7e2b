"""A served home: members with tokens, the ASGI app, and (for some tests) a real server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from reverie import Reverie
from reverie.http import create_app


@dataclass
class Served:
    rv: Reverie
    client: TestClient
    tokens: dict[str, str]

    def auth(self, member: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[member]}"}


def workspace(home: Path) -> tuple[Reverie, dict[str, str]]:
    """Olga (owner), Ann (admin), Cy (member, creator of ada), Sam (member), Ivy (inactive)."""
    rv = Reverie(home, create=True)
    for name, role in [
        ("olga", "owner"),
        ("ann", "admin"),
        ("cy", "member"),
        ("sam", "member"),
        ("ivy", "member"),
    ]:
        rv.add_member(name, role)
    rv.create_agent("ada", creator="cy", soul="You are Ada.")
    rv.create_agent("open", edit_policy="all_workspace_members")
    tokens = {name: rv.create_token(name)[0] for name in ("olga", "ann", "cy", "sam", "ivy")}
    rv.update_member("ivy", active=False)
    return rv, tokens


@pytest.fixture
def served(tmp_path: Path, backend: str) -> Iterator[Served]:
    rv, tokens = workspace(tmp_path / "home")
    with TestClient(create_app(rv)) as client:
        yield Served(rv, client, tokens)
    rv.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Live:
    rv: Reverie
    base: str
    tokens: dict[str, str]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    """The app under a real uvicorn server on 127.0.0.1, in a thread."""
    rv, tokens = workspace(tmp_path / "home")
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(rv), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield Live(rv, f"http://127.0.0.1:{port}", tokens)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        rv.close()
