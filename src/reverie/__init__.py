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
from .store.conversations import Appended, Channel, Conversation, Grant, ImportSummary
from .store.memories import MemoryFile, WriteOutcome
from .store.state import Agent, Member, RevisionRecord

__all__ = [
    "Agent",
    "AgentReport",
    "Appended",
    "Channel",
    "Conversation",
    "Grant",
    "HistoryHit",
    "ImportSummary",
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
    "StorageFault",
    "WriteOutcome",
]

__version__ = "0.1.0"
