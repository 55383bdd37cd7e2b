"""An agent's turn through the real SDKs (SPEC 5, D3): text, tool calls, transcripts with tool
results, and streaming, against local servers that speak OpenAI's and Anthropic's protocols
and check transcripts the way the real APIs do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from reverie.llm import ChatMessage, ChatReply, ProviderError, ToolCall, ToolSpec
from reverie.llm.anthropic import AnthropicProvider
from reverie.llm.openai_compat import OpenAICompatProvider
from tests.conftest import fake
from tests.llm.fake_anthropic_server import FakeAnthropic
from tests.llm.fake_openai_server import FakeHTTPServer, FakeOpenAI, ToolUse

KEY = fake("sk-proj-", "Zx81Kq0LmPa7", "Rt5Wv2YbNc9Ud3Fe6Hg4")
SEARCH = ToolSpec(
    "search_channel_memory",
    "Search memory.",
    {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
)


@pytest.fixture(params=["openai", "anthropic"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[FakeHTTPServer, Any]]:
    if request.param == "openai":
        with FakeOpenAI(api_key=KEY) as server:
            yield (
                server,
                OpenAICompatProvider(
                    "gpt-test", base_url=server.base_url, api_key=KEY, max_retries=0
                ),
            )
    else:
        with FakeAnthropic(api_key=KEY) as server:
            yield (
                server,
                AnthropicProvider(
                    "claude-test", base_url=server.base_url, api_key=KEY, max_retries=0
                ),
            )


HELLO = [ChatMessage("user", "What do we know about deploys?")]


@pytest.mark.parametrize("stream", [False, True])
def test_text_answer(endpoint: tuple[FakeHTTPServer, Any], stream: bool) -> None:
    server, provider = endpoint
    server.answer("We deploy on Tuesdays, after the standup.", tokens_in=40, tokens_out=9)
    pieces: list[str] = []
    reply = provider.chat("system", HELLO, on_text=pieces.append if stream else None)
    assert reply.text == "We deploy on Tuesdays, after the standup."
    assert reply.tool_calls == ()
    assert (reply.tokens_in, reply.tokens_out) == (40, 9)
    if stream:
        assert len(pieces) > 3 and "".join(pieces) == reply.text
        assert server.requests[-1].body["stream"] is True
    else:
        assert pieces == []
        assert not server.requests[-1].body.get("stream")


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_come_back_whole(endpoint: tuple[FakeHTTPServer, Any], stream: bool) -> None:
    server, provider = endpoint
    args = {"query": "deploy day and the release checklist for the billing service"}
    server.answer(ToolUse([("search_channel_memory", args), ("read_soul", {})], text="Looking."))
    pieces: list[str] = []
    reply = provider.chat(
        "system", HELLO, tools=[SEARCH], on_text=pieces.append if stream else None
    )
    assert [c.name for c in reply.tool_calls] == ["search_channel_memory", "read_soul"]
    assert reply.tool_calls[0].arguments == args
    assert reply.tool_calls[1].arguments == {}
    assert all(c.id for c in reply.tool_calls)
    assert reply.text == "Looking."
    assert "".join(pieces) == ("Looking." if stream else "")
    sent = server.requests[-1].body["tools"]
    names = [t.get("name") or t["function"]["name"] for t in sent]
    assert names == ["search_channel_memory"]


def test_a_transcript_with_tool_results_is_accepted(endpoint: tuple[FakeHTTPServer, Any]) -> None:
    """Each provider's wire format pairs a tool result with its call; the servers refuse a
    transcript that does not (as the real APIs do), so a wrong translation fails here."""
    server, provider = endpoint
    server.answer(ToolUse([("search_channel_memory", {"query": "deploy"})]))
    first = provider.chat("system", HELLO, tools=[SEARCH])
    server.answer("Tuesdays.")
    transcript = [
        *HELLO,
        ChatMessage("assistant", "", first.tool_calls),
        ChatMessage("tool", '{"results": []}', tool_call_id=first.tool_calls[0].id),
    ]
    second = provider.chat("system", transcript, tools=[SEARCH])
    assert second.text == "Tuesdays."


def test_a_tool_result_without_its_call_is_refused_by_the_server(
    endpoint: tuple[FakeHTTPServer, Any],
) -> None:
    _, provider = endpoint
    transcript = [*HELLO, ChatMessage("tool", "{}", tool_call_id="call_nowhere")]
    with pytest.raises(ProviderError) as caught:
        provider.chat("system", transcript, tools=[SEARCH])
    assert caught.value.code == "model_unavailable"
    assert "HTTP 400" in caught.value.message


def test_broken_tool_arguments_are_kept_raw() -> None:
    with FakeOpenAI() as server:
        provider = OpenAICompatProvider("m", base_url=server.base_url, max_retries=0)
        server.answer(ToolUse([("search_channel_memory", '{"query": "dep')]))
        reply = provider.chat("system", HELLO, tools=[SEARCH])
    call = reply.tool_calls[0]
    assert call.arguments is None and call.raw == '{"query": "dep'


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_input_that_is_no_object_is_kept_raw_on_anthropic(stream: bool) -> None:
    """A gateway speaking Anthropic's protocol may send a tool's input as a string: the call
    comes back with no arguments and the raw text (the tool then says what was wrong), as a
    broken OpenAI call does, rather than failing the whole answer."""
    with FakeAnthropic() as server:
        provider = AnthropicProvider("c", base_url=server.base_url, max_retries=0)
        server.answer(ToolUse([("search_channel_memory", "{broken")]))
        reply = provider.chat(
            "system", HELLO, tools=[SEARCH], on_text=(lambda _: None) if stream else None
        )
    call = reply.tool_calls[0]
    assert call.name == "search_channel_memory" and call.arguments is None
    assert "{broken" in call.raw


def test_streaming_without_usage_is_estimated() -> None:
    with FakeOpenAI(usage=False) as server:
        provider = OpenAICompatProvider("m", base_url=server.base_url, max_retries=0)
        server.answer("Fine.")
        reply = provider.chat("system", HELLO, on_text=lambda _: None)
    assert reply.text == "Fine." and reply.tokens_in > 0 and reply.tokens_out > 0


def test_an_error_is_a_provider_error_without_the_key(endpoint: tuple[FakeHTTPServer, Any]) -> None:
    server, provider = endpoint
    server.fail(503, f"upstream broke while using {KEY}", times=1)
    with pytest.raises(ProviderError) as caught:
        provider.chat("system", HELLO, on_text=lambda _: None)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.details)
    assert "HTTP 503" in caught.value.message


def test_scripted_provider_chats() -> None:
    from reverie.llm import ScriptedProvider, use_tools

    provider = ScriptedProvider.replies(use_tools(("read_soul", {})), "Done.")
    first = provider.chat("sys", HELLO, tools=[SEARCH])
    assert first.tool_calls == (ToolCall("call_0_read_soul", "read_soul", {}, "{}"),)
    pieces: list[str] = []
    second = provider.chat("sys", HELLO, on_text=pieces.append)
    assert isinstance(second, ChatReply) and second.text == "Done." == "".join(pieces)
    assert provider.calls[0].tools == (SEARCH,)
