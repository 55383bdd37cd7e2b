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
from typing import TYPE_CHECKING, Any
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

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

__all__ = ["DEFAULT_BASE_URL", "OpenAICompatProvider"]

log = logging.getLogger(__name__)

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
        import openai

        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        while True:
            # Only the parameters in use are sent (a server may refuse one it does not know),
            # and none that older SDK versions lack a sentinel for.
            options: dict[str, Any] = {self._token_param: max_tokens}
            response_format = self._response_format(schema)
            if response_format is not None:
                options["response_format"] = response_format
            try:
                response = self._client.chat.completions.create(
                    model=self.model,
                    messages=self._chat(system, messages, schema),
                    extra_headers=headers,
                    **options,
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if self._adapt(exc, schema is not None):
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
            return self._completion(response, schema is not None, system, messages)

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
            raise ProviderError(
                f"openai model {self.model!r} at {public_url(self.base_url)} answered without "
                "a message.",
                code=MODEL_BAD_ANSWER,
                provider=self.name,
                model=self.model,
            ) from None
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
