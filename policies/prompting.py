"""Token-exact prompts: `PromptBuilder` never re-renders what the model already saw or said.

A chat template applied to a whole history again re-renders the past: Qwen3-style templates drop the reasoning of
earlier replies, others re-serialise tool-call arguments, and a reply cut at the token limit does not survive
decode and re-render. A policy that conditions on such a re-render trains on tokens it never sampled. So, for each
model call, when the request's messages extend an earlier call's messages plus the reply the model gave (compared
in canonical form, at the message level), the prompt is

    that call's prompt ids + its sampled ids + the template's rendering of only the new messages

(tool results, user turns, the generation prompt). Only when the history really changed (compaction, an edited
or dropped reply, a sub-agent that resumes an old history) is the prompt a full render, and `Prompt.chain_break`
says why; the policy records it on the reply (`ModelReply.chain_break`), where `prefix_merge` and
`polar train coverage` read it.

Many episodes, one builder: a policy object serves every episode of a run at once (`policy(request, task)`, no
episode id), so the builder keys what it remembers by the canonical message list (and the tools), not by an
episode: a request continues exactly the call whose messages + reply it starts with, whichever episode that was.
Two episodes whose histories are equal message for message have equal prompts, so sharing is harmless. The memory
is a bounded LRU; a call whose history was evicted is a full render with a recorded break, never a wrong prefix.

Rendering only the new messages with an arbitrary HF template: render the real history with the reply's content
replaced by a sentinel, and keep what follows the reply's end-of-turn token. The past before the sentinel may be
rendered any way the template likes (it is never used). It is a true extension when the same history rendered
without the new messages ends, after that end-of-turn, with a prefix of what the delta starts with; otherwise the
builder falls back to a full render with a `template` break, never a crash and never a silent mismatch.
"""

from __future__ import annotations

import hashlib
import json
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from polar.types import ModelReply, ModelRequest, content_text

SENTINEL = "\u27e6polar-reply\u27e7"
"""Stands in for the reply's content when the new messages are rendered; it never reaches a model."""
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>")
"""End-of-turn token texts a template may close an assistant turn with (ChatML, Llama 3, Phi, Gemma)."""

Messages = list[dict[str, Any]]
Render = Callable[[Any, Messages, list[dict[str, Any]], bool], str]
"""`render(tokenizer, messages, tools, add_generation_prompt) -> text`: how one model's template sees a history."""


# --- rendering ------------------------------------------------------------------------------------------------


def plain_turns(messages: Messages) -> list[dict[str, str]]:
    """Messages a tool-unaware template can render: tool results become user turns, tool calls become text.

    Assistant tool calls are written in the same `<tool_call>{...}</tool_call>` form the local policy parses.
    """
    names: dict[str, str] = {}
    turns = []
    for m in messages:
        text = content_text(m.get("content"))
        if m.get("role") == "tool":
            who = m.get("name") or names.get(m.get("tool_call_id", "")) or m.get("tool_call_id") or "tool"
            turns.append({"role": "user", "content": f"Tool result ({who}):\n{text}"})
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            names[call.get("id", "")] = fn.get("name", "")
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (TypeError, json.JSONDecodeError):
                args = fn.get("arguments")
            block = json.dumps({"name": fn.get("name"), "arguments": args})
            text = f"{text}\n<tool_call>{block}</tool_call>".lstrip("\n")
        turns.append({"role": m.get("role", "user"), "content": text})
    return turns


def _with_tool_prompt(turns: list[dict[str, str]], tools: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Describe the tools in the system turn, Hermes-style, for a template that ignores `tools`."""
    listing = "\n".join(json.dumps(t) for t in tools)
    prompt = (
        f"You may call these tools:\n<tools>\n{listing}\n</tools>\nTo call one, reply with "
        '<tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call>'
    )
    if turns and turns[0]["role"] == "system":
        return [{"role": "system", "content": f"{turns[0]['content']}\n\n{prompt}"}, *turns[1:]]
    return [{"role": "system", "content": prompt}, *turns]


def render_text(tokenizer: Any, messages: Messages, tools: list[dict[str, Any]], add_generation_prompt: bool) -> str:
    """A history as the model's chat template writes it (ChatML when the tokenizer has none, SmolLM2's format).

    A template that knows neither tool messages nor `tools` (SmolLM2's) gets the messages through `plain_turns`
    and the tools described in the system turn; a tool-aware one (Qwen's) gets both as they are.
    """
    template = tokenizer.chat_template or ""
    rendered: list[dict[str, Any]] = messages
    tool_list = tools or None
    if "tool_calls" not in template:
        rendered = plain_turns(messages)
    if tool_list and "tools" not in template:
        rendered, tool_list = _with_tool_prompt(rendered, tool_list), None
    if not template:
        text = "".join(f"<|im_start|>{m['role']}\n{content_text(m['content'])}<|im_end|>\n" for m in rendered)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")
    return tokenizer.apply_chat_template(rendered, tools=tool_list, tokenize=False,
                                         add_generation_prompt=add_generation_prompt)


def render_prompt(tokenizer: Any, request: ModelRequest) -> list[int]:
    """The full render of a request: its prompt token ids, from scratch (`render_text` + the generation prompt)."""
    return tokenizer.encode(render_text(tokenizer, request.messages, request.tools, True), add_special_tokens=False)


# --- canonical form -------------------------------------------------------------------------------------------


def _arguments(raw: Any) -> Any:
    """Tool-call arguments compared by value: harnesses re-serialise JSON (spacing, key order, `_raw` wrapping)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return raw
    if isinstance(value, dict) and set(value) == {"_raw"}:  # the gateway's wrapper for malformed arguments
        return value["_raw"]
    return value


def canonical(message: dict[str, Any]) -> dict[str, Any]:
    """What a message means to the model, not how a provider API spelled it.

    Text parts are joined and an assistant's text stripped; tool-call ids are left out (some APIs mint them per
    request) and arguments compared as JSON values; reasoning is left out: the sampled ids keep it whether or not
    the harness echoes it back.
    """
    role = message.get("role")
    out: dict[str, Any] = {"role": role, "content": content_text(message.get("content"))}
    if role == "assistant":
        out["content"] = out["content"].strip()
        out["tool_calls"] = [[(c.get("function") or {}).get("name", ""),
                              _arguments((c.get("function") or {}).get("arguments"))]
                             for c in message.get("tool_calls") or []]
    elif role == "tool" and message.get("name"):
        out["name"] = message["name"]
    return out


def _digests(messages: Messages, tools: list[dict[str, Any]]) -> list[bytes]:
    """`d[k]` identifies the first k messages (with the tools): one hash chain, so every prefix costs one step."""
    digest = hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).digest()
    out = [digest]
    for message in messages:
        digest = hashlib.sha256(digest + json.dumps(canonical(message), sort_keys=True, default=str).encode()).digest()
        out.append(digest)
    return out


# --- the builder ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """The token ids to condition on for one request, and how they were made."""

    ids: list[int]
    extends: int | None
    """How many of the request's messages were already in a remembered call (its messages + reply): the prompt is
    that call's prompt + sampled ids + the rest rendered. None: a full render."""
    chain_break: str | None
    """Why this call cannot continue the previous one's chain (`category: detail`): a full render although the
    history holds earlier replies, or a history that extends an earlier call but dropped a later reply. None when
    it extends the latest remembered call of its history, or holds no assistant message (a first call)."""
    remembered: int = 0
    """How many of `ids` are the remembered call's prompt + sampled ids (0 for a full render): a policy that kept
    that call's state feeds the model only the rest."""


@dataclass
class _Call:
    ids: array
    """The call's prompt + sampled ids."""
    closed: bool
    """The sampled ids end with the template's end-of-turn token (else the delta closes the turn first)."""


class _Lru(OrderedDict):
    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def put(self, key: bytes, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


class PromptBuilder:
    """Prompts for one model: `prompt(request)` before sampling, `record(request, ids, reply)` after.

    Thread-safe; one builder may serve every episode of a run (see the module docstring for why it is keyed by
    messages). `capacity` bounds how many calls it remembers.
    """

    def __init__(self, tokenizer: Any, *, render: Render = render_text, capacity: int = 1024) -> None:
        self.tokenizer, self.render = tokenizer, render
        self._calls = _Lru(capacity)  # digest of (messages + reply) -> _Call
        self._prefixes = _Lru(capacity * 32)  # digest of any prefix of a remembered call -> a reply comes next
        self._lock = threading.Lock()
        self.end_of_turn = self._end_of_turn()

    def _end_of_turn(self) -> str | None:
        """The token text the template closes an assistant turn with, read off a rendering; None if it has none."""
        try:
            text = self.render(self.tokenizer, [{"role": "user", "content": "hi"},
                                                {"role": "assistant", "content": SENTINEL}], [], False)
        except Exception:  # a template may raise anything: then every prompt is a full render
            return None
        tail = text[text.rfind(SENTINEL) + len(SENTINEL):] if SENTINEL in text else ""
        return next((t for t in END_OF_TURN if tail.startswith(t)), None)

    def prompt(self, request: ModelRequest) -> Prompt:
        """The prompt ids for `request`: the remembered prefix + a rendered delta, or a full render with a reason."""
        messages = request.messages
        digests = _digests(messages, request.tools)
        with self._lock:
            hit = next(((k, self._calls[digests[k]]) for k in range(len(messages), 0, -1)
                        if digests[k] in self._calls), None)
            if hit is not None:
                self._calls.move_to_end(digests[hit[0]])
            # the longest remembered prefix: where this history left the remembered ones
            diverged = next((k for k in range(len(messages), -1, -1) if digests[k] in self._prefixes), None)
            reply_next = diverged is not None and diverged < len(messages) and self._prefixes[digests[diverged]]
        changed = f"reply changed: message {diverged} is not the reply the model gave (dropped or edited)"
        if hit is not None:
            k, call = hit
            delta, why = self._delta(messages[: k - 1], messages[k - 1], messages[k:], request.tools, call.closed)
            if delta is None:
                return Prompt(render_prompt(self.tokenizer, request), None, why)
            # exact from call k on, but a later reply the model gave was dropped: a branch, so a new chain
            return Prompt(list(call.ids) + delta, k, changed if reply_next and diverged >= k else None, len(call.ids))
        if reply_next:  # a remembered history went on with a reply here, this one with something else
            return Prompt(render_prompt(self.tokenizer, request), None, changed)
        if not any(m.get("role") == "assistant" for m in messages):
            return Prompt(render_prompt(self.tokenizer, request), None, None)
        if diverged is None or diverged == 0:
            why = ("unknown history: no remembered call starts this history (the tools changed, the history was "
                   "rebuilt from scratch, or it was forgotten)")
        else:
            role = messages[diverged].get("role") if diverged < len(messages) else "end"
            why = f"history rewritten: message {diverged} ({role}) differs from what the model was sent"
        return Prompt(render_prompt(self.tokenizer, request), None, why)

    def record(self, request: ModelRequest, prompt_ids: list[int], reply: ModelReply) -> None:
        """Remember a call: the ids the model conditioned on and the reply it sampled (`reply.token_ids`)."""
        if reply.token_ids is None:
            return
        messages = [*request.messages, reply.to_openai_message()]
        digests = _digests(messages, request.tools)
        ids = [*prompt_ids, *reply.token_ids]
        end = self.end_of_turn
        closed = bool(reply.token_ids) and end is not None and self.tokenizer.decode(reply.token_ids[-1:]) == end
        with self._lock:
            self._calls.put(digests[-1], _Call(array("l", ids), closed))
            for k, digest in enumerate(digests[:-1]):
                self._prefixes.put(digest, self._prefixes.get(digest, False) or messages[k]["role"] == "assistant")

    def _delta(self, before: Messages, reply: dict[str, Any], new: Messages, tools: list[dict[str, Any]],
               closed: bool) -> tuple[list[int] | None, str | None]:
        """The ids that follow the sampled reply: its end of turn and `new` rendered, or (None, why) when the
        template cannot render them on their own."""
        end = self.end_of_turn
        if end is None:
            return None, "template: its assistant turn does not end with a known end-of-turn token"
        stand_in = {k: v for k, v in reply.items() if k not in ("reasoning_content", "reasoning")}
        stand_in["content"] = SENTINEL
        try:
            with_new = self.render(self.tokenizer, [*before, stand_in, *new], tools, True)
            closed_history = self.render(self.tokenizer, [*before, stand_in], tools, False)
        except Exception as e:  # jinja raises whatever a template author chose
            return None, f"template: rendering the new messages failed ({type(e).__name__}: {e})"
        after, glue = _after_turn(with_new, end), _after_turn(closed_history, end)
        if after is None or glue is None:
            return None, "template: the reply's end of turn is not in its rendering"
        if not after.startswith(glue):
            return None, "template: the new messages change how the reply's turn ends"
        text = after if closed else end + after
        return self.tokenizer.encode(text, add_special_tokens=False), None


def _after_turn(text: str, end: str) -> str | None:
    """What follows the end of the sentinel reply's turn in `text` (None if the sentinel or its end is missing)."""
    if text.count(SENTINEL) != 1:
        return None
    start = text.index(SENTINEL) + len(SENTINEL)
    stop = text.find(end, start)
    return None if stop < 0 else text[stop + len(end):]
