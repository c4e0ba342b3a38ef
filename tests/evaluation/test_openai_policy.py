"""OpenAIPolicy against a real tiny HTTP server on 127.0.0.1 that answers like vLLM."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from polar.errors import PolarError
from polar.policies.openai_policy import OpenAIPolicy
from polar.types import ModelRequest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    }
]

TOOL_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "served-model",
    "prompt_token_ids": [1, 2, 3],
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "I should list the files.",
                "tool_calls": [
                    {
                        "id": "chatcmpl-tool-7",
                        "type": "function",
                        "function": {"name": "run", "arguments": '{"cmd": "ls"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
            "token_ids": [10, 11, 12],
            "logprobs": {
                "content": [
                    {"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []},
                    {"token": "b", "logprob": -0.2, "bytes": [98], "top_logprobs": []},
                    {"token": "c", "logprob": -0.3, "bytes": [99], "top_logprobs": []},
                ]
            },
        }
    ],
}

PLAIN_REPLY = {
    "id": "chatcmpl-2",
    "object": "chat.completion",
    "model": "served-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello"},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ],
}


class FakeVLLM(BaseHTTPRequestHandler):
    """Answers by the requested model name: `tools` → TOOL_REPLY, `plain` → PLAIN_REPLY, `broken` → 500."""

    seen: list[tuple[dict[str, str], dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "served-model", "object": "model"}]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(({k.lower(): v for k, v in self.headers.items()}, body))
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": "not found"})
        elif body["model"] == "tools":
            self._send(200, TOOL_REPLY)
        elif body["model"] == "plain":
            self._send(200, PLAIN_REPLY)
        else:
            self._send(500, '{"error": {"message": "engine crashed: out of KV cache"}}')


@pytest.fixture
def server() -> Iterator[str]:
    FakeVLLM.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeVLLM)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def request(**kw: Any) -> ModelRequest:
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "ls please"}]
    return ModelRequest(messages=messages, **kw)


def test_tool_call_reply_with_logprobs_and_token_ids(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")
    policy = OpenAIPolicy(model="tools", base_url=server, api_key_env="TEST_KEY", temperature=0.5)
    reply = policy(request(tools=TOOLS, params={"max_tokens": 64, "stream": True}))

    assert reply.content is None
    calls = [(c.id, c.name, c.arguments) for c in reply.tool_calls]
    assert calls == [("chatcmpl-tool-7", "run", '{"cmd": "ls"}')]
    assert reply.reasoning == "I should list the files."
    assert reply.finish_reason == "tool_calls"
    assert reply.model == "served-model"
    assert reply.token_ids == [10, 11, 12]
    assert reply.logprobs == [-0.1, -0.2, -0.3]
    assert reply.prompt_token_ids == [1, 2, 3]

    headers, body = FakeVLLM.seen[-1]
    assert headers["authorization"] == "Bearer sk-test"
    assert body["tools"] == TOOLS
    assert body["messages"] == request().messages
    assert body["logprobs"] is True and body["return_token_ids"] is True
    assert body["temperature"] == 0.5 and body["max_tokens"] == 64
    assert "stream" not in body


def test_plain_reply_without_logprobs(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server)
    monkeypatch.setenv("POLAR_MODEL", "plain")
    policy = OpenAIPolicy(extra_body={"top_p": 0.9})
    reply = policy(request())

    assert reply.content == "hello"
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert reply.token_ids is None and reply.logprobs is None and reply.prompt_token_ids is None

    headers, body = FakeVLLM.seen[-1]
    assert "authorization" not in headers
    assert "tools" not in body
    assert body["top_p"] == 0.9
    policy.check()


def test_server_error_is_a_polar_error(server: str) -> None:
    policy = OpenAIPolicy(model="broken", base_url=server)
    with pytest.raises(PolarError) as e:
        policy(request())
    message = str(e.value)
    assert "500" in message and f"{server}/chat/completions" in message and "out of KV cache" in message


def test_check_on_closed_port_fails_fast() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    policy = OpenAIPolicy(model="any", base_url=url)
    start = time.monotonic()
    with pytest.raises(PolarError, match=f"{url}/models"):
        policy.check()
    assert time.monotonic() - start < 5


def test_missing_model_or_url_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLAR_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(PolarError, match="POLAR_MODEL"):
        OpenAIPolicy(base_url="http://127.0.0.1:1/v1")
    with pytest.raises(PolarError, match="OPENAI_BASE_URL"):
        OpenAIPolicy(model="m")
