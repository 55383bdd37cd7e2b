"""W5 and M1: only MEMORY.md and memory/<slug>.md, no way out of the repository."""

from __future__ import annotations

import pytest

from reverie.core.paths import check_links, normalize_source, topic_path
from reverie.errors import RefusedInput


@pytest.mark.parametrize(
    ("given", "path"),
    [(None, "MEMORY.md"), ("MEMORY.md", "MEMORY.md"), ("memory/deploys.md", "memory/deploys.md")],
)
def test_m1_valid_sources(given: str | None, path: str) -> None:
    assert normalize_source(given) == path


@pytest.mark.parametrize(
    "bad",
    [
        "../MEMORY.md",
        "/etc/passwd",
        "memory/../x.md",
        "memory/a/b.md",
        ".git/config",
        "memory/.hidden.md",
        "notes.txt",
        "memory/UPPER.md",
        "memory/x.md/",
        "memory.md",
    ],
)
def test_w5_m1_other_paths_are_refused(bad: str) -> None:
    with pytest.raises(RefusedInput) as e:
        normalize_source(bad)
    assert e.value.code == "invalid_path"


def test_w5_topic_slugs() -> None:
    assert topic_path("deploys") == "memory/deploys.md"
    assert topic_path("memory/a-b_c.md") == "memory/a-b_c.md"
    for bad in ("", "../x", "a/b", "-x", "x" * 81, "Caps", "dot.ted"):
        with pytest.raises(RefusedInput):
            topic_path(bad)


@pytest.mark.parametrize(
    "link",
    [
        "[[../secrets.md]]",
        "[[/etc/passwd]]",
        "[[~/x]]",
        "[[https://evil.example/x]]",
        "[[memory/../../x]]",
    ],
)
def test_w5_links_out_of_the_repository_are_refused(link: str) -> None:
    with pytest.raises(RefusedInput) as e:
        check_links(f"- see {link}")
    assert e.value.code == "invalid_path"


def test_w5_links_inside_are_fine() -> None:
    check_links("- see [[memory/deploys.md]] and [[MEMORY.md]] and [[deploys]]")
