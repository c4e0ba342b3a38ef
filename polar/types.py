"""The two objects every env step exchanges: the harness's `ModelRequest` and the policy's `ModelReply`.

A request is the canonical (OpenAI-chat-shaped) form of whatever the harness sent, whatever provider API it
used; a reply is what the model said, plus — when the policy has them — the exact token ids and logprobs it
sampled, so training never re-tokenizes.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Api = Literal["openai-chat", "openai-responses", "anthropic-messages", "gemini", "builtin"]


def content_text(content: Any) -> str:
    """The text of a message content: a string, None (empty) or a list of text parts ({"text": ...})."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def function_tool(name: str, description: str, **params: tuple[str, str]) -> dict[str, Any]:
    """An OpenAI function tool; each parameter is (JSON type, description), required unless the description
    starts with "(optional)"."""
    required = [k for k, (_, doc) in params.items() if not doc.startswith("(optional)")]
    properties = {k: {"type": t, "description": doc} for k, (t, doc) in params.items()}
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }}


class ToolCall(BaseModel):
    """One function call the model made. `arguments` is the raw JSON text, kept even when it is malformed."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError with a message fit to show the model."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as e:
            raise ValueError(f"arguments of {self.name!r} are not valid JSON ({e.msg} at {e.pos})") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments of {self.name!r} must be a JSON object, got {type(value).__name__}")
        return value


class ModelRequest(BaseModel):
    """The observation: the model call a harness is waiting on."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]] = Field(description="OpenAI-chat-shaped messages, system prompt first")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI function tools")
    params: dict[str, Any] = Field(default_factory=dict, description="sampling parameters the harness asked for")
    api: Api = Field(default="builtin", description="the provider API the call came in on")
    model: str | None = Field(default=None, description="the model name the harness asked for")
    prompt_token_ids: list[int] | None = Field(default=None, description="the rendered prompt, when known")
    episode_id: str | None = Field(
        default=None, description="the episode this call belongs to (set by the env): a policy sends it as the "
        "session key of its upstream calls, so a router keeps one episode on one replica"
    )

    def tool_names(self) -> list[str]:
        return [t.get("function", t).get("name", "") for t in self.tools]


class ModelReply(BaseModel):
    """The action: what the model said. `token_ids`/`logprobs` are exactly what was sampled, when known."""

    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_token_ids: list[int] | None = Field(
        default=None, description="the prompt tokens the policy conditioned on, when it rendered them itself"
    )
    chain_break: str | None = Field(
        default=None,
        description="why the prompt was rendered in full although the history held earlier replies (the history "
        "changed, `category: detail`): this call starts a new training chain; None when it extends the last call",
    )
    model: str | None = None

    @classmethod
    def coerce(cls, action: Any) -> ModelReply:
        """Accept a `ModelReply`, an OpenAI assistant-message dict, or a plain string."""
        if isinstance(action, ModelReply):
            return action
        if isinstance(action, str):
            return cls(content=action, finish_reason="stop")
        if isinstance(action, dict):
            return cls.from_openai_message(action)
        raise TypeError(
            f"an action must be a ModelReply, an OpenAI assistant-message dict or a str, not {type(action).__name__}"
        )

    @classmethod
    def from_openai_message(cls, message: dict[str, Any]) -> ModelReply:
        """Build a reply from `{"role": "assistant", "content": ..., "tool_calls": [...]}`."""
        role = message.get("role", "assistant")
        if role != "assistant":
            raise ValueError(f"an action dict must be an assistant message, got role {role!r}")
        calls = []
        for i, raw in enumerate(message.get("tool_calls") or []):
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise ValueError(
                    f"tool_calls[{i}] must look like {{'id': ..., 'type': 'function', "
                    "'function': {'name': str, 'arguments': str}}"
                )
            args = fn.get("arguments", "{}")
            calls.append(
                ToolCall(
                    id=raw.get("id") or f"call_{i}",
                    name=fn["name"],
                    arguments=args if isinstance(args, str) else json.dumps(args),
                )
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError("an action dict's content must be a string or None")
        return cls(
            content=content,
            tool_calls=calls,
            reasoning=message.get("reasoning_content") or message.get("reasoning"),
            finish_reason="tool_calls" if calls else "stop",
        )

    def to_openai_message(self) -> dict[str, Any]:
        """The assistant message a harness appends to its history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message
