"""The gateway: one asyncio HTTP server per process that speaks each provider's API.

Every call, whatever its API, becomes a canonical `ModelRequest` and waits in its session for a
`ModelReply`: from `env.step` in step mode (the call waits in `session.calls`), or from a policy in serve
mode (`responder`). The reply is converted back, as JSON or as that API's SSE stream. Sessions are
addressed by URL path (`/s/<id>/...`) or by API key. The server listens on a Unix socket, which sandboxes
get mounted, and optionally on loopback TCP. A session may also carry the env's tools for its episode (a
browser), which its harness calls over MCP at `/s/<id>/mcp` (`mcp.py`).

aiohttp: a C HTTP parser, Unix-socket sites, streaming responses and handler cancellation when a client
hangs up, in one mature dependency; a hand-written HTTP/1.1 server would save little and risk much.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web

from polar.harnesses.gateway import anthropic, gemini, mcp, openai_chat, openai_responses
from polar.harnesses.gateway.wire import ApiError
from polar.protocols import ToolSet
from polar.scratch import scratch_root
from polar.types import ModelReply, ModelRequest

Responder = Callable[[ModelRequest], Awaitable[ModelReply]]
MAX_BODY_BYTES = 32 << 20
BACKLOG = 4096  # aiohttp's default (128) drops connections when a thousand sessions open at once
_SESSION_PATH = re.compile(r"^/s/([A-Za-z0-9_-]+)(/.*)?$")
_GEMINI_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")


@dataclass
class PendingCall:
    request: ModelRequest
    reply: asyncio.Future[ModelReply]


@dataclass
class GatewaySession:
    """One harness's model calls. In step mode they queue in `calls` until the env answers each."""

    id: str
    responder: Responder | None = None
    models: frozenset[str] | None = None
    """Model names this session serves; None accepts any."""
    calls: asyncio.Queue[PendingCall] = field(default_factory=asyncio.Queue)
    tools: ToolSet | None = None
    """The env's tools for this session's episode, served over MCP at `/s/<id>/mcp`."""
    closed: bool = False
    served: int = 0

    async def call(self, request: ModelRequest) -> ModelReply:
        if self.closed:
            raise ApiError(410, f"session {self.id} has ended; no more model calls are answered", code="session_ended")
        self.served += 1
        if self.responder is not None:
            return await self.responder(request)
        pending = PendingCall(request, asyncio.get_running_loop().create_future())
        await self.calls.put(pending)
        return await pending.reply

    async def next_call(self) -> PendingCall:
        """The next call still waiting for a reply (calls whose client hung up are skipped)."""
        while True:
            pending = await self.calls.get()
            if not pending.reply.done():
                return pending

    def close(self) -> None:
        self.closed = True
        while not self.calls.empty():
            pending = self.calls.get_nowait()
            if not pending.reply.done():
                pending.reply.set_exception(ApiError(410, f"session {self.id} has ended", code="session_ended"))


class Gateway:
    def __init__(self, *, socket_path: str | None = None, tcp_port: int | None = None,
                 max_body_bytes: int = MAX_BODY_BYTES):
        self._own_dir = socket_path is None  # then the socket's folder is ours to remove (and scratch's, at exit)
        if socket_path is None:
            socket_path = str(Path(tempfile.mkdtemp(prefix="polar-gw-", dir=scratch_root())) / "gateway.sock")
        self.socket_path = socket_path
        self.tcp_port = tcp_port
        self.max_body_bytes = max_body_bytes
        self.sessions: dict[str, GatewaySession] = {}
        self._runner: web.AppRunner | None = None
        self._starting: asyncio.Lock | None = None

    async def ensure_started(self) -> Gateway:
        """Start the server unless it already runs (safe to call from many episodes at once)."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._runner is None:
                await self.start()
        return self

    @property
    def socket_dir(self) -> str:
        return os.path.dirname(self.socket_path)

    @property
    def url(self) -> str:
        if self.tcp_port is None:
            raise RuntimeError("this gateway listens on its Unix socket only")
        return f"http://127.0.0.1:{self.tcp_port}"

    async def start(self) -> Gateway:
        app = web.Application(client_max_size=self.max_body_bytes)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        os.makedirs(self.socket_dir, exist_ok=True)  # stop() removed it if this gateway runs again
        os.chmod(self.socket_dir, 0o755)
        await web.UnixSite(self._runner, self.socket_path, backlog=BACKLOG).start()
        os.chmod(self.socket_path, 0o666)  # sandboxes run as other uids
        if self.tcp_port is not None:
            site = web.TCPSite(self._runner, "127.0.0.1", self.tcp_port, backlog=BACKLOG)
            await site.start()
            self.tcp_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        for session in self.sessions.values():
            session.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._own_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    def open_session(self, responder: Responder | None = None, models: set[str] | None = None) -> GatewaySession:
        session = GatewaySession(secrets.token_urlsafe(18).replace("-", "x").replace("_", "y"), responder,
                                 frozenset(models) if models else None)
        self.sessions[session.id] = session
        return session

    def close_session(self, session_id: str) -> None:
        """End a session: waiting calls fail with 410, later calls get 410 too (the id is remembered)."""
        if session_id in self.sessions:
            self.sessions[session_id].close()

    # --- HTTP -------------------------------------------------------------------------------------

    async def _handle(self, http: web.Request) -> web.StreamResponse:
        session_id, path = _split_session(http)
        if path.rstrip("/") == "/mcp" and (mcp_session := self.sessions.get(session_id or "")) is not None:
            return await mcp.handle(http, None if mcp_session.closed else mcp_session.tools)
        api = _api_for(path, http)
        try:
            session = self.sessions.get(session_id or "")
            if session is None:
                raise ApiError(404, "unknown session: address it as /s/<session id>/... or pass the id as the API key",
                               kind="not_found_error", code="unknown_session")
            if http.method == "GET" and (path.endswith("/models") or "/models/" in path):
                return web.json_response(api.models_body(sorted(session.models or {"polar"})))
            if http.method != "POST":
                raise ApiError(405, f"{http.method} {path} is not supported; model calls are POSTs")
            body = await _json_body(http)
            gemini_call = _GEMINI_PATH.search(path)
            if api is gemini and gemini_call:
                body.setdefault("model", gemini_call.group(1))
                if gemini_call.group(2) == "countTokens":
                    return web.json_response(_converted(gemini.count_tokens, body, gemini.API))
            if api is anthropic and path.endswith("/count_tokens"):
                return web.json_response(_converted(anthropic.count_tokens, body, anthropic.API))
            if not _is_model_call(path):
                raise ApiError(404, f"no such endpoint: POST {path}", kind="not_found_error")
            request = _converted(api.to_request, body, api.API)
            if session.models is not None and request.model not in session.models:
                raise ApiError(404, f"unknown model {request.model!r}; this session serves: "
                               f"{', '.join(sorted(session.models))}", kind="not_found_error", code="model_not_found")
            reply = await session.call(request)
            streamed_gemini = gemini_call is not None and gemini_call.group(2) == "streamGenerateContent"
            stream = body.get("stream") is True or streamed_gemini
            if not stream:
                return web.json_response(api.to_response(reply, request, body))
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await response.prepare(http)
            for event in api.to_stream(reply, request, body):
                await response.write(event)
            await response.write_eof()
            return response
        except ApiError as e:
            return web.json_response(api.error_body(e), status=e.status)


def _split_session(http: web.Request) -> tuple[str | None, str]:
    match = _SESSION_PATH.match(http.path)
    if match:
        return match.group(1), match.group(2) or "/"
    key = (http.headers.get("x-api-key") or http.headers.get("x-goog-api-key") or http.query.get("key")
           or http.headers.get("Authorization", "").removeprefix("Bearer ").strip())
    return key or None, http.path


def _api_for(path: str, http: web.Request) -> ModuleType:
    if path.endswith("/chat/completions"):
        return openai_chat
    if path.endswith("/responses"):
        return openai_responses
    if "/messages" in path or "anthropic-version" in http.headers:
        return anthropic
    if "/v1beta" in path or _GEMINI_PATH.search(path):
        return gemini
    return openai_chat


def _is_model_call(path: str) -> bool:
    return path.endswith(("/chat/completions", "/responses", "/messages")) or bool(_GEMINI_PATH.search(path))


async def _json_body(http: web.Request) -> dict[str, Any]:
    try:
        raw = await http.read()
    except web.HTTPRequestEntityTooLarge:
        raise ApiError(413, f"request body too large (limit {http.client_max_size} bytes)",
                       code="body_too_large") from None
    try:
        body = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def _converted(convert: Callable[[dict[str, Any]], Any], body: dict[str, Any], api_name: str) -> Any:
    """A field of the wrong type deep in a body is the client's error (400), never the gateway's (500)."""
    try:
        return convert(body)
    except (TypeError, AttributeError, KeyError, ValueError) as e:
        raise ApiError(400, f"the request body does not have the {api_name} shape "
                       f"({type(e).__name__}: {e}); check it against the provider's API reference") from None


_shared: Gateway | None = None


def shared_gateway() -> Gateway:
    """The process's one gateway (Unix socket only). Its socket path is fixed now; it starts on first use."""
    global _shared
    if _shared is None:
        _shared = Gateway()
    return _shared
