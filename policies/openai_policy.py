"""`OpenAIPolicy`: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, a hosted API).

It asks for logprobs and, through vLLM's `return_token_ids` extension, for the exact prompt and sampled
token ids; the reply carries them only when the server returned them. Every call of an episode carries the episode
id as its session key (`X-Session-ID`), so a router keeps the episode on one replica and reuses its prefix cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from polar.errors import PolarError
from polar.protocols import Task
from polar.types import ModelReply, ModelRequest

_NOT_FORWARDED = frozenset({"stream", "stream_options", "n", "model", "messages", "tools"})
"""Request params the policy owns: it reads one non-streamed choice, for its own model."""


@dataclass
class OpenAIPolicy:
    """Answer each request with one `POST {base_url}/chat/completions`.

    Sampling parameters merge in this order, later winning: the request's `params`, then this policy's
    `temperature` and `max_tokens` when set, then `extra_body`.
    """

    model: str | None = None
    """The served model name; default: the `POLAR_MODEL` environment variable."""
    base_url: str | None = None
    """E.g. `http://localhost:8000/v1`; default: the `OPENAI_BASE_URL` environment variable."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key; unset is fine for a local server."""
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 600.0
    """Timeout of one completion request."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Further body fields, e.g. `{"top_p": 0.95}` or `{"chat_template_kwargs": {...}}`."""
    token_ids: bool = True
    """Ask for logprobs and token ids; set False for servers that reject unknown fields."""
    name: str = "openai"

    def __post_init__(self) -> None:
        self.model = self.model or os.environ.get("POLAR_MODEL")
        if not self.model:
            raise PolarError("OpenAIPolicy needs a model name: pass model= or set POLAR_MODEL")
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise PolarError(
                "OpenAIPolicy needs the server's URL: pass base_url= or set OPENAI_BASE_URL "
                "(e.g. http://localhost:8000/v1 for vLLM)"
            )
        self.base_url = base_url.rstrip("/")
        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(headers=headers, timeout=self.timeout_s)

    def check(self, timeout_s: float = 5.0) -> None:
        """Fail fast, with a PolarError saying what to do, when the server does not answer `GET /models`."""
        assert self.base_url is not None
        served_models(self._client, self.base_url, self.api_key_env, timeout_s)

    def __call__(self, request: ModelRequest, task: Task | None = None) -> ModelReply:
        body: dict[str, Any] = {k: v for k, v in request.params.items() if k not in _NOT_FORWARDED}
        body.update(model=self.model, messages=request.messages)
        if request.tools:
            body["tools"] = request.tools
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.token_ids:
            body.update(logprobs=True, return_token_ids=True)
            if request.episode_id is not None:
                body["session_id"] = request.episode_id  # vLLM's own session key, beside the header
        body.update(self.extra_body)

        url = f"{self.base_url}/chat/completions"
        try:
            response = self._client.post(url, json=body, headers=session_headers(request.episode_id))
        except httpx.HTTPError as e:
            raise PolarError(
                f"POST {url} failed ({type(e).__name__}: {e}); is the server still up? `check()` tells"
            ) from None
        if response.status_code >= 400:
            raise PolarError(f"POST {url} returned HTTP {response.status_code}: {response.text[:2000]}")
        try:
            return reply_from_completion(response.json(), self.model)
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise PolarError(f"POST {url} answered something that is not a chat completion: {e}") from None

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()


def served_models(client: httpx.Client, base_url: str, api_key_env: str, timeout_s: float) -> list[dict[str, Any]]:
    """The server's `GET {base_url}/models` list; a PolarError saying what to do when it does not answer."""
    url = f"{base_url}/models"
    try:
        response = client.get(url, timeout=timeout_s)
    except httpx.HTTPError as e:
        raise PolarError(
            f"no OpenAI-compatible server answers at {url} ({type(e).__name__}: {e}); start one "
            "(e.g. `bash scripts/vllm.sh start`, or `vllm serve MODEL` on a GPU) or point --base-url / "
            "OPENAI_BASE_URL at a running one"
        ) from None
    if response.status_code >= 400:
        raise PolarError(
            f"GET {url} returned HTTP {response.status_code}: {response.text[:1000]}; "
            f"check the URL and the API key in ${api_key_env}"
        )
    try:
        return list(response.json()["data"])
    except (ValueError, KeyError, TypeError):
        raise PolarError(f"GET {url} answered something that is not a model list: {response.text[:500]}") from None


def session_headers(episode_id: str | None) -> dict[str, str]:
    """`X-Session-ID: <episode id>` on every call of an episode (none outside one): a router (vLLM's, llm-d's, a
    gateway's) keeps the episode on one replica, whose prefix cache holds its history."""
    return {"X-Session-ID": episode_id} if episode_id else {}


def reply_from_completion(data: dict[str, Any], model: str | None = None) -> ModelReply:
    """Map a chat-completion response (vLLM's token-id extensions included) to a ModelReply."""
    choice = data["choices"][0]
    message = ModelReply.from_openai_message({**choice["message"], "role": "assistant"})
    entries = (choice.get("logprobs") or {}).get("content") or []
    return message.model_copy(update=dict(
        finish_reason=choice.get("finish_reason"),
        token_ids=choice.get("token_ids"),
        logprobs=[e["logprob"] for e in entries] or None,
        prompt_token_ids=data.get("prompt_token_ids") or choice.get("prompt_token_ids"),
        model=data.get("model") or model,
    ))
