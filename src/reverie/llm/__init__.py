"""Model providers behind one Protocol: OpenAI-compatible endpoints, Anthropic, scripted.

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
from .factory import provider_from_settings
from .scripted import ScriptedCall, ScriptedProvider

__all__ = [
    "MODEL_BAD_ANSWER",
    "MODEL_UNAVAILABLE",
    "Completion",
    "Message",
    "Provider",
    "ProviderError",
    "ScriptedCall",
    "ScriptedProvider",
    "provider_from_settings",
]
