"""Latency a model gateway adds to a call: polar's gateway vs the LiteLLM proxy, over the same fake upstream.

A fake OpenAI-compatible upstream answers every `POST /v1/chat/completions` at once with a fixed tool call.
Three contenders are timed with the same httpx client and the same ~4 KB agent request: `direct` (client to
upstream), `polar gateway` (a serve-mode session whose responder forwards the canonical request to the
upstream and converts the reply back) and `LiteLLM proxy` (its CLI, `openai/fake` pointed at the upstream).
A reference row runs the same gateway with an aiohttp client in the responder instead of httpx.
Upstream, gateway and LiteLLM each run in their own process; the client runs in this one, in one asyncio
loop. Added latency = contender − direct, per percentile. Rounds alternate the contenders (each goes first
in turn), at concurrency 1 and with 64 concurrent sessions. Then capacity: 1,000 step-mode calls held open
at once in one gateway, and 256 serve-mode sessions calling at once.

    python benchmarks/gateway_latency.py [--quick]
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import json
import multiprocessing as mp
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from timing import options, rotated, table, write

DIRECT, POLAR, LITELLM = "direct", "polar gateway", "LiteLLM proxy"
POLAR_AIOHTTP = "polar gateway, aiohttp forward (ref.)"
"""The same gateway with an aiohttp client as responder: how much of polar's row is httpx's."""
CONCURRENCY = 64
MODEL = "fake"
CHAT = "/v1/chat/completions"
JSON_HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer x"}


# --- the request every contender sends, and the upstream's fixed answer ----------------------------------------

def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


TOOLS = [
    _tool("bash", "Run a shell command in the repository and return its combined stdout and stderr. Commands "
          "time out after 120 seconds; long-running servers must be started in the background.",
          {"command": {"type": "string", "description": "The command line, run with bash -lc"},
           "timeout": {"type": "integer", "description": "Seconds before the command is killed"}}, ["command"]),
    _tool("read_file", "Read a text file, optionally a range of lines, numbered from 1.",
          {"path": {"type": "string", "description": "Path relative to the repository root"},
           "start_line": {"type": "integer"}, "end_line": {"type": "integer"}}, ["path"]),
    _tool("write_file", "Create or overwrite a file with the given content.",
          {"path": {"type": "string"}, "content": {"type": "string", "description": "The whole new content"}},
          ["path", "content"]),
    _tool("search", "Search the repository for a regular expression and list the matching lines.",
          {"pattern": {"type": "string"}, "glob": {"type": "string", "description": "Only files matching this"}},
          ["pattern"]),
    _tool("submit", "Submit the work when the task is done; the episode ends.",
          {"summary": {"type": "string", "description": "One paragraph on what changed and why"}}, ["summary"]),
]
SYSTEM_PROMPT = (
    "You are a careful software engineer working in a sandboxed Linux container on a Python repository. "
    "You can run shell commands, read and write files and search the code with the tools provided. "
    "Work in small steps: read the relevant code before changing it, run the tests after every change, and "
    "keep changes minimal and in the style of the surrounding code. Never modify the tests to make them pass. "
    "When a command fails, read its output and fix the cause rather than retrying blindly. Do not install new "
    "packages unless the task requires it. The repository is at /repo and is a git checkout; you may use git "
    "to inspect history but do not commit. When you are done, call submit with a short summary. "
) * 2
FILE_TEXT = (
    "def parse_duration(text: str) -> int:\n"
    "    \"\"\"Seconds in '1h30m', '45s', '2m'.\"\"\"\n"
    "    total, number = 0, ''\n"
    "    for ch in text:\n"
    "        if ch.isdigit():\n"
    "            number += ch\n"
    "        else:\n"
    "            total += int(number) * {'h': 3600, 'm': 60, 's': 1}[ch]\n"
    "            number = ''\n"
    "    return total\n"
)
MESSAGES = [
    {"role": "system", "content": SYSTEM_PROMPT},
    {"role": "user", "content": "parse_duration('1h30') returns 3600 instead of raising ValueError on a "
                                "trailing number without a unit. Fix it in utils/duration.py and add a test."},
    {"role": "assistant", "content": "Let me read the function first.", "tool_calls": [
        {"id": "call_a1", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "utils/duration.py"})}}]},
    {"role": "tool", "tool_call_id": "call_a1", "content": FILE_TEXT},
    {"role": "assistant", "content": "The trailing number is dropped. Running the tests to see the baseline.",
     "tool_calls": [{"id": "call_a2", "type": "function",
                     "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -q tests"})}}]},
    {"role": "tool", "tool_call_id": "call_a2", "content": "..........                [100%]\n10 passed in 0.21s"},
]
BODY = json.dumps({"model": MODEL, "messages": MESSAGES, "tools": TOOLS, "temperature": 0.2,
                   "max_tokens": 1024}).encode()
STREAM_BODY = json.dumps({**json.loads(BODY), "stream": True}).encode()
ARGUMENTS = json.dumps({"command": "pytest -q tests/test_duration.py"})
COMPLETION = {
    "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000, "model": MODEL,
    "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
        "role": "assistant", "content": "Now the new test.", "tool_calls": [
            {"id": "call_b1", "type": "function", "function": {"name": "bash", "arguments": ARGUMENTS}}]}}],
    "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
}


def raise_fd_limit(want: int = 8192) -> None:
    """Each held-open call costs a descriptor on both ends; the default soft limit is often 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))


def _loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


# --- the two servers in their own processes -------------------------------------------------------------------

def serve_upstream(conn: Connection) -> None:
    """The fake upstream: reads the body, answers the fixed completion. Sends its port; any message stops it."""
    from aiohttp import web

    raise_fd_limit()
    payload = json.dumps(COMPLETION).encode()

    async def complete(http: web.Request) -> web.Response:
        await http.read()
        return web.Response(body=payload, content_type="application/json")

    async def main() -> None:
        app = web.Application()
        app.router.add_post(CHAT, complete)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        sock = _loopback_socket()
        await web.SockSite(runner, sock, backlog=2048).start()
        conn.send(sock.getsockname()[1])
        await asyncio.to_thread(conn.recv)
        await runner.cleanup()

    asyncio.run(main())


def serve_gateway(conn: Connection, upstream_url: str) -> None:
    """polar's gateway on loopback TCP, driven by commands on `conn` (see `GatewayProcess`)."""
    raise_fd_limit()
    asyncio.run(_gateway_main(conn, upstream_url))


async def _gateway_main(conn: Connection, upstream_url: str) -> None:
    import aiohttp

    from polar.harnesses.gateway import Gateway, GatewaySession
    from polar.policies.openai_policy import reply_from_completion
    from polar.types import ModelReply, ModelRequest

    url = f"{upstream_url}/chat/completions"
    upstream = httpx.AsyncClient(timeout=30.0, limits=httpx.Limits(max_connections=512, max_keepalive_connections=512))
    upstream_aiohttp = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=512),
                                             timeout=aiohttp.ClientTimeout(total=30.0))

    def upstream_body(request: ModelRequest) -> dict[str, Any]:
        body = {**request.params, "model": request.model, "messages": request.messages}
        if request.tools:
            body["tools"] = request.tools
        return body

    async def forward(request: ModelRequest) -> ModelReply:
        response = await upstream.post(url, json=upstream_body(request))
        response.raise_for_status()
        return reply_from_completion(response.json(), request.model)

    async def forward_aiohttp(request: ModelRequest) -> ModelReply:
        async with upstream_aiohttp.post(url, json=upstream_body(request)) as response:
            response.raise_for_status()
            return reply_from_completion(await response.json(), request.model)

    forwarders = {"httpx": forward, "aiohttp": forward_aiohttp}
    gateway = await Gateway(tcp_port=0).start()
    held: list[GatewaySession] = []
    conn.send(gateway.url)
    while True:
        command, arg = await asyncio.to_thread(conn.recv)
        if command == "serve":
            count, forwarder = arg
            conn.send([gateway.open_session(forwarders[forwarder]).id for _ in range(count)])
        elif command == "step":
            new = [gateway.open_session() for _ in range(arg)]
            held += new
            conn.send([s.id for s in new])
        elif command == "waiting":
            conn.send(sum(s.calls.qsize() for s in held))
        elif command == "answer":
            reply = reply_from_completion(COMPLETION, MODEL)
            answered = 0
            for session in held:
                while session.calls.qsize():
                    (await asyncio.wait_for(session.next_call(), 5.0)).reply.set_result(reply)
                    answered += 1
            conn.send(answered)
        else:
            break
    await gateway.stop()
    shutil.rmtree(gateway.socket_dir, ignore_errors=True)
    await upstream.aclose()
    await upstream_aiohttp.close()
    conn.send("stopped")


@dataclass
class GatewayProcess:
    """The parent's end: open serve- or step-mode sessions, count held calls, answer them all."""

    process: mp.process.BaseProcess
    conn: Connection
    url: str
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def ask(self, command: str, arg: Any = None) -> Any:
        async with self._lock:  # the pipe carries one exchange at a time; the thread keeps the loop free
            return await asyncio.to_thread(self._exchange, command, arg)

    def _exchange(self, command: str, arg: Any) -> Any:
        self.conn.send((command, arg))
        if not self.conn.poll(60):
            raise TimeoutError(f"the gateway process did not answer {command!r} within 60 s")
        return self.conn.recv()


def start_process(target: Any, *args: Any) -> tuple[mp.process.BaseProcess, Connection, Any]:
    """Spawn `target(conn, *args)` and wait (30 s at most) for the first thing it sends (its port or URL)."""
    ours, theirs = mp.get_context("spawn").Pipe()
    process = mp.get_context("spawn").Process(target=target, args=(theirs, *args), daemon=True)
    process.start()
    if not ours.poll(30):
        process.kill()
        raise RuntimeError(f"{target.__name__} did not start within 30 s")
    return process, ours, ours.recv()


def stop_process(process: mp.process.BaseProcess, conn: Connection, message: Any) -> None:
    if process.is_alive():
        conn.send(message)
        process.join(10)
    if process.is_alive():
        process.kill()
        process.join(5)


# --- LiteLLM proxy, through its CLI ------------------------------------------------------------------------------

LITELLM_ENV = {
    "LITELLM_TELEMETRY": "False",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # else it fetches the price list from GitHub at start
    "LITELLM_LOG": "ERROR",
    "LITELLM_MODE": "PRODUCTION",  # no .env loading
}


def litellm_config(upstream_url: str) -> str:
    return json.dumps({  # YAML is a superset of JSON
        "model_list": [{"model_name": MODEL, "litellm_params": {
            "model": f"openai/{MODEL}", "api_base": upstream_url, "api_key": "x"}}],
        "litellm_settings": {"telemetry": False, "set_verbose": False, "turn_off_message_logging": True,
                             "callbacks": [], "success_callback": [], "failure_callback": [],
                             "request_timeout": 30},
        "general_settings": {"disable_spend_logs": True, "disable_error_logs": True,
                             "background_health_checks": False,
                             # no key checks per call, as polar's gateway makes none (a session id is the key)
                             "dangerously_permit_weak_or_unset_master_key": True},
    }, indent=2)


async def start_litellm(upstream_url: str, workdir: Path) -> tuple[subprocess.Popen | None, str]:
    """The proxy and its URL, or (None, why not). Readiness: GET /health/liveliness, within 120 s."""
    exe = shutil.which("litellm")
    if exe is None:
        return None, "the `litellm` CLI is not installed (pip install 'litellm[proxy]')"
    config = workdir / "litellm.yaml"
    config.write_text(litellm_config(upstream_url))
    with _loopback_socket() as sock:
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | LITELLM_ENV
    with open(workdir / "litellm.log", "wb") as log:  # the child writes to its own copy of the descriptor
        proc = subprocess.Popen([exe, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=2.0) as http:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if (await http.get(f"{url}/health/liveliness")).status_code == 200:
                    return proc, url
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.25)
    tail = (workdir / "litellm.log").read_text(errors="replace")[-1500:]
    why = f"exited with code {proc.returncode}" if proc.returncode is not None else "was not ready within 120 s"
    stop_litellm(proc)
    return None, f"the LiteLLM proxy {why}; its log ends:\n{tail}"


def stop_litellm(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the CLI and the server it starts
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


# --- timing --------------------------------------------------------------------------------------------------

@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client (none is used on loopback, but each new one costs ~50 ms to build)."""
    return ssl.create_default_context()


def client(connections: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=60.0, headers=JSON_HEADERS, verify=_tls(), limits=httpx.Limits(
        max_connections=connections, max_keepalive_connections=connections))


async def sequential_calls(http: httpx.AsyncClient, url: str, n: int, samples: list[int], errors: list[str]) -> None:
    for _ in range(n):
        start = time.perf_counter_ns()
        try:
            response = await http.post(url, content=BODY)
        except httpx.HTTPError as e:
            errors.append(f"{type(e).__name__}: {e}")
            continue
        samples.append(time.perf_counter_ns() - start)
        if response.status_code != 200:
            errors.append(f"HTTP {response.status_code}: {response.text[:200]}")


async def concurrent_calls(http: httpx.AsyncClient, urls: list[str], n: int, samples: list[int],
                           errors: list[str]) -> None:
    """One task per URL, each making `n` sequential calls."""
    await asyncio.gather(*(sequential_calls(http, url, n, samples, errors) for url in urls))


def check_reply(name: str, response: httpx.Response) -> None:
    """Every contender must hand back the upstream's tool call, unchanged."""
    assert response.status_code == 200, f"{name}: HTTP {response.status_code}: {response.text[:500]}"
    call = response.json()["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "bash" and json.loads(call["arguments"]) == json.loads(ARGUMENTS), f"{name}: {call}"


def percentile(ordered: list[int], q: float) -> int:
    """Nearest rank."""
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def latency(samples_ns: list[int]) -> dict[str, float | int]:
    ordered = sorted(samples_ns)
    return {"p50_ms": round(percentile(ordered, 0.50) / 1e6, 3), "p99_ms": round(percentile(ordered, 0.99) / 1e6, 3),
            "n": len(ordered)}


# --- capacity ------------------------------------------------------------------------------------------------

PER_CLIENT = 16
"""Capacity runs spread their connections over httpx clients of this many each: one httpx pool scans all its
connections for every request it places (encode/httpx#3215), which at 1,000 connections costs more than the
gateway does."""


CONNECT_BATCH = 100
"""Held calls connect this many at a time. The gateway listens with aiohttp's default backlog of 128: 1,000
connects at once overflow it, and the dropped SYNs are resent after 1 s, 3 s, 7 s..."""


def client_fleet(connections: int) -> list[httpx.AsyncClient]:
    return [client(PER_CLIENT) for _ in range(-(-connections // PER_CLIENT))]


async def held_calls(gateway: GatewayProcess, held: int, probes: int) -> dict[str, Any]:
    """`held` step-mode calls waiting at once (every other one streamed); a serve-mode probe meanwhile."""
    ids = await gateway.ask("step", held)
    fleet = client_fleet(held)
    start = time.perf_counter()
    calls: list[asyncio.Task[httpx.Response]] = []
    waiting = 0
    for batch in range(0, held, CONNECT_BATCH):
        calls += [asyncio.create_task(fleet[i // PER_CLIENT].post(f"{gateway.url}/s/{ids[i]}{CHAT}",
                                                                  content=STREAM_BODY if i % 2 else BODY))
                  for i in range(batch, min(held, batch + CONNECT_BATCH))]
        while time.perf_counter() - start < 60 and (waiting := await gateway.ask("waiting")) < len(calls):
            await asyncio.sleep(0.01)
    all_held_s = time.perf_counter() - start

    probe_samples: list[int] = []
    probe_errors: list[str] = []
    probe_id = (await gateway.ask("serve", (1, "httpx")))[0]
    async with client(1) as probe:
        await sequential_calls(probe, f"{gateway.url}/s/{probe_id}{CHAT}", probes, probe_samples, probe_errors)

    start = time.perf_counter()
    answered = await gateway.ask("answer")
    done, pending = await asyncio.wait(calls, timeout=60)
    answer_all_s = time.perf_counter() - start
    for task in pending:
        task.cancel()
    for http in fleet:
        await http.aclose()
    ok, failures = 0, Counter()
    for i, task in enumerate(calls):
        if task not in done:
            failures["no answer within 60 s"] += 1
        elif task.exception() is not None:
            failures[f"{type(task.exception()).__name__}: {task.exception()}"] += 1
        elif task.result().status_code != 200:
            failures[f"HTTP {task.result().status_code}"] += 1
        else:
            text = task.result().text
            ok += ("data: [DONE]" in text) if i % 2 else ('"name":"bash"' in text.replace(" ", ""))
    return {"held": held, "held_at_once": waiting, "seconds_until_all_held": round(all_held_s, 3),
            "probe_while_held": {**latency(probe_samples), "errors": len(probe_errors)},
            "answered": answered, "ok_200": ok, "failures": dict(failures),
            "seconds_to_answer_all": round(answer_all_s, 3)}


async def active_sessions(gateway: GatewayProcess, sessions: int, calls: int) -> dict[str, Any]:
    """`sessions` serve-mode sessions calling at once, `calls` sequential calls each, forwarded upstream.

    The responder forwards with aiohttp here: an httpx client holding 256 upstream connections would be the
    bottleneck (see `PER_CLIENT`), not the gateway.
    """
    ids = await gateway.ask("serve", (sessions, "aiohttp"))
    samples: list[int] = []
    errors: list[str] = []
    fleet = client_fleet(sessions)
    start = time.perf_counter()
    await asyncio.gather(*(sequential_calls(fleet[i // PER_CLIENT], f"{gateway.url}/s/{sid}{CHAT}", calls, samples,
                                            errors) for i, sid in enumerate(ids)))
    wall = time.perf_counter() - start
    for http in fleet:
        await http.aclose()
    return {"sessions": sessions, "calls_each": calls, "forwarder": "aiohttp", "ok": len(samples) - len(errors),
            "errors": len(errors), "first_error": errors[0] if errors else None, "wall_s": round(wall, 3),
            "calls_per_s": round(len(samples) / wall), **latency(samples)}


# --- the run -------------------------------------------------------------------------------------------------

async def measure(urls: dict[str, list[str]], rounds: int, calls: int, clients: dict[str, httpx.AsyncClient],
                  ) -> tuple[dict[str, list[int]], dict[str, list[str]]]:
    """Alternating rounds; in each, every contender runs one task per URL, `calls` sequential calls each."""
    samples: dict[str, list[int]] = {name: [] for name in urls}
    errors: dict[str, list[str]] = {name: [] for name in urls}
    for r in range(rounds):
        for name in rotated(list(urls), r):
            await concurrent_calls(clients[name], urls[name], calls, samples[name], errors[name])
    return samples, errors


def added(stats: dict[str, dict], name: str, key: str) -> float:
    return round(stats[name][key] - stats[DIRECT][key], 3)


def ratio(litellm_added: float, polar_added: float) -> float | None:
    """None when either added figure is at or below zero: that gap is lost in the noise."""
    return round(litellm_added / polar_added, 1) if polar_added > 0 and litellm_added > 0 else None


async def latency_runs(gateway: GatewayProcess, upstream: str, litellm_url: str | None,
                       plan: dict[str, int]) -> dict[int, dict[str, dict]]:
    """p50/p99 per contender at concurrency 1 and `CONCURRENCY`; each gateway task has its own session."""
    sessions = {name: await gateway.ask("serve", (CONCURRENCY, forwarder))
                for name, forwarder in [(POLAR, "httpx"), (POLAR_AIOHTTP, "aiohttp")]}
    urls = {DIRECT: [f"{upstream}{CHAT}"] * CONCURRENCY,
            **{name: [f"{gateway.url}/s/{sid}{CHAT}" for sid in ids] for name, ids in sessions.items()}}
    if litellm_url is not None:
        urls[LITELLM] = [f"{litellm_url}{CHAT}"] * CONCURRENCY
    sequential = {name: u[:1] for name, u in urls.items()}
    clients = {name: client(CONCURRENCY + 8) for name in urls}
    try:
        for name, u in urls.items():
            check_reply(name, await clients[name].post(u[0], content=BODY))
        await measure(sequential, 1, 50, clients)  # warm-up: connections, caches, first-call paths; httpx's
        await measure(urls, plan["c64_warmup_rounds"], 5, clients)  # pool takes some concurrent calls to settle
        by_level = {}
        for level, level_urls, rounds, calls in [(1, sequential, plan["c1_rounds"], plan["c1_calls"]),
                                                 (CONCURRENCY, urls, plan["c64_rounds"], plan["c64_calls"])]:
            samples, errors = await measure(level_urls, rounds, calls, clients)
            stats = {name: {**latency(s), "errors": len(errors[name])} for name, s in samples.items()}
            for name, s in stats.items():
                s["added_p50_ms"], s["added_p99_ms"] = added(stats, name, "p50_ms"), added(stats, name, "p99_ms")
            by_level[level] = stats
        return by_level
    finally:
        for c in clients.values():
            await c.aclose()


def report(results: dict[str, Any]) -> None:
    rows = []
    for level, stats in results["latency"].items():
        for name, s in stats.items():
            gap = ["", ""] if name == DIRECT else [s["added_p50_ms"], s["added_p99_ms"]]
            rows.append([level, name, s["p50_ms"], s["p99_ms"], *gap, s["n"], s["errors"]])
    print(f"request: {results['request_bytes']} bytes, 5 tools; latency per call in ms\n")
    print(table(["concurrency", "contender", "p50", "p99", "added p50", "added p99", "calls", "errors"], rows))
    print()
    for level, by_polar in results["litellm_added_over_polar_added"].items():
        for name, r in by_polar.items():
            shown = [f"{r[q]}×" if r[q] is not None else "n/a (an added figure ≤ 0)" for q in ("p50", "p99")]
            print(f"concurrency {level}: LiteLLM added ÷ {name} added = {shown[0]} (p50), {shown[1]} (p99)")
    print(f"{POLAR} added p50 at concurrency 1: {results['latency']['1'][POLAR]['added_p50_ms']} ms (goal ≤ 1 ms); "
          "LiteLLM ÷ polar goal ≥ 5×\n")
    held, active = results["capacity"]["held_calls"], results["capacity"]["active_sessions"]
    probe = held["probe_while_held"]
    print(table(["capacity", "result"], [
        [f"{held['held']} step-mode calls held open", f"{held['held_at_once']} waiting at once after "
         f"{held['seconds_until_all_held']} s"],
        ["another session meanwhile", f"p50 {probe['p50_ms']} ms, p99 {probe['p99_ms']} ms over {probe['n']} calls, "
         f"{probe['errors']} errors"],
        ["answer them all", f"{held['ok_200']}/{held['held']} got a 200 in {held['seconds_to_answer_all']} s"],
        [f"{active['sessions']} active sessions × {active['calls_each']} calls",
         f"{active['ok']} ok, {active['errors']} errors in {active['wall_s']} s ({active['calls_per_s']} calls/s; "
         f"p50 {active['p50_ms']} ms, p99 {active['p99_ms']} ms)"],
    ]))


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    raise_fd_limit()
    if args.quick:
        plan = {"c1_rounds": 4, "c1_calls": 10, "c64_warmup_rounds": 0, "c64_rounds": 1, "c64_calls": 2,
                "held": 200, "active": 64, "active_calls": 3}
    else:
        plan = {"c1_rounds": 50, "c1_calls": 10, "c64_warmup_rounds": 1, "c64_rounds": 4, "c64_calls": 5,
                "held": 1000, "active": 256, "active_calls": 10}
    results: dict[str, Any] = {"quick": args.quick, "plan": plan, "request_bytes": len(BODY)}
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="polar-gw-bench-"))
    up_proc, up_conn, up_port = start_process(serve_upstream)
    upstream = f"http://127.0.0.1:{up_port}"
    gw_proc, gw_conn, gw_url = start_process(serve_gateway, f"{upstream}/v1")
    gateway = GatewayProcess(gw_proc, gw_conn, gw_url)
    litellm, litellm_url = await start_litellm(f"{upstream}/v1", workdir)
    try:
        if litellm is None:
            results["litellm_unavailable"] = litellm_url
            print(f"LiteLLM is left out: {litellm_url}")
        else:
            results["litellm_version"] = importlib.metadata.version("litellm")
        by_level = await latency_runs(gateway, upstream, litellm_url if litellm else None, plan)
        if litellm is not None:
            stop_litellm(litellm)  # it leaves the CPUs to the capacity run
        results["latency"] = {str(level): stats for level, stats in by_level.items()}
        results["litellm_added_over_polar_added"] = {
            str(level): {name: {q: ratio(stats[LITELLM][f"added_{q}_ms"], stats[name][f"added_{q}_ms"])
                                for q in ("p50", "p99")} for name in (POLAR, POLAR_AIOHTTP)}
            for level, stats in by_level.items() if LITELLM in stats}
        results["capacity"] = {"held_calls": await held_calls(gateway, plan["held"], probes=20),
                               "active_sessions": await active_sessions(gateway, plan["active"],
                                                                        plan["active_calls"])}
    finally:
        if litellm is not None:
            stop_litellm(litellm)
        stop_process(gw_proc, gw_conn, ("stop", None))
        stop_process(up_proc, up_conn, "stop")
        shutil.rmtree(workdir, ignore_errors=True)
    results["wall_s"] = round(time.perf_counter() - started, 1)
    report(results)
    path = write("gateway_latency", args.out, results)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
