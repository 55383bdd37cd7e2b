"""Model providers (SPEC R8, D3) against local servers that speak the real protocols.

The real ``openai`` and ``anthropic`` SDK clients run unchanged against
:mod:`tests.llm.fake_openai_server` and :mod:`tests.llm.fake_anthropic_server`: retries,
``Retry-After``, usage, structured output and error translation are exercised for real.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie.config import Settings
from reverie.core.secrets import redact
from reverie.errors import RefusedInput
from reverie.llm import (
    MODEL_UNAVAILABLE,
    Completion,
    ProviderError,
    ScriptedCall,
    ScriptedProvider,
    provider_from_settings,
)
from reverie.llm.anthropic import AnthropicProvider
from reverie.llm.base import extract_json
from reverie.llm.openai_compat import OpenAICompatProvider
from tests.conftest import fake
from tests.llm.fake_anthropic_server import FakeAnthropic
from tests.llm.fake_openai_server import Failure, FakeOpenAI, Received, Scripted

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
HELLO = [{"role": "user", "content": "hello"}]
# Built from pieces so that no file holds a whole key-shaped string.
OPENAI_KEY = fake("sk-proj-", "Zx81Kq0LmPa7", "Rt5Wv2YbNc9Ud3Fe6Hg4")
ANTHROPIC_KEY = fake("sk-ant-api03-", "Qw7Er5Ty3Ui1Op9As", "Df2Gh4Jk6Lz8Xc0Vb")


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=OPENAI_KEY) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=ANTHROPIC_KEY) as server:
        yield server


def openai_provider(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    options: dict[str, object] = {"api_key": OPENAI_KEY, "timeout": 5.0, "max_retries": 2}
    options.update(kw)
    return OpenAICompatProvider("gpt-test", base_url=server.base_url, **options)  # type: ignore[arg-type]


def anthropic_provider(server: FakeAnthropic, **kw: object) -> AnthropicProvider:
    options: dict[str, object] = {"api_key": ANTHROPIC_KEY, "timeout": 5.0, "max_retries": 2}
    options.update(kw)
    return AnthropicProvider("claude-test", base_url=server.base_url, **options)  # type: ignore[arg-type]


def whole_story(exc: BaseException) -> str:
    """Everything a log would show: message, repr, details and the chained traceback."""
    parts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    if hasattr(exc, "to_dict"):
        parts.append(repr(exc.to_dict()))
    return "\n".join(parts)


# --- OpenAI-compatible ------------------------------------------------------------------------


def test_openai_structured_answer_usage_and_request(openai_server: FakeOpenAI) -> None:
    openai_server.answer({"answer": "hi"}, tokens_in=123, tokens_out=45)
    provider = openai_provider(openai_server)

    done = provider.complete("be brief", HELLO, schema=SCHEMA, max_tokens=300, idempotency_key="k1")

    assert done == Completion(
        text='{"answer": "hi"}',
        parsed_json={"answer": "hi"},
        tokens_in=123,
        tokens_out=45,
        model="gpt-test",
        stop_reason="stop",
    )
    [sent] = openai_server.requests
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.headers["idempotency-key"] == "k1"
    assert sent.body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]
    assert sent.body["max_tokens"] == 300
    fmt = sent.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == SCHEMA
    assert fmt["json_schema"]["strict"] is True


def test_openai_without_schema_is_plain_text(openai_server: FakeOpenAI) -> None:
    openai_server.answer("just words")
    done = openai_provider(openai_server).complete("s", HELLO)
    assert (done.text, done.parsed_json) == ("just words", None)
    assert "response_format" not in openai_server.requests[0].body


def test_openai_429_with_retry_after_is_retried_once_and_answers_once(
    openai_server: FakeOpenAI,
) -> None:
    openai_server.fail(429, "Rate limit reached for requests", retry_after="1")
    openai_server.answer({"answer": "late"}, tokens_in=10, tokens_out=2)
    provider = openai_provider(openai_server)

    started = time.monotonic()
    done = provider.complete("s", HELLO, schema=SCHEMA, idempotency_key="batch-1")

    assert time.monotonic() - started >= 0.9  # the server's Retry-After was honoured
    assert done.parsed_json == {"answer": "late"}
    assert (done.tokens_in, done.tokens_out) == (10, 2)
    first, second = openai_server.requests
    # The retry is the same request under the same idempotency key.
    assert first.body == second.body
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"] == "batch-1"


def test_openai_500s_exhaust_bounded_retries(openai_server: FakeOpenAI) -> None:
    openai_server.fail(500, times=5, retry_after_ms=5)
    provider = openai_provider(openai_server, max_retries=2)

    with pytest.raises(ProviderError) as caught:
        provider.complete("s", HELLO)

    assert caught.value.code == MODEL_UNAVAILABLE
    assert caught.value.details["status"] == 500
    assert caught.value.exit_code == 1
    assert "after 2 retries" in caught.value.message
    assert len(openai_server.requests) == 3  # one try and two retries, no more


def test_openai_unreachable_server_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAICompatProvider(
        "m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", timeout=2.0, max_retries=0
    )
    with pytest.raises(ProviderError) as caught:
        provider.complete("s", HELLO)
    assert caught.value.code == MODEL_UNAVAILABLE
    assert caught.value.details["status"] is None
    assert "could not be reached" in caught.value.message


def test_openai_timeout_is_unavailable(openai_server: FakeOpenAI) -> None:
    release = threading.Event()

    def slow(request: Received) -> Scripted | Failure:
        release.wait(5)
        return Scripted({"answer": "too late"})

    openai_server.script.append(slow)
    provider = openai_provider(openai_server, timeout=0.3, max_retries=0)
    try:
        with pytest.raises(ProviderError) as caught:
            provider.complete("s", HELLO)
    finally:
        release.set()
    assert caught.value.code == MODEL_UNAVAILABLE
    assert "no answer within 0.3s" in caught.value.message


def test_openai_falls_back_to_json_object_then_remembers() -> None:
    with FakeOpenAI(json_schema=False) as server:
        server.answer({"answer": "one"})
        server.answer({"answer": "two"})
        provider = openai_provider(server)

        first = provider.complete("s", HELLO, schema=SCHEMA)
        second = provider.complete("s", HELLO, schema=SCHEMA)

    assert (first.parsed_json, second.parsed_json) == ({"answer": "one"}, {"answer": "two"})
    kinds = [r.body["response_format"]["type"] for r in server.requests]
    # One refused probe, then json_object for good; the schema moves into the system prompt.
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert provider.output_mode == "json_object"
    assert '"answer"' in server.requests[1].body["messages"][0]["content"]


def test_openai_falls_back_to_prompt_and_extracts_json_from_prose() -> None:
    with FakeOpenAI(json_schema=False, json_object=False) as server:
        server.answer('Here you go:\n```json\n{"answer": "fenced"}\n```\nAnything else?')
        provider = openai_provider(server)
        done = provider.complete("s", HELLO, schema=SCHEMA)

    assert done.parsed_json == {"answer": "fenced"}
    assert provider.output_mode == "prompt"
    assert "response_format" not in server.requests[-1].body
    assert len(server.requests) == 3


def test_openai_switches_to_max_completion_tokens_when_asked() -> None:
    with FakeOpenAI(max_tokens_param="max_completion_tokens") as server:
        server.answer("ok")
        done = openai_provider(server).complete("s", HELLO, max_tokens=77)
    assert done.text == "ok"
    assert server.requests[-1].body["max_completion_tokens"] == 77
    assert "max_tokens" not in server.requests[-1].body


def test_openai_other_bad_requests_are_not_retried_or_adapted(openai_server: FakeOpenAI) -> None:
    openai_server.fail(400, "This model's maximum context length is 8192 tokens.")
    with pytest.raises(ProviderError) as caught:
        openai_provider(openai_server).complete("s", HELLO, schema=SCHEMA)
    assert caught.value.details["status"] == 400
    assert "maximum context length" in caught.value.message
    assert len(openai_server.requests) == 1


def test_openai_malformed_json_answer_parses_to_none(openai_server: FakeOpenAI) -> None:
    openai_server.answer('{"answer": "cut off')
    done = openai_provider(openai_server).complete("s", HELLO, schema=SCHEMA)
    assert done.parsed_json is None
    assert done.text == '{"answer": "cut off'


def test_openai_missing_usage_is_estimated() -> None:
    with FakeOpenAI(usage=False) as server:
        server.answer("four")
        done = openai_provider(server).complete("s", HELLO)
    assert done.tokens_in > 0 and done.tokens_out == 1


def test_openai_without_key_sends_placeholder_for_local_servers() -> None:
    with FakeOpenAI() as server:  # like Ollama: any key, or none, is fine
        server.answer("ok")
        provider = OpenAICompatProvider("llama3", base_url=server.base_url, max_retries=0)
        assert provider.complete("s", HELLO).text == "ok"
    assert server.requests[0].headers["authorization"].startswith("Bearer ")


def test_openai_key_never_appears_in_errors_or_reprs(openai_server: FakeOpenAI) -> None:
    wrong = fake("sk-proj-", "Wr0ngWr0ngAb12Cd34", "Ef56Gh78Ij90Kl")
    provider = openai_provider(openai_server, api_key=wrong, max_retries=0)

    with pytest.raises(ProviderError) as caught:
        provider.complete("s", HELLO)

    # The server echoed the whole key back; none of it reaches our error.
    assert wrong in str(openai_server.requests[0].headers)
    story = whole_story(caught.value)
    assert wrong not in story
    assert "OPENAI_API_KEY" in caught.value.message
    assert caught.value.details["status"] == 401
    assert wrong not in repr(provider)


def test_openai_error_chains_the_sdk_error_when_it_is_safe(openai_server: FakeOpenAI) -> None:
    openai_server.fail(503, "upstream busy", times=1, retry_after_ms=1)
    with pytest.raises(ProviderError) as caught:
        openai_provider(openai_server, max_retries=0).complete("s", HELLO)
    assert type(caught.value.__cause__).__module__.startswith("openai")


# --- Anthropic --------------------------------------------------------------------------------


def test_anthropic_forced_tool_answer_and_usage(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.answer({"answer": "tool"}, tokens_in=321, tokens_out=12)
    done = anthropic_provider(anthropic_server).complete(
        "be brief", HELLO, schema=SCHEMA, max_tokens=500
    )

    assert done.parsed_json == {"answer": "tool"}
    assert (done.tokens_in, done.tokens_out) == (321, 12)
    assert done.model == "claude-test"
    assert done.stop_reason == "tool_use"
    [sent] = anthropic_server.requests
    assert sent.body["system"] == "be brief"
    assert sent.body["max_tokens"] == 500
    [tool] = sent.body["tools"]
    assert tool["input_schema"] == SCHEMA
    assert sent.body["tool_choice"] == {"type": "tool", "name": tool["name"]}


def test_anthropic_plain_text_without_schema(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.answer("words")
    done = anthropic_provider(anthropic_server).complete("s", HELLO)
    assert (done.text, done.parsed_json) == ("words", None)
    assert "tools" not in anthropic_server.requests[0].body


def test_anthropic_overloaded_then_success_is_one_answer(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.fail(529, "Overloaded", retry_after_ms=5)
    anthropic_server.answer({"answer": "ok"}, tokens_in=7, tokens_out=3)
    done = anthropic_provider(anthropic_server).complete("s", HELLO, schema=SCHEMA)
    assert done.parsed_json == {"answer": "ok"}
    assert (done.tokens_in, done.tokens_out) == (7, 3)
    assert len(anthropic_server.requests) == 2


def test_anthropic_rate_limits_exhaust_retries(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.fail(
        429, "Number of requests exceeds your rate limit", times=3, retry_after_ms=5
    )
    with pytest.raises(ProviderError) as caught:
        anthropic_provider(anthropic_server, max_retries=2).complete("s", HELLO)
    assert caught.value.code == MODEL_UNAVAILABLE
    assert caught.value.details["status"] == 429
    assert len(anthropic_server.requests) == 3


def test_anthropic_gateway_ignoring_tools_still_parses() -> None:
    with FakeAnthropic(honor_tool_choice=False) as server:
        server.answer('Sure. {"answer": "text"}')
        done = anthropic_provider(server).complete("s", HELLO, schema=SCHEMA)
    assert done.parsed_json == {"answer": "text"}


def test_anthropic_key_never_appears_in_errors_or_reprs(anthropic_server: FakeAnthropic) -> None:
    wrong = fake("sk-ant-api03-", "Wr0ngWr0ngAb12Cd34", "Ef56Gh78Ij90Kl")
    provider = anthropic_provider(anthropic_server, api_key=wrong, max_retries=0)
    with pytest.raises(ProviderError) as caught:
        provider.complete("s", HELLO)
    assert caught.value.details["status"] == 401
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert wrong not in whole_story(caught.value)
    assert wrong not in repr(provider)


# --- settings and the factory -----------------------------------------------------------------


def test_factory_picks_the_provider(tmp_path: Path) -> None:
    assert provider_from_settings(Settings.load(tmp_path)) is None
    assert provider_from_settings(Settings.load(tmp_path, model="  ")) is None

    openai = provider_from_settings(
        Settings.load(
            tmp_path, model="openai:llama3.1:8b", openai_base_url="http://127.0.0.1:11434/v1"
        )
    )
    assert isinstance(openai, OpenAICompatProvider)
    assert (openai.model, openai.base_url) == ("llama3.1:8b", "http://127.0.0.1:11434/v1")

    claude = provider_from_settings(Settings.load(tmp_path, model="anthropic:claude-x"))
    assert isinstance(claude, AnthropicProvider)
    assert claude.model == "claude-x"
    assert claude.base_url == "https://api.anthropic.com"


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "bedrock:claude", ":x"])
def test_factory_refuses_malformed_model(tmp_path: Path, spec: str) -> None:
    with pytest.raises(RefusedInput) as caught:
        provider_from_settings(Settings.load(tmp_path, model=spec))
    assert caught.value.code == "invalid_setting"


def test_settings_read_provider_variables_and_hide_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_MODEL", "openai:qwen")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("REVERIE_MODEL_MAX_RETRIES", "5")

    settings = Settings.load(tmp_path)

    assert settings.openai_base_url == "http://127.0.0.1:8000/v1"
    assert settings.openai_api_key == OPENAI_KEY
    assert settings.anthropic_api_key == ANTHROPIC_KEY
    assert settings.model_max_retries == 5
    assert OPENAI_KEY not in repr(settings) and ANTHROPIC_KEY not in repr(settings)
    provider = provider_from_settings(settings)
    assert isinstance(provider, OpenAICompatProvider)
    assert provider.base_url == "http://127.0.0.1:8000/v1"
    assert OPENAI_KEY not in repr(provider)


def test_missing_sdk_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ProviderError) as caught:
        OpenAICompatProvider("m")
    assert "pip install 'reverie[llm]'" in caught.value.message
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ProviderError) as caught:
        AnthropicProvider("m")
    assert "pip install 'reverie[llm]'" in caught.value.message


# --- the scripted provider and helpers --------------------------------------------------------


def test_scripted_provider_records_calls_and_answers_in_order() -> None:
    provider = ScriptedProvider.replies({"answer": 1}, "plain")
    first = provider.complete("sys", HELLO, schema=SCHEMA, idempotency_key="k")
    second = provider.complete("sys", HELLO)
    assert first.parsed_json == {"answer": 1} and first.tokens_in > 0
    assert (second.text, second.parsed_json) == ("plain", None)
    assert provider.calls[0] == ScriptedCall("sys", HELLO, SCHEMA, 4096, "k")
    with pytest.raises(ProviderError) as caught:
        provider.complete("sys", HELLO)
    assert caught.value.code == MODEL_UNAVAILABLE


def test_scripted_provider_handler_sees_the_prompt() -> None:
    provider = ScriptedProvider(lambda call: {"answer": call.messages[-1]["content"].upper()})
    assert provider.complete("s", HELLO, schema=SCHEMA).parsed_json == {"answer": "HELLO"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('Sure!\n```json\n{"a": 2}\n```', {"a": 2}),
        ('The answer is {"a": 3} as asked.', {"a": 3}),
        ('{not json} then {"a": 4}', {"a": 4}),
        ("no json here", None),
        ("", None),
        ('"just a string"', None),
    ],
)
def test_extract_json(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_redact_blanks_known_and_credential_shaped_secrets() -> None:
    text = f"key {OPENAI_KEY} and also {ANTHROPIC_KEY} and password hunter2"
    out = redact(text, [OPENAI_KEY])
    assert OPENAI_KEY not in out and ANTHROPIC_KEY not in out
    assert "hunter2" in out  # ordinary words survive
