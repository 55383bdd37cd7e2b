"""Settings: the only module that reads the environment.

Precedence, highest first: a value passed to :meth:`Settings.load`, then the environment
variable ``REVERIE_<NAME>`` (for example ``REVERIE_MAX_INDEX_BYTES=131072``), then the default
below. ``REVERIE_HOME`` picks the data directory (default ``./reverie-data``). The model
endpoints' settings read the providers' own variables instead (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``), and Slack's settings bolt's
own (``SLACK_BOT_TOKEN``, ``SLACK_SIGNING_SECRET``, ``SLACK_APP_TOKEN``), named in field metadata.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import RefusedInput

__all__ = ["REVIEW_EMBEDDINGS", "Settings", "export_home", "git_environment"]

MIB = 1024 * 1024
#: The values of ``review_embeddings`` (the offline reviewer's optional sentence model).
REVIEW_EMBEDDINGS = ("auto", "on", "off")
#: The values of ``search_backend``: ranked full-text search, or the bounded scan (M2).
SEARCH_BACKENDS = ("fts5", "scan")


@dataclass(frozen=True)
class Settings:
    """Typed settings with their defaults (SPEC W3 limits, review and search knobs)."""

    home: Path = field(default_factory=lambda: Path("reverie-data"))
    #: W3: one file at most (topic files).
    max_file_bytes: int = 8 * MIB
    #: W3: one batch at most (the sum of its text).
    max_batch_bytes: int = 32 * MIB
    #: W3: ``MEMORY.md`` at most, on every path.
    max_index_bytes: int = 64 * 1024
    #: W3: a chat command's description and body.
    max_chat_description_bytes: int = 512
    max_chat_body_bytes: int = 8 * 1024
    #: P1: how much of ``MEMORY.md`` goes into the prompt.
    prompt_index_chars: int = 2000
    #: S1: the soul is read into every prompt; a published version holds at most this much.
    max_soul_bytes: int = 16 * 1024
    #: I1: one proposed instruction change, and a channel's instructions in all.
    max_instruction_chars: int = 2400
    max_channel_instructions_chars: int = 12_000
    #: T1: one notify, and notifies per task.
    max_notify_chars: int = 3500
    max_notifies_per_task: int = 10
    #: A turn's tool rounds before the model must answer without tools.
    max_tool_rounds: int = 8
    #: Tokens a turn's model call may answer with.
    chat_answer_tokens: int = 2048
    #: A conversation idle this long has a complete tail (review may read it).
    idle_window_seconds: int = 30 * 60
    #: ``fts5`` (ranked, BM25) or ``scan`` (the bounded fallback, M2).
    search_backend: str = field(default="fts5", metadata={"choices": SEARCH_BACKENDS})
    #: The bounded scan reads at most this many indexed lines.
    scan_max_lines: int = 50_000
    #: fsync git objects and use SQLite ``synchronous=FULL``: survives power loss, not only
    #: process crashes, at a cost per write (see docs/benchmarks.md).
    durable: bool = False
    #: Every this many revisions a memory's loose git objects go into one pack file (0: never).
    pack_every: int = 500
    #: W9: refused writes in a row, within one conversation, before the agent is told to stop.
    max_failures_in_a_row: int = 3
    #: ``postgresql://...``: state, memory content and search in PostgreSQL, shared by several
    #: servers (SPEC D2; needs ``reverie[postgres]``). Unset: the embedded default in ``home``.
    database_url: str | None = field(default=None, repr=False)
    #: ``openai:NAME`` or ``anthropic:NAME``; unset means the offline reviewer.
    model: str | None = None
    #: The providers' own variables (SPEC 15), read here and handed to the SDKs explicitly.
    #: Keys stay out of reprs.
    openai_base_url: str | None = field(default=None, metadata={"env": "OPENAI_BASE_URL"})
    openai_api_key: str | None = field(default=None, repr=False, metadata={"env": "OPENAI_API_KEY"})
    anthropic_base_url: str | None = field(default=None, metadata={"env": "ANTHROPIC_BASE_URL"})
    anthropic_api_key: str | None = field(
        default=None, repr=False, metadata={"env": "ANTHROPIC_API_KEY"}
    )
    #: One model request: seconds before it is abandoned, and retries on 429, 5xx, lost links.
    model_timeout_seconds: int = 120
    model_max_retries: int = 2
    #: Offline reviewer: the MiniLM sentence model (``reverie[review-embeddings]``) for updates
    #: no rule connects: ``auto`` (used when installed), ``on`` (required) or ``off``.
    review_embeddings: str = field(default="auto", metadata={"choices": REVIEW_EMBEDDINGS})
    #: Model reviewer: prompt budget (estimated at four characters a token) and answer size.
    model_prompt_tokens: int = 24_000
    model_answer_tokens: int = 4096
    #: Slack (``reverie[slack]``): the install's tokens and signing secret in bolt's own
    #: variable names. Secrets stay out of reprs.
    slack_bot_token: str | None = field(
        default=None, repr=False, metadata={"env": "SLACK_BOT_TOKEN"}
    )
    slack_signing_secret: str | None = field(
        default=None, repr=False, metadata={"env": "SLACK_SIGNING_SECRET"}
    )
    slack_app_token: str | None = field(
        default=None, repr=False, metadata={"env": "SLACK_APP_TOKEN"}
    )
    #: Slack's Web API; a local server can stand in for it (tests, benchmarks).
    slack_api_url: str = "https://slack.com/api/"
    #: The agent that answers Slack DMs (default: the only agent, when there is one).
    slack_agent: str | None = None
    #: C2: how long a channel's member list (``conversations.members``) and a user's record
    #: (``users.info``) are trusted before Slack is asked again.
    slack_membership_cache_seconds: int = 60
    #: Where people reach the admin page (linked from the Slack App Home and ``!forget``).
    public_url: str = "http://127.0.0.1:8765"

    @classmethod
    def load(cls, home: str | Path | None = None, **overrides: Any) -> Settings:
        """Build settings from arguments, then ``REVERIE_*`` variables, then defaults.

        Raises:
            RefusedInput: an environment variable holds a value of the wrong type.
        """
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = os.environ.get(f.metadata.get("env", f"REVERIE_{f.name.upper()}"))
            if raw is not None and raw != "":
                values[f.name] = _coerce(f.name, f.type, raw, f.metadata.get("choices"))
        if home is not None:
            values["home"] = Path(home)
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["home"] = Path(values.get("home", "reverie-data")).expanduser().absolute()
        return cls(**values)


def export_home(home: Path) -> None:
    """Make ``home`` this process's ``REVERIE_HOME``, for the child processes it starts (the
    HTTP workers of ``reverie serve --workers N``) to open the same home."""
    os.environ["REVERIE_HOME"] = str(home)


def default_public_url(url: str) -> None:
    """Make ``url`` (where ``reverie serve`` listens) this process's ``REVERIE_PUBLIC_URL``
    unless one is set, so that the links the server gives (Slack's App Home, ``!forget``)
    point at it; its HTTP worker processes inherit it."""
    if not os.environ.get("REVERIE_PUBLIC_URL"):
        os.environ["REVERIE_PUBLIC_URL"] = url


#: Where the HTTP workers of ``reverie serve --workers N`` learn the UDP port on which the
#: parent process's Slack poster listens for wakes (set by the parent; not a setting).
SLACK_WAKE_PORT = "_REVERIE_SLACK_WAKE_PORT"


def export_slack_wake_port(port: int) -> None:
    """Tell the child processes this one starts where its Slack poster listens for wakes."""
    os.environ[SLACK_WAKE_PORT] = str(port)


def slack_wake_port() -> int | None:
    """The port :func:`export_slack_wake_port` set in the parent process, if any."""
    raw = os.environ.get(SLACK_WAKE_PORT)
    return int(raw) if raw else None


def git_environment() -> dict[str, str]:
    """The environment for a ``git`` subprocess: this process's, without the ``GIT_*``
    variables (``GIT_DIR``, ``GIT_OBJECT_DIRECTORY``, ...) that would point git elsewhere,
    as they are set when Reverie runs inside a git hook."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


#: The whole-number settings for which 0 means something (never pack, no retries, no cache, no
#: tool rounds, no index in the prompt, no notifies); every other is a size, a time or a count
#: of at least 1. None is negative.
_MAY_BE_ZERO = frozenset(
    {
        "pack_every",
        "model_max_retries",
        "slack_membership_cache_seconds",
        "idle_window_seconds",
        "max_notifies_per_task",
        "prompt_index_chars",
        "max_tool_rounds",
    }
)


def _coerce(name: str, type_name: Any, raw: str, choices: tuple[str, ...] | None = None) -> Any:
    kind = str(type_name) if choices is None else "one of " + ", ".join(choices)
    try:
        if choices is not None and raw not in choices:
            raise ValueError(raw)
        if kind == "int":
            number = int(raw)
            least = 0 if name in _MAY_BE_ZERO else 1
            if number < least:
                kind = f"a whole number of at least {least}"
                raise ValueError(raw)
            return number
        if kind == "bool":
            if raw.lower() in {"1", "true", "yes", "on"}:
                return True
            if raw.lower() in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
    except ValueError:
        raise RefusedInput(
            f"REVERIE_{name.upper()} must be {kind}; fix or unset the environment variable.",
            code="invalid_setting",
            setting=name,
        ) from None
    if kind == "Path":
        return Path(raw)
    return raw
