"""The README stays true: statements a new user tripped on (issue 10), checked against the code."""

from __future__ import annotations

from pathlib import Path

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def test_readme_says_how_to_put_reverie_on_the_path() -> None:
    assert ".venv/bin/reverie" in README and "pipx install ." in README
    assert ". .venv/bin/activate" in README


def test_readme_orders_the_pipeline_as_the_code_does() -> None:
    """W1, W6, W7: ``MemoryStore._apply_locked`` answers a known key before the revision check."""
    pipeline = README[README.index("Rules of the pipeline") :]
    assert pipeline.index("idempotency key answered") < pipeline.index("expected revision checked")
