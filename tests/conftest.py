"""Shared fixtures: a real data directory (SQLite + git) per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Reverie


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def rv(home: Path) -> Iterator[Reverie]:
    r = Reverie(home, create=True)
    r.create_agent("ada")
    yield r
    r.close()


def unavailable(why: str) -> None:
    """Skip a test whose real fault or data this environment cannot provide, except in CI
    (``CI=true``), where a skip would hide a test that never ran: there it fails, loudly."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{why} (CI=true: a test that cannot run here fails rather than skip)")
    pytest.skip(why)


def fake(*parts: str) -> str:
    """Build credential-shaped test strings from pieces, so no file holds one whole."""
    return "".join(parts)
