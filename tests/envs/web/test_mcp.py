"""The gateway's MCP endpoint, driven by the official MCP Python client (the `mcp` package), a real peer."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from polar.harnesses.gateway.server import Gateway
from polar.protocols import ToolOutput


class EchoTools:
    """A two-tool ToolSet: `echo` says its text back, with a PNG when asked; `fail` is an error output."""

    specs = [
        {"type": "function", "function": {"name": "echo", "description": "Say the text back.", "parameters": {
            "type": "object", "properties": {"text": {"type": "string"}, "image": {"type": "boolean"}},
            "required": ["text"]}}},
        {"type": "function", "function": {"name": "fail", "description": "Always fails.",
                                          "parameters": {"type": "object", "properties": {}}}},
    ]
    exclusive = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    async def call(self, name: str, arguments: dict) -> ToolOutput:
        self.calls.append((name, arguments))
        if name == "fail":
            return ToolOutput("Error: it failed", is_error=True)
        return ToolOutput(f"you said {arguments['text']}", image_png=b"\x89PNG\r\n" if arguments.get("image") else None)

    async def aclose(self) -> None:
        pass


def with_gateway(body) -> None:
    async def main():
        gateway = await Gateway(tcp_port=0).start()
        try:
            session = gateway.open_session()
            session.tools = EchoTools()
            await body(gateway, session, f"{gateway.url}/s/{session.id}/mcp")
        finally:
            await gateway.stop()
    asyncio.run(main())


def test_the_official_client_lists_and_calls_the_env_tools():
    async def body(gateway, session, url):
        async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as client:
            init = await client.initialize()
            assert init.server_info.name == "polar" and init.capabilities.tools is not None
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["echo", "fail"]
            assert listed.tools[0].input_schema["required"] == ["text"]
            said = await client.call_tool("echo", {"text": "hi", "image": True})
            assert not said.is_error
            assert [c.type for c in said.content] == ["text", "image"] and said.content[0].text == "you said hi"
            assert said.content[1].mime_type == "image/png"
            failed = await client.call_tool("fail", {})
            assert failed.is_error and failed.content[0].text == "Error: it failed"
            with pytest.raises(MCPError, match="unknown tool 'nope'; the tools are: echo, fail"):
                await client.call_tool("nope", {})
            await client.send_ping()
        assert session.tools.calls == [("echo", {"text": "hi", "image": True}), ("fail", {})]
    with_gateway(body)


def test_the_endpoint_answers_plain_http_by_the_transport_rules():
    async def body(gateway, session, url):
        async with aiohttp.ClientSession() as http:
            async with http.get(url) as got:
                assert got.status == 405  # no server-to-client stream is offered
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            async with http.post(url, json=note) as posted:
                assert posted.status == 202
            async with http.post(url, data=b"{nope") as bad:
                assert bad.status == 400 and (await bad.json())["error"]["code"] == -32700
            old = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05"}}
            async with http.post(url, json=old) as init:
                assert (await init.json())["result"]["protocolVersion"] == "2024-11-05"
            unknown = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
            async with http.post(url, json=unknown) as missing:
                assert (await missing.json())["error"]["code"] == -32601
            gateway.close_session(session.id)
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}
            async with http.post(url, json=call) as ended:
                assert ended.status == 404 and "no env tools" in (await ended.json())["error"]["message"]
    with_gateway(body)
