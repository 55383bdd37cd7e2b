"""Reverie: durable, revisioned, searchable memory for chat agents.

Start with :class:`Reverie`: ``Reverie("reverie-data", create=True).create_agent("ada")``.
"""

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
