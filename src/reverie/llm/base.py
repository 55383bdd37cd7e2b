"""The one seam between Reverie and a language model (SPEC R8, D3).

A :class:`Provider` takes a system prompt and a short conversation and answers with a
:class:`Completion`: the text, the JSON it holds when a schema was asked for, and the tokens the
call cost. Providers own their transport: timeouts, bounded retries with backoff on 429, 5xx
and lost connections, and the translation of every SDK error into a :class:`ProviderError` at
exactly this boundary. Nothing above ``llm/`` ever sees an SDK exception.

A provider's error message never holds its API key: messages are built here from the status,
the kind of failure and the server's own explanation with every known secret and anything
credential-shaped blanked out (:func:`redact`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit, urlunsplit

from reverie.core.secrets import MIN_SECRET, find_credentials, redact
from reverie.errors import ReverieError

__all__ = [
    "MODEL_BAD_ANSWER",
    "MODEL_UNAVAILABLE",
    "Completion",
    "HTTPProvider",
    "Message",
    "Provider",
    "ProviderError",
    "describe_failure",
    "estimate_tokens",
    "extract_json",
    "mentions_secret",
    "public_url",
    "redact",
]

#: The endpoint could not be used: unreachable, refused the credentials, rate limited or
#: failing after every retry, or the request itself was refused. Nothing was reviewed.
MODEL_UNAVAILABLE = "model_unavailable"
#: The model answered, but not with what was asked (no JSON, or JSON of the wrong shape).
MODEL_BAD_ANSWER = "model_bad_answer"

#: One turn sent to a model: ``{"role": "user" | "assistant", "content": "..."}``.
Message = dict[str, str]


class ProviderError(ReverieError):
    """A model call failed; ``code`` is ``model_unavailable`` or ``model_bad_answer``.

    ``details`` may name the ``provider``, ``model``, HTTP ``status`` and, for a bad answer
    from the model reviewer, what the failed attempt cost (``model_calls``, ``tokens_in``,
    ``tokens_out``) so that a runner can still record it. Never an API key.
    """

    exit_code: ClassVar[int] = 1
    default_code: ClassVar[str] = MODEL_UNAVAILABLE


@dataclass(frozen=True)
class Completion:
    """What a model answered and what it cost."""

    text: str
    #: The JSON value the answer holds, when a schema was asked for and it parsed; else None.
    parsed_json: Any | None
    tokens_in: int
    tokens_out: int
    #: The model that answered, as the endpoint names it.
    model: str
    #: Why the model stopped (``stop``, ``length``, ``tool_use``, ...) when the endpoint says.
    stop_reason: str | None = None


class Provider(Protocol):
    """Anything that can complete a conversation: an HTTP endpoint or a scripted handler."""

    def complete(
        self,
        system: str,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 4096,
        idempotency_key: str | None = None,
    ) -> Completion:
        """Ask the model once (transport retries included) and return its answer.

        ``schema`` asks for a JSON object matching that JSON Schema (structured output where
        the endpoint supports it, instructions and extraction where it does not).
        ``idempotency_key`` is sent where the API accepts one; it is the same for every
        transport retry of this call.

        Raises:
            ProviderError: ``model_unavailable`` when the endpoint cannot answer.
        """
        ...


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token), for budgets and scripted usage."""
    return math.ceil(len(text) / 4)


_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
# How many opening braces to try as the start of an embedded object: bounded, so that text
# full of braces cannot make extraction quadratic.
_MAX_STARTS = 16


def extract_json(text: str) -> Any | None:
    """The JSON value in a model's answer: the whole text, a fenced block, or the first object.

    Servers without structured output (and some models with it) wrap JSON in prose or in a
    Markdown fence; this finds it. Returns None when there is no JSON object or array.
    """
    stripped = text.strip()
    if not stripped:
        return None
    candidates = [stripped, *(m.group(1) for m in _FENCE.finditer(stripped))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    tries = 0
    while start != -1 and tries < _MAX_STARTS:
        tries += 1
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except ValueError:
            start = stripped.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = stripped.find("{", start + 1)
    return None


def mentions_secret(text: str, secrets: Iterable[str | None]) -> bool:
    """Does ``text`` quote a known secret or hold anything credential-shaped?"""
    if any(secret and len(secret) >= MIN_SECRET and secret in text for secret in secrets):
        return True
    return bool(find_credentials(text))


def public_url(url: str) -> str:
    """``url`` without user information (a password may hide there): safe to show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid url>"
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def describe_failure(
    *,
    provider: str,
    model: str,
    where: str,
    status: int | None,
    server_message: str | None,
    secrets: Sequence[str | None],
    retries: int,
    timeout: float,
    timed_out: bool = False,
) -> ProviderError:
    """Turn a failed HTTP exchange into a :class:`ProviderError` that says what to do.

    Shared by the SDK providers so that both speak the same way about the same failure.
    """
    detail = ""
    if server_message:
        clean = " ".join(redact(server_message, secrets).split())
        detail = f" The server said: {clean[:300]}"
    head = f"{provider} model {model!r} at {where}"
    if status is None and timed_out:
        what = (
            f"gave no answer within {timeout:g}s ({retries} retries); a large prompt on a "
            "slow local server may need a longer REVERIE_MODEL_TIMEOUT_SECONDS."
        )
    elif status is None:
        what = (
            f"could not be reached ({retries} retries); check that the server is running "
            "and that the base URL is right."
        )
    elif status in (401, 403):
        what = (
            f"refused the credentials (HTTP {status}); check the API key setting "
            f"({'OPENAI_API_KEY' if provider == 'openai' else 'ANTHROPIC_API_KEY'})."
        )
    elif status == 404:
        what = (
            "does not know this model or path (HTTP 404); check REVERIE_MODEL and the base "
            "URL (an OpenAI-compatible base URL usually ends in /v1)."
        )
    elif status == 429:
        what = (
            f"is rate limited (HTTP 429) after {retries} retries; try again later (review "
            "retries on its next run)."
        )
    elif status >= 500:
        what = (
            f"failed (HTTP {status}) after {retries} retries; try again later (review retries "
            "on its next run)."
        )
    else:
        what = f"refused the request (HTTP {status})."
    return ProviderError(
        f"{head} {what}{detail}",
        code=MODEL_UNAVAILABLE,
        provider=provider,
        model=model,
        status=status,
    )


class HTTPProvider:
    """What the SDK-backed providers share: settings, failure messages, and key hygiene."""

    name: ClassVar[str] = "http"

    def _settle(
        self, model: str, base_url: str, api_key: str | None, timeout: float, max_retries: int
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._secrets = (api_key,)
        self._timeout = timeout
        self._max_retries = max_retries

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={public_url(self.base_url)!r})"
        )

    def _failure(
        self, status: int | None, server_message: str | None, *, timed_out: bool = False
    ) -> ProviderError:
        return describe_failure(
            provider=self.name,
            model=self.model,
            where=public_url(self.base_url),
            status=status,
            server_message=server_message,
            secrets=self._secrets,
            retries=self._max_retries,
            timeout=self._timeout,
            timed_out=timed_out,
        )

    def _cause(self, exc: BaseException) -> BaseException | None:
        """The SDK error to chain, unless its text quotes the key (then nothing is chained)."""
        return None if mentions_secret(str(exc), self._secrets) else exc
