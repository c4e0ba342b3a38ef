"""What every provider module shares: the error type, field checks, SSE framing, token estimates."""

from __future__ import annotations

import json
from typing import Any

from polar.types import ModelReply, ModelRequest


class ApiError(Exception):
    """A client error, rendered in the calling provider's own error shape."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code = status, message, kind, code


def require(body: dict[str, Any], key: str, kind: type) -> Any:
    value = body.get(key)
    if not isinstance(value, kind):
        raise ApiError(400, f"field {key!r} is required and must be a {kind.__name__}")
    return value


def params_from(body: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """Sampling parameters under their canonical (OpenAI) names."""
    return {canonical: body[key] for key, canonical in names.items() if body.get(key) is not None}


def sse_data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def sse_event(event: str, payload: dict[str, Any]) -> bytes:
    return f"event: {event}\n".encode() + sse_data(payload)


def estimate_tokens(text: str) -> int:
    """A rough count (4 characters a token) for usage fields when no tokenizer saw the text."""
    return max(1, len(text) // 4)


def usage_counts(request: ModelRequest, reply: ModelReply) -> tuple[int, int]:
    prompt = len(request.prompt_token_ids or reply.prompt_token_ids or ()) or estimate_tokens(
        json.dumps(request.messages))
    completion = len(reply.token_ids or ()) or estimate_tokens(
        (reply.content or "") + "".join(c.arguments for c in reply.tool_calls))
    return prompt, completion


def parse_arguments(arguments: str) -> dict[str, Any]:
    """Tool arguments as an object for APIs that need one; malformed JSON is passed on under `_raw`."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}
