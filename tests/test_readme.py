"""The README stays true: statements a new user tripped on (issue 10), checked against the code."""

from __future__ import annotations

import tomllib
from pathlib import Path

from reverie.cli.server import _SERVER_EXTRA

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_says_how_to_put_reverie_on_the_path() -> None:
    assert ".venv/bin/reverie" in README and "pipx install '.[server]'" in README
    # the extra the README names holds what `reverie serve` checks for before it starts
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(_SERVER_EXTRA) <= {d.split(">")[0].split("[")[0] for d in extras["server"]}
    assert ". .venv/bin/activate" in README


def test_readme_orders_the_pipeline_as_the_code_does() -> None:
    """W1, W6, W7: ``MemoryStore._apply_locked`` answers a known key before the revision check."""
    pipeline = README[README.index("Rules of the pipeline") :]
    assert pipeline.index("idempotency key answered") < pipeline.index("expected revision checked")


def test_make_run_keeps_its_data_where_reverie_home_says() -> None:
    """The quick start: the data lives in ./reverie-data unless REVERIE_HOME is set."""
    import os
    import subprocess

    def command(env: dict[str, str]) -> str:
        done = subprocess.run(
            ["make", "-n", "run", "tour"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    env = {k: v for k, v in os.environ.items() if k not in ("REVERIE_HOME", "HOME_DIR")}
    assert "serve --home reverie-data" in command(env)
    elsewhere = command({**env, "REVERIE_HOME": "/srv/reverie"})
    assert "serve --home /srv/reverie" in elsewhere and "tour --home /srv/reverie" in elsewhere
