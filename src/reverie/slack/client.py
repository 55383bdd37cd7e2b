"""The Slack Web API client, and the one place where its errors become Reverie's.

``slack_sdk``'s ``WebClient`` is built from the settings (``SLACK_BOT_TOKEN`` and
``REVERIE_SLACK_API_URL``, so a local server can stand in for Slack), with the SDK's own retry
handlers for rate limits and lost connections. Every call goes through :func:`call`, which
translates ``slack_sdk``'s errors into :class:`SlackError` with Slack's error code and never
the token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)

from reverie.config import Settings
from reverie.errors import RefusedInput, ReverieError

__all__ = ["TRANSIENT", "SlackError", "call", "require", "web_client"]

#: Slack error codes worth trying again later; any other refusal is final.
TRANSIENT = frozenset(
    {
        "ratelimited",
        "rate_limited",
        "service_unavailable",
        "fatal_error",
        "internal_error",
        "request_timeout",
        "unreachable",
    }
)


class SlackError(ReverieError):
    """Slack refused a call or could not be reached; ``code`` is Slack's error code
    (``channel_not_found``, ``ratelimited``, ...) or ``unreachable``."""

    exit_code: ClassVar[int] = 1
    default_code: ClassVar[str] = "unreachable"

    @property
    def transient(self) -> bool:
        """Whether trying again later may succeed."""
        return self.code in TRANSIENT


def web_client(settings: Settings) -> WebClient:
    """A ``WebClient`` for the bot token, speaking to ``settings.slack_api_url``.

    Raises:
        RefusedInput: ``slack_not_configured`` when ``SLACK_BOT_TOKEN`` is unset.
    """
    token = require(settings.slack_bot_token, "SLACK_BOT_TOKEN")
    base = settings.slack_api_url.rstrip("/") + "/"
    return WebClient(
        token=token,
        base_url=base,
        timeout=10,
        retry_handlers=[
            ConnectionErrorRetryHandler(),
            RateLimitErrorRetryHandler(max_retry_count=2),
        ],
    )


def require(value: str | None, variable: str) -> str:
    """A Slack setting that must be set.

    Raises:
        RefusedInput: ``slack_not_configured``, naming the variable.
    """
    if not value:
        raise RefusedInput(
            f"Slack is not configured: set {variable} (see the README's Slack section for the "
            "app manifest and the settings).",
            code="slack_not_configured",
            setting=variable,
        )
    return value


def call(method: str, fn: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
    """Call one Web API method (``fn`` is the client's method) and return its data.

    Raises:
        SlackError: Slack answered ``ok: false`` (its error code), or could not be reached.
    """
    try:
        response = fn(**kwargs)
    except SlackApiError as exc:
        code = str(exc.response.get("error") or "unknown_error")
        raise SlackError(f"Slack refused {method}: {code}.", code=code, method=method) from None
    except (SlackClientError, OSError) as exc:
        raise SlackError(
            f"Slack could not be reached for {method} ({type(exc).__name__}).",
            code="unreachable",
            method=method,
        ) from None
    data = response.data
    return data if isinstance(data, dict) else {}
