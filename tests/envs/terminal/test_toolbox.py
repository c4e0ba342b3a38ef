"""The verifier toolbox: a test.sh written for Terminal-Bench, with its online preamble (apt's curl, uv's installer
from the internet, `uvx -p 3.13 -w pytest==...`), runs unmodified offline, and scores the work: 1 for the reference
solution, an honest 0 (`completed`, not `verifier_error`) for none."""

import json

import pytest
from support.harbor_tasks import SUBMIT, episode, make_task

from polar.envs.terminal.family import TerminalFamily
from polar.envs.terminal.toolbox import needs_toolbox, requirements
from polar.errors import SandboxUnsupported
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.tasks.harbor import load_task
from polar.types import ModelReply, ToolCall


def bash(command: str) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(name="bash", arguments=json.dumps({"command": command}))])

PREAMBLE = ("apt-get update\napt-get install -y curl\ncurl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh\n"
            "source $HOME/.local/bin/env\n")
VERDICT = "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
TEST = "def test_the_report():\n    assert open('/app/report.txt').read() == 'done\\n'\n"
SHAPES = {
    # Terminal-Bench 2's own: uv from its installer, CPython 3.13 and pytest that uv fetches
    "uvx": (PREAMBLE + "uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 \\\n"
            "  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA\n" + VERDICT),
    # a venv of uv's, with pytest installed into it
    "uv-venv": (PREAMBLE + "uv venv -p 3.13 /tmp/venv\nsource /tmp/venv/bin/activate\n"
                "uv pip install pytest==8.4.1\npytest /tests/test_outputs.py -rA\n" + VERDICT),
    # Terminal-Bench 1's template: a uv project the tests make, whose universal lock wants Windows' colorama too
    "uv-project": (PREAMBLE + "uv init -q\nuv add -q pytest==8.4.1\nuv run pytest /tests/test_outputs.py -rA\n"
                   + VERDICT),
    # pip on the image's own Python (a python:* base), pytest from the wheelhouse
    "pip": "pip install -q pytest==8.4.1\npytest /tests/test_outputs.py -rA\n" + VERDICT,
    # Debian's pytest, from apt: installed when the image is built
    "apt": ("apt-get update && apt-get install -y python3-pytest\npython3 -m pytest /tests/test_outputs.py -rA\n"
            + VERDICT),
}
BASES = {"uvx": "ubuntu:24.04", "uv-venv": "ubuntu:24.04", "uv-project": "ubuntu:24.04",
         "pip": "python:3.13-slim-bookworm", "apt": "ubuntu:24.04"}


def test_what_the_tests_name_is_what_gets_fetched():
    scripts = {"test.sh": (b"uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 \\\n  pytest /tests/t.py -rA\n"
                           b"pip install -q requests==2.32.3 && python -m pytest\n"
                           b"uv pip install -r /tests/requirements.txt  # pinned\n"
                           b"python3 -m pip install --no-cache-dir numpy==2.1.0 > /dev/null\n"
                           b"uv run --with pandas pytest\n"),
               "requirements.txt": b"scipy==1.14.1\n# a comment\n"}
    assert requirements(scripts) == (("pytest==8.4.1", "pytest-json-ctrf==0.3.5", "pytest", "scipy==1.14.1",
                                      "pandas"), ("requests==2.32.3", "numpy==2.1.0"))
    assert needs_toolbox(scripts) and needs_toolbox({"test.sh": b"source $HOME/.local/bin/env\npytest\n"})
    assert not needs_toolbox({"test.sh": b"pytest /tests/test_outputs.py  # uv would be nicer\n"})
    assert not needs_toolbox({"test_outputs.py": b"import subprocess; subprocess.run(['uv'])\n"})


@pytest.mark.parametrize("sandbox, shape", [  # the fast subset keeps one shape (the first run builds the toolbox)
    ("local", "uvx"), *(pytest.param("local", s, marks=pytest.mark.slow) for s in ("uv-venv", "uv-project")),
    ("docker", "uvx"), ("docker", "uv-venv"), ("docker", "uv-project"), ("docker", "pip"), ("docker", "apt")])
def test_a_terminal_bench_preamble_runs_offline_and_scores_the_work(request, bwrap, tmp_path, sandbox, shape):
    """(pip and apt only in docker: the local sandbox's system is the host's, which they install nothing into.)"""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    task = make_task(tmp_path, shape, dockerfile=f"FROM {BASES[shape]}\nWORKDIR /app\n", test=SHAPES[shape],
                     solve="echo done > /app/report.txt\n", files={})
    (task / "tests" / "test_outputs.py").write_text(TEST)
    solved, nothing = episode(task, OraclePolicy(), sandbox), episode(task, SUBMIT, sandbox)
    assert (solved.status, solved.reward) == ("completed", 1.0), (solved.error, solved.verifier_log[-3000:])
    assert "1 passed" in solved.verifier_log and (shape in ("pip", "apt") or "Python 3.13" in solved.verifier_log)
    assert (nothing.status, nothing.reward) == ("completed", 0.0), (nothing.error, nothing.verifier_log[-3000:])
    assert "1 failed" in nothing.verifier_log


FAKE_UV = r"#!/bin/sh\necho 1 > /logs/verifier/reward.txt\nexit 0\n"
"""printf's text of a uv that writes the reward."""
PLANT = ('for d in /usr/local/bin "$HOME/.local/bin" /tmp/bin; do mkdir -p "$d" 2>/dev/null && for t in uv uvx; do '
         f"printf '{FAKE_UV}' > \"$d/$t\" && chmod +x \"$d/$t\"; done; done 2>/dev/null; "
         "printf 'export PATH=/tmp/bin:$PATH\\n' > \"$HOME/.local/bin/env\"; ls /tmp/bin/uvx")


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_a_uv_the_agent_put_where_uv_is_looked_for_never_runs_for_the_tests(request, bwrap, tmp_path, sandbox):
    """The tests' uv is the toolbox's, first on their PATH and in their fresh HOME, whatever the agent planted."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    task = make_task(tmp_path, "planted-uv", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n", test=SHAPES["uvx"],
                     solve="echo done > /app/report.txt\n", files={})
    (task / "tests" / "test_outputs.py").write_text(TEST)
    trace = episode(task, ScriptedPolicy([bash(PLANT), "submit"]), sandbox)
    assert "/tmp/bin/uvx" in trace.turns[1].request.messages[-1]["content"], "the attack did not arm"
    assert (trace.status, trace.reward) == ("completed", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert "1 failed" in trace.verifier_log


def test_tests_that_need_a_package_no_wheel_exists_for_cannot_verify(bwrap, tmp_path):
    """A package the wheelhouse could not get: the tests never ran, so the 0 is a `verifier_error`, not the agent's."""
    test = SHAPES["uvx"].replace("-w pytest==8.4.1", "-w polar-no-such-package==1.0 -w pytest==8.4.1")
    task = make_task(tmp_path, "missing-wheel", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n", test=test,
                     solve="echo done > /app/report.txt\n", files={})
    (task / "tests" / "test_outputs.py").write_text(TEST)
    with pytest.warns(UserWarning, match="no wheel of polar-no-such-package==1.0"):
        trace = episode(task, OraclePolicy(), "local")
    assert (trace.status, trace.reward) == ("verifier_error", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert "No solution found" in trace.error


@pytest.mark.parametrize("version", ["3.12", "3.10"])
def test_tests_that_ask_uv_for_a_python_the_toolbox_lacks_cannot_verify(bwrap, tmp_path, version):
    """uv may not download a CPython offline, and the toolbox has one (3.13): the tests never ran, so the 0 is a
    `verifier_error` that names the Python asked for, for the solution as for none."""
    task = make_task(tmp_path, f"python-{version}", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n",
                     test=SHAPES["uvx"].replace("uvx -p 3.13", f"uvx -p {version}"),
                     solve="echo done > /app/report.txt\n", files={})
    (task / "tests" / "test_outputs.py").write_text(TEST)
    for trace in (episode(task, OraclePolicy(), "local"), episode(task, SUBMIT, "local")):
        assert (trace.status, trace.reward) == ("verifier_error", 0.0), (trace.error, trace.verifier_log[-3000:])
        assert f"asked uv for Python {version}, which the verifier's offline toolbox does not have" in trace.error


def test_tests_that_install_debian_packages_the_host_lacks_run_in_docker_only(bwrap, tmp_path):
    task = make_task(tmp_path, "apt-local", test=SHAPES["apt"].replace("python3-pytest", "polar-no-such-deb"))
    trace = episode(task, SUBMIT, "local")  # says why it could not start, so `polar eval` goes on
    assert (trace.status, trace.reward) == ("sandbox_error", 0.0) and "docker sandbox only" in trace.error
    with pytest.raises(SandboxUnsupported, match="install Debian packages this machine lacks .polar-no-such-deb."):
        TerminalFamily().sandbox_spec(load_task(task), backend="local")


VENV_TEST = (PREAMBLE + "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\nuv pip install pytest==8.4.1\n"
             "pytest /tests/test_outputs.py -rA\n" + VERDICT)
"""Terminal-Bench 2's other preamble: a venv in the working directory, activated."""
EXIT_0 = ("python3 -c \"import zipfile; z = zipfile.ZipFile('/tmp/w/iniconfig-99.0-py3-none-any.whl', 'w'); "
          "z.writestr('iniconfig/__init__.py', 'import atexit, os; atexit.register(lambda: os._exit(0))'); "
          "z.writestr('iniconfig-99.0.dist-info/METADATA', 'Metadata-Version: 2.1\\\\nName: iniconfig\\\\n"
          "Version: 99.0\\\\n'); z.writestr('iniconfig-99.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\\\n"
          "Root-Is-Purelib: true\\\\nTag: py3-none-any\\\\n'); z.writestr('iniconfig-99.0.dist-info/RECORD', '')\"")
"""A wheel of pytest's dependency whose import makes pytest, failing or not, exit 0."""
TOOL_ATTACKS = {
    # a venv where the tests make theirs, with an activate that fakes pytest
    "a planted venv": (("local", "docker"), VENV_TEST,
                       "mkdir -p /app/.tbench-testing/bin && echo 'pytest() { return 0; }' > "
                       "/app/.tbench-testing/bin/activate"),
    # apt's configuration runs a hook during the tests' own apt-get update, as root
    "an apt hook": (("docker",), SHAPES["uvx"],
                    "printf 'printf \"def test_ok():\\\\n    pass\\\\n\" > /tests/test_outputs.py\\n' "
                    "> /tmp/hook.sh && "
                    "echo 'APT::Update::Pre-Invoke { \"sh /tmp/hook.sh\"; };' > /etc/apt/apt.conf.d/99zz"),
    # uv's configuration, project-level and system-wide, pointing it at the agent's wheels
    "a project uv.toml": (("local", "docker"), SHAPES["uv-project"],
                          f"mkdir -p /tmp/w && {EXIT_0} && printf 'find-links = [\"/tmp/w\"]\\n' > /app/uv.toml"),
    # a real project venv where `uv run` will look, made with the toolbox's own uv, whose pytest is a fake
    "a planted project venv": (("local", "docker"), SHAPES["uv-project"],
                               "export UV_PYTHON_INSTALL_DIR=/opt/polar-verifier/python UV_OFFLINE=1 "
                               "UV_FIND_LINKS=/opt/polar-verifier/wheels && cd /app && /opt/polar-verifier/uv/uv venv "
                               "-q -p 3.13 .venv && /opt/polar-verifier/uv/uv pip install -q --python .venv "
                               "pytest==8.4.1 && printf '#!/bin/sh\\necho \"1 passed\"\\n' > .venv/bin/pytest"),
    "a system uv.toml": (("docker",), SHAPES["uvx"],
                         f"mkdir -p /tmp/w /etc/uv && {EXIT_0} && printf 'find-links = [\"/tmp/w\"]\\n' > "
                         "/etc/uv/uv.toml"),
}
"""What the agent can leave for the tools the tests set themselves up with (found by a red-teamer that never saw
this battery); each scored 1 before the toolbox closed it."""


@pytest.mark.parametrize("name, sandbox", [(n, s) for n, (where, _, _) in TOOL_ATTACKS.items() for s in where])
def test_what_the_agent_leaves_for_the_tests_tools_never_runs(request, bwrap, tmp_path, name, sandbox):
    if sandbox == "docker":
        request.getfixturevalue("docker")
    where, test, command = TOOL_ATTACKS[name]
    task = make_task(tmp_path, "tool-attack", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n", test=test,
                     solve="echo done > /app/report.txt\n", files={})
    (task / "tests" / "test_outputs.py").write_text(TEST)
    trace = episode(task, ScriptedPolicy([bash(f"{command} && echo ARMED"), "submit"]), sandbox)
    assert "ARMED" in trace.turns[1].request.messages[-1]["content"], trace.turns[1].request.messages[-1]
    assert trace.reward == 0.0 and trace.status in ("completed", "tampered"), (trace.status, trace.error,
                                                                               trace.verifier_log[-3000:])
