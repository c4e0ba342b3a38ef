"""Every command and snippet of README.md, and of the folder READMEs it moved its details into, run as written, offline.

The files are read in the order of `DOCS` (README.md first), each top to bottom. The fenced `bash` blocks give one
command a line, the fenced `python` blocks one script each, and the inline `polar ...` spans in the prose one command
each when they are complete (no placeholder such as SUITE, FILE or `<dir>`, and the CLI parses them). They share one
working directory, so a command finds what an earlier one wrote (`runs/eval-Code-v0-answer-local` comes from
README.md's first command, and evaluation/README.md and training/README.md read it); `-k` on a later one alone fails
for that. An item's id names its file and line (`training/README.md:L16:...`; README.md's own as `L12:...`).

- The set-up commands are what `scripts/test.sh` ran before this test (`SETUP`): their effect is checked here.
- A command that needs what this machine lacks (a model server, a GPU) must fail at once with one line that says
  what is missing (`ABSENT`); the test asserts that line.
- A snippet's placeholder (`my_policy`) is defined before it runs, and a few commands get extra checks of what
  they promise (`CHECKS`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO

ROOT = REPO
README = ROOT / "README.md"
DOCS = ("README.md", "harnesses/README.md", "evaluation/README.md", "training/README.md", "polar/README.md")
"""The files whose commands and snippets run, in this order: README.md, then the folder READMEs that hold what it
moved out (its gateway section, evaluation and leaderboard commands, trainer section, CLI paragraph), in the order
those sections had in it. A folder README not named here is not run: its commands were never part of this test
(admission sweeps, image builds, the leaderboard's baselines: Docker or minutes each)."""
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.[a-z]+)?$|[<>|\[\]]|\.\.\.")


@dataclass(frozen=True)
class Item:
    kind: str
    """`bash` (one command line) or `python` (one script)."""
    text: str
    line: int
    """Where it starts in its file."""
    doc: str = "README.md"
    """Its file, one of `DOCS`."""

    @property
    def where(self) -> str:
        """`L12` in README.md, `training/README.md:L16` in a folder README."""
        return f"L{self.line}" if self.doc == "README.md" else f"{self.doc}:L{self.line}"

    @property
    def id(self) -> str:
        first = self.text.strip().splitlines()[0].split("  #")[0].strip()
        return f"{self.where}:{first[:70]}"


def readme_items() -> list[Item]:
    """The commands and snippets of every file of `DOCS`, in order."""
    return [item for doc in DOCS for item in doc_items(doc)]


def doc_items(doc: str) -> list[Item]:
    """One file's commands and snippets, top to bottom."""
    text = (ROOT / doc).read_text()
    items, blocks = [], list(re.finditer(r"^```(\w*)\n(.*?)^```", text, re.DOTALL | re.MULTILINE))
    prose_from = 0
    for block in [*blocks, None]:
        prose = text[prose_from:block.start() if block else len(text)]
        offset = text[:prose_from].count("\n") + 1
        for span in re.finditer(r"`(polar [^`]+)`", prose):
            if _complete(span.group(1)):
                items.append(Item("bash", span.group(1), offset + prose[:span.start()].count("\n"), doc))
        if block is None:
            break
        prose_from = block.end()
        start = text[:block.start(2)].count("\n") + 1
        if block.group(1) == "python":
            items.append(Item("python", block.group(2), start, doc))
        elif block.group(1) == "bash":
            for i, line in enumerate(block.group(2).splitlines()):
                if line.strip():
                    items.append(Item("bash", line.strip(), start + i, doc))
    return items


@functools.cache
def _parser() -> argparse.ArgumentParser:
    from polar.cli import build_parser

    return build_parser()


def _complete(command: str) -> bool:
    """An inline span is a command to run, not a name or a syntax summary."""
    words = shlex.split(command)
    if any(PLACEHOLDER.search(w) for w in words):
        return False
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # argparse's usage message for a name that is no command
            _parser().parse_args(words[1:])
    except SystemExit:
        return False
    return True


SETUP = {
    "bash scripts/setup.sh": "setup.sh installs polar-gym with the local extra",
    "bash scripts/test.sh": "the command that runs this test",
    'pip install -e ".[local,train]"': "scripts/test.sh installs these extras",
}
"""Set-up commands, run by `scripts/test.sh` before the tests; `test_setup_commands_are_what_the_tests_ran`."""

ABSENT = {
    "polar eval polar/Code-v0 --harness codex --policy openai": (
        2, "polar: error: no OpenAI-compatible server answers at http://127.0.0.1:8000/v1/models"),
    "polar train verl grpo_code trainer.total_epochs=1": (2, "polar: error: no GPU: verl's trainer needs a CUDA GPU"),
}
"""Commands that need what no test machine has (a model server on :8000, a GPU): exit status and the one line."""


def _first_screen(done: subprocess.CompletedProcess, workdir: Path) -> None:
    """One loading line, then a bar that shows model calls before the first episode ends; no library noise."""
    out, err = done.stdout, done.stderr
    loading = [line for line in out.splitlines() if line.startswith("loading ")]
    assert len(loading) == 1 and re.fullmatch(r"loading SmolLM2-135M-Instruct on the CPU \.\.\. \d+\.\ds", loading[0])
    frames = re.split(r"[\r\n]", err)
    first_done = next(i for i, f in enumerate(frames) if " 1/1 " in f)
    assert any("model_calls=1" in f for f in frames[:first_done]), err[:2000]
    for noise in ("Converting and de-quantizing", "clean_up_tokenization", "[transformers]"):  # libraries' own
        assert noise not in out + err
    assert "pass@1 95% CI" in out and "over tasks" in out


FIRST_EPISODE = " --tasks greet"
"""What the test adds to the README's first command: one task of code-warmup-heldout alone."""


def _oracle_summary(done: subprocess.CompletedProcess, workdir: Path) -> None:
    """Components labelled raw and scored; wall time beside the summed episode time."""
    out = done.stdout
    assert re.search(r"tests_passed_frac +0\.000 +scored \(raw 1\.000 x weight 0, capped at 0\)", out), out
    wall, summed = map(float, re.search(r"wall time +([\d.]+)s +\(episodes' own times summed: ([\d.]+)s\)",
                                        out).groups())
    assert wall < summed  # -j 2: two episodes at once


def _site_has_the_new_submission(done: subprocess.CompletedProcess, workdir: Path) -> None:
    """`build` right after `submit` shows the new submission beside the baselines."""
    assert (workdir / "site" / "submissions" / "eval-Code-v0-builtin-oracle" / "index.html").is_file()
    assert (workdir / "site" / "submissions" / "oracle-builtin" / "index.html").is_file()


def _already_installed(done: subprocess.CompletedProcess, workdir: Path) -> None:
    """Run again, every harness is skipped, by name."""
    from polar.harnesses import EXTERNAL

    again = _bash("polar harnesses --install all", workdir)
    assert again.returncode == 0 and len(EXTERNAL) == again.stdout.count("already installed"), again.stdout


CHECKS = {
    "polar eval polar/Code-v0 --suite code-warmup-heldout --harness answer": _first_screen,
    "polar eval polar/Code-v0 --suite code-mini --policy oracle": _oracle_summary,
    "polar leaderboard build --out site/": _site_has_the_new_submission,
    "polar harnesses --install all": _already_installed,
}
"""Extra checks of what a command promises, by the start of the command."""

NEEDS = {"polar harnesses --install all": "node", "polar doctor --require docker-engine": "docker"}
"""The conftest fixture (a real component) a command needs, by the start of the command; every one needs bwrap."""

SNIPPETS = {
    "my_policy(obs)": (
        "from polar.policies import make_policy\n"
        "_oracle = make_policy('oracle')\n"
        "def my_policy(obs):\n    return _oracle(obs, info['task'])\n",
        "assert info['status'] == 'completed' and reward == 1.0, (info['status'], reward)\n"),
    'harness="claude-code"': ("", "assert obs.api == 'anthropic-messages' and obs.tools, obs.api\nenv.close()\n"),
    "grpo_trainer(": ("", "assert trainer.state.global_step == 1, trainer.state.global_step\n"),
}
"""Per snippet (by a string in it): code before it (its placeholders) and after it (what its comments promise)."""


def _command(text: str) -> str | None:
    """What the test runs of a README command line: None for a set-up command, the rest of `setup && rest`."""
    for setup in SETUP:
        if text.split("  #")[0].strip() == setup:  # a set-up line with its trailing comment
            return None
        text = text.removeprefix(f"{setup} && ")
    return text


def _by_prefix(table: dict, command: str):
    return next((value for key, value in table.items() if command.startswith(key)), None)


def _bash(command: str, workdir: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, text=True,
                          env={**(env or os.environ), "PYTHONUNBUFFERED": "1"})


def _fresh_virtualenv(where: Path) -> dict[str, str]:
    """The environment of a new, empty virtualenv (no polar, no packages but pip's own), first on PATH."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**env, "VIRTUAL_ENV": str(where), "PATH": f"{where / 'bin'}:{env['PATH']}"}


ITEMS = readme_items()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("readme")


def test_the_readme_has_what_this_test_runs():
    commands = [c for i in ITEMS if i.kind == "bash" and (c := _command(i.text))]
    for prefix in [*ABSENT, *CHECKS, *NEEDS]:
        assert any(c.startswith(prefix) for c in commands), prefix
    for key in SNIPPETS:
        assert any(key in i.text for i in ITEMS if i.kind == "python"), key
    for doc in DOCS[1:]:  # a folder README in DOCS holds something to run, or it is dropped from the tuple
        assert any(i.doc == doc for i in ITEMS), doc
    first_screen = README.read_text().split("\n## ")[0]
    (block,) = re.findall(r"^```bash\n(.*?)^```", first_screen, re.DOTALL | re.MULTILINE)
    assert len(block.splitlines()) == 2  # one runs the main job, one the tests


def test_setup_commands_are_what_the_tests_ran():
    """`bash scripts/test.sh` runs `scripts/setup.sh` with the extras the README installs, so they are in place."""
    from polar.doctor import extra_problems

    test_sh = (ROOT / "scripts" / "test.sh").read_text()
    extras = re.search(r"^\s*bash scripts/setup\.sh (\S+)$", test_sh, re.MULTILINE).group(1).split(",")
    assert {"local", "train"} <= set(extras)
    for extra in ("local", "train"):
        assert extra_problems(extra) == [], extra


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.id)
def test_readme_item_runs_as_written(item: Item, workdir: Path, bwrap, request):
    if item.kind == "python":
        _run_snippet(item, workdir, request)
        return
    command = _command(item.text)
    if command is None:
        return  # test_setup_commands_are_what_the_tests_ran
    if (fixture := _by_prefix(NEEDS, command)) is not None:
        request.getfixturevalue(fixture)
    if command.startswith("polar train verl grpo_code trainer"):
        from polar.training.verl.cli import gpu_count

        if gpu_count():
            pytest.skip("on a GPU machine this trains for real, from the hub: training/gpu_check.sh is that check")
    if command != item.text:  # `setup && command`
        # The first command as a new user runs it: set-up included, in a fresh virtualenv, so what it installs
        # (the pinned versions of the local extra alone) is what runs the main job.
        # One episode of it: the other four run the same code on other tasks, and each took ~1 min of CI's chain.
        env = _fresh_virtualenv(workdir / "fresh-venv")
        first = item.text.split("  #")[0].rstrip()  # the options go before the line's comment, not into it
        done = _bash(first.replace("bash scripts/", f"bash {ROOT}/scripts/") + FIRST_EPISODE, workdir, env)
        assert done.returncode == 0, f"{item.text}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        doctor = _bash("polar doctor", workdir, env).stdout
        assert re.search(r"^ok +pins ", doctor, re.MULTILINE), doctor  # the tested versions, not PyPI's newest
    else:
        done = _bash(command, workdir)
    absent = _by_prefix(ABSENT, command)
    if absent is not None:
        status, line = absent
        assert done.returncode == status, done.stdout[-2000:] + done.stderr[-2000:]
        assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith(line), done.stderr
        return
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if (check := _by_prefix(CHECKS, command)) is not None:
        check(done, workdir)


def _run_snippet(item: Item, workdir: Path, request) -> None:
    before, after = next((v for k, v in SNIPPETS.items() if k in item.text), ("", ""))
    if 'harness="' in item.text:
        request.getfixturevalue("node")
    script = workdir / f"snippet_{re.sub(r'[^A-Za-z0-9]+', '_', item.where)}.py"
    script.write_text(before + item.text + after)
    done = subprocess.run([sys.executable, str(script)], cwd=workdir, capture_output=True, text=True)
    assert done.returncode == 0, f"{item.where}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
