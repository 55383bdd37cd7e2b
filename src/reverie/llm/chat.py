"""The seam of an agent's turn: a model that chats, calls tools and streams (SPEC 5, D3).

:class:`ChatProvider` is the second half of a provider, beside
:meth:`~reverie.llm.base.Provider.complete` (which review uses): it takes a system prompt, a
transcript of :class:`ChatMessage` and the tools on offer, and answers with a
:class:`ChatReply` that holds text, tool calls, or both. With ``on_text`` the answer is
streamed: each piece of text goes to ``on_text`` as it arrives, and the reply still holds the
whole of it. Errors are :class:`~reverie.llm.base.ProviderError`, as for ``complete``.

The types are neutral: each provider translates them to its wire format (OpenAI's
``tool_calls`` and ``tool`` messages, Anthropic's ``tool_use`` and ``tool_result`` blocks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "ChatMessage",
    "ChatProvider",
    "ChatReply",
    "TextSink",
    "ToolCall",
    "ToolSpec",
    "parse_arguments",
]

#: Receives each piece of streamed text as it arrives.
TextSink = Callable[[str], None]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model sees it: a name, what it is for, and a JSON Schema of its input."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is None when the model's JSON was invalid;
    ``raw`` keeps what it sent, so the tool can say what was wrong."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str = ""


@dataclass(frozen=True)
class ChatMessage:
    """One message of a transcript: a user's or the assistant's text (the assistant's with
    the tool calls it made), or a tool's result for the call ``tool_call_id``."""

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ChatReply:
    """What the model answered in one call and what the call cost."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tokens_in: int = 0
    tokens_out: int = 0
    model: str = ""
    #: Why the model stopped (``stop``, ``tool_calls``, ``end_turn``, ``length``, ...).
    stop_reason: str | None = None
    #: Provider-specific facts worth keeping in a turn's audit (never a key).
    extra: dict[str, Any] = field(default_factory=dict)


class ChatProvider(Protocol):
    """A model that can take a turn: text, tool calls, streaming."""

    model: str

    def chat(
        self,
        system: str,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        on_text: TextSink | None = None,
    ) -> ChatReply:
        """Ask the model for the next step of a turn (transport retries included).

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer,
                ``model_bad_answer`` when its answer cannot be read.
        """
        ...


def parse_arguments(raw: str | None) -> dict[str, Any] | None:
    """A tool call's arguments as a JSON object; ``{}`` for none, None when not an object."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
