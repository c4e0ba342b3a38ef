"""Gemini `generateContent` / `streamGenerateContent` <-> canonical (Gemini CLI, Google clients).

Gemini matches a function response to its call by name (newer clients also send an `id`); canonical
messages need ids, so calls without one get `<name>-<n>` and responses are matched in the same order.
"""

from __future__ import annotations

import json
from typing import Any

from polar.harnesses.gateway.wire import ApiError, estimate_tokens, parse_arguments, sse_data, usage_counts
from polar.types import ModelReply, ModelRequest

API = "gemini"
PARAMS = {"temperature": "temperature", "topP": "top_p", "topK": "top_k", "maxOutputTokens": "max_tokens",
          "stopSequences": "stop", "thinkingConfig": "thinking"}


def _schema(value: Any) -> Any:
    """Gemini's OpenAPI-style schema (upper-case types) as plain JSON Schema."""
    if isinstance(value, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _schema(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_schema(v) for v in value]
    return value


def to_request(body: dict[str, Any]) -> ModelRequest:
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": "".join(p.get("text", "") for p in system.get("parts", []))})
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise ApiError(400, "field 'contents' is required and must be a list")
    open_calls: list[tuple[str, str]] = []  # (name, id) of calls awaiting a response, in order
    count = 0
    for i, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts", []), list):
            raise ApiError(400, f"contents[{i}] must be an object with a list of parts")
        parts = [p for p in content.get("parts", []) if isinstance(p, dict)]
        if content.get("role") == "model":
            text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
            thought = "".join(p.get("text", "") for p in parts if p.get("thought"))
            calls = []
            for p in parts:
                if "functionCall" in p:
                    fc = p["functionCall"]
                    count += 1
                    call_id = fc.get("id") or f"{fc.get('name', 'call')}-{count}"
                    open_calls.append((fc.get("name", ""), call_id))
                    arguments = json.dumps(fc.get("args", {}))
                    calls.append({"id": call_id, "type": "function",
                                  "function": {"name": fc.get("name", ""), "arguments": arguments}})
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            if thought:
                message["reasoning_content"] = thought
            messages.append(message)
            continue
        text = []
        for p in parts:
            if "functionResponse" in p:
                fr = p["functionResponse"]
                call_id = fr.get("id") or _match(open_calls, fr.get("name", ""))
                messages.append({"role": "tool", "tool_call_id": call_id, "name": fr.get("name", ""),
                                 "content": _response_text(fr.get("response"))})
            elif "text" in p:
                text.append(p["text"])
        if text:
            messages.append({"role": "user", "content": "".join(text)})
    tools = []
    for group in body.get("tools") or []:
        for f in (group or {}).get("functionDeclarations") or (group or {}).get("function_declarations") or []:
            parameters = f.get("parametersJsonSchema") or _schema(f.get("parameters")) or {"type": "object"}
            tools.append({"type": "function", "function": {"name": f.get("name", ""),
                                                           "description": f.get("description", ""),
                                                           "parameters": parameters}})
    config = body.get("generationConfig") or {}
    params = {canonical: config[k] for k, canonical in PARAMS.items() if config.get(k) is not None}
    return ModelRequest(messages=messages, tools=tools, params=params, api=API, model=body.get("model"))


def _match(open_calls: list[tuple[str, str]], name: str) -> str:
    for i, (call_name, call_id) in enumerate(open_calls):
        if call_name == name:
            del open_calls[i]
            return call_id
    return name


def _response_text(response: Any) -> str:
    if isinstance(response, dict) and set(response) <= {"output", "content", "result"} and len(response) == 1:
        value = next(iter(response.values()))
        return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(response)


def to_response(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.reasoning:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.content:
        parts.append({"text": reply.content})
    for call in reply.tool_calls:
        parts.append({"functionCall": {"id": call.id, "name": call.name, "args": parse_arguments(call.arguments)}})
    prompt, completion = usage_counts(request, reply)
    finish = "MAX_TOKENS" if reply.finish_reason == "length" else "STOP"
    return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]}, "finishReason": finish,
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                              "totalTokenCount": prompt + completion},
            "modelVersion": request.model or "polar"}


def to_stream(reply: ModelReply, request: ModelRequest, body: dict[str, Any]) -> list[bytes]:
    """One SSE chunk holding the whole candidate (a valid stream: clients concatenate the parts)."""
    return [sse_data(to_response(reply, request, body))]


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    inner = body.get("generateContentRequest") or body
    return {"totalTokens": estimate_tokens(json.dumps(inner.get("contents", [])))}


def error_body(error: ApiError) -> dict[str, Any]:
    status = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 410: "FAILED_PRECONDITION", 413: "INVALID_ARGUMENT",
              504: "DEADLINE_EXCEEDED"}.get(error.status, "INTERNAL")
    return {"error": {"code": error.status, "message": error.message, "status": status}}


def models_body(names: list[str]) -> dict[str, Any]:
    return {"models": [{"name": f"models/{n}", "displayName": n, "supportedGenerationMethods": [
        "generateContent", "streamGenerateContent", "countTokens"]} for n in names]}
