"""The one source rule (R6, H2) shared by the offline and model reviewers and the runner."""

from __future__ import annotations

import pytest

from reverie.review.sources import (
    MISSING_SOURCE,
    SOURCE_OUT_OF_BATCH,
    BatchSources,
    is_link_line,
)
from reverie.review.types import Turn

TURNS = [Turn("c1", p, "user", "sam", "text", 0.0) for p in (4, 5, 7)]  # 6 is a tool log


@pytest.mark.parametrize(
    "text",
    [
        "Sam prefers tea. (source: c1#4-5)",
        "Deploys moved to Tuesday. (source: c1#5-8)",  # spans the tool log at 6
        "Two sources. (source: c1#4-5) (source: c1#7-8)",
        "More: [[memory/decisions.md]]",
        "[[memory/people-preferences.md]]",
    ],
)
def test_admissible(text: str) -> None:
    assert BatchSources(TURNS).problem(text) is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Sam prefers tea.", MISSING_SOURCE),
        ("(source: c1#4-5) Sam prefers tea.", MISSING_SOURCE),  # must end with it
        ("Sam prefers tea. (source: c2#4-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#3-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#7-9)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#5-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#6-7)", SOURCE_OUT_OF_BATCH),  # only the tool log
        ("Sam prefers tea, see [[memory/x.md]] for the long story of why", MISSING_SOURCE),
    ],
)
def test_refused(text: str, code: str) -> None:
    problem = BatchSources(TURNS).problem(text)
    assert problem is not None and problem.code == code and problem.message


def test_link_lines() -> None:
    assert is_link_line("More: [[memory/decisions.md]]")
    assert is_link_line("- See also [[memory/a.md]], [[memory/b.md]]")
    assert not is_link_line("Sam prefers tea.")
    assert not is_link_line("The deploy runbook is long and lives in [[memory/deploys.md]] now")
