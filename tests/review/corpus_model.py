"""The model reviewer on the corpus, through the scripted provider (issue 11).

No model is called: :func:`scripted_reviewer` builds a :class:`ModelReviewer` whose provider
(``reverie.llm.scripted.ScriptedProvider``) answers each review prompt the way a capable but
careless model would, from what the prompt shows and what the corpus expects:

* **the right operations**: for every ``keep`` fact whose phrases a shown message holds, an
  entry quoting that message, cited, under the expected section; for every ``was`` whose new
  value a shown message holds, a ``replace`` of the index line that holds the old value;
* **the mistakes the post-checks exist for**: the message that holds each ``never`` phrase it
  can see (a secret, a question, a rule aimed at the agent, progress, small talk) quoted as an
  entry; the phrases it cannot see (tool output, group chat: the runner never shows them)
  invented and cited to a message that does not say them; an entry citing a message outside
  the batch; an entry with no source; an entry under a section that does not exist.

So the figures of ``bench/review_corpus.py --reviewer model`` measure the post-checks of
``review/model.py`` (sources, secrets, questions, rules, sections, grounding) and the runner's
rules on the corpus, not a model's judgement: the kept facts are there because the script put
them there, and a leak is a mistake no check caught.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from reverie.llm.scripted import Answer, ScriptedCall, ScriptedProvider
from reverie.review.model import ModelReviewer
from reverie.review.types import Reviewer, format_source
from tests.review.corpus_format import Conversation, Fact

__all__ = ["scripted_reviewer"]

_MESSAGE = re.compile(
    r'<message conversation="(?P<c>[^"]+)" position="(?P<p>\d+)" role="(?P<r>\w+)"'
    r'(?: author="(?P<a>[^"]*)")?>\n(?P<t>.*?)\n</message>',
    re.S,
)
_INDEX = re.compile(r"<memory_index>\n(.*?)\n</memory_index>", re.S)


def _holder(messages: list[dict[str, Any]], f: Fact) -> dict[str, Any] | None:
    """The latest shown message that holds ``f``."""
    return next((m for m in reversed(messages) if f.held_by(_quote(m))), None)


def _quote(m: dict[str, Any]) -> str:
    text = " ".join(m["text"].split())[:240]
    who = m["author"].capitalize() if m["author"] else "The assistant"
    return f"{who} said: {text}"


def _entry(m: dict[str, Any]) -> str:
    return f"{_quote(m)} {format_source(m['conv'], m['pos'], m['pos'] + 1)}"


def answer_for(conv: Conversation) -> Callable[[ScriptedCall], Answer]:
    """The scripted model's answer to any review prompt about ``conv``."""

    def answer(call: ScriptedCall) -> Answer:
        prompt = call.messages[0]["content"]
        messages = [
            {
                "conv": m["c"],
                "pos": int(m["p"]),
                "role": m["r"],
                "author": m["a"] or "",
                "text": m["t"].replace("<\\/message", "</message"),
            }
            for m in _MESSAGE.finditer(prompt)
        ]
        if not messages:
            return {"operations": [], "message": "nothing to keep"}
        found = _INDEX.search(prompt)
        index_lines = found.group(1).split("\n") if found else []
        ops: list[dict[str, Any]] = []
        for old, new in conv.was:  # the old value, where it is said and the new one is not yet
            m = _holder(messages, old)
            if m is not None and _holder(messages, new) is None:
                ops.append({"action": "add", "section": "Decisions", "text": _entry(m)})
        for old, new in conv.was:
            m = _holder(messages, new)
            stale = next((line for line in index_lines if old.held_by(line)), None)
            if m is not None and stale is not None and f"- {_entry(m)}" not in index_lines:
                ops.append({"action": "replace", "old": stale.lstrip("- "), "text": _entry(m)})
        for section, f in conv.keep:
            m = _holder(messages, f)
            if m is not None:
                ops.append({"action": "add", "section": section, "text": _entry(m)})
        first = messages[0]
        for _kind, phrase in conv.never:
            m = next((x for x in messages if phrase.casefold() in x["text"].casefold()), None)
            if m is not None:
                ops.append({"action": "add", "section": "Decisions", "text": _entry(m)})
            else:  # not shown to the model: invented, cited to a message that does not say it
                cite = format_source(first["conv"], first["pos"], first["pos"] + 1)
                ops.append({"action": "add", "section": "Decisions", "text": f"{phrase} {cite}"})
        far = format_source(first["conv"], first["pos"] + 500, first["pos"] + 501)
        ops += [
            {"action": "add", "section": "Decisions", "text": f"{_quote(first)} {far}"},
            {"action": "add", "section": "Decisions", "text": _quote(first)},
            {"action": "add", "section": "Misc", "text": _entry(first)},
        ]
        return {"operations": ops, "message": f"Reviewed {conv.id}"}

    return answer


def scripted_reviewer(conv: Conversation) -> Callable[[], Reviewer]:
    """A factory of model reviewers whose scripted model answers about ``conv``."""

    def make() -> Reviewer:
        return ModelReviewer(ScriptedProvider(answer_for(conv)))

    return make
