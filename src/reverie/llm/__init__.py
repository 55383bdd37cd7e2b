"""Model providers behind one seam: OpenAI-compatible endpoints, Anthropic, scripted.

``Provider.complete`` answers review; ``ChatProvider.chat`` takes an agent's turn (tool calls,
streaming).

The SDKs are optional (``pip install 'reverie[llm]'``) and imported only when a provider is
built, so the core and the offline reviewer run without them.
"""

from .base import (
    MODEL_BAD_ANSWER,
    MODEL_UNAVAILABLE,
    Completion,
    Message,
    Provider,
    ProviderError,
)
from .chat import ChatMessage, ChatProvider, ChatReply, ToolCall, ToolSpec
from .factory import provider_from_settings
from .scripted import ScriptedCall, ScriptedProvider, use_tools

__all__ = [
    "MODEL_BAD_ANSWER",
    "MODEL_UNAVAILABLE",
    "ChatMessage",
    "ChatProvider",
    "ChatReply",
    "Completion",
    "Message",
    "Provider",
    "ProviderError",
    "ScriptedCall",
    "ScriptedProvider",
    "ToolCall",
    "ToolSpec",
    "provider_from_settings",
    "use_tools",
]
