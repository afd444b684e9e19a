"""Model backends for ``AGENT_MEMORY["MODELS"]`` and the lookup of an alias.

A backend is a class built with ``**OPTIONS`` that has ``complete(messages) -> str``, messages in
the common ``{"role", "content"}`` form; it raises on transport errors and timeouts.

The two shipped backends speak HTTP through the standard library
(:func:`agent_memory.remote.post_json`), so they work with no SDK installed and tests can point
them at a local server; the ``openai`` and ``anthropic`` extras of the package exist so that
installing the backend you use stays an explicit choice.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from ..conf import memory_settings
from ..remote import BackendError, post_json


class UnknownModel(LookupError):
    """The alias is not in ``AGENT_MEMORY["MODELS"]`` or its backend cannot be built."""


def get_backend(alias: str) -> Any:
    """Build the backend configured for ``alias`` in ``AGENT_MEMORY["MODELS"]``."""
    models = memory_settings.MODELS
    config = models.get(alias) if isinstance(models, dict) else None
    if config is None:
        raise UnknownModel(
            f'Model alias "{alias}" is not configured: add it to AGENT_MEMORY["MODELS"] as '
            '{"BACKEND": "dotted.path", "OPTIONS": {...}}.'
        )
    if not isinstance(config, dict) or not isinstance(config.get("BACKEND"), str):
        raise UnknownModel(
            f'The backend of model alias "{alias}" cannot be built: '
            "manage.py check names the problem (agent_memory.E007)."
        )
    try:
        backend_class = import_string(config["BACKEND"])
        return backend_class(**(config.get("OPTIONS") or {}))
    except (ImportError, TypeError, ValueError) as error:
        raise UnknownModel(
            f'The backend of model alias "{alias}" cannot be built: {type(error).__name__}.'
        ) from error


class OpenAICompatibleBackend:
    """Chat completions over HTTP: OpenAI, vLLM, Ollama, llama.cpp and other compatible servers.

    ``OPTIONS``: ``model`` (required), ``base_url`` (default OpenAI's, e.g.
    ``http://localhost:11434/v1`` for Ollama), ``api_key`` (optional for local servers),
    ``timeout`` seconds (60), ``temperature`` (0), ``extra_body`` (merged into the request).
    """

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 60,
        temperature: float | None = 0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})

    def complete(self, messages: list[dict[str, Any]]) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **self.extra_body}
        if self.temperature is not None:
            body.setdefault("temperature", self.temperature)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        answer = post_json(f"{self.base_url}/chat/completions", body, headers, self.timeout)
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise BackendError("The model server's answer has no choices[0].message.") from error
        if not isinstance(content, str):
            raise BackendError("The model answered without text.")
        return content


class AnthropicBackend:
    """The Anthropic Messages API over HTTP.

    ``OPTIONS``: ``model`` and ``api_key`` (required), ``base_url``
    (``https://api.anthropic.com``), ``timeout`` seconds (60), ``max_tokens`` (4096),
    ``version`` (the ``anthropic-version`` header).
    """

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = "https://api.anthropic.com",
        timeout: float = 60,
        max_tokens: int = 4096,
        version: str = "2023-06-01",
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.version = version

    def complete(self, messages: list[dict[str, Any]]) -> str:
        system = "\n\n".join(
            str(message["content"]) for message in messages if message.get("role") == "system"
        )
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [message for message in messages if message.get("role") != "system"],
        }
        if system:
            body["system"] = system
        headers = {"x-api-key": self.api_key, "anthropic-version": self.version}
        answer = post_json(f"{self.base_url}/v1/messages", body, headers, self.timeout)
        try:
            blocks = answer["content"]
            return "".join(block["text"] for block in blocks if block.get("type") == "text")
        except (KeyError, TypeError) as error:
            raise BackendError("The model server's answer has no text content.") from error


__all__ = [
    "AnthropicBackend",
    "BackendError",
    "OpenAICompatibleBackend",
    "UnknownModel",
    "get_backend",
    "post_json",
]
