"""Pick the model provider from settings (SPEC 14 D3, 15): ``REVERIE_MODEL``.

``openai:NAME`` is any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp's server),
``anthropic:NAME`` is Anthropic's Messages API; unset means no model: review uses the offline
reviewer. Endpoints and keys come from :class:`~reverie.config.Settings`, which reads the
providers' own variables, and are passed to the SDKs explicitly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reverie.config import Settings
from reverie.errors import RefusedInput

from .base import Provider
from .chat import ChatProvider

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai_compat import OpenAICompatProvider

__all__ = ["PROVIDER_KINDS", "chat_provider_from_settings", "parse_model", "provider_from_settings"]

PROVIDER_KINDS = ("openai", "anthropic")


def parse_model(spec: str) -> tuple[str, str]:
    """Split ``openai:NAME`` into ``("openai", "NAME")``.

    Raises:
        RefusedInput: ``invalid_setting`` when the kind is unknown or the name is missing.
    """
    kind, sep, name = spec.strip().partition(":")
    kind, name = kind.strip().lower(), name.strip()
    if not sep or kind not in PROVIDER_KINDS or not name:
        raise RefusedInput(
            f"REVERIE_MODEL={spec!r} is not a model: use openai:NAME (any OpenAI-compatible "
            "endpoint, with OPENAI_BASE_URL for a local server) or anthropic:NAME, or unset it "
            "for the offline reviewer.",
            code="invalid_setting",
            setting="model",
        )
    return kind, name


def provider_from_settings(settings: Settings) -> Provider | None:
    """The provider ``settings.model`` names, or None when no model is configured.

    Raises:
        RefusedInput: ``invalid_setting`` when ``REVERIE_MODEL`` is malformed.
        ProviderError: ``model_unavailable`` when the provider's SDK is not installed.
    """
    return _build(settings)


def chat_provider_from_settings(settings: Settings) -> ChatProvider | None:
    """The same provider as :func:`provider_from_settings`, for an agent's turns.

    Raises:
        RefusedInput: ``invalid_setting`` when ``REVERIE_MODEL`` is malformed.
        ProviderError: ``model_unavailable`` when the provider's SDK is not installed.
    """
    return _build(settings)


def _build(settings: Settings) -> OpenAICompatProvider | AnthropicProvider | None:
    if settings.model is None or not settings.model.strip():
        return None
    kind, name = parse_model(settings.model)
    timeout = float(settings.model_timeout_seconds)
    if kind == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(
            name,
            base_url=settings.anthropic_base_url,
            api_key=settings.anthropic_api_key,
            timeout=timeout,
            max_retries=settings.model_max_retries,
        )
    from .openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        name,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        timeout=timeout,
        max_retries=settings.model_max_retries,
    )
