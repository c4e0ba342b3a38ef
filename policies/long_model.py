"""A tiny randomly initialised model with SmolLM2's tokenizer and a 64k-token context, for token tests only.

SmolLM2-135M takes 8,192 tokens, while the first request of claude-code is about 22k tokens (qwen-code 19k,
gemini-cli 11k, codex 8.6k). This model takes them all: its replies are nonsense, but its token ids, logprobs
and the harness's re-sent history are real, which is what the token-exact tests check. It is built once per
machine from the SmolLM2 GGUF's tokenizer (no hub) and saved as a Hugging Face folder, which `LocalPolicy`
loads (`model_path=`) and vLLM serves (`--model DIR`).

    python -m polar.policies.long_model        # builds it if missing, prints its folder
"""

from __future__ import annotations

from pathlib import Path

from polar.cache import cache_dir, locked

LONG_MODEL_NAME = "polar-tiny-random-64k"
CONTEXT = 65536
SEED = 0


def long_model_dir() -> Path:
    """Where the model lives: `<polar cache>/models/polar-tiny-random-64k`."""
    return cache_dir("models") / LONG_MODEL_NAME


def build_long_model(path: Path | None = None) -> Path:
    """Build the model at `path` (default `long_model_dir()`) unless it is there already; returns the folder.

    Llama architecture (what SmolLM2 is), 2 layers, width 128, 2 heads of 64 (a head size every vLLM attention
    backend takes), weights from a fixed seed, float32.
    """
    path = Path(path or long_model_dir())
    with locked(path.with_name(path.name + ".lock")):
        if (path / "config.json").is_file():
            return path
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        from polar.policies.local_policy import load_model

        tokenizer = load_model().tokenizer
        config = LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=2, head_dim=64, max_position_embeddings=CONTEXT,
            rope_theta=1_000_000.0, tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"), pad_token_id=tokenizer.pad_token_id,
            torch_dtype="float32",
        )
        torch.manual_seed(SEED)
        model = LlamaForCausalLM(config).eval()
        staging = path.with_name(path.name + ".partial")
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        staging.rename(path)  # whole or absent: a killed build leaves only the staging folder
        return path


if __name__ == "__main__":
    print(build_long_model())
