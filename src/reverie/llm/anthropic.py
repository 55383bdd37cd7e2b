"""Anthropic's Messages API, through the official ``anthropic`` SDK.

``REVERIE_MODEL=anthropic:NAME``; ``ANTHROPIC_API_KEY`` and, for a proxy or gateway,
``ANTHROPIC_BASE_URL``. Structured output is a tool: the schema becomes the ``input_schema``
of one tool, ``tool_choice`` forces the model to call it, and the answer is the ``input`` of the
``tool_use`` block. A gateway that ignores ``tool_choice`` and answers in text still works: the
JSON is then extracted from the text.

Transport retries are the SDK's: ``max_retries`` more attempts on 408, 409, 429, 5xx (529
"overloaded" included) and lost connections, with exponential backoff or the server's
``retry-after``. The Messages API documents no idempotency key, so none is sent: a repeated
call costs tokens but cannot write anything (reviewers never write).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .base import (
    MODEL_BAD_ANSWER,
    MODEL_UNAVAILABLE,
    Completion,
    HTTPProvider,
    Message,
    ProviderError,
    extract_json,
    public_url,
    redact,
)
from .chat import ChatMessage, ChatReply, TextSink, ToolCall, ToolSpec

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message as AnthropicMessage
    from anthropic.types import MessageParam

__all__ = ["DEFAULT_BASE_URL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
# The one tool a structured answer is given through.
TOOL_NAME = "record_answer"
_PLACEHOLDER_KEY = "no-key-configured"
_MISSING_SDK = "The Anthropic provider needs the anthropic package: pip install 'reverie[llm]'."


class AnthropicProvider(HTTPProvider):
    """A :class:`~reverie.llm.base.Provider` for Anthropic's Messages API."""

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        """Build the SDK client; no request is made until :meth:`complete`.

        The key is always passed explicitly (a placeholder when none is configured), so the
        SDK never looks for credentials of its own in the environment or on disk.

        Raises:
            ProviderError: ``model_unavailable`` when the ``anthropic`` package is missing or
                rejects the settings.
        """
        try:
            import anthropic
        except ImportError as exc:
            raise ProviderError(_MISSING_SDK, code=MODEL_UNAVAILABLE, provider=self.name) from exc
        self._settle(model, base_url or DEFAULT_BASE_URL, api_key, timeout, max_retries)
        try:
            self._client = anthropic.Anthropic(
                api_key=api_key or _PLACEHOLDER_KEY,
                base_url=self.base_url,
                timeout=timeout,
                max_retries=max_retries,
            )
        except (anthropic.AnthropicError, ValueError, TypeError) as exc:
            raise ProviderError(
                f"The anthropic client refused its settings: {redact(str(exc), self._secrets)}",
                code=MODEL_UNAVAILABLE,
                provider=self.name,
                model=model,
            ) from None

    def complete(
        self,
        system: str,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 4096,
        idempotency_key: str | None = None,
    ) -> Completion:
        """Ask the Messages API once (SDK retries included).

        ``idempotency_key`` is accepted for the Protocol and not sent (see the module).

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer;
                ``model_bad_answer`` when the response is of a shape this client cannot read.
        """
        del idempotency_key
        chat: list[MessageParam] = []
        for message in messages:
            if message["role"] == "assistant":
                chat.append({"role": "assistant", "content": message["content"]})
            else:
                chat.append({"role": "user", "content": message["content"]})
        options: dict[str, Any] = {}
        if schema is not None:
            options["tools"] = [
                {
                    "name": TOOL_NAME,
                    "description": "Record your answer. Call this exactly once.",
                    "input_schema": schema,
                }
            ]
            options["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        response = self._call(
            lambda: self._client.messages.create(
                model=self.model, system=system, messages=chat, max_tokens=max_tokens, **options
            )
        )
        return self._completion(response, schema is not None)

    def chat(
        self,
        system: str,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        on_text: TextSink | None = None,
    ) -> ChatReply:
        """One step of an agent's turn: text and ``tool_use`` blocks, streamed through the
        SDK's message stream when ``on_text`` is given.

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer (also when
                the link breaks mid-stream); ``model_bad_answer`` for an unreadable answer.
        """
        wire = _wire_messages(messages)
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]

        def ask() -> AnthropicMessage:
            if on_text is None:
                answer: AnthropicMessage = self._client.messages.create(
                    model=self.model,
                    system=system,
                    messages=wire,
                    max_tokens=max_tokens,
                    **options,
                )
                return answer
            with self._client.messages.stream(
                model=self.model, system=system, messages=wire, max_tokens=max_tokens, **options
            ) as stream:
                for text in stream.text_stream:
                    on_text(text)
                return stream.get_final_message()

        response = self._call(ask)
        try:
            text = "".join(b.text for b in response.content if b.type == "text")
            calls = tuple(
                # An input that is no object (a gateway's string) is no arguments: the tool
                # says so to the model, as for an OpenAI call whose JSON is broken.
                ToolCall(
                    b.id,
                    b.name,
                    dict(b.input) if isinstance(b.input, dict) else None,
                    json.dumps(b.input, ensure_ascii=False),
                )
                for b in response.content
                if b.type == "tool_use"
            )
        except (AttributeError, TypeError) as exc:
            raise self._bad_shape(exc) from None
        tokens_in, tokens_out = self._tokens(response)
        return ChatReply(
            text,
            calls,
            tokens_in,
            tokens_out,
            response.model or self.model,
            response.stop_reason,
        )

    def _call(self, ask: Callable[[], AnthropicMessage]) -> AnthropicMessage:
        """Run one request; SDK errors become :class:`ProviderError` here and nowhere else."""
        import anthropic

        try:
            return ask()
        except anthropic.APIStatusError as exc:
            raise self._failure(exc.status_code, _said(exc)) from self._cause(exc)
        except anthropic.APITimeoutError as exc:
            raise self._failure(None, None, timed_out=True) from self._cause(exc)
        except anthropic.APIConnectionError as exc:
            raise self._failure(None, None) from self._cause(exc)
        except anthropic.AnthropicError as exc:
            raise self._failure(None, str(exc)) from self._cause(exc)

    def _tokens(self, response: AnthropicMessage) -> tuple[int, int]:
        try:
            usage = response.usage
            tokens_in = (
                usage.input_tokens
                + (getattr(usage, "cache_creation_input_tokens", None) or 0)
                + (getattr(usage, "cache_read_input_tokens", None) or 0)
            )
            return tokens_in, usage.output_tokens
        except (AttributeError, TypeError) as exc:
            raise self._bad_shape(exc) from None

    def _bad_shape(self, exc: Exception) -> ProviderError:
        return ProviderError(
            f"anthropic model {self.model!r} at {public_url(self.base_url)} answered in a "
            f"shape this client does not know ({type(exc).__name__}).",
            code=MODEL_BAD_ANSWER,
            provider=self.name,
            model=self.model,
        )

    def _completion(self, response: AnthropicMessage, structured: bool) -> Completion:
        texts: list[str] = []
        tool_input: dict[str, Any] | None = None
        try:
            for block in response.content:
                if block.type == "tool_use" and block.name == TOOL_NAME and tool_input is None:
                    tool_input = dict(block.input)
                elif block.type == "text":
                    texts.append(block.text)
        except (AttributeError, TypeError) as exc:
            raise self._bad_shape(exc) from None
        tokens_in, tokens_out = self._tokens(response)
        if tool_input is not None:
            text = json.dumps(tool_input, ensure_ascii=False)
            parsed: Any | None = tool_input
        else:
            text = "".join(texts)
            parsed = extract_json(text) if structured else None
        return Completion(
            text=text,
            parsed_json=parsed,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            model=response.model or self.model,
            stop_reason=response.stop_reason,
        )


def _said(exc: anthropic.APIStatusError) -> str:
    """The server's own explanation: ``error.message`` of the body, else the SDK's text."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return exc.message


def _wire_messages(messages: Sequence[ChatMessage]) -> list[MessageParam]:
    """A transcript as Messages API turns: the assistant's tool calls as ``tool_use`` blocks,
    results as ``tool_result`` blocks of the next user turn; consecutive messages of one role
    share a turn, as the API wants roles to alternate."""
    wire: list[Any] = []
    for m in messages:
        if m.role == "tool":
            role = "user"
            blocks: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            ]
        elif m.role == "assistant":
            role = "assistant"
            blocks = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}}
                for c in m.tool_calls
            ]
        else:
            role = "user"
            blocks = [{"type": "text", "text": m.content or " "}]
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire
