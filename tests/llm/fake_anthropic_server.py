"""A local HTTP server that speaks Anthropic's Messages API, with scripted answers.

The real ``anthropic`` SDK talks to it unchanged (``base_url=server.base_url``): ``x-api-key``
checks, forced tool use (a JSON answer comes back as the ``tool_use`` block of the tool that
``tool_choice`` names), usage, and errors in Anthropic's shape (``rate_limit_error``,
``overloaded_error`` on 529, ...) with ``retry-after`` headers for the SDK's own retries.
"""

from __future__ import annotations

import json
from typing import Any

from tests.llm.fake_openai_server import Failure, FakeHTTPServer, Received, Reply

__all__ = ["FakeAnthropic"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeHTTPServer):
    """``POST /v1/messages`` as Anthropic answers it."""

    def __init__(self, *, api_key: str | None = None, honor_tool_choice: bool = True) -> None:
        super().__init__()
        self.api_key = api_key
        #: False plays a gateway that ignores tools and answers in text.
        self.honor_tool_choice = honor_tool_choice

    @property
    def base_url(self) -> str:
        return self.origin

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def respond(self, request: Received) -> Reply:
        if request.method != "POST" or request.path.split("?")[0] != "/v1/messages":
            return _error(404, f"Not found: {request.path}")
        if "anthropic-version" not in request.headers:
            return _error(400, "anthropic-version: header is required")
        # Older SDKs send x-api-key, newer ones a bearer token: the API takes either.
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        given = request.headers.get("x-api-key") or bearer
        if self.api_key is not None and given != self.api_key:
            return _error(401, f"invalid x-api-key: {given}")
        body = request.body
        required = ("model", "messages", "max_tokens")
        if not isinstance(body, dict) or any(name not in body for name in required):
            return _error(400, "model, messages and max_tokens: field required")
        item = self.next_item(request)
        if isinstance(item, Failure):
            reply = _error(item.status, item.message)
            if item.retry_after is not None:
                reply.headers["retry-after"] = item.retry_after
            if item.retry_after_ms is not None:
                reply.headers["retry-after-ms"] = str(item.retry_after_ms)
            if item.final:
                reply.headers["x-should-retry"] = "false"
            return reply
        forced = (body.get("tool_choice") or {}).get("name") if self.honor_tool_choice else None
        content: list[dict[str, Any]]
        if forced and not isinstance(item.content, str):
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{len(self.requests):04d}",
                    "name": forced,
                    "input": item.content,
                }
            ]
            stop = "tool_use"
        else:
            text = item.content if isinstance(item.content, str) else json.dumps(item.content)
            content = [{"type": "text", "text": text}]
            stop = "end_turn"
        tokens_in = item.tokens_in if item.tokens_in is not None else len(json.dumps(body)) // 4
        tokens_out = (
            item.tokens_out if item.tokens_out is not None else len(json.dumps(content)) // 4
        )
        return Reply(
            200,
            {
                "id": f"msg_{len(self.requests):04d}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": item.stop or stop,
                "stop_sequence": None,
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
            },
            {"request-id": f"req_{len(self.requests):04d}"},
        )


def _error(status: int, message: str) -> Reply:
    kind = _ERROR_TYPES.get(status, "api_error")
    return Reply(
        status,
        {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_x"},
        {"request-id": "req_x"},
    )
