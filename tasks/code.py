"""Code-v0 tasks: a statement, a stub module to complete, a reference solution and hidden tests.

One directory per task (`tasks/code/<id>/`): `task.toml` (id, title, difficulty, files), `statement.md`,
`stub/<file>`, `solution/<file>` and `tests/test_*.py`. The tests never enter the agent's sandbox.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from polar.errors import TaskFormatError, UnknownNameError
from polar.protocols import SolutionStep, WriteFile
from polar.python_ast import parse_python
from polar.tasks.folders import load_folders

BUNDLED = Path(__file__).with_name("code")
WARMUP = Path(__file__).with_name("code_warmup")
"""One-function tasks a 135M model can start on (`code_warmup/build_suite.py` writes them and their splits)."""
DIFFICULTIES = ("easy", "medium", "hard")
MODULE_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")
"""A file of the module under test: a plain `name.py` (the tests import it by its stem)."""
_WARMUP_SPLITS = tomllib.loads((WARMUP / "splits.toml").read_text())
SUITES: dict[str, tuple[Path, tuple[str, ...] | None]] = {
    "code": (BUNDLED, None),  # every task of tasks/code
    "code-mini": (BUNDLED, ("balanced_brackets", "caesar_cipher", "roman_numerals", "run_length_encoding",
                            "word_frequency")),
    "code-warmup": (WARMUP, None),
    "code-warmup-train": (WARMUP, tuple(_WARMUP_SPLITS["train"])),
    "code-warmup-heldout": (WARMUP, tuple(_WARMUP_SPLITS["heldout"])),
}
"""Each bundled suite: its folder and its task ids (None: every task there)."""


@dataclass(frozen=True)
class CodeTask:
    id: str
    title: str
    difficulty: str
    statement: str
    stub: dict[str, str]
    solution: dict[str, str]
    tests: dict[str, str]
    test_timeout_s: float | None = None
    """task.toml's optional `test_timeout_s`: each test's time once the module is imported; None: the family's
    default (`polar.envs.code.family.PER_TEST_S`). A task of one-line functions sets a few seconds, so that a reply
    that loops forever fails its tests in seconds, not minutes."""

    @property
    def files(self) -> list[str]:
        return list(self.stub)

    @property
    def instruction(self) -> str:
        names = ", ".join(self.files)
        return (f"{self.statement.strip()}\n\nThe code lives in the current directory: {names}. Edit "
                f"{'it' if len(self.files) == 1 else 'them'} so the behaviour matches the description above; "
                "hidden unit tests will check it. When you are done, submit.")

    def reference_solution(self) -> list[SolutionStep]:
        return [WriteFile(name, text) for name, text in self.solution.items()]


def _field(meta: dict, key: str, kind: type, path: Path):
    if key not in meta:
        raise TaskFormatError(f"{path}: missing field {key!r}")
    if not isinstance(meta[key], kind):
        raise TaskFormatError(f"{path}: field {key!r} must be a {kind.__name__}, got {type(meta[key]).__name__}")
    return meta[key]


def load_task(directory: Path) -> CodeTask:
    """Load one task directory; any break of the format raises TaskFormatError naming the file and field."""
    toml_path = directory / "task.toml"
    try:
        meta = tomllib.loads(toml_path.read_text())
    except FileNotFoundError:
        raise TaskFormatError(f"{toml_path}: missing (every task directory needs a task.toml)") from None
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"{toml_path}: not valid TOML: {e}") from None
    task_id = _field(meta, "id", str, toml_path)
    if task_id != directory.name:
        raise TaskFormatError(f"{toml_path}: field 'id' is {task_id!r} but the directory is {directory.name!r}")
    title = _field(meta, "title", str, toml_path)
    difficulty = _field(meta, "difficulty", str, toml_path)
    if difficulty not in DIFFICULTIES:
        raise TaskFormatError(f"{toml_path}: field 'difficulty' must be one of {DIFFICULTIES}, got {difficulty!r}")
    files = _field(meta, "files", list, toml_path)
    bad = [f for f in files if not isinstance(f, str) or not MODULE_FILE.fullmatch(f)]
    if not files or bad or len(set(files)) != len(files):
        raise TaskFormatError(f"{toml_path}: field 'files' must be a non-empty list of distinct module file names "
                              f"like 'solution.py' (letters, digits, underscores); got {bad or files!r}")

    tests = {p.name: _python(p) for p in sorted((directory / "tests").glob("test_*.py"))}
    if not tests:
        raise TaskFormatError(f"{directory / 'tests'}: no test_*.py files")
    statement_path = directory / "statement.md"
    if not statement_path.is_file():
        raise TaskFormatError(f"{statement_path}: missing")
    test_timeout = meta.get("test_timeout_s")
    if test_timeout is not None and (isinstance(test_timeout, bool) or not isinstance(test_timeout, int | float)
                                     or not 0 < test_timeout <= 3600):
        raise TaskFormatError(f"{toml_path}: field 'test_timeout_s' must be a number of seconds in (0, 3600], got "
                              f"{test_timeout!r}")
    return CodeTask(
        id=task_id,
        title=title,
        difficulty=difficulty,
        statement=_text(statement_path),
        stub={f: _text(directory / "stub" / f, toml_path) for f in files},
        solution={f: _text(directory / "solution" / f, toml_path) for f in files},
        tests=tests,
        test_timeout_s=float(test_timeout) if test_timeout is not None else None,
    )


def _text(path: Path, named_by: Path | None = None) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        where = f" (named by field 'files' in {named_by})" if named_by else ""
        raise TaskFormatError(f"{path}: missing{where}") from None
    except UnicodeDecodeError as e:
        raise TaskFormatError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None


def _python(path: Path) -> str:
    """A hidden test file's source, which must parse: the grader counts its tests and runs it as it is."""
    source = _text(path)
    try:
        parse_python(source, filename=str(path))
    except SyntaxError as e:
        raise TaskFormatError(f"{path}: line {e.lineno}: {e.msg}; fix the test file") from None
    except ValueError as e:  # a NUL byte
        raise TaskFormatError(f"{path}: {e}; fix the test file") from None
    return source


def load_suite(suite: str | Path | None = None) -> list[CodeTask]:
    """A bundled suite (`code`, the default, `code-mini`, `code-warmup` and its `-train` and `-heldout` splits), or
    every task directory under a path; a folder that does not load is left out and named in the result's `rejected`
    (`polar.tasks.folders`)."""
    name = "code" if suite is None else str(suite)
    if name in SUITES:
        root, only = SUITES[name]
    elif Path(name).is_dir():
        root, only = Path(name), None
    else:
        raise UnknownNameError("Code-v0 suite", name, [*SUITES, "<a directory of task folders>"])
    folders = [d for d in sorted(root.iterdir())
               if d.is_dir() and not d.name.startswith((".", "_")) and (only is None or d.name in only)]
    return load_folders(root, folders, load_task, "task.toml, statement.md, stub/, solution/, tests/")
