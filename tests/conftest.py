"""Shared fixtures: a real data directory (SQLite + git) per test."""

from __future__ import annotations

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


def fake(*parts: str) -> str:
    """Build credential-shaped test strings from pieces, so no file holds one whole."""
    return "".join(parts)
