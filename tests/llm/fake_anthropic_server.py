"""A local HTTP server that speaks Anthropic's Messages API, with scripted answers.

The real ``anthropic`` SDK talks to it unchanged (``base_url=server.base_url``): ``x-api-key``
checks, forced tool use (a JSON answer comes back as the ``tool_use`` block of the tool that
``tool_choice`` names), usage, and errors in Anthropic's shape (``rate_limit_error``,
``overloaded_error`` on 529, ...) with ``retry-after`` headers for the SDK's own retries. An
agent's turn: ``tools`` offered, :class:`ToolUse` answers as ``tool_use`` blocks, transcripts
checked the way the API checks them (alternating roles, each ``tool_result`` answering a
``tool_use`` of the turn before), and ``stream: true`` answered with the Messages streaming
events.
"""

from __future__ import annotations

import json
from typing import Any

from tests.llm.fake_openai_server import Failure, FakeHTTPServer, Received, Reply, ToolUse, chunks

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
        problem = _check_transcript(body)
        if problem is not None:
            return _error(400, problem)
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
        if isinstance(item.content, ToolUse):
            content = [{"type": "text", "text": item.content.text}] if item.content.text else []
            content += [
                {
                    "type": "tool_use",
                    "id": f"toolu_{len(self.requests):04d}_{i}",
                    "name": name,
                    "input": args,
                }
                for i, (name, args) in enumerate(item.content.calls)
            ]
            stop = "tool_use"
        elif forced and not isinstance(item.content, str):
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
        message = {
            "id": f"msg_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": item.stop or stop,
            "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
        headers = {"request-id": f"req_{len(self.requests):04d}"}
        if body.get("stream"):
            return Reply(200, None, headers, events=_stream_events(message))
        return Reply(200, message, headers)


def _sse(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def _stream_events(message: dict[str, Any]) -> list[str]:
    """A message as the Messages API streams it: ``message_start``, then per block a start,
    deltas (``text_delta`` or ``input_json_delta`` pieces) and a stop, a ``ping`` on the
    way, ``message_delta`` with the stop reason and output tokens, ``message_stop``."""
    usage = message["usage"]
    head = {**message, "content": [], "stop_reason": None}
    head["usage"] = {"input_tokens": usage["input_tokens"], "output_tokens": 1}
    out = [_sse("message_start", {"message": head}), _sse("ping", {})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.append(
                _sse(
                    "content_block_start",
                    {"index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            for piece in chunks(block["text"]):
                out.append(
                    _sse(
                        "content_block_delta",
                        {"index": i, "delta": {"type": "text_delta", "text": piece}},
                    )
                )
        else:
            start = {**block, "input": {}}
            out.append(_sse("content_block_start", {"index": i, "content_block": start}))
            for piece in chunks(json.dumps(block["input"]), 9):
                delta = {"type": "input_json_delta", "partial_json": piece}
                out.append(_sse("content_block_delta", {"index": i, "delta": delta}))
        out.append(_sse("content_block_stop", {"index": i}))
    out.append(
        _sse(
            "message_delta",
            {
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    out.append(_sse("message_stop", {}))
    return out


def _check_transcript(body: dict[str, Any]) -> str | None:
    """The API's own checks on a transcript: it starts with the user, roles alternate, and
    every ``tool_result`` answers a ``tool_use`` of the assistant turn just before."""
    previous_uses: set[str] = set()
    for i, message in enumerate(body.get("messages") or ()):
        role = message.get("role")
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if i > 0 and role == body["messages"][i - 1].get("role"):
            return 'messages: roles must alternate between "user" and "assistant"'
        blocks = message.get("content")
        blocks = blocks if isinstance(blocks, list) else [{"type": "text", "text": blocks}]
        for block in blocks:
            if block.get("type") == "text" and not block.get("text"):
                return f"messages.{i}: text content blocks must be non-empty"
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous_uses:
                return (
                    f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        previous_uses = (
            {b["id"] for b in blocks if b.get("type") == "tool_use"}
            if role == "assistant"
            else set()
        )
    for tool in body.get("tools") or ():
        if not tool.get("name") or not isinstance(tool.get("input_schema"), dict):
            return "tools: each tool needs a name and an input_schema"
    return None


def _error(status: int, message: str) -> Reply:
    kind = _ERROR_TYPES.get(status, "api_error")
    return Reply(
        status,
        {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_x"},
        {"request-id": "req_x"},
    )
