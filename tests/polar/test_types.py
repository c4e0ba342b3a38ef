import pytest

from polar.reward import RewardComponent, RewardSpec
from polar.types import ModelReply, ToolCall


def test_reply_accepts_the_three_action_forms():
    assert ModelReply.coerce("hi").content == "hi"
    reply = ModelReply.coerce({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]})
    assert reply.tool_calls[0].name == "bash" and reply.tool_calls[0].parsed_arguments() == {"command": "ls"}
    same = ModelReply(content="x")
    assert ModelReply.coerce(same) is same


def test_reply_round_trips_through_an_openai_message():
    reply = ModelReply(content="a", tool_calls=[ToolCall(id="c", name="f", arguments="{}")])
    assert ModelReply.from_openai_message(reply.to_openai_message()).tool_calls == reply.tool_calls


@pytest.mark.parametrize("bad", [3, None, ["x"], b"bytes"])
def test_reply_rejects_other_types_naming_the_accepted_forms(bad):
    with pytest.raises(TypeError, match="ModelReply, an OpenAI assistant-message dict or a str"):
        ModelReply.coerce(bad)


@pytest.mark.parametrize("bad", [{"role": "user", "content": "x"}, {"tool_calls": [{"function": "nope"}]},
                                 {"content": 5}])
def test_reply_rejects_malformed_dicts(bad):
    with pytest.raises(ValueError):
        ModelReply.coerce(bad)


def test_malformed_arguments_raise_a_message_for_the_model():
    with pytest.raises(ValueError, match="not valid JSON"):
        ToolCall(name="bash", arguments="{oops").parsed_arguments()
    with pytest.raises(ValueError, match="JSON object"):
        ToolCall(name="bash", arguments="[1]").parsed_arguments()


def test_reward_is_the_capped_sum_and_outcome_dominates():
    spec = RewardSpec((RewardComponent("solved", 1.0, 1.0), RewardComponent("frac", 0.1, 0.1, "process")))
    assert spec.score({"solved": 1.0, "frac": 1.0}) == 1.0
    assert spec.score({"solved": 0.0, "frac": 0.5}) == pytest.approx(0.05)
    assert spec.score({"solved": 0.0, "frac": 1.0}) < spec.score({"solved": 1.0, "frac": 0.0})
    with pytest.raises(ValueError, match="unknown reward components"):
        spec.score({"nope": 1.0})
