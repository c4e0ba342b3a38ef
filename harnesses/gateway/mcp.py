"""An MCP server (Streamable HTTP transport, JSON responses) for the env's tools of one gateway session.

External harnesses reach the env's episode tools (a browser) as MCP tools at `/s/<session>/mcp`, through the
same bridge as their model calls, so the sandbox needs no network. It is the tool part of MCP only: the
`initialize` handshake, `tools/list`, `tools/call` and `ping`; each POST gets one JSON reply (the transport
allows that instead of an SSE stream), and the optional server-to-client stream (GET) is declined with 405.
"""

from __future__ import annotations

import base64
from typing import Any

from aiohttp import web

from polar import __version__
from polar.protocols import ToolSet

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
"""Newest first; a client asking for another gets the newest, as the spec says."""
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


async def handle(http: web.Request, tools: ToolSet | None) -> web.StreamResponse:
    if http.method == "DELETE":
        return web.Response(status=204)
    if http.method != "POST":
        return web.Response(status=405, headers={"Allow": "POST, DELETE"},
                            text="this MCP endpoint answers POSTs with JSON; it opens no server-to-client stream")
    if tools is None:
        return _error_response(None, INVALID_REQUEST, "this session's episode has no env tools to serve over MCP",
                               status=404)
    try:
        body = await http.json()
    except ValueError as e:
        return _error_response(None, PARSE_ERROR, f"the body is not valid JSON: {e}", status=400)
    messages = body if isinstance(body, list) else [body]
    replies = [reply for message in messages if (reply := await _answer(message, tools)) is not None]
    if not replies:  # only notifications (or responses): nothing to say
        return web.Response(status=202)
    return web.json_response(replies if isinstance(body, list) else replies[0])


async def _answer(message: Any, tools: ToolSet) -> dict | None:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        if isinstance(message, dict) and ("result" in message or "error" in message):
            return None  # a client's reply to a server request: we send none
        return _error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST,
                      "expected a JSON-RPC 2.0 request with a method")
    if "id" not in message:
        return None  # a notification (notifications/initialized, cancelled): no reply
    mid, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return _result(mid, {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
                             "serverInfo": {"name": "polar", "version": __version__}})
    if method == "ping":
        return _result(mid, {})
    if method == "tools/list":
        return _result(mid, {"tools": [_mcp_tool(spec) for spec in tools.specs]})
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        known = [spec["function"]["name"] for spec in tools.specs]
        if name not in known:
            return _error(mid, INVALID_PARAMS, f"unknown tool {name!r}; the tools are: {', '.join(known)}")
        if not isinstance(arguments, dict):
            return _error(mid, INVALID_PARAMS, "tools/call arguments must be an object")
        try:
            output = await tools.call(name, arguments)
        except Exception as e:  # the tools broke (a browser that never started): the client hears why
            return _error(mid, INTERNAL_ERROR, f"{name} failed: {e}")
        content: list[dict] = [{"type": "text", "text": output.text}]
        if output.image_png is not None:
            content.append({"type": "image", "mimeType": "image/png",
                            "data": base64.b64encode(output.image_png).decode()})
        return _result(mid, {"content": content, "isError": output.is_error})
    return _error(mid, METHOD_NOT_FOUND, f"method {method!r} is not served; this server offers tools only")


def _mcp_tool(spec: dict) -> dict:
    fn = spec["function"]
    return {"name": fn["name"], "description": fn.get("description", ""),
            "inputSchema": fn.get("parameters") or {"type": "object", "properties": {}}}


def _result(mid: Any, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def _error(mid: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def _error_response(mid: Any, code: int, message: str, status: int) -> web.Response:
    return web.json_response(_error(mid, code, message), status=status)
