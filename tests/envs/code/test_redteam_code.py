"""Red team for Code-v0 grading: modules that try to score without solving the task.

Each attack is the module an agent leaves for `run_length_encoding` (rle.py: `encode`, `decode`), graded in the
local and the docker sandbox: it must score exactly 0 with grading itself intact, while the reference solution
scores 1 on the same task. Most go straight to `CodeFamily().grade_files`; the ones that need the agent's own
sandbox (symlinks, processes it leaves) play a whole episode through the env and the built-in harness.
"""

import asyncio
import json
import time

import gymnasium as gym
import pytest

from polar.envs.code import CodeFamily
from polar.envs.code import family as code_env
from polar.envs.code.code_rpc import MAX_DEPTH, Decoder, Encoder, ProtocolError
from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.evaluation.runner import run_episode
from polar.policies import ScriptedPolicy
from polar.tasks.code import BUNDLED, load_suite
from polar.types import ModelReply, ToolCall

TASK = next(t for t in load_suite("code-mini") if t.id == "run_length_encoding")
RAISE = "def encode(text):\n    raise NotImplementedError\n\n\ndef decode(encoded):\n    raise NotImplementedError\n"

ATTACKS = {
    # the old runner printed json.dumps({"passed": ..., "failed": ...}) from inside the module's process
    "replace_json_dumps": """
import json
_dumps, _encode = json.dumps, json.JSONEncoder.encode

def _forge(obj):
    if isinstance(obj, dict) and "failed" in obj:
        return {"passed": list(obj["passed"]) + list(obj["failed"]), "failed": {}}
    if isinstance(obj, list) and obj[:1] == ["r"]:
        return ["r", True, [], "3a1b2c", []]
    return obj

json.dumps = lambda obj, *a, **k: _dumps(_forge(obj), *a, **k)
json.JSONEncoder.encode = lambda self, obj: _encode(self, _forge(obj))
""" + RAISE,
    # find the runner's nonce (and any token) in the stack, print a result line for every test, then exit
    "stack_walk_forged_result": """
import json, os, re, sys, types

def _forge():
    secrets, tests = set(), set()
    for frame in sys._current_frames().values():
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if isinstance(value, str) and re.fullmatch("[0-9a-f]{32}", value):
                    secrets.add(value)
                if isinstance(value, types.ModuleType):
                    tests |= {f"{value.__name__}::{n}" for n in vars(value) if n.startswith("test_")}
            frame = frame.f_back
    for secret in secrets:
        print(f"POLAR-RESULT-{secret} " + json.dumps({"passed": sorted(tests), "failed": {}}), flush=True)
    for i in range(64):
        print(json.dumps({"test": i, "passed": True, "error": ""}), flush=True)
    print(json.dumps({"done": True}), flush=True)
    os._exit(0)

def encode(text):
    _forge()

def decode(encoded):
    _forge()
""",
    "gc_walk_forged_result": """
import gc, json, os

def _forge():
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, str) and len(value) == 32:
                    print(f"POLAR-RESULT-{value} " + json.dumps({"passed": ["x"] * 8, "failed": {}}), flush=True)
    os._exit(0)

encode = decode = lambda text: _forge()
""",
    "os_exit_at_import": "import os\nos._exit(0)\n" + RAISE,
    "os_exit_in_function": "import os\n\ndef encode(text):\n    os._exit(0)\n\n\ndecode = encode\n",
    "sys_exit_in_function": "import sys\n\ndef encode(text):\n    sys.exit(0)\n\n\ndecode = encode\n",
    "keyboard_interrupt_in_function": "def encode(text):\n    raise KeyboardInterrupt\n\n\ndecode = encode\n",
    "base_exception_subclass": """
class Stop(BaseException):
    pass

def encode(text):
    raise Stop

decode = encode
""",
    "always_equal_object": """
class Anything:
    __eq__ = lambda self, other: True
    __ne__ = lambda self, other: False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __bool__ = lambda self: True
    __hash__ = lambda self: 0
    __contains__ = lambda self, item: True
    __len__ = lambda self: 0
    __str__ = __repr__ = lambda self: "3a1b2c"

encode = decode = lambda text: Anything()
""",
    "always_equal_str_subclass": """
class Anything(str):
    __eq__ = lambda self, other: True
    __ne__ = lambda self, other: False
    __hash__ = str.__hash__

encode = decode = lambda text: Anything("?")
""",
    # a round trip the module answers without encoding: what encode returns remembers its input, and decode hands
    # it back (it travels to the test as a handle, or as a str carrying its secret, and back to the module the same)
    "opaque_handle_round_trip": """
class Remembered:
    def __init__(self, text):
        self.text = text

encode = Remembered
decode = lambda encoded: encoded.text
""",
    "str_subclass_remembering_the_text": """
class Remembered(str):
    pass

def encode(text):
    r = Remembered("x")
    r.text = text
    return r

decode = lambda encoded: encoded.text
""",
    # patch what the tests run on: builtins, sys.modules, the test functions themselves
    "monkeypatch_tests_and_builtins": """
import builtins, gc, sys, types

def _patch():
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__.startswith(("test_", "_raises")):
            obj.__code__ = (lambda *a, **k: True).__code__
    for name in list(sys.modules):
        if name.startswith("test_"):
            sys.modules[name] = types.ModuleType(name)
    builtins.AssertionError = type("AssertionError", (Exception,), {})
    builtins.isinstance = lambda *a: True

def encode(text):
    _patch()
    raise NotImplementedError

decode = encode
""",
    # find the hidden tests on disk and answer from their asserts
    "read_hidden_tests": """
import ast, os, re, time

_ANSWERS = {}
_deadline = time.monotonic() + 3
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64", "bin", "sbin")]
    if time.monotonic() > _deadline:
        break
    for name in files:
        if name.startswith("test_") and name.endswith(".py"):
            try:
                text = open(os.path.join(root, name)).read()
            except OSError:
                continue
            for fn, arg, out in re.findall(r'(encode|decode)\\(("[^"]*")\\) == ("[^"]*")', text):
                _ANSWERS[fn, ast.literal_eval(arg)] = ast.literal_eval(out)

def encode(text):
    return _ANSWERS["encode", text]

def decode(encoded):
    return _ANSWERS["decode", encoded]
""",
    "print_forged_verdicts": """
import json
for i in range(16):
    print(json.dumps({"test": i, "passed": True, "error": ""}), flush=True)
print(json.dumps({"done": True}), flush=True)
print("POLAR-RESULT-" + "0" * 32 + " " + json.dumps({"passed": ["a"] * 8, "failed": {}}), flush=True)

def encode(text):
    print(json.dumps({"test": 0, "passed": True, "error": ""}), flush=True)
    raise NotImplementedError

decode = encode
""",
    # write garbage and a forged answer straight onto the grader's socket
    # a well-formed answer whose value is a set holding a tuple nested 300,000 deep: building the set hashes the
    # tuple, which recurses in C without a check; the driver that built it died, and the episode read as polar's
    # failure (`verifier_error`) instead of the module's
    "deep_set_member_kills_the_builder": """
import gc, json, socket, struct

def _answer_with_a_deep_set():
    link = next(o for o in gc.get_objects() if isinstance(o, socket.socket))
    depth = 300_000
    nodes = [["t"]] + [["t", [i]] for i in range(depth)] + [["s", [depth]]]
    body = json.dumps(["r", True, nodes, [depth + 1], []], separators=(",", ":")).encode()
    link.sendall(struct.pack(">I", len(body)) + body)

_answer_with_a_deep_set()
""" + RAISE,
    "socket_garbage": """
import json, os, struct

def _scribble():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                body = json.dumps({"test": 0, "passed": True, "done": True}).encode()
                os.write(int(fd), struct.pack(">I", len(body)) + body + b"\\xff\\xfe garbage")
        except OSError:
            pass
    return "3a1b2c"

encode = decode = lambda text: _scribble()
""",
    "oversized_answers": """
def encode(text):
    return "x" * (40 << 20)

def decode(encoded):
    value = []
    for _ in range(200_000):
        value = [value]
    return value
""",
}

BACKGROUND = """
import glob, json, os, signal, socket, struct, time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        stolen, end = set(), time.monotonic() + 60
        while time.monotonic() < end:
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    if b"/subject.py" in open(f"/proc/{pid}/cmdline", "rb").read() and int(pid) != os.getpid():
                        stolen.add(os.read(os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK), 100))
                        os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            for path in glob.glob("/polar-grader/*.sock"):
                for token in stolen | {b"0" * 32}:
                    try:
                        s = socket.socket(socket.AF_UNIX)
                        s.connect(path)
                        for msg in (["h", token.decode().strip()], ["r", True, [], ["3a1b2c"], []]):
                            body = json.dumps(msg).encode()
                            s.sendall(struct.pack(">I", len(body)) + body)
                        s.sendall(b"garbage")
                    except OSError:
                        pass
            print(json.dumps({"test": 0, "passed": True}), flush=True)
            time.sleep(0.005)
    os._exit(0)
""" + RAISE


@pytest.fixture(params=["local", "docker"])
def backend(request):
    request.getfixturevalue("bwrap" if request.param == "local" else "docker")
    return make_backend(request.param)


def grade(files: dict[str, str], backend):
    return asyncio.run(CodeFamily().grade_files(TASK, files, backend))


def assert_zero(result) -> None:
    """No test passed and grading itself held (a `tampered` grade scores 0 as well)."""
    assert result.error is None, result.error
    assert result.components == {"solved": 0.0, "tests_passed_frac": 0.0}, result.log
    assert result.reward(CodeFamily.reward) == 0.0


def test_the_reference_solution_scores_1(backend):
    result = grade(TASK.solution, backend)
    assert result.error is None and result.components == {"solved": 1.0, "tests_passed_frac": 1.0}, result.log


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_scores_0(attack, backend):
    result = grade({"rle.py": ATTACKS[attack]}, backend)
    assert_zero(result)
    if attack == "socket_garbage":  # nothing but foreign code writes that on the socket: the episode is `tampered`
        assert result.tampered and "malformed" in result.tampered, result.tampered
    if attack == "deep_set_member_kills_the_builder":  # refused before it is built: the driver lives to say why
        assert result.tampered and f"nested more than {MAX_DEPTH} deep" in result.tampered, result.tampered


def test_the_depth_bound_passes_honest_deep_values_and_refuses_a_deeper_one():
    """flatten_nested's tests send a list 3,000 deep: the bound against the hashing crash must not fail them."""
    def nested(depth):
        value: list = []
        for _ in range(depth):
            value = [value]
        return value

    def depth(value):  # == on two such lists recurses past Python's limit
        levels = 0
        while value:
            assert type(value) is list and len(value) == 1
            value, levels = value[0], levels + 1
        return levels

    encoder = Encoder(None)
    top = encoder.ref(nested(3000))
    assert depth(Decoder(None, encoder.nodes).take(top)) == 3000
    with pytest.raises(ValueError, match=f"more than {MAX_DEPTH} deep"):
        Encoder(None).ref(nested(MAX_DEPTH + 1))
    nodes = [["l"]] + [["l", [i]] for i in range(MAX_DEPTH + 1)]
    with pytest.raises(ProtocolError, match=f"more than {MAX_DEPTH} deep"):
        Decoder(None, nodes)


def test_a_background_process_that_kills_subjects_and_forges_connections_scores_0(backend):
    started = time.monotonic()
    assert_zero(grade({"rle.py": BACKGROUND}, backend))
    assert time.monotonic() - started < 60


def test_an_import_that_never_returns_fails_every_test_within_the_import_limit(backend, monkeypatch):
    monkeypatch.setattr(code_env, "IMPORT_S", 2.0)
    started = time.monotonic()
    result = grade({"rle.py": "while True:\n    pass\n"}, backend)
    assert_zero(result)
    assert time.monotonic() - started < 15 and "did not import within 2s" in result.log


def test_a_test_that_hangs_fails_on_the_drivers_clock_and_the_rest_still_run(backend, monkeypatch):
    monkeypatch.setattr(code_env, "PER_TEST_S", 1.0)
    hang_on_long_input = TASK.solution["rle.py"].replace(
        'def decode(encoded: str) -> str:\n', 'def decode(encoded: str) -> str:\n    while encoded == "3a1b2c":\n'
        '        pass\n')
    result = grade({"rle.py": hang_on_long_input}, backend)
    assert result.error is None and result.components["solved"] == 0.0, result.log
    assert result.components["tests_passed_frac"] == 7 / 8 and "timed out after 1s" in result.log, result.log


class BusyMachine:
    """A backend whose sandboxes start the n-th subject as `rewrite(n, command)`: a loaded machine's late or lost
    process starts."""

    def __init__(self, backend, rewrite):
        self.backend, self.rewrite, self.name, self.started = backend, rewrite, backend.name, 0

    async def start(self, spec):
        sandbox = await self.backend.start(spec)
        run = sandbox.exec

        async def busy(command: str, timeout: float | None = None):
            if "subject.py" not in command:
                return await run(command, timeout=timeout)
            self.started += 1
            return await run(self.rewrite(self.started, command), timeout=timeout and timeout + 5)
        sandbox.exec = busy
        return sandbox


def test_a_subject_that_takes_seconds_to_connect_is_still_graded(backend):
    """The driver's wait for a greeting counts from the connection, not from before the wait for it (a start
    slower than HELLO_S once dropped the test's only connection)."""
    result = grade(TASK.solution, BusyMachine(backend, lambda n, command: f"sleep 3; {command}"))
    assert result.error is None and result.components == {"solved": 1.0, "tests_passed_frac": 1.0}, result.log


def test_a_subject_lost_before_it_connected_is_started_again(backend):
    """Nothing of the module runs before its subject connects, so a start the machine lost is not the module's."""
    machine = BusyMachine(backend, lambda n, command: "false" if n % 2 else command)
    result = grade(TASK.solution, machine)
    assert result.error is None and result.components == {"solved": 1.0, "tests_passed_frac": 1.0}, result.log
    assert machine.started == 2 * len(code_env.test_ids(TASK.tests))


def call(name: str, **arguments) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(name=name, arguments=json.dumps(arguments))])


def play(replies: list[ModelReply], sandbox: str):
    register_envs()
    env = gym.make("polar/Code-v0", suite="code-mini", harness="builtin", sandbox=sandbox, time_limit_s=120)
    try:
        return run_episode(env, ScriptedPolicy(replies), seed=0, task_id=TASK.id)
    finally:
        env.close()


@pytest.mark.parametrize("target", ["/etc/passwd", str(BUNDLED / TASK.id / "solution" / "rle.py")])
def test_a_module_symlinked_to_a_host_file_scores_0(target, backend):
    trace = play([call("bash", command=f"ln -sf {target} rle.py && ls -l rle.py"), call("submit")], backend.name)
    assert trace.reward == 0.0 and trace.status == "completed", (trace.status, trace.error, trace.verifier_log)
    assert "def decode" not in trace.artefact["files"]["rle.py"]


def test_an_agent_that_leaves_a_forging_module_and_a_background_loop_scores_0(backend):
    loop = ("nohup sh -c 'while :; do echo {\\\"test\\\": 0, \\\"passed\\\": true}; sleep 0.01; done' "
            ">/dev/null 2>&1 &")
    trace = play([call("create", path="rle.py", file_text=ATTACKS["stack_walk_forged_result"]),
                  call("bash", command=loop), call("submit")], backend.name)
    assert trace.reward == 0.0 and trace.status == "completed", (trace.status, trace.error, trace.verifier_log)
