"""The built-in harness's tools and plain-text fallback, against a real sandbox."""

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from polar.envs.sandbox import make_backend
from polar.harnesses.builtin import BuiltinHarness
from polar.protocols import HarnessExit, Mount, SandboxSpec
from polar.types import ModelReply, ToolCall


class _Task:
    id = "t"
    instruction = "do it"

    def reference_solution(self):
        return []


def call(name, **args):
    return ModelReply(tool_calls=[ToolCall(name=name, arguments=json.dumps(args))])


async def drive(replies, backend="local", spec=None):
    sandbox = await make_backend(backend).start(spec or SandboxSpec())
    try:
        run = await BuiltinHarness().launch(_Task(), sandbox)
        first = await run.advance(None)
        assert [m["role"] for m in first.messages] == ["system", "user"]
        assert {"bash", "view", "create", "str_replace", "submit"} == set(first.tool_names())
        outs = []
        for reply in replies:
            nxt = await run.advance(reply)
            outs.append(nxt if isinstance(nxt, HarnessExit) else nxt.messages[-1]["content"])
        return outs
    finally:
        await sandbox.stop()


def test_file_tools(bwrap):
    outs = asyncio.run(drive([
        call("create", path="pkg/a.py", file_text="x = 1\ny = 2\nx = 1\n"),
        call("view", path="pkg/a.py"),
        call("str_replace", path="pkg/a.py", old_str="y = 2", new_str="y = 3"),
        call("str_replace", path="pkg/a.py", old_str="x = 1", new_str="x = 0"),
        call("str_replace", path="pkg/a.py", old_str="zzz", new_str=""),
        call("view", path="pkg/a.py", view_range=[2, 2]),
        call("view", path="."),
        call("view", path="missing.py"),
        call("bash", command="cd pkg && cat a.py | wc -l"),
    ]))
    assert outs[0] == "Wrote pkg/a.py."
    assert "     1\tx = 1" in outs[1]
    assert outs[2] == "Edited pkg/a.py."
    assert "appears 2 times" in outs[3] and "was not found" in outs[4]
    assert outs[5] == "     2\ty = 3"
    assert "pkg/a.py" in outs[6]
    assert "no such file" in outs[7]
    assert outs[8] == "exit code: 0\n3\n"


def test_plain_text_fallback_and_submit(bwrap):
    outs = asyncio.run(drive([
        ModelReply(content="Let me look.\n```bash\necho from-text\n```"),
        ModelReply(content="I am thinking about it."),
        ModelReply(content="All done.\nsubmit"),
    ]))
    assert outs[0] == "exit code: 0\nfrom-text\n"
    assert outs[1].startswith("No tool call found")
    assert isinstance(outs[2], HarnessExit) and outs[2].error is None


def test_submit_tool_ends_after_earlier_calls_in_the_same_reply(bwrap):
    reply = ModelReply(tool_calls=[ToolCall(name="create", arguments='{"path": "f", "file_text": "x"}'),
                                   ToolCall(name="submit")])
    outs = asyncio.run(drive([reply]))
    assert isinstance(outs[0], HarnessExit)




@pytest.fixture
def readable_dir():
    """A host folder any sandbox uid may read (pytest's tmp_path is root's own)."""
    path = Path(tempfile.mkdtemp(prefix="polar-ro-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_a_write_the_sandbox_refuses_is_an_error_for_the_model_not_the_end(backend, readable_dir):
    (readable_dir / "in.txt").write_text("old\n")
    spec = SandboxSpec(mounts=(Mount(str(readable_dir), "/ro"),))
    outs = asyncio.run(drive([
        call("create", path="notes.txt", file_text="kept\n"),
        call("create", path="/ro/new.txt", file_text="x"),
        call("str_replace", path="/ro/in.txt", old_str="old", new_str="new"),
        call("bash", command="mkdir adir"),
        call("create", path="adir", file_text="x"),
        call("bash", command="cat notes.txt /ro/in.txt"),
    ], backend, spec))
    assert "Read-only file system" in outs[1] and "Read-only file system" in outs[2], outs
    assert "Is a directory" in outs[4] and all("no change was made" in outs[i] for i in (1, 2, 4))
    assert outs[5] == "exit code: 0\nkept\nold\n"  # the episode went on, and nothing done before was lost
    assert (readable_dir / "in.txt").read_text() == "old\n" and not (readable_dir / "new.txt").exists()
