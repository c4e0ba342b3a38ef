"""OpenAI Responses <-> canonical (Codex CLI speaks it: `wire_api = "responses"`).

Freeform ("custom") tools, such as Codex's `apply_patch`, become function tools taking one string `input`;
the reply maps back to a `custom_tool_call` so the client sees the shape it declared. A `namespace` tool (how
Codex offers an MCP server's tools) becomes one function per member, named `<namespace>__<member>`; a call to
one goes back as a `function_call` with its `namespace` and member name.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from polar.harnesses.gateway.wire import ApiError, params_from, sse_event, usage_counts
from polar.types import ModelReply, ModelRequest, content_text

API = "openai-responses"
PARAMS = {"temperature": "temperature", "top_p": "top_p", "max_output_tokens": "max_tokens",
          "reasoning": "reasoning", "tool_choice": "tool_choice"}


def _flatten(raw: list[Any]) -> list[Any]:
    """Namespace members as top-level tools named `<namespace>__<member>`."""
    flat: list[Any] = []
    for t in raw:
        if isinstance(t, dict) and t.get("type") == "namespace" and isinstance(t.get("tools"), list):
            flat += [{**m, "name": f"{t.get('name')}__{m['name']}"} for m in t["tools"] if isinstance(m, dict)
                     and "name" in m]
        else:
            flat.append(t)
    return flat


def _tools(raw: list[Any]) -> list[dict[str, Any]]:
    tools = []
    for t in _flatten(raw):
        if not isinstance(t, dict):
            continue
        if t.get("type") == "function" and "name" in t:
            tools.append({"type": "function", "function": {
                "name": t["name"], "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}}}})
        elif t.get("type") == "custom" and "name" in t:
            tools.append({"type": "function", "function": {
                "name": t["name"], "description": t.get("description", ""),
                "parameters": {"type": "object", "properties": {"input": {
                    "type": "string", "description": json.dumps(t.get("format", {}))}}, "required": ["input"]}}})
    return tools


def to_request(body: dict[str, Any]) -> ModelRequest:
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": content_text(body["instructions"])})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list):
        raise ApiError(400, "field 'input' is required and must be a string or a list of items")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ApiError(400, f"input[{i}] must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = {"developer": "system"}.get(item.get("role"), item.get("role", "user"))
            _append(messages, {"role": role, "content": content_text(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments") if kind == "function_call" else json.dumps({"input": item.get("input", "")})
            name = item.get("name", "")
            if item.get("namespace"):
                name = f"{item['namespace']}__{name}"
            call = {"id": item.get("call_id", ""), "type": "function",
                    "function": {"name": name, "arguments": args or "{}"}}
            _append(messages, {"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append({"role": "tool", "tool_call_id": item.get("call_id", ""),
                             "content": content_text(item.get("output"))})
        elif kind == "reasoning":
            summary = "".join(s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict))
            _append(messages, {"role": "assistant", "content": None, "reasoning_content": summary})
    return ModelRequest(messages=messages, tools=_tools(body.get("tools") or []),
                        params=params_from(body, PARAMS), api=API, model=body.get("model"))


def _append(messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
    """Merge consecutive assistant items (reasoning, text, calls) into one assistant message."""
    last = messages[-1] if messages else None
    if message["role"] == "assistant" and last and last["role"] == "assistant":
        if message.get("content"):
            last["content"] = (last.get("content") or "") + message["content"]
        if message.get("tool_calls"):
            last.setdefault("tool_calls", []).extend(message["tool_calls"])
        if message.get("reasoning_content"):
            last["reasoning_content"] = (last.get("reasoning_content") or "") + message["reasoning_content"]
        return
    messages.append(message)


def _custom_names(body: dict[str, Any]) -> set[str]:
    tools = _flatten(body.get("tools") or [])
    return {t.get("name") for t in tools if isinstance(t, dict) and t.get("type") == "custom"}


def _namespaces(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "namespace"
            and isinstance(t.get("name"), str)]


def _output(reply: ModelReply, body: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        items.append({"type": "reasoning", "id": f"rs_{uuid.uuid4().hex[:20]}",
                      "summary": [{"type": "summary_text", "text": reply.reasoning}]})
    if reply.content:
        items.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:20]}", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply.content, "annotations": []}]})
    custom, namespaces = _custom_names(body), _namespaces(body)
    for call in reply.tool_calls:
        if call.name in custom:
            try:
                text = json.loads(call.arguments).get("input", call.arguments)
            except (json.JSONDecodeError, AttributeError):
                text = call.arguments
            items.append({"type": "custom_tool_call", "id": f"ctc_{uuid.uuid4().hex[:20]}", "call_id": call.id,
                          "name": call.name, "input": text, "status": "completed"})
        else:
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:20]}", "call_id": call.id,
                    "name": call.name, "arguments": call.arguments, "status": "completed"}
            space = next((ns for ns in namespaces if call.name.startswith(f"{ns}__")), None)
            if space is not None:
                item |= {"namespace": space, "name": call.name.removeprefix(f"{space}__")}
            items.append(item)
    return items


def to_response(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage_counts(request, reply)
    return {"id": f"resp_{uuid.uuid4().hex[:24]}", "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": request.model or "polar", "output": _output(reply, body),
            "error": None, "incomplete_details": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def to_stream(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> list[bytes]:
    """response.created, then each output item added/streamed/done, then response.completed."""
    response = to_response(reply, request, body)
    seq = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> bytes:
        return sse_event(kind, {"type": kind, "sequence_number": next(seq), **fields})

    events = [event("response.created", response={**response, "status": "in_progress", "output": []}),
              event("response.in_progress", response={**response, "status": "in_progress", "output": []})]
    for index, item in enumerate(response["output"]):
        events.append(event("response.output_item.added", output_index=index, item=item))
        if item["type"] == "message":
            part = item["content"][0]
            events.append(event("response.content_part.added", item_id=item["id"], output_index=index,
                                content_index=0, part={**part, "text": ""}))
            events.append(event("response.output_text.delta", item_id=item["id"], output_index=index,
                                content_index=0, delta=part["text"]))
            events.append(event("response.output_text.done", item_id=item["id"], output_index=index,
                                content_index=0, text=part["text"]))
            events.append(event("response.content_part.done", item_id=item["id"], output_index=index,
                                content_index=0, part=part))
        elif item["type"] == "function_call":
            events.append(event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                                delta=item["arguments"]))
            events.append(event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                                arguments=item["arguments"]))
        events.append(event("response.output_item.done", output_index=index, item=item))
    events.append(event("response.completed", response=response))
    return events


def error_body(error: ApiError) -> dict[str, Any]:
    return {"error": {"message": error.message, "type": error.kind, "param": None, "code": error.code}}
