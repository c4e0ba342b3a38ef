"""OpenAI Chat Completions <-> canonical. The canonical form *is* chat-shaped, so this is mostly a copy."""

from __future__ import annotations

import time
import uuid
from typing import Any

from polar.harnesses.gateway.wire import ApiError, params_from, require, sse_data, usage_counts
from polar.types import ModelReply, ModelRequest, content_text

API = "openai-chat"
PARAMS = {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens",
          "max_completion_tokens": "max_tokens", "stop": "stop", "seed": "seed", "tool_choice": "tool_choice"}


def to_request(body: dict[str, Any]) -> ModelRequest:
    messages = []
    for i, m in enumerate(require(body, "messages", list)):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ApiError(400, f"messages[{i}] must be an object with a 'role'")
        message = dict(m)
        if isinstance(message.get("content"), list):
            message["content"] = content_text(message["content"])
        if message["role"] == "developer":
            message["role"] = "system"
        messages.append(message)
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type", "function") == "function"]
    return ModelRequest(messages=messages, tools=tools, params=params_from(body, PARAMS), api=API,
                        model=body.get("model"))


def _message(reply: ModelReply) -> dict[str, Any]:
    message = reply.to_openai_message()
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    return message


def _finish(reply: ModelReply) -> str:
    return "tool_calls" if reply.tool_calls else (reply.finish_reason or "stop")


def to_response(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage_counts(request, reply)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": request.model or "polar",
        "choices": [{"index": 0, "message": _message(reply), "finish_reason": _finish(reply), "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def to_stream(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> list[bytes]:
    """The reply as SSE chunks: role, reasoning, content, each tool call, the finish reason, [DONE]."""
    head = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": request.model or "polar"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse_data({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.reasoning:
        events.append(chunk({"reasoning_content": reply.reasoning}))
    if reply.content:
        events.append(chunk({"content": reply.content}))
    for i, call in enumerate(reply.tool_calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                             "function": {"name": call.name, "arguments": call.arguments}}]}))
    events.append(chunk({}, _finish(reply)))
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt, completion = usage_counts(request, reply)
        events.append(sse_data({**head, "choices": [], "usage": {
            "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}))
    events.append(b"data: [DONE]\n\n")
    return events


def error_body(error: ApiError) -> dict[str, Any]:
    return {"error": {"message": error.message, "type": error.kind, "param": None, "code": error.code}}


def models_body(names: list[str]) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "polar"}
                                        for n in names]}

