"""The one rule for removing what an update outdates (SPEC R6), for every reviewer and the runner.

An update is one unit: "remove the old, keep the new". A reviewer that removes an entry because
a newer statement outdates it ("We deploy on Fridays." gone for "We now deploy on Tuesdays.")
names the entry that holds the new value (:attr:`.types.ReviewOutput.replaced_by`: the index of
the ``remove`` operation, and that entry's text with its source). The removal stands only when
that entry is in memory once the batch is applied: added, rewritten, moved into a topic file,
or there already. A replacement dropped by a check, refused by the store or merged away
cancels the removal: the old entry stays, outdated but not lost, which the next review can
still correct; a memory that lost both values cannot be corrected by anything.

A removal that replaces nothing (a retirement: "we no longer use Zendesk") names nothing and
is not held to this rule.

The offline reviewer applies the rule to its own plan of entries before it proposes anything
(:meth:`.offline._Memory.operations`), so that it proposes nothing the runner would take back;
the runner applies it once more to whatever any reviewer answers, after its own checks, where
the operations are finally assembled (:func:`.runner._admissible`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

__all__ = ["REPLACEMENT_NOT_KEPT", "unreplaced"]

#: The code the runner reports for a removal it cancelled under this rule.
REPLACEMENT_NOT_KEPT = "replacement_not_kept"

K = TypeVar("K")


def unreplaced(keepers: Mapping[K, str], files: Mapping[str, str | None]) -> list[K]:
    """The removals (keys of ``keepers``) whose replacing entry (the value: its text, source
    included) is in none of ``files`` (every memory file after the batch, path to text,
    ``None`` for a file that is gone), in the order of ``keepers``: those must be cancelled.

    Cancelling a removal only puts an entry back, which takes no other entry out, so a caller
    that cancels these has every unit whole (it re-checks what it applies as it always does).
    """
    texts = [t for t in files.values() if t]
    return [k for k, entry in keepers.items() if not any(entry in t for t in texts)]
