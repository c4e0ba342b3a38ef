"""`VLLMPolicy`: a vLLM server driven token-in/token-out, so a trace holds exactly what the model conditioned on.

polar renders each prompt itself with a `PromptBuilder` (the previous call's prompt + its sampled ids + only the new
messages, rendered by the model's own chat template: the prompts the trainers use), sends the token ids to
`POST /v1/completions`, and records the ids vLLM conditioned on (`reply.prompt_token_ids`, checked against vLLM's
echo), the ids it sampled (`reply.token_ids`, vLLM's `return_token_ids`) and the logprob of each (`logprobs: 0`).
Start the server with `--logprobs-mode processed_logprobs` (scripts/vllm.sh does): those are then logprobs of the
distribution the tokens were drawn from, after the temperature.

Every call of an episode carries the episode id as vLLM's session key (`X-Session-ID` and the body's `session_id`),
so a router keeps the episode on one replica, where its prefix is cached.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

from polar.errors import PolarError, PolicyError
from polar.policies.local_policy import parse_tool_calls
from polar.policies.openai_policy import served_models, session_headers
from polar.policies.prompting import Prompt, PromptBuilder
from polar.protocols import Task
from polar.types import ModelReply, ModelRequest

_STOP_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>")
"""End-of-turn tokens of common chat templates, stopped at besides the tokenizer's own EOS."""


@dataclass
class VLLMPolicy:
    """Answer each request with one `POST {base_url}/completions` whose prompt is token ids polar rendered.

    `reply.logprobs[i]` is vLLM's logprob of `reply.token_ids[i]`; with the server's `processed_logprobs` mode and
    `top_p == 1` it is the same quantity `LocalPolicy` records, `log_softmax(logits / temperature)`.
    """

    base_url: str | None = None
    """E.g. `http://127.0.0.1:8471/v1` (what `bash scripts/vllm.sh start` prints); default: `$OPENAI_BASE_URL`."""
    model: str | None = None
    """The served model name; default: the one model the server lists."""
    tokenizer: str | None = None
    """A folder with the served model's tokenizer and chat template; default: the folder the server loaded the
    model from (`root` in its `/v1/models`), which is right when the server runs on this machine."""
    max_tokens: int = 256
    """Cap on sampled tokens; a request's `params["max_tokens"]` may lower it, never raise it, and it shrinks to
    what is left of the context after the prompt."""
    temperature: float = 0.7
    top_p: float = 1.0
    seed: int | None = None
    """With a seed, vLLM draws the same tokens for the same prompt."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the key a server started with `--api-key` wants; unset is fine."""
    timeout_s: float = 600.0
    name: str = "vllm"

    def __post_init__(self) -> None:
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise PolarError("VLLMPolicy needs the server's URL: pass --base-url (base_url=) or set OPENAI_BASE_URL; "
                             "`bash scripts/vllm.sh start` starts one on this machine and prints it")
        self.base_url = base_url.rstrip("/")
        key = os.environ.get(self.api_key_env)
        self._client = httpx.Client(headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=self.timeout_s)
        self._served: dict[str, Any] | None = None
        self._builder: PromptBuilder | None = None
        self._stop_ids: list[int] = []

    def check(self, timeout_s: float = 60.0) -> None:
        """Fail fast, before any sandbox starts, saying what to do: no server answers, it does not serve `model`,
        the tokenizer is missing, or a one-token probe comes back without token ids or logprobs."""
        self._model_card(min(timeout_s, 5.0))
        builder = self._prompt_builder()
        probe = builder.tokenizer.encode("Hi", add_special_tokens=False)
        body = {"model": self.model, "prompt": probe, "max_tokens": 1, "logprobs": 0, "return_token_ids": True}
        self._reply(self._post(body, {}, timeout_s), Prompt(probe, None, None), builder.tokenizer)

    def _model_card(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """The served model's entry of `/v1/models` (its `root` folder and `max_model_len`), asked once."""
        if self._served is None:
            assert self.base_url is not None
            models = served_models(self._client, self.base_url, self.api_key_env, timeout_s)
            names = [m.get("id") for m in models]
            if self.model is None and len(models) == 1:
                self.model = names[0]
            card = next((m for m in models if m.get("id") == self.model), None)
            if card is None:
                raise PolarError(f"the server at {self.base_url} serves {', '.join(map(str, names)) or 'no model'}, "
                                 f"not {self.model!r}: pass --model with one of those")
            self._served = card
        return self._served

    def _prompt_builder(self) -> PromptBuilder:
        """The prompt builder over the served model's tokenizer, made once (it serves every episode)."""
        if self._builder is None:
            from transformers import AutoTokenizer

            source = self.tokenizer or self._model_card().get("root")
            try:
                tokenizer = AutoTokenizer.from_pretrained(source)
            except (OSError, ValueError) as e:
                raise PolarError(f"cannot load the tokenizer of {self.model} from {source!r} ({e}); pass "
                                 "tokenizer= a folder with the served model's tokenizer files") from None
            tokenizer.clean_up_tokenization_spaces = False  # as `load_model` does: BPE skips it, and warns
            vocab = tokenizer.get_vocab()
            stops = {tokenizer.eos_token_id, *(vocab[t] for t in _STOP_TOKENS if t in vocab)}
            self._stop_ids = sorted(i for i in stops if i is not None)
            self._builder = PromptBuilder(tokenizer)
        return self._builder

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        card = self._model_card()
        builder = self._prompt_builder()
        built = builder.prompt(request)
        prompt = built.ids
        context = int(card.get("max_model_len") or 0) or None
        budget = min(self.max_tokens, int(request.params.get("max_tokens") or self.max_tokens))
        if context is not None:
            if len(prompt) >= context:
                raise PolicyError(f"the prompt is {len(prompt)} tokens; {self.model} at {self.base_url} takes at "
                                  f"most {context} (its max_model_len), with room for at least one sampled token")
            budget = min(budget, context - len(prompt))
        body: dict[str, Any] = {
            "model": self.model, "prompt": prompt, "max_tokens": budget, "temperature": self.temperature,
            "top_p": self.top_p, "logprobs": 0, "return_token_ids": True, "stop_token_ids": self._stop_ids,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if request.episode_id is not None:
            body["session_id"] = request.episode_id
        reply = self._reply(self._post(body, session_headers(request.episode_id)), built, builder.tokenizer)
        builder.record(request, prompt, reply)
        return reply

    def _post(self, body: dict[str, Any], headers: dict[str, str], timeout_s: float | None = None) -> dict[str, Any]:
        url = f"{self.base_url}/completions"
        try:
            response = self._client.post(url, json=body, headers=headers, timeout=timeout_s or self.timeout_s)
        except httpx.HTTPError as e:
            raise PolicyError(f"POST {url} failed ({type(e).__name__}: {e}); is the server still up?") from None
        if response.status_code >= 400:
            raise PolicyError(f"POST {url} returned HTTP {response.status_code}: {response.text[:2000]}")
        try:
            return response.json()
        except ValueError as e:
            raise PolicyError(f"POST {url} answered something that is not JSON: {e}") from None

    def _reply(self, data: dict[str, Any], built: Prompt, tokenizer: Any) -> ModelReply:
        """The reply from a completion, refusing one that lacks what training needs."""
        prompt = built.ids
        url = f"{self.base_url}/completions"
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise PolicyError(f"POST {url} answered something that is not a completion: {str(data)[:500]}") from None
        token_ids = choice.get("token_ids")
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs")
        if token_ids is None:
            raise PolarError(f"the server at {self.base_url} returned no token ids: --policy vllm needs a vLLM server "
                             "(0.10.2 or later: `return_token_ids`); for any other server use --policy openai")
        if logprobs is None or len(logprobs) != len(token_ids) or None in logprobs:
            raise PolarError(f"the server at {self.base_url} returned no logprob for each sampled token: --policy "
                             "vllm asks /v1/completions for `logprobs: 0`, which a vLLM server answers; for a server "
                             "that does not, use --policy openai (its traces then cannot be trained on)")
        echoed = choice.get("prompt_token_ids")
        if echoed is not None and list(echoed) != prompt:
            raise PolicyError(f"the server at {self.base_url} conditioned on other prompt ids than polar sent "
                              f"({len(echoed)} ids, not {len(prompt)})")
        finish = choice.get("finish_reason") or "stop"
        body = token_ids[:-1] if token_ids and token_ids[-1] in self._stop_ids else token_ids
        content, calls = parse_tool_calls(tokenizer.decode(body, skip_special_tokens=False))
        return ModelReply(
            content=content,
            tool_calls=calls,
            finish_reason="tool_calls" if calls and finish == "stop" else finish,
            token_ids=list(token_ids),
            logprobs=[float(x) for x in logprobs],
            prompt_token_ids=prompt,
            chain_break=built.chain_break,
            model=self.model,
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()
