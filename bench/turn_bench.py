"""What an agent's turn costs besides the model (SPEC P1-P3): prompt assembly and turn overhead.

Two questions, at memories of 10, 1,000 and 10,000 entries (``MEMORY.md`` holds up to 400 of
them, as review keeps it; the rest sit in topic files of 500 entries each):

1. **Prompt assembly per run**: what a run does before its first model call, reading the
   memory revision and ``MEMORY.md`` from git, the soul and the channel's instructions from
   the state database, and building the prompt (``reverie.runtime.run.read_state`` and
   ``reverie.core.prompt.build_prompt``). Beside it, the floor any system pays: reading
   ``MEMORY.md`` from the working tree with ``Path.read_text`` and cutting it to the cap.
   The index is capped at 2,000 characters in the prompt, so assembly should be flat in the
   memory's size.
2. **Turn overhead**: a whole turn through ``Reverie.turn`` against a local HTTP server that
   speaks OpenAI's chat-completions protocol, reached by the real ``openai`` client, minus
   the time spent inside the model calls (measured around each ``chat`` call). Everything
   else is overhead: appending the message and the answer, the audit row, the outbox row,
   the P3 revision checks, the tool call. Two shapes: a plain answer (one model call), and a
   ``search_channel_memory`` call then an answer (two model calls). The model call of the
   local server is the baseline it is compared with.

Run::

    python bench/turn_bench.py [--sizes 10,1000,10000] [--runs 300] [--turns 200] [--json]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _common

sys.path.insert(0, str(_common.ROOT))  # tests.llm: the local server that speaks OpenAI's protocol

from reverie import Reverie
from reverie.core.prompt import ConversationView, build_prompt, cut_index
from reverie.llm.chat import ChatMessage, ChatReply, TextSink, ToolSpec
from reverie.llm.openai_compat import OpenAICompatProvider
from reverie.runtime.run import read_state
from tests.llm.fake_openai_server import FakeOpenAI, ToolUse

INDEX_ENTRIES = 400
TOPIC_ENTRIES = 500


class TimedProvider:
    """A provider that adds up the time spent inside the model calls it makes."""

    def __init__(self, inner: OpenAICompatProvider) -> None:
        self.inner = inner
        self.model = inner.model
        self.spent_ns = 0

    def chat(
        self,
        system: str,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        on_text: TextSink | None = None,
    ) -> ChatReply:
        start = time.perf_counter_ns()
        try:
            return self.inner.chat(
                system, messages, tools=tools, max_tokens=max_tokens, on_text=on_text
            )
        finally:
            self.spent_ns += time.perf_counter_ns() - start


def build_home(root: Path, n: int) -> tuple[Reverie, str]:
    gen = _common.TextGen(seed=8)
    rv = Reverie(root / f"home-{n}", create=True)
    rv.create_agent("ada", soul="You are Ada, the ops team's assistant. Be brief and exact.")
    entries = gen.entries(n)
    ops: list[dict[str, Any]] = [
        {"action": "set_body", "text": _common.index_text(entries[:INDEX_ENTRIES])}
    ]
    rest = entries[INDEX_ENTRIES:]
    for i in range(0, len(rest), TOPIC_ENTRIES):
        slug = f"topic-{i // TOPIC_ENTRIES}"
        text = _common.topic_text(slug, rest[i : i + TOPIC_ENTRIES], gen.rng)
        ops.append({"action": "write_topic", "topic": slug, "content": text})
    rv.memory_apply("ada", {"operations": ops})
    rv.add_member("sam", "member")
    rv.ensure_channel("D-sam", "dm")
    return rv, rv.state.memory_of(rv.agent("ada").id)


def assembly(rv: Reverie, memory_id: str, runs: int) -> tuple[_common.Stats, _common.Stats, int]:
    conv = rv.conversation(rv.create_conversation("ada", "D-sam").id)
    view = ConversationView(conv.id, conv.memory_on)
    worktree = rv.home / "memories" / memory_id / "MEMORY.md"
    ours: list[int] = []
    floor: list[int] = []
    size = 0
    for _ in range(runs):
        start = time.perf_counter_ns()
        prompt = build_prompt(read_state(rv, conv), view, rv.settings.prompt_index_chars)
        ours.append(time.perf_counter_ns() - start)
        start = time.perf_counter_ns()
        text, _ = cut_index(worktree.read_text(encoding="utf-8"), rv.settings.prompt_index_chars)
        system = "guide\n\n" + text
        floor.append(time.perf_counter_ns() - start)
        size = len(prompt.system)
        del system
    return _common.Stats.of_ns(ours), _common.Stats.of_ns(floor), size


def turns(rv: Reverie, server: FakeOpenAI, shape: str, count: int) -> dict[str, _common.Stats]:
    provider = TimedProvider(
        OpenAICompatProvider("bench-model", base_url=server.base_url, max_retries=0)
    )
    total: list[int] = []
    model: list[int] = []
    overhead: list[int] = []
    conv = ""
    for i in range(count):
        if i % 10 == 0:  # a new conversation now and then: transcripts stay a realistic size
            conv = rv.create_conversation("ada", "D-sam").id
        if shape == "search":
            server.answer(ToolUse([("search_channel_memory", {"query": "deploy billing"})]))
        server.answer("We deploy on Tuesdays.", tokens_in=900, tokens_out=8)
        provider.spent_ns = 0
        start = time.perf_counter_ns()
        result = rv.turn(conv, f"question {i}: when do we deploy?", author="sam", provider=provider)
        elapsed = time.perf_counter_ns() - start
        assert result.outcome == "delivered", result.notice
        total.append(elapsed)
        model.append(provider.spent_ns)
        overhead.append(elapsed - provider.spent_ns)
    return {
        "total": _common.Stats.of_ns(total),
        "model": _common.Stats.of_ns(model),
        "overhead": _common.Stats.of_ns(overhead),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument("--runs", type=int, default=300, help="prompt assemblies per size")
    parser.add_argument("--turns", type=int, default=200, help="turns per size and shape")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, Any] = {"machine": _common.machine(), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        for n in sizes:
            _common.progress(f"memory of {n:,} entries")
            rv, memory_id = build_home(Path(tmp), n)
            gc.collect()
            ours, floor, chars = assembly(rv, memory_id, args.runs)
            row: dict[str, Any] = {"assembly": ours, "floor": floor, "prompt_chars": chars}
            for shape in ("answer", "search"):
                _common.progress(f"  {args.turns} turns ({shape})")
                row[shape] = turns(rv, server, shape, args.turns)
            results["sizes"][n] = row
            rv.close()
    _report(results, args.json)
    return 0


def _report(results: dict[str, Any], as_json: bool) -> None:
    sizes = results["sizes"]
    first = sizes[min(sizes)]
    rows = []
    for n, r in sizes.items():
        rows.append(
            [
                f"{n:,}",
                _common.ms(r["assembly"].p50),
                _common.ms(r["assembly"].p95),
                _common.ms(r["floor"].p50),
                _common.fmt_ratio(r["assembly"].p50, r["floor"].p50),
                _common.fmt_ratio(r["assembly"].p50, first["assembly"].p50),
                f"{r['prompt_chars']:,}",
            ]
        )
    assembly = _common.markdown_table(
        [
            "entries",
            "assembly p50 ms",
            "p95 ms",
            "floor p50 ms",
            "vs floor",
            "vs smallest",
            "prompt chars",
        ],
        rows,
    )
    rows = []
    for n, r in sizes.items():
        for shape in ("answer", "search"):
            t = r[shape]
            rows.append(
                [
                    f"{n:,}",
                    "answer" if shape == "answer" else "search + answer",
                    _common.ms(t["overhead"].p50),
                    _common.ms(t["overhead"].p95),
                    _common.ms(t["model"].p50),
                    _common.fmt_ratio(t["overhead"].p50, t["model"].p50),
                    _common.ms(t["total"].p50),
                ]
            )
    overhead = _common.markdown_table(
        [
            "entries",
            "turn",
            "overhead p50 ms",
            "p95 ms",
            "model calls p50 ms",
            "overhead / model",
            "turn p50 ms",
        ],
        rows,
    )
    payload = {
        "machine": results["machine"],
        "sizes": {
            str(n): {
                k: (v.to_dict() if isinstance(v, _common.Stats) else v)
                if not isinstance(v, dict)
                else {kk: vv.to_dict() for kk, vv in v.items()}
                for k, v in r.items()
            }
            for n, r in sizes.items()
        },
    }
    markdown = (
        f"{_common.machine_markdown(results['machine'])}\n\n"
        f"Prompt assembly per run:\n\n{assembly}\n\n"
        f"Turn overhead (everything but the model calls):\n\n{overhead}\n"
    )
    _common.emit(as_json, payload, markdown)


if __name__ == "__main__":
    sys.exit(main())
