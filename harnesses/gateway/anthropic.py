"""Anthropic Messages <-> canonical (Claude Code and other Anthropic clients)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from polar.harnesses.gateway.wire import (
    ApiError,
    estimate_tokens,
    params_from,
    parse_arguments,
    require,
    sse_event,
    usage_counts,
)
from polar.types import ModelReply, ModelRequest, content_text

API = "anthropic-messages"
PARAMS = {"max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p", "top_k": "top_k",
          "stop_sequences": "stop", "thinking": "thinking", "tool_choice": "tool_choice"}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ApiError(400, "message content must be a string or a list of content blocks")
    return [b for b in content if isinstance(b, dict)]


def to_request(body: dict[str, Any]) -> ModelRequest:
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": content_text(system)})
    for i, m in enumerate(require(body, "messages", list)):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "system"):
            raise ApiError(400, f"messages[{i}].role must be 'user', 'assistant' or 'system'")
        if m["role"] == "system":  # Claude Code puts environment notes in system turns mid-conversation
            messages.append({"role": "system", "content": content_text(m.get("content"))})
            continue
        blocks = _blocks(m.get("content"))
        if m["role"] == "assistant":
            messages.append(_assistant(blocks))
            continue
        text = []
        for b in blocks:
            if b.get("type") == "tool_result":
                result = content_text(b.get("content"))
                messages.append({"role": "tool", "tool_call_id": b.get("tool_use_id", ""),
                                 "content": f"Error: {result}" if b.get("is_error") else result})
            elif b.get("type") == "text":
                text.append(b.get("text", ""))
            else:
                text.append(f"[{b.get('type', 'unknown')} block]")
        if text:
            messages.append({"role": "user", "content": "\n".join(text)})
    tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                               "parameters": t.get("input_schema") or {"type": "object"}}}
             for t in body.get("tools") or [] if isinstance(t, dict) and "name" in t]
    return ModelRequest(messages=messages, tools=tools, params=params_from(body, PARAMS), api=API,
                        model=body.get("model"))


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(
        b.get("text", "") for b in blocks if b.get("type") == "text") or None}
    calls = [{"id": b.get("id", ""), "type": "function",
              "function": {"name": b.get("name", ""), "arguments": json.dumps(b.get("input", {}))}}
             for b in blocks if b.get("type") == "tool_use"]
    if calls:
        message["tool_calls"] = calls
    thinking = "".join(b.get("thinking", "") for b in blocks if b.get("type") == "thinking")
    if thinking:
        message["reasoning_content"] = thinking
    return message


def _content(reply: ModelReply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": ""})
    if reply.content:
        blocks.append({"type": "text", "text": reply.content})
    for call in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": parse_arguments(call.arguments)})
    return blocks


def _stop_reason(reply: ModelReply) -> str:
    if reply.tool_calls:
        return "tool_use"
    return "max_tokens" if reply.finish_reason == "length" else "end_turn"


def to_response(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage_counts(request, reply)
    return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
            "model": request.model or "polar", "content": _content(reply), "stop_reason": _stop_reason(reply),
            "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": completion}}


def to_stream(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> list[bytes]:
    """message_start, one start/delta/stop triple per content block, message_delta, message_stop."""
    message = to_response(reply, request, body)
    blocks, message["content"] = message["content"], []
    events = [sse_event("message_start", {"type": "message_start", "message": {
        **message, "stop_reason": None, "usage": {**message["usage"], "output_tokens": 0}}})]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        elif kind == "thinking":
            start, delta = {"type": "thinking", "thinking": ""}, {"type": "thinking_delta",
                                                                  "thinking": block["thinking"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(sse_event("content_block_start", {"type": "content_block_start", "index": index,
                                                        "content_block": start}))
        events.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": delta}))
        if kind == "thinking":
            events.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                            "delta": {"type": "signature_delta", "signature": ""}}))
        events.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(sse_event("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(sse_event("message_stop", {"type": "message_stop"}))
    return events


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    request = to_request(body)
    return {"input_tokens": estimate_tokens(json.dumps(request.messages) + json.dumps(request.tools))}


def error_body(error: ApiError) -> dict[str, Any]:
    kind = {404: "not_found_error", 413: "request_too_large", 410: "invalid_request_error"}.get(
        error.status, error.kind if error.status < 500 else "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def models_body(names: list[str]) -> dict[str, Any]:
    return {"data": [{"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"}
                     for n in names], "has_more": False, "first_id": names[0] if names else None,
            "last_id": names[-1] if names else None}
