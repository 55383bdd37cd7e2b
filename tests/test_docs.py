"""The docs are a promise: every command and every agent tool is documented, and the README's
Python examples run (sqlite-utils' habit: generated references cannot go stale silently)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
import pytest

from reverie.cli import app
from reverie.runtime.tools import BUILTIN_TOOLS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
AGENT_DOC = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")


def commands(group: click.Group, prefix: str = "reverie") -> list[str]:
    out = []
    for name, cmd in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(cmd, click.Group):
            out += commands(cmd, path)
        else:
            out.append(path)
    return out


@pytest.mark.parametrize("command", commands(app))
def test_every_command_is_in_the_readme(command: str) -> None:
    assert command in README, f"{command} is not documented in README.md"


@pytest.mark.parametrize("tool", [t.name for t in BUILTIN_TOOLS])
def test_every_agent_tool_is_documented(tool: str) -> None:
    assert f"`{tool}`" in AGENT_DOC and f"`{tool}`" in README


def test_every_mcp_tool_is_documented() -> None:
    from reverie.mcp import MCP_TOOLS

    mcp_doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert len(MCP_TOOLS) == 6
    for name in MCP_TOOLS:
        assert f"`{name}" in mcp_doc and f"`{name}" in README, name


def test_the_readme_python_examples_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    assert blocks
    cwd = os.getcwd()
    try:
        for i, block in enumerate(blocks):  # each in a directory of its own, as a new user
            (tmp_path / str(i)).mkdir()
            os.chdir(tmp_path / str(i))
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
