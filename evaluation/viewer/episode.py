"""One episode's page: the facts, the instruction, every turn, the verifier's log, the artefact, the tokens.

A turn shows what its request added to the previous one (the harness's history grows by appending), the reply
(reasoning, text, tool calls with their arguments), the tool results that came back in the next request, and
both latencies. The whole request is one click away: the page carries every distinct message once and each
request as a list of message numbers, so a 300-turn episode stays linear in size, and its script assembles a
request when it is opened.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from polar.evaluation.viewer.artefact import artefact_html
from polar.evaluation.viewer.markup import block, data_script, esc, page, pretty_json
from polar.evaluation.viewer.tokens import token_view
from polar.trace import Trace, Turn
from polar.types import ModelReply, content_text


def kept_prefix(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> int:
    """How many of the previous request's messages the next one starts with (all of them, when it appends)."""
    if now[: len(before)] == before:
        return len(before)
    return next((i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b), min(len(before), len(now)))


def _content(content: Any) -> str:
    """A message's content: its text, and any part that is not text as JSON (so an image part is not lost)."""
    if content is None or isinstance(content, str):
        return block(content or "")
    parts = [p for p in content if not (isinstance(p, dict) and set(p) <= {"type", "text"})] \
        if isinstance(content, list) else [content]
    return block(content_text(content)) + (block(pretty_json(parts), "json", "other parts") if parts else "")


def _arguments(arguments: str) -> str:
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return block(arguments, "args") + '<p class="warn">the arguments are not valid JSON</p>'
    return block(pretty_json(value), "args")


def _calls(calls: list[Any]) -> str:
    """Tool calls of a reply (`ToolCall`) or of a message (OpenAI dicts)."""
    out = []
    for call in calls:
        if isinstance(call, dict):
            fn = call.get("function") or {}
            name, call_id, args = fn.get("name"), call.get("id"), fn.get("arguments")
            args = args if isinstance(args, str) else json.dumps(args)
        else:
            name, call_id, args = call.name, call.id, call.arguments
        out.append(f'<div class="call"><span class="tool">{esc(name)}</span> <code class="id">{esc(call_id)}</code>'
                   f"{_arguments(args or '')}</div>")
    return "".join(out)


def _message(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    extra = {k: v for k, v in message.items() if k not in ("role", "content", "tool_calls", "tool_call_id", "name")}
    head = esc(role) + (f" <code>{esc(message['name'])}</code>" if message.get("name") else "") + (
        f" for <code>{esc(message['tool_call_id'])}</code>" if message.get("tool_call_id") else "")
    body = _content(message.get("content")) + _calls(message.get("tool_calls") or [])
    if extra:
        body += block(pretty_json(extra), "json", "other fields")
    cls = f"msg role-{esc(role)}"
    if role in ("system", "assistant"):  # the system prompt, and a reply the harness sends back: shown above
        return f'<details class="{cls}"><summary>{head}</summary>{body}</details>'
    return f'<div class="{cls}"><div class="role">{head}</div>{body}</div>'


def _reply(reply: ModelReply) -> str:
    parts = []
    if reply.reasoning:
        parts.append(f'<details class="reasoning"><summary>reasoning ({len(reply.reasoning)} characters)</summary>'
                     f"{block(reply.reasoning)}</details>")
    if reply.content:
        parts.append(block(reply.content, "content"))
    parts.append(_calls(reply.tool_calls))
    if not reply.content and not reply.tool_calls:
        parts.append('<p class="meta">(an empty reply)</p>')
    facts = [f"finish: {reply.finish_reason or '—'}"]
    if reply.token_ids is not None:
        facts.append(f"{len(reply.token_ids)} tokens")
        if reply.logprobs:
            facts.append(f"mean logprob {sum(reply.logprobs) / len(reply.logprobs):.3f}")
    if reply.model:
        facts.append(f"model {reply.model}")
    return "".join(parts) + f'<p class="meta">{esc(" · ".join(facts))}</p>'


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f} s"


def _turn(position: int, turn: Turn, before: Turn | None, after: Turn | None) -> str:
    messages = turn.request.messages
    kept = kept_prefix(before.request.messages, messages) if before else 0
    new = [m for m in messages[kept:] if m.get("role") != "tool" or before is None]
    notes = []
    if before is not None and kept < len(before.request.messages):
        notes.append(f"the history was rewritten: this request keeps {kept} of the previous request's "
                     f"{len(before.request.messages)} messages")
    if before is not None and len(new) < len(messages) - kept:
        notes.append(f"{len(messages) - kept - len(new)} tool result(s): under turn {before.index}")
    if before is None or turn.request.tools != before.request.tools:
        names = ", ".join(turn.request.tool_names()) or "none"
        notes.append(f"tools: {names}")
    if before is not None and turn.request.params != before.request.params:
        notes.append(f"sampling parameters changed: {json.dumps(turn.request.params)}")
    results = ""
    if after is not None:
        following = after.request.messages[kept_prefix(messages, after.request.messages):]
        results = "".join(_message(m) for m in following if m.get("role") == "tool")
    notes_html = "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
    return f"""<section class="turn" id="turn-{turn.index}" data-turn="{turn.index}">
<h3>Turn {turn.index} <span class="meta">{esc(turn.request.api)} · {len(messages)} messages · policy \
{_seconds(turn.policy_latency_s)} · env {_seconds(turn.env_latency_s)}</span></h3>
<div class="request"><h4>Request: what changed</h4>{notes_html}{"".join(_message(m) for m in new)}
<details class="full" data-position="{position}"><summary>full request ({len(messages)} messages, \
{len(turn.request.tools)} tools)</summary><pre class="json"></pre></details></div>
<div class="reply"><h4>Reply</h4>{_reply(turn.reply)}</div>
{f'<div class="results"><h4>Tool results</h4>{results}</div>' if results else ""}
</section>"""


def request_data(trace: Trace) -> dict[str, Any]:
    """Every distinct message and tool list once, and each request as indices into them (for 'full request')."""
    messages: list[Any] = []
    tools: list[Any] = []
    seen: dict[str, int] = {}
    seen_tools: dict[str, int] = {}

    def number(value: Any, table: list[Any], index: dict[str, int]) -> int:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in index:
            index[key] = len(table)
            table.append(value)
        return index[key]

    requests = []
    before: list[dict[str, Any]] = []
    numbers: list[int] = []
    for turn in trace.turns:
        r = turn.request
        kept = kept_prefix(before, r.messages)  # the history an appending harness resends: numbered already
        numbers = numbers[:kept] + [number(m, messages, seen) for m in r.messages[kept:]]
        requests.append({"m": numbers, "t": number(r.tools, tools, seen_tools), "params": r.params, "api": r.api,
                         "model": r.model, "prompt_token_ids": r.prompt_token_ids})
        before = r.messages
    return {"messages": messages, "tools": tools, "requests": requests}


def instruction(trace: Trace) -> str:
    """The task as the agent got it: the last user message of the first request."""
    if not trace.turns:
        return ""
    users = [m for m in trace.turns[0].request.messages if m.get("role") == "user"]
    return content_text(users[-1].get("content")) if users else ""


def _duration(trace: Trace) -> str:
    try:
        seconds = (datetime.fromisoformat(trace.ended_at) - datetime.fromisoformat(trace.started_at)).total_seconds()
    except ValueError:
        return "—"
    return f"{seconds:.1f} s"


def facts(trace: Trace) -> dict[str, str]:
    policy = trace.policy
    return {
        "env": f"{trace.env_id} (version {trace.env_version})", "task": trace.task_id, "suite": str(trace.suite),
        "harness": f"{trace.harness.name} {trace.harness.version or ''}".strip(),
        "policy": f"{policy.name}{' · ' + policy.model if policy and policy.model else ''}" if policy else "—",
        "sandbox": trace.sandbox, "seed": str(trace.seed), "started": trace.started_at,
        "duration": _duration(trace), "turns": str(len(trace.turns)),
        "tokens sampled": str(sum(len(t.reply.token_ids or ()) for t in trace.turns)),
        "episode": trace.episode_id, "polar-gym": trace.polar_version,
    }


def episode_page(trace: Trace, tokenizer: Any | None = None, index: str | None = "index.html") -> str:
    """The whole page of one episode; `index` is the link back to the list of episodes (None: no link)."""
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts(trace).items())
    components = "".join(f'<tr><td>{esc(k)}</td><td class="num">{v:.3f}</td></tr>'
                         for k, v in trace.reward_components.items())
    error = f'<p class="warn">{esc(trace.error)}</p>' if trace.error else ""
    turns = "".join(_turn(i, t, trace.turns[i - 1] if i else None, trace.turns[i + 1] if i + 1 < len(trace.turns)
                          else None) for i, t in enumerate(trace.turns))
    tokens = token_view(trace, tokenizer)
    token_data = {"chains": tokens.chains, "vocab": tokens.vocab} if tokens.chains else None
    chains = "".join(
        f'<details class="chain" data-chain="{n}"><summary>chain {n}: turn(s) {esc(_ranges(c["turns"]))} · '
        f'prompt {len(c["prompt"])} · response {len(c["response"])} tokens, {c["mask"].count("1")} sampled'
        f'</summary><div class="tokens"></div></details>'
        + (f'<p class="break">break before turn {c["turns"][0]}: {esc(c["break"])}</p>' if c["break"] else "")
        for n, c in enumerate(tokens.chains or []))
    back = f'<p><a href="{esc(index)}">&larr; all episodes</a></p>' if index else ""
    body = f"""<header>{back}
<h1>{esc(trace.task_id)} <span class="status status-{esc(trace.status)}">{esc(trace.status)}</span>
<span class="reward">reward {trace.reward:.3f}</span></h1>
{error}<dl class="facts">{dl}</dl>
<table class="components"><thead><tr><th>reward component</th><th>value</th></tr></thead><tbody>{components}
</tbody></table></header>
<main>
<section id="instruction"><h2>Instruction</h2>{block(instruction(trace), "instruction")}</section>
<section id="turns"><h2>Turns ({len(trace.turns)})</h2>{turns or '<p class="meta">no model call was made</p>'}
</section>
<section id="verifier"><h2>Verifier log</h2>{block(trace.verifier_log or "(empty)", "log", "log")}</section>
<section id="artefact"><h2>Artefact</h2>{artefact_html(trace.artefact)}</section>
<section id="tokens"><h2>Tokens</h2><p class="meta">{esc(tokens.note)}</p>
{'<p class="legend"><span class="s">sampled (mask 1)</span> <span class="env">added by the environment '
 '(mask 0)</span> <span class="prompt">prompt</span> · hover a sampled token for its logprob</p>'
 if tokens.chains else ""}{chains}</section>
</main>"""
    data = data_script("polar-requests", request_data(trace))
    if token_data:
        data += data_script("polar-tokens", token_data)
    return page(f"{trace.task_id} · {trace.status} · {trace.reward:.2f} — polar episode", body, data)


def _ranges(turns: list[int]) -> str:
    """`0–3, 5` for [0, 1, 2, 3, 5]."""
    spans: list[list[int]] = []
    for t in turns:
        if spans and t == spans[-1][1] + 1:
            spans[-1][1] = t
        else:
            spans.append([t, t])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)
