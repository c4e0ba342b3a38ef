"""The gateway over real HTTP: each provider API, streaming and not, step and serve mode, bad input, fuzz."""

import asyncio
import json

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from polar.harnesses.gateway import Gateway
from polar.types import ModelReply, ToolCall

REPLY = ModelReply(content="Let me edit it.", reasoning="thinking...",
                   tool_calls=[ToolCall(id="call_1", name="write", arguments='{"path": "a.py", "text": "x"}')])
TOOL = {"name": "write", "description": "write a file",
        "schema": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}}

CALLS = {  # api: (path, body)
    "openai-chat": ("/v1/chat/completions", {
        "model": "m", "messages": [
            {"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "write", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "ok"}],
        "tools": [{"type": "function", "function": {"name": TOOL["name"], "description": TOOL["description"],
                                                    "parameters": TOOL["schema"]}}], "max_tokens": 50}),
    "openai-responses": ("/v1/responses", {
        "model": "m", "instructions": "sys", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c0", "name": "write", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c0", "output": "ok"}],
        "tools": [{"type": "function", "name": TOOL["name"], "description": TOOL["description"],
                   "parameters": TOOL["schema"]}], "max_output_tokens": 50}),
    "anthropic-messages": ("/v1/messages", {
        "model": "m", "system": [{"type": "text", "text": "sys"}], "max_tokens": 50, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c0", "name": "write", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c0", "content": "ok"}]}],
        "tools": [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["schema"]}]}),
    "gemini": ("/v1beta/models/m:generateContent", {
        "systemInstruction": {"parts": [{"text": "sys"}]}, "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "write", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "write", "response": {"output": "ok"}}}]}],
        "tools": [{"functionDeclarations": [{"name": TOOL["name"], "description": TOOL["description"],
                                             "parameters": {"type": "OBJECT", "properties": {
                                                 "path": {"type": "STRING"}, "text": {"type": "STRING"}}}}]}],
        "generationConfig": {"maxOutputTokens": 50}}),
}


def run(coro):
    return asyncio.run(coro)


async def exchange(api, stream):
    """One call in step mode: the client posts, the 'env' takes the canonical request and answers it."""
    gateway = await Gateway(tcp_port=0).start()
    session = gateway.open_session()
    path, body = CALLS[api]
    if stream:
        body = {**body, "stream": True}
        path = path.replace(":generateContent", ":streamGenerateContent")
    try:
        async with httpx.AsyncClient(base_url=f"{gateway.url}/s/{session.id}") as client:
            post = asyncio.create_task(client.post(path, json=body, params={"alt": "sse"} if stream else None))
            pending = await asyncio.wait_for(session.next_call(), 5)
            pending.reply.set_result(REPLY)
            response = await post
        return pending.request, response
    finally:
        await gateway.stop()


@pytest.mark.parametrize("api", list(CALLS))
def test_each_api_becomes_the_same_canonical_request(api):
    request, response = run(exchange(api, stream=False))
    assert response.status_code == 200, response.text
    assert request.api == api
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user", "assistant", "tool"], request.messages
    assert request.messages[0]["content"] == "sys" and request.messages[1]["content"] == "hi"
    assert request.messages[2]["tool_calls"][0]["function"]["name"] == "write"
    assert request.messages[3]["tool_call_id"] == request.messages[2]["tool_calls"][0]["id"]
    assert request.messages[3]["content"] == "ok"
    assert request.tool_names() == ["write"]
    assert request.tools[0]["function"]["parameters"]["properties"]["path"]["type"] == "string"
    assert request.params["max_tokens"] == 50


def _reply_from(api, payload):
    """Pull (text, tool name, tool arguments) out of a provider's non-streamed response."""
    if api == "openai-chat":
        m = payload["choices"][0]["message"]
        fn = m["tool_calls"][0]["function"]
        return m["content"], fn["name"], json.loads(fn["arguments"])
    if api == "openai-responses":
        msg = next(i for i in payload["output"] if i["type"] == "message")
        call = next(i for i in payload["output"] if i["type"] == "function_call")
        return msg["content"][0]["text"], call["name"], json.loads(call["arguments"])
    if api == "anthropic-messages":
        text = next(b for b in payload["content"] if b["type"] == "text")
        use = next(b for b in payload["content"] if b["type"] == "tool_use")
        assert payload["stop_reason"] == "tool_use"
        return text["text"], use["name"], use["input"]
    parts = payload["candidates"][0]["content"]["parts"]
    text = next(p["text"] for p in parts if "text" in p and not p.get("thought"))
    call = next(p["functionCall"] for p in parts if "functionCall" in p)
    return text, call["name"], call["args"]


@pytest.mark.parametrize("api", list(CALLS))
def test_reply_comes_back_in_the_providers_shape(api):
    _, response = run(exchange(api, stream=False))
    assert _reply_from(api, response.json()) == ("Let me edit it.", "write", {"path": "a.py", "text": "x"})


def _events(text):
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


@pytest.mark.parametrize("api", list(CALLS))
def test_streaming_replies_carry_text_and_tool_calls(api):
    _, response = run(exchange(api, stream=True))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    if api == "openai-chat":
        text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
        call = next(e["choices"][0]["delta"]["tool_calls"][0] for e in events if e["choices"] and
                    e["choices"][0]["delta"].get("tool_calls"))
        assert (text, call["function"]["name"]) == ("Let me edit it.", "write")
        assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"
        assert response.text.rstrip().endswith("data: [DONE]")
    elif api == "openai-responses":
        text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        done = events[-1]
        assert text == "Let me edit it." and done["type"] == "response.completed"
        assert [i["type"] for i in done["response"]["output"]] == ["reasoning", "message", "function_call"]
    elif api == "anthropic-messages":
        kinds = [e["type"] for e in events]
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
        text = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
        args = "".join(e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta")
        assert text == "Let me edit it." and json.loads(args) == {"path": "a.py", "text": "x"}
    else:
        assert _reply_from(api, events[0]) == ("Let me edit it.", "write", {"path": "a.py", "text": "x"})


def test_serve_mode_answers_from_a_policy_and_models_are_listed():
    async def body():
        gateway = await Gateway(tcp_port=0).start()

        async def responder(request):
            return ModelReply(content=f"echo {request.messages[-1]['content']}")

        session = gateway.open_session(responder=responder, models={"polar-model"})
        try:
            async with httpx.AsyncClient(base_url=f"{gateway.url}/v1",
                                         headers={"Authorization": f"Bearer {session.id}"}) as client:
                ok = await client.post("/chat/completions", json={
                    "model": "polar-model", "messages": [{"role": "user", "content": "x"}]})
                models = await client.get("/models")
                wrong = await client.post("/chat/completions", json={
                    "model": "gpt-9", "messages": [{"role": "user", "content": "x"}]})
            return ok, models, wrong
        finally:
            await gateway.stop()

    ok, models, wrong = run(body())
    assert ok.json()["choices"][0]["message"]["content"] == "echo x"
    assert [m["id"] for m in models.json()["data"]] == ["polar-model"]
    assert wrong.status_code == 404 and "unknown model 'gpt-9'" in wrong.json()["error"]["message"]


def test_bad_requests_get_4xx_in_the_providers_error_shape():
    async def body():
        gateway = await Gateway(tcp_port=0, max_body_bytes=4096).start()
        session = gateway.open_session(responder=lambda r: asyncio.sleep(0, ModelReply(content="x")))
        ended = gateway.open_session()
        gateway.close_session(ended.id)
        base = gateway.url
        try:
            async with httpx.AsyncClient() as c:
                return {
                    "bad_json": await c.post(f"{base}/s/{session.id}/v1/chat/completions", content=b"{nope"),
                    "not_object": await c.post(f"{base}/s/{session.id}/v1/messages", json=[1, 2]),
                    "missing": await c.post(f"{base}/s/{session.id}/v1/messages", json={"model": "m"}),
                    "unknown_session": await c.post(f"{base}/s/nosuch/v1/chat/completions", json={}),
                    "ended": await c.post(f"{base}/s/{ended.id}/v1beta/models/m:generateContent",
                                          json={"contents": []}),
                    "too_big": await c.post(f"{base}/s/{session.id}/v1/responses", json={"input": "x" * 10_000}),
                    "no_endpoint": await c.post(f"{base}/s/{session.id}/v1/embeddings", json={}),
                }
        finally:
            await gateway.stop()

    r = run(body())
    assert r["bad_json"].status_code == 400 and "not valid JSON" in r["bad_json"].json()["error"]["message"]
    assert r["not_object"].status_code == 400 and r["not_object"].json()["type"] == "error"
    assert r["missing"].status_code == 400 and "messages" in r["missing"].json()["error"]["message"]
    assert r["unknown_session"].status_code == 404
    assert r["ended"].status_code == 410 and r["ended"].json()["error"]["status"] == "FAILED_PRECONDITION"
    assert r["too_big"].status_code == 413
    assert r["no_endpoint"].status_code == 404


def test_a_client_that_hangs_up_leaves_no_call_behind():
    async def body():
        gateway = await Gateway(tcp_port=0).start()
        session = gateway.open_session()
        path, payload = CALLS["openai-chat"]
        try:
            async with httpx.AsyncClient(base_url=f"{gateway.url}/s/{session.id}", timeout=0.3) as client:
                with pytest.raises(httpx.ReadTimeout):
                    await client.post(path, json=payload)
                await asyncio.sleep(0.2)
                post = asyncio.create_task(client.post(path, json={**payload, "max_tokens": 7}, timeout=5))
                pending = await asyncio.wait_for(session.next_call(), 5)
                pending.reply.set_result(ModelReply(content="second"))
                return pending.request, await post
        finally:
            await gateway.stop()

    request, response = run(body())
    assert request.params["max_tokens"] == 7 and response.json()["choices"][0]["message"]["content"] == "second"


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                 max_size=4), max_leaves=20)
_fields = st.fixed_dictionaries({}, optional={
    "model": st.text(max_size=10) | st.none(), "messages": _json, "input": _json, "contents": _json,
    "tools": _json, "system": _json, "instructions": _json, "stream": st.booleans(), "max_tokens": _json})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from([p for p, _ in CALLS.values()] + ["/v1/messages/count_tokens", "/v1/models",
                                                             "/v1beta/models/m:streamGenerateContent"]),
       body=_fields | _json)
@example(path="/v1beta/models/m:generateContent", body={"contents": [], "tools": True})  # once a 500
@example(path="/v1/messages", body={"messages": [{"role": "user", "content": [7]}]})
def test_fuzz_every_endpoint_never_5xx_and_never_hangs(path, body):
    async def go():
        gateway = await Gateway(tcp_port=0).start()

        async def responder(request):
            return ModelReply(content="ok", tool_calls=[ToolCall(name="f", arguments="{bad")])

        session = gateway.open_session(responder=responder)
        try:
            async with httpx.AsyncClient(base_url=f"{gateway.url}/s/{session.id}", timeout=5) as client:
                return await client.post(path, json=body)
        finally:
            await gateway.stop()

    response = run(go())
    assert response.status_code < 500, response.text
    assert response.status_code in (200, 400, 404, 405), response.text


def test_responses_namespace_tools_round_trip_as_prefixed_functions():
    """Codex offers an MCP server's tools as one `namespace` tool; the policy sees `<namespace>__<member>`."""
    from polar.harnesses.gateway import openai_responses

    body = {"model": "m", "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c0", "namespace": "mcp__polar", "name": "snapshot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c0", "output": "Page: Home"}],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}},
                  {"type": "namespace", "name": "mcp__polar", "description": "browser", "tools": [
                      {"type": "function", "name": "click", "description": "Click.",
                       "parameters": {"type": "object", "properties": {"ref": {"type": "string"}}}}]}]}
    request = openai_responses.to_request(body)
    assert request.tool_names() == ["shell", "mcp__polar__click"]
    assert request.messages[1]["tool_calls"][0]["function"]["name"] == "mcp__polar__snapshot"
    reply = ModelReply(tool_calls=[ToolCall(id="c1", name="mcp__polar__click", arguments='{"ref": "e3"}'),
                                   ToolCall(id="c2", name="shell", arguments="{}")])
    first, second = openai_responses.to_response(reply, request, body)["output"]
    assert (first["namespace"], first["name"], first["arguments"]) == ("mcp__polar", "click", '{"ref": "e3"}')
    assert second["name"] == "shell" and "namespace" not in second


def test_a_gateway_leaves_no_socket_folder_behind(tmp_path):
    """Its socket's folder goes on stop, and at exit for a process that never stops its shared gateway
    (every episode process made one; thousands piled up in /tmp)."""
    import os
    import subprocess
    import sys

    async def start_and_stop():
        gateway = await Gateway().start()
        folder = gateway.socket_dir
        assert os.path.exists(gateway.socket_path)
        await gateway.stop()
        return folder

    assert not os.path.exists(run(start_and_stop()))
    script = ("import asyncio\nfrom polar.harnesses.gateway.server import shared_gateway\n"
              "gateway = shared_gateway()\nasyncio.run(gateway.ensure_started())\nprint(gateway.socket_dir)\n")
    folder = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert folder and not os.path.exists(folder)
