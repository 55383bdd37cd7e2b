"""W2: how requests become batches, and the refusals for malformed ones."""

from __future__ import annotations

from typing import Any

import pytest

from reverie.core.operations import Add, Replace, parse_batch
from reverie.errors import RefusedInput


def test_w2_batch_and_top_level_fallback_are_the_same() -> None:
    batch = parse_batch({"operations": [{"action": "add", "text": "x", "section": "Decisions"}]})
    single = parse_batch({"action": "add", "text": "x", "section": "Decisions"})
    assert batch.operations == single.operations == (Add(text="x", section="Decisions"),)


def test_batch_keeps_message_and_order() -> None:
    b = parse_batch(
        {
            "operations": [
                {"action": "replace", "old": "a", "text": "b"},
                {"action": "add", "text": "c"},
            ],
            "message": "why",
        }
    )
    assert isinstance(b.operations[0], Replace)
    assert b.message == "why"


@pytest.mark.parametrize(
    ("request_", "needle"),
    [
        ({"action": "add"}, "text is missing"),
        ({"action": "replace", "text": "x"}, "old is missing"),
        ({"action": "write_topic", "topic": "t"}, "content is missing"),
        ({"action": "add", "text": "x", "colour": "red"}, "colour"),
        ({"action": "frobnicate"}, "unknown action"),
        ({"operations": []}, "empty"),
        ({"operations": [{"text": "x"}]}, "no 'action'"),
        ({"operations": [{"action": "add", "text": 5}]}, "text"),
        (["not", "an", "object"], "JSON object"),
        ({}, "operations"),
    ],
)
def test_w2_malformed_requests_are_refused_with_a_message(request_: Any, needle: str) -> None:
    with pytest.raises(RefusedInput) as e:
        parse_batch(request_)
    assert e.value.code == "invalid_operation"
    assert needle in e.value.message


def test_digest_tells_batches_apart() -> None:
    a = parse_batch({"action": "add", "text": "x"})
    b = parse_batch({"action": "add", "text": "y"})
    assert a.digest() == parse_batch({"operations": [{"action": "add", "text": "x"}]}).digest()
    assert a.digest() != b.digest()
