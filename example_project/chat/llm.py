"""Small clients for OpenAI-compatible chat completions and Anthropic's Messages API, with
tool calling.

Only the standard library: the example should not pull in a vendor SDK. Every failure becomes
a :class:`ModelError` whose message can be shown to the person as it is.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _


class ModelError(Exception):
    """The model could not answer; ``str(error)`` is written for the person."""


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool the model asked for; ``arguments`` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str

    def as_message_part(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Reply:
    """What the model said: text, tool calls, or both."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)


SUMMARY_PROMPT = (
    "Summarise the conversation below in a few short sentences for the assistant's own later "
    "use: what the person asked, what was answered, anything still open. Write the summary only."
)


def transcript_text(transcript: Sequence[tuple[str, str]]) -> str:
    """A plain-text transcript (``[(role, text), …]``) as a compaction summary's input."""
    return "\n\n".join(f"{role}: {text}" for role, text in transcript)


def summarize_with(model: Any, transcript: Sequence[tuple[str, str]]) -> str:
    """A short summary of older turns by ``model`` (its ``complete``), for compaction."""
    return model.complete(
        [
            {"role": "system", "content": SUMMARY_PROMPT},
            {"role": "user", "content": transcript_text(transcript)},
        ]
    ).strip()


class OpenAICompatibleModel:
    """Chat completions over HTTP: ``POST {base_url}/chat/completions``.

    Also a model backend for the memory optimizer (``complete(messages) -> str``), so the turn
    and the optimizer use the same model.
    """

    label = "OpenAI-compatible model"
    is_demo = False

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        temperature: float | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. https://api.openai.com/v1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.temperature = temperature

    @property
    def name(self) -> str:
        return self.model or self.base_url

    def chat(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> Reply:
        """One chat-completions call; the model may answer with text or with tool calls."""
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = "auto"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return parse_reply(self._post("/chat/completions", body))

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """Plain text completion (the optimizer's model backend interface)."""
        return self.chat(messages).content

    def summarize(self, transcript: Sequence[tuple[str, str]]) -> str:
        """A short summary of older turns, for compaction."""
        return summarize_with(self, transcript)

    def _post(self, path: str, body: Mapping[str, Any]) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return post_json(self, path, body, headers)


def post_json(model: Any, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
    """POST ``body`` to ``model.base_url + path``; the answer's JSON, or a :class:`ModelError`
    written for the person."""
    url = model.base_url + path
    headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=model.timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        raise ModelError(
            _("The model service answered with an error (HTTP %(status)s): %(message)s")
            % {"status": error.code, "message": error_message(error)}
        ) from error
    except TimeoutError as error:
        raise ModelError(
            _("The model did not answer within %(seconds)s seconds. Try again.")
            % {"seconds": int(model.timeout)}
        ) from error
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError):
            raise ModelError(
                _("The model did not answer within %(seconds)s seconds. Try again.")
                % {"seconds": int(model.timeout)}
            ) from error
        raise ModelError(
            _("Could not reach the model service at %(url)s: %(reason)s")
            % {"url": model.base_url, "reason": reason}
        ) from error
    try:
        return json.loads(raw)
    except ValueError as error:
        raise ModelError(_("The model service sent an answer that is not JSON.")) from error


class AnthropicModel:
    """Anthropic's Messages API over HTTP: ``POST {base_url}/v1/messages``.

    Takes and gives the same chat-completions shapes as :class:`OpenAICompatibleModel` (the
    chat stores its messages that way) and translates: system messages become ``system``, tool
    calls ``tool_use`` blocks, tool results ``tool_result`` blocks, tools ``input_schema``.
    Also a model backend for the memory optimizer (``complete(messages) -> str``).
    """

    label = "Anthropic model"
    is_demo = False

    def __init__(
        self,
        api_key: str,
        model: str,
        base_url: str = "https://api.anthropic.com",
        timeout: float = 60.0,
        max_tokens: int = 4096,
        version: str = "2023-06-01",
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required (ANTHROPIC_API_KEY)")
        self.api_key = api_key
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_tokens = int(max_tokens)
        self.version = version

    @property
    def name(self) -> str:
        return self.model

    def chat(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> Reply:
        system, turns = anthropic_messages(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": turns,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [anthropic_tool(tool) for tool in tools]
        headers = {"x-api-key": self.api_key, "anthropic-version": self.version}
        return parse_anthropic_reply(post_json(self, "/v1/messages", body, headers))

    def complete(self, messages: list[dict[str, Any]]) -> str:
        return self.chat(messages).content

    def summarize(self, transcript: Sequence[tuple[str, str]]) -> str:
        """A short summary of older turns, for compaction."""
        return summarize_with(self, transcript)


def anthropic_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completions tool (``{"type": "function", "function": {…}}``) for Anthropic."""
    function = tool.get("function", tool)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or function.get("input_schema") or {},
    }


def anthropic_messages(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str, list[dict[str, Any]]]:
    """Chat-completions messages as Anthropic's ``system`` text and ``messages`` list."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if turns and turns[-1]["role"] == role:  # Anthropic wants the roles to alternate
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            system.append(str(content or ""))
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": str(content or ""),
            }
            add("user", [result])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
            for call in message.get("tool_calls") or ():
                function = call["function"]
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    arguments = {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": function["name"],
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
            add("assistant", blocks)
        else:
            add("user", [{"type": "text", "text": str(content or "")}])
    return "\n\n".join(system), turns


def parse_anthropic_reply(data: Any) -> Reply:
    """Read the ``content`` blocks of a Messages API answer."""
    try:
        blocks = data["content"]
        text = "".join(block["text"] for block in blocks if block.get("type") == "text")
        calls = tuple(
            ToolCall(
                id=str(block["id"]),
                name=str(block["name"]),
                arguments=arguments_text(block.get("input")),
            )
            for block in blocks
            if block.get("type") == "tool_use"
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ModelError(
            _("The model service sent an answer in an unexpected shape (no content blocks).")
        ) from error
    return Reply(content=text, tool_calls=calls)


def error_message(error: urllib.error.HTTPError) -> str:
    """The provider's own error message if it sent one, else the HTTP reason."""
    try:
        body = json.loads(error.read() or b"{}")
    except (ValueError, OSError):
        body = {}
    if isinstance(body, dict):
        detail = body.get("error")
        if isinstance(detail, dict) and isinstance(detail.get("message"), str):
            return detail["message"][:300]
        if isinstance(detail, str):
            return detail[:300]
    return str(error.reason)[:300]


def parse_reply(data: Any) -> Reply:
    """Read ``choices[0].message`` of a chat-completions answer."""
    try:
        message = data["choices"][0]["message"]
        content = message.get("content") or ""
        calls = tuple(
            ToolCall(
                id=str(call["id"]),
                name=str(call["function"]["name"]),
                arguments=arguments_text(call["function"].get("arguments")),
            )
            for call in message.get("tool_calls") or ()
        )
    except (KeyError, IndexError, TypeError, AttributeError) as error:
        raise ModelError(
            _("The model service sent an answer in an unexpected shape (no choices[0].message).")
        ) from error
    if not isinstance(content, str):
        content = json.dumps(content)
    return Reply(content=content, tool_calls=calls)


def arguments_text(arguments: Any) -> str:
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments)
