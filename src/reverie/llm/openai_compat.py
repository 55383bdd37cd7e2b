"""Any OpenAI-compatible chat-completions endpoint, through the official ``openai`` SDK.

This covers OpenAI itself and local servers that speak the same protocol (Ollama, vLLM,
llama.cpp's server, LM Studio): ``REVERIE_MODEL=openai:NAME`` with ``OPENAI_BASE_URL`` pointing
at the server. A local server needs no key; the SDK insists on one, so a placeholder is sent.

Structured output, from best to most widely supported:

1. ``response_format: {"type": "json_schema", ...}`` (strict when the schema allows it);
2. ``response_format: {"type": "json_object"}`` with the schema in the system prompt;
3. no ``response_format``, the schema in the system prompt, and the JSON extracted from the
   text (:func:`~reverie.llm.base.extract_json`).

A server that does not support a mode says so with HTTP 400 or 422 naming
``response_format``/``json_schema`` (or ``json_object``); the provider then steps down one
mode, retries at once, and keeps the lower mode for the rest of its life, so the probe costs
one refused request per provider, not one per call. The same kind of answer about
``max_tokens``/``max_completion_tokens`` (OpenAI's reasoning models want the latter, many local
servers only know the former) switches the parameter. Every switch happens at most once, so a
call makes at most four requests before it answers or fails.

Transport retries are the SDK's: ``max_retries`` more attempts on 408, 409, 429, 5xx and lost
connections, with exponential backoff (0.5 s doubling, at most 8 s, with jitter) or the
server's ``Retry-After``/``retry-after-ms`` when it gives one (up to two minutes).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .base import (
    MODEL_BAD_ANSWER,
    MODEL_UNAVAILABLE,
    Completion,
    HTTPProvider,
    Message,
    ProviderError,
    estimate_tokens,
    extract_json,
    public_url,
    redact,
)
from .chat import ChatMessage, ChatReply, TextSink, ToolCall, ToolSpec, parse_arguments

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

__all__ = ["DEFAULT_BASE_URL", "OpenAICompatProvider"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Sent when no key is configured: local servers ignore it, and a hosted endpoint answers 401,
# which becomes an error that names OPENAI_API_KEY.
_PLACEHOLDER_KEY = "no-key-configured"
_MISSING_SDK = (
    "The OpenAI-compatible provider needs the openai package: pip install 'reverie[llm]'."
)
# Words of a 400/422 answer that mean "this server does not do that response_format".
_SCHEMA_WORDS = ("response_format", "json_schema", "json schema", "structured output")
_OBJECT_WORDS = ("response_format", "json_object", "json mode")


class OpenAICompatProvider(HTTPProvider):
    """A :class:`~reverie.llm.base.Provider` for any OpenAI-compatible endpoint."""

    name = "openai"

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

        Raises:
            ProviderError: ``model_unavailable`` when the ``openai`` package is missing or
                rejects the settings.
        """
        try:
            import openai
        except ImportError as exc:
            raise ProviderError(_MISSING_SDK, code=MODEL_UNAVAILABLE, provider=self.name) from exc
        self._settle(model, base_url or DEFAULT_BASE_URL, api_key, timeout, max_retries)
        try:
            self._client = openai.OpenAI(
                api_key=api_key or _PLACEHOLDER_KEY,
                base_url=self.base_url,
                timeout=timeout,
                max_retries=max_retries,
            )
        except openai.OpenAIError as exc:
            raise ProviderError(
                f"The openai client refused its settings: {redact(str(exc), self._secrets)}",
                code=MODEL_UNAVAILABLE,
                provider=self.name,
                model=model,
            ) from None
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        #: How structured output is asked for: json_schema, json_object or prompt.
        self.output_mode = "json_schema"
        self._token_param = "max_completion_tokens" if official else "max_tokens"
        self._tried_params = {self._token_param}
        #: Whether to ask for usage in a stream (dropped if the server refuses the option).
        self._stream_usage = True

    def complete(
        self,
        system: str,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 4096,
        idempotency_key: str | None = None,
    ) -> Completion:
        """Ask the endpoint once (SDK retries included); see the module for the details.

        The idempotency key goes out as an ``Idempotency-Key`` header: the SDK sends extra
        headers unchanged on every retry of the request, and servers that do not know the
        header ignore it.

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer (HTTP errors
                after retries, no connection, timeout); ``model_bad_answer`` when the response
                holds no message at all.
        """
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None

        def ask() -> Completion:
            # Only the parameters in use are sent (a server may refuse one it does not know),
            # and none that older SDK versions lack a sentinel for.
            options: dict[str, Any] = {self._token_param: max_tokens}
            response_format = self._response_format(schema)
            if response_format is not None:
                options["response_format"] = response_format
            response = self._client.chat.completions.create(
                model=self.model,
                messages=self._chat(system, messages, schema),
                extra_headers=headers,
                **options,
            )
            return self._completion(response, schema is not None, system, messages)

        return self._call(ask, structured=schema is not None)

    def chat(
        self,
        system: str,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        on_text: TextSink | None = None,
    ) -> ChatReply:
        """One step of an agent's turn: text and tool calls, streamed when ``on_text`` is
        given (``stream: true``, with usage in the last chunk where the server sends it).

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer (also when
                the link breaks mid-stream); ``model_bad_answer`` when the answer holds no
                message.
        """
        wire = _wire_messages(system, messages)
        specs = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in tools
        ]

        def ask() -> ChatReply:
            options: dict[str, Any] = {self._token_param: max_tokens}
            if specs:
                options["tools"] = specs
            if on_text is None:
                response = self._client.chat.completions.create(
                    model=self.model, messages=wire, **options
                )
                return self._chat_reply(response, wire)
            if self._stream_usage:
                options["stream_options"] = {"include_usage": True}
            stream = self._client.chat.completions.create(
                model=self.model, messages=wire, stream=True, **options
            )
            return self._collect(stream, on_text, wire)

        return self._call(ask, structured=False)

    def _call(self, ask: Callable[[], _T], *, structured: bool) -> _T:
        """Run ``ask`` until the server takes its parameters; SDK errors become
        :class:`ProviderError` here and nowhere else."""
        import openai

        while True:
            try:
                return ask()
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if self._adapt(exc, structured):
                    continue
                raise self._failure(exc.status_code, _said(exc)) from self._cause(exc)
            except openai.APIStatusError as exc:
                raise self._failure(exc.status_code, _said(exc)) from self._cause(exc)
            except openai.APITimeoutError as exc:
                raise self._failure(None, None, timed_out=True) from self._cause(exc)
            except openai.APIConnectionError as exc:
                raise self._failure(None, None) from self._cause(exc)
            except openai.OpenAIError as exc:
                raise self._failure(None, str(exc)) from self._cause(exc)

    def _chat_reply(self, response: ChatCompletion, wire: list[Any]) -> ChatReply:
        try:
            choice = response.choices[0]
            text = choice.message.content or choice.message.refusal or ""
            calls = tuple(
                ToolCall(
                    c.id,
                    c.function.name,
                    parse_arguments(c.function.arguments),
                    c.function.arguments or "",
                )
                for c in (choice.message.tool_calls or ())
                if c.type == "function"
            )
            stop = str(choice.finish_reason) if choice.finish_reason else None
        except (AttributeError, IndexError, TypeError):
            raise self._bad_answer() from None
        tokens_in, tokens_out = self._usage(response.usage, wire, text, calls)
        return ChatReply(text, calls, tokens_in, tokens_out, response.model or self.model, stop)

    def _collect(self, stream: Any, on_text: TextSink, wire: list[Any]) -> ChatReply:
        """Read a stream of chunks: text goes to ``on_text`` at once; tool calls arrive in
        pieces keyed by their index and are put together at the end."""
        parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = None
        model = ""
        stop: str | None = None
        try:
            for chunk in stream:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        parts.append(delta.content)
                        on_text(delta.content)
                    for piece in delta.tool_calls or ():
                        call = calls.setdefault(piece.index, {"id": "", "name": "", "args": ""})
                        call["id"] = piece.id or call["id"]
                        if piece.function is not None:
                            call["name"] += piece.function.name or ""
                            call["args"] += piece.function.arguments or ""
                    if choice.finish_reason:
                        stop = str(choice.finish_reason)
        except (AttributeError, TypeError):
            raise self._bad_answer() from None
        text = "".join(parts)
        tool_calls = tuple(
            ToolCall(c["id"] or f"call_{i}", c["name"], parse_arguments(c["args"]), c["args"])
            for i, c in sorted(calls.items())
        )
        tokens_in, tokens_out = self._usage(usage, wire, text, tool_calls)
        return ChatReply(text, tool_calls, tokens_in, tokens_out, model or self.model, stop)

    def _usage(
        self, usage: Any, wire: list[Any], text: str, calls: Sequence[ToolCall]
    ) -> tuple[int, int]:
        if usage is not None:
            return int(usage.prompt_tokens), int(usage.completion_tokens)
        # Some local servers leave usage out: estimate, so budgets still count something.
        sent = json.dumps(wire, ensure_ascii=False)
        return estimate_tokens(sent), estimate_tokens(text + "".join(c.raw for c in calls))

    def _bad_answer(self) -> ProviderError:
        return ProviderError(
            f"openai model {self.model!r} at {public_url(self.base_url)} answered without "
            "a message.",
            code=MODEL_BAD_ANSWER,
            provider=self.name,
            model=self.model,
        )

    def _chat(
        self, system: str, messages: list[Message], schema: dict[str, Any] | None
    ) -> list[ChatCompletionMessageParam]:
        if schema is not None and self.output_mode != "json_schema":
            system = (
                f"{system}\n\nAnswer with one JSON object and nothing else. It must match this "
                f"JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}"
            )
        chat: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
        for message in messages:
            if message["role"] == "assistant":
                chat.append({"role": "assistant", "content": message["content"]})
            else:
                chat.append({"role": "user", "content": message["content"]})
        return chat

    def _response_format(self, schema: dict[str, Any] | None) -> ResponseFormat | None:
        if schema is None or self.output_mode == "prompt":
            return None
        if self.output_mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": _strict_ready(schema)},
        }

    def _adapt(self, exc: openai.APIStatusError, structured: bool) -> bool:
        """Step down to what the server supports, once per kind; False when nothing applies."""
        said = f"{_said(exc)} {getattr(exc, 'param', None) or ''}".lower()
        if "stream_options" in said and self._stream_usage:
            log.info("%r: no stream_options; streaming without usage", self)
            self._stream_usage = False
            return True
        if "max_completion_tokens" in said:
            other = (
                "max_tokens"
                if self._token_param == "max_completion_tokens"
                else ("max_completion_tokens")
            )
            if other not in self._tried_params:
                log.info("%r: the server wants %s; switching", self, other)
                self._token_param = other
                self._tried_params.add(other)
                return True
        if structured and self.output_mode == "json_schema" and _says(said, _SCHEMA_WORDS):
            log.info("%r: no json_schema response_format; trying json_object", self)
            self.output_mode = "json_object"
            return True
        if structured and self.output_mode == "json_object" and _says(said, _OBJECT_WORDS):
            log.info("%r: no json_object response_format; asking in the prompt", self)
            self.output_mode = "prompt"
            return True
        return False

    def _completion(
        self, response: ChatCompletion, structured: bool, system: str, messages: list[Message]
    ) -> Completion:
        try:
            choice = response.choices[0]
            text = choice.message.content or choice.message.refusal or ""
            stop = str(choice.finish_reason) if choice.finish_reason else None
        except (AttributeError, IndexError, TypeError):
            raise self._bad_answer() from None
        usage = response.usage
        if usage is not None:
            tokens_in, tokens_out = usage.prompt_tokens, usage.completion_tokens
        else:
            # Some local servers leave usage out: estimate, so budgets still count something.
            sent = system + "".join(m["content"] for m in messages)
            tokens_in, tokens_out = estimate_tokens(sent), estimate_tokens(text)
        return Completion(
            text=text,
            parsed_json=extract_json(text) if structured else None,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            model=response.model or self.model,
            stop_reason=stop,
        )


def _said(exc: openai.APIStatusError) -> str:
    """The server's own explanation: ``error.message`` of the body, else the SDK's text."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


def _says(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def _strict_ready(schema: Any) -> bool:
    """Can OpenAI's strict mode take this schema: every object closed, every property required?"""
    if isinstance(schema, list):
        return all(_strict_ready(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    properties = schema.get("properties")
    if isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
    return all(_strict_ready(value) for value in schema.values())


def _wire_messages(system: str, messages: Sequence[ChatMessage]) -> list[Any]:
    """A transcript in the chat-completions format: assistant tool calls as ``tool_calls``,
    results as ``tool`` messages that name the call they answer."""
    wire: list[Any] = [{"role": "system", "content": system}]
    for m in messages:
        if m.role == "tool":
            wire.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": _arguments_text(c),
                            },
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        else:
            wire.append({"role": m.role, "content": m.content})
    return wire


def _arguments_text(call: ToolCall) -> str:
    # The model's own text when it was valid JSON; broken arguments go back as {} (the tool's
    # answer already told the model what was wrong with them).
    if call.arguments is not None and call.raw.strip():
        return call.raw
    return json.dumps(call.arguments or {}, ensure_ascii=False)
