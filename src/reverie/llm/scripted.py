"""A provider built from a handler function: the model seam without a model or a network.

It is a real implementation of :class:`~reverie.llm.base.Provider`, not a mock: review and
runtime tests drive the same code paths as with an HTTP endpoint, and a handler can answer from
what it was asked (the prompt, the schema) or raise :class:`~reverie.llm.base.ProviderError` to
play an outage. Usage is estimated from the text (four characters a token) unless the handler
returns a full :class:`~reverie.llm.base.Completion`.

    provider = ScriptedProvider.replies({"operations": [], "message": "nothing new"})
    provider = ScriptedProvider(lambda call: {"operations": [...], "message": call.system[:20]})

It chats too (:class:`~reverie.llm.chat.ChatProvider`): the handler sees the tools on offer and
the transcript, and answers with text or with :func:`use_tools`; a streamed answer goes to
``on_text`` in pieces.

    provider = ScriptedProvider.replies(use_tools(("read_soul", {})), "Done.")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import (
    MODEL_UNAVAILABLE,
    Completion,
    Message,
    ProviderError,
    estimate_tokens,
    extract_json,
)
from .chat import ChatMessage, ChatReply, TextSink, ToolCall, ToolSpec

__all__ = ["Answer", "Handler", "ScriptedCall", "ScriptedProvider", "use_tools"]


@dataclass(frozen=True)
class ScriptedCall:
    """One request, as the handler sees it (and as tests inspect it afterwards)."""

    system: str
    messages: list[Message]
    schema: dict[str, Any] | None
    max_tokens: int
    idempotency_key: str | None = None
    #: For a chat call: the tools on offer and the whole transcript (tool calls included).
    tools: tuple[ToolSpec, ...] = ()
    transcript: tuple[ChatMessage, ...] = ()

    @property
    def prompt(self) -> str:
        """The system prompt and every message, as one text (handy for assertions)."""
        return "\n".join([self.system, *(m["content"] for m in self.messages)])


#: What a handler may answer: text, a JSON value (sent as its JSON text), a full completion,
#: or (to a chat call) a chat reply, such as :func:`use_tools` builds.
Answer = str | dict[str, Any] | list[Any] | Completion | ChatReply
Handler = Callable[[ScriptedCall], Answer]


@dataclass
class ScriptedProvider:
    """A :class:`~reverie.llm.base.Provider` whose answers come from ``handler``."""

    handler: Handler
    model: str = "scripted"
    calls: list[ScriptedCall] = field(default_factory=list)
    name: str = "scripted"

    @classmethod
    def replies(cls, *answers: Answer, model: str = "scripted") -> ScriptedProvider:
        """A provider that gives ``answers`` in order, then fails as an unavailable model."""
        queue = list(answers)

        def next_answer(call: ScriptedCall) -> Answer:
            if not queue:
                raise ProviderError(
                    "The scripted model has no answers left.",
                    code=MODEL_UNAVAILABLE,
                    provider="scripted",
                    model=model,
                )
            return queue.pop(0)

        return cls(next_answer, model=model)

    def complete(
        self,
        system: str,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 4096,
        idempotency_key: str | None = None,
    ) -> Completion:
        """Record the call and return the handler's answer as a completion.

        Raises:
            ProviderError: whatever the handler raises to play a failing endpoint.
        """
        call = ScriptedCall(
            system=system,
            messages=[dict(m) for m in messages],
            schema=schema,
            max_tokens=max_tokens,
            idempotency_key=idempotency_key,
        )
        self.calls.append(call)
        answer = self.handler(call)
        if isinstance(answer, ChatReply):
            answer = answer.text
        if isinstance(answer, Completion):
            return answer
        if isinstance(answer, str):
            text = answer
            parsed = extract_json(answer) if schema is not None else None
        else:
            text = json.dumps(answer, ensure_ascii=False)
            parsed = answer if schema is not None else None
        return Completion(
            text=text,
            parsed_json=parsed,
            tokens_in=estimate_tokens(call.prompt),
            tokens_out=estimate_tokens(text),
            model=self.model,
            stop_reason="stop",
        )

    def chat(
        self,
        system: str,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        on_text: TextSink | None = None,
    ) -> ChatReply:
        """Record the call and return the handler's answer as a chat reply; its text goes to
        ``on_text`` in pieces of a few characters, as a streaming endpoint sends it.

        Raises:
            ProviderError: whatever the handler raises to play a failing endpoint.
        """
        call = ScriptedCall(
            system=system,
            messages=[{"role": m.role, "content": m.content} for m in messages],
            schema=None,
            max_tokens=max_tokens,
            tools=tuple(tools),
            transcript=tuple(messages),
        )
        self.calls.append(call)
        answer = self.handler(call)
        if isinstance(answer, Completion):
            answer = answer.text
        if not isinstance(answer, ChatReply):
            text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            answer = ChatReply(text)
        if on_text is not None:
            for i in range(0, len(answer.text), 8):
                on_text(answer.text[i : i + 8])
        sent = call.prompt + "".join(t.description for t in tools)
        return ChatReply(
            answer.text,
            answer.tool_calls,
            answer.tokens_in or estimate_tokens(sent),
            answer.tokens_out or estimate_tokens(answer.text),
            answer.model or self.model,
            answer.stop_reason or ("tool_calls" if answer.tool_calls else "stop"),
        )


def use_tools(*calls: tuple[str, dict[str, Any]], text: str = "") -> ChatReply:
    """A chat answer that calls tools: ``(name, arguments)`` pairs, in order."""
    return ChatReply(
        text,
        tuple(
            ToolCall(f"call_{i}_{name}", name, dict(args), json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ),
    )
