"""A local HTTP server that speaks OpenAI's chat-completions protocol, with scripted answers.

The real ``openai`` SDK talks to it unchanged (``base_url=server.base_url``): bearer-key
checks, ``response_format`` (``json_schema``, ``json_object``, or refused the way servers that
lack them refuse), usage, and errors in OpenAI's shape with ``Retry-After`` headers, so that the
SDK's own retry logic runs for real. It listens on 127.0.0.1 on an ephemeral port, in a thread.

    with FakeOpenAI(api_key="k") as server:
        server.answer({"operations": [], "message": "nothing"})
        server.fail(429, retry_after_ms=10)
        ...
        server.requests  # what the client sent, in order

:class:`FakeHTTPServer` is the protocol-neutral part, shared with the Anthropic fake.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Failure",
    "FakeHTTPServer",
    "FakeOpenAI",
    "Received",
    "Reply",
    "Scripted",
    "ToolUse",
    "chunks",
]


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # parsed JSON, or the raw text when it is not JSON


@dataclass
class Reply:
    """One HTTP answer."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    #: Server-sent events (each a whole ``event:``/``data:`` block): a streamed answer.
    events: list[str] | None = None


@dataclass
class ToolUse:
    """An answer that calls tools: ``(name, arguments)`` pairs, with optional text before.
    ``arguments`` may be a string, sent as is (a model's broken JSON, say)."""

    calls: list[tuple[str, Any]]
    text: str = ""


@dataclass
class Scripted:
    """A successful answer: a JSON value (sent as JSON text, or as a tool call) or raw text."""

    content: Any
    tokens_in: int | None = None
    tokens_out: int | None = None
    stop: str | None = None


@dataclass
class Failure:
    """An error answer; ``retry_after`` (seconds) and ``retry_after_ms`` become headers."""

    status: int
    message: str = "The server had an error while processing your request."
    retry_after: str | None = None
    retry_after_ms: int | None = None
    #: Sent as ``x-should-retry: false``: the SDKs then give up at once.
    final: bool = False


class FakeHTTPServer:
    """A threaded HTTP/1.1 server on 127.0.0.1:0 that hands each request to :meth:`respond`."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.script: list[Scripted | Failure | Callable[[Received], Scripted | Failure]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: Seconds between streamed events.
        self.event_delay = 0.0

    # -- scripting ---------------------------------------------------------------------------

    def answer(
        self,
        content: Any,
        *,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        stop: str | None = None,
    ) -> None:
        """Queue a successful answer."""
        self.script.append(Scripted(content, tokens_in, tokens_out, stop))

    def fail(
        self,
        status: int,
        message: str = "The server had an error while processing your request.",
        *,
        times: int = 1,
        retry_after: str | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        """Queue ``times`` error answers."""
        for _ in range(times):
            self.script.append(Failure(status, message, retry_after, retry_after_ms))

    def next_item(self, request: Received) -> Scripted | Failure:
        """The next scripted answer; a 500 that forbids retries when the script is empty."""
        with self._lock:
            item = self.script.pop(0) if self.script else None
        if item is None:
            return Failure(500, "fake server: no scripted answer left", final=True)
        return item(request) if callable(item) else item

    def respond(self, request: Received) -> Reply:
        """Answer one request (the protocol lives in subclasses)."""
        raise NotImplementedError

    # -- running -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as separate writes: without TCP_NODELAY, Nagle's
            # algorithm and the client's delayed ACK add ~40 ms to every answer.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                self._handle()

            def do_GET(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                received = Received(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                with outer._lock:
                    outer.requests.append(received)
                reply = outer.respond(received)
                if reply.events is not None:
                    self._stream(reply)
                    return
                payload = (
                    reply.body.encode()
                    if isinstance(reply.body, str)
                    else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, reply: Reply) -> None:
                # Server-sent events, one HTTP chunk per event, flushed as it goes, with a
                # pause between events so that a client sees them arrive one by one.
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                for event in reply.events or ():
                    data = event.encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if outer.event_delay:
                        time.sleep(outer.event_delay)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHTTPServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is part of the tests, not an error


def _estimate(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


class FakeOpenAI(FakeHTTPServer):
    """``POST /v1/chat/completions`` as OpenAI (and compatible servers) answer it."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        json_schema: bool = True,
        json_object: bool = True,
        usage: bool = True,
        max_tokens_param: str | None = None,
    ) -> None:
        super().__init__()
        #: The key the server expects; None accepts any (as local servers do).
        self.api_key = api_key
        #: Whether ``response_format`` types are supported (False: refused with HTTP 400).
        self.json_schema = json_schema
        self.json_object = json_object
        #: Whether answers carry ``usage`` (some local servers leave it out).
        self.usage = usage
        #: When set, the only accepted name of the answer-size parameter.
        self.max_tokens_param = max_tokens_param

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def respond(self, request: Received) -> Reply:
        if request.method != "POST" or request.path.split("?")[0] != "/v1/chat/completions":
            return _openai_error(404, f"Unknown path {request.path}", "invalid_request_error")
        given = request.headers.get("authorization", "")
        if self.api_key is not None and given != f"Bearer {self.api_key}":
            # Worst case on purpose: the whole key the client sent, echoed back.
            key = given.removeprefix("Bearer ")
            return _openai_error(
                401,
                f"Incorrect API key provided: {key}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "invalid_request_error",
                code="invalid_api_key",
            )
        body = request.body
        if not isinstance(body, dict) or "model" not in body or "messages" not in body:
            return _openai_error(
                400, "'model' and 'messages' are required", "invalid_request_error"
            )
        refusal = self._refuse_parameters(body)
        if refusal is not None:
            return refusal
        problem = _check_transcript(body)
        if problem is not None:
            return _openai_error(400, problem, "invalid_request_error", param="messages")
        item = self.next_item(request)
        if isinstance(item, Failure):
            return self._failure(item)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = item.stop or "stop"
        if isinstance(item.content, ToolUse):
            message["content"] = item.content.text or None
            message["tool_calls"] = [
                {
                    "id": f"call_{len(self.requests)}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(item.content.calls)
            ]
            finish = item.stop or "tool_calls"
            content = json.dumps(message["tool_calls"])
        else:
            content = item.content if isinstance(item.content, str) else json.dumps(item.content)
            message["content"] = content
        usage = None
        if self.usage:
            tokens_in = item.tokens_in if item.tokens_in is not None else _estimate(body)
            tokens_out = item.tokens_out if item.tokens_out is not None else _estimate(content)
            usage = {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            }
        ident = f"chatcmpl-{len(self.requests)}"
        if body.get("stream"):
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            return Reply(
                200,
                None,
                {"x-request-id": f"req_{len(self.requests)}"},
                events=_stream_events(
                    ident, body["model"], message, finish, usage if include_usage else None
                ),
            )
        answer: dict[str, Any] = {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
        }
        if usage is not None:
            answer["usage"] = usage
        return Reply(200, answer, {"x-request-id": f"req_{len(self.requests)}"})

    def _refuse_parameters(self, body: dict[str, Any]) -> Reply | None:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and not self.json_schema:
            return _openai_error(
                400,
                "Invalid value for 'response_format.type': 'json_schema' is not supported by "
                "this server; use 'json_object' or 'text'.",
                "invalid_request_error",
                param="response_format",
            )
        if fmt == "json_object" and not self.json_object:
            return _openai_error(
                400,
                "Invalid value for 'response_format.type': only 'text' is supported.",
                "invalid_request_error",
                param="response_format",
            )
        if self.max_tokens_param == "max_completion_tokens" and "max_tokens" in body:
            return _openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                "invalid_request_error",
                param="max_tokens",
            )
        if self.max_tokens_param == "max_tokens" and "max_completion_tokens" in body:
            return _openai_error(
                400,
                "Unrecognized request argument supplied: max_completion_tokens",
                "invalid_request_error",
                param="max_completion_tokens",
            )
        return None

    def _failure(self, item: Failure) -> Reply:
        kind = {429: "rate_limit_exceeded", 401: "invalid_request_error"}.get(
            item.status, "server_error" if item.status >= 500 else "invalid_request_error"
        )
        reply = _openai_error(item.status, item.message, kind)
        if item.retry_after is not None:
            reply.headers["Retry-After"] = item.retry_after
        if item.retry_after_ms is not None:
            reply.headers["retry-after-ms"] = str(item.retry_after_ms)
        if item.final:
            reply.headers["x-should-retry"] = "false"
        return reply


def _openai_error(
    status: int,
    message: str,
    kind: str,
    *,
    param: str | None = None,
    code: str | None = None,
) -> Reply:
    return Reply(
        status,
        {"error": {"message": message, "type": kind, "param": param, "code": code}},
    )


def chunks(text: str, size: int = 7) -> list[str]:
    """``text`` in pieces of ``size`` characters, as a streaming server sends it."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _stream_events(
    ident: str,
    model: str,
    message: dict[str, Any],
    finish: str,
    usage: dict[str, int] | None,
) -> list[str]:
    """A chat completion as ``chat.completion.chunk`` events: the role, the text in pieces,
    each tool call's name then its arguments in pieces, the finish reason, then usage (when
    asked for) in a chunk without choices, and ``[DONE]``."""

    def event(choices: list[Any], extra: dict[str, Any] | None = None) -> str:
        chunk = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            **(extra or {}),
        }
        return f"data: {json.dumps(chunk)}\n\n"

    def delta(d: dict[str, Any], finish_reason: str | None = None) -> list[Any]:
        return [{"index": 0, "delta": d, "finish_reason": finish_reason, "logprobs": None}]

    out = [event(delta({"role": "assistant", "content": ""}))]
    if message.get("content"):
        out += [event(delta({"content": piece})) for piece in chunks(message["content"])]
    for i, call in enumerate(message.get("tool_calls") or ()):
        head = {"index": i, "id": call["id"], "type": "function"}
        head["function"] = {"name": call["function"]["name"], "arguments": ""}
        out.append(event(delta({"tool_calls": [head]})))
        for piece in chunks(call["function"]["arguments"], 9):
            part = {"index": i, "function": {"arguments": piece}}
            out.append(event(delta({"tool_calls": [part]})))
    out.append(event(delta({}, finish)))
    if usage is not None:
        out.append(event([], {"usage": usage}))
    out.append("data: [DONE]\n\n")
    return out


def _check_transcript(body: dict[str, Any]) -> str | None:
    """What OpenAI says of a transcript whose tool messages answer no earlier tool call, or
    whose tools are not function specs."""
    for tool in body.get("tools") or ():
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not (isinstance(fn, dict) and tool.get("type") == "function" and fn.get("name")):
            return "Invalid 'tools': each tool is {'type': 'function', 'function': {...}}."
        if not isinstance(fn.get("parameters", {}), dict):
            return f"Invalid schema for function '{fn['name']}'."
    open_calls: set[str] = set()
    for message in body.get("messages") or ():
        if message.get("role") == "assistant":
            open_calls = {c["id"] for c in message.get("tool_calls") or ()}
        elif message.get("role") == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'."
                )
        else:
            open_calls = set()
    return None
