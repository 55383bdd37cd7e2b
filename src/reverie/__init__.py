"""Reverie: durable, revisioned, searchable memory for chat agents.

Start with :class:`Reverie`: ``Reverie("reverie-data", create=True).create_agent("ada")``.
"""

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (mypy reads any name so called);
#: deleted below, with no other name than the public ones left in the package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .api import Reverie
    from .config import Settings
    from .errors import (
        NotFound,
        PermissionDenied,
        RefusedInput,
        ReverieError,
        RevisionConflict,
        StorageFault,
    )
    from .index.fts import SearchHit
    from .index.history import HistoryHit
    from .review.runner import AgentReport
    from .runtime.context import ReadPage, SessionDetails, SessionInfo
    from .runtime.run import TurnEvent, TurnResult
    from .runtime.tools import Tool, ToolContext
    from .store.conversations import Appended, Channel, Conversation, Grant, ImportSummary
    from .store.instructions import Approval, Instructions
    from .store.memories import MemoryFile, WriteOutcome
    from .store.outbox import Delivery
    from .store.souls import SoulDraft, SoulReceipt, SoulVersion
    from .store.state import Agent, Member, RevisionRecord
    from .store.turns import TurnRecord
del TYPE_CHECKING

#: Where each public name lives. Importing ``reverie`` is light: a name is imported on first
#: use (PEP 562), so that the command line can answer a Ctrl-C while its commands load
#: (``reverie/cli/_interrupt.py``) and a script that needs one name loads only what it needs.
_WHERE = {
    "Reverie": ".api",
    "Settings": ".config",
    "NotFound": ".errors",
    "PermissionDenied": ".errors",
    "RefusedInput": ".errors",
    "ReverieError": ".errors",
    "RevisionConflict": ".errors",
    "StorageFault": ".errors",
    "SearchHit": ".index.fts",
    "HistoryHit": ".index.history",
    "AgentReport": ".review.runner",
    "ReadPage": ".runtime.context",
    "SessionDetails": ".runtime.context",
    "SessionInfo": ".runtime.context",
    "TurnEvent": ".runtime.run",
    "TurnResult": ".runtime.run",
    "Tool": ".runtime.tools",
    "ToolContext": ".runtime.tools",
    "Appended": ".store.conversations",
    "Channel": ".store.conversations",
    "Conversation": ".store.conversations",
    "Grant": ".store.conversations",
    "ImportSummary": ".store.conversations",
    "Approval": ".store.instructions",
    "Instructions": ".store.instructions",
    "MemoryFile": ".store.memories",
    "WriteOutcome": ".store.memories",
    "Delivery": ".store.outbox",
    "SoulDraft": ".store.souls",
    "SoulReceipt": ".store.souls",
    "SoulVersion": ".store.souls",
    "Agent": ".store.state",
    "Member": ".store.state",
    "RevisionRecord": ".store.state",
    "TurnRecord": ".store.turns",
}

__all__ = [
    "Agent",
    "AgentReport",
    "Appended",
    "Approval",
    "Channel",
    "Conversation",
    "Delivery",
    "Grant",
    "HistoryHit",
    "ImportSummary",
    "Instructions",
    "Member",
    "MemoryFile",
    "NotFound",
    "PermissionDenied",
    "ReadPage",
    "RefusedInput",
    "Reverie",
    "ReverieError",
    "RevisionConflict",
    "RevisionRecord",
    "SearchHit",
    "SessionDetails",
    "SessionInfo",
    "Settings",
    "SoulDraft",
    "SoulReceipt",
    "SoulVersion",
    "StorageFault",
    "Tool",
    "ToolContext",
    "TurnEvent",
    "TurnRecord",
    "TurnResult",
    "WriteOutcome",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> "Any":
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
