"""Validate the bundled polar/Code-v0 task suite.

Run as ``python tasks/code/check_suite.py [task_id ...]``.

For every task directory next to this file it checks the on-disk format, then runs the hidden tests
twice in a scratch directory: once against the reference solution (every test must pass) and once
against the untouched stub (no test may pass). Standard library only.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent
REQUIRED_KEYS = {"id", "title", "difficulty", "files"}
DIFFICULTIES = ("easy", "medium", "hard")
ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FILE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
MIN_TESTS, MAX_TESTS = 5, 12
TIMEOUT_S = 20
SLOW_TEST_S = 1.0

# Executed in a fresh interpreter inside the scratch directory. Prints one JSON object on its last line.
RUNNER = r'''
import importlib, json, sys, time, traceback
sys.path.insert(0, ".")
results = []
for name in sys.argv[1:]:
    try:
        mod = importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001
        results.append({"test": name + ":<import>", "ok": False, "error": repr(exc), "secs": 0.0})
        continue
    for attr, fn in list(vars(mod).items()):
        if not (attr.startswith("test_") and callable(fn)):
            continue
        start = time.perf_counter()
        try:
            fn()
            ok, err = True, ""
        except BaseException as exc:  # noqa: BLE001
            ok = False
            err = type(exc).__name__ + ": " + str(exc)[:200]
        results.append({"test": name + "." + attr, "ok": ok, "error": err,
                        "secs": time.perf_counter() - start})
print(json.dumps(results))
'''


def validate_format(task_dir: Path) -> tuple[list[str], dict]:
    """Return (problems, meta) for one task directory."""
    problems: list[str] = []
    toml_path = task_dir / "task.toml"
    if not toml_path.is_file():
        return ["missing task.toml"], {}
    try:
        meta = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        return [f"task.toml does not parse: {exc}"], {}
    keys = set(meta)
    if keys != REQUIRED_KEYS:
        problems.append(f"task.toml keys {sorted(keys)} != {sorted(REQUIRED_KEYS)}")
    if meta.get("id") != task_dir.name:
        problems.append(f"id {meta.get('id')!r} != directory name {task_dir.name!r}")
    if not ID_RE.match(task_dir.name):
        problems.append("directory name is not lowercase snake_case")
    if not isinstance(meta.get("title"), str) or not meta.get("title", "").strip():
        problems.append("title must be a non-empty string")
    if meta.get("difficulty") not in DIFFICULTIES:
        problems.append(f"difficulty {meta.get('difficulty')!r} not in {DIFFICULTIES}")
    files = meta.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        problems.append("files must be a non-empty list of strings")
        files = []
    for name in files:
        if not FILE_RE.match(name):
            problems.append(f"file name {name!r} is not a plain module file name")
        for sub in ("stub", "solution"):
            if not (task_dir / sub / name).is_file():
                problems.append(f"{sub}/{name} missing")
    for sub in ("stub", "solution"):
        if (task_dir / sub).is_dir():
            extra = sorted(p.name for p in (task_dir / sub).iterdir()
                           if p.is_file() and p.name not in files)
            if extra:
                problems.append(f"{sub}/ has files not listed in `files`: {extra}")
    statement = task_dir / "statement.md"
    if not statement.is_file() or not statement.read_text(encoding="utf-8").strip():
        problems.append("statement.md missing or empty")
    tests = sorted((task_dir / "tests").glob("test_*.py"))
    if not tests:
        problems.append("no tests/test_*.py")
    for name in files:
        if (task_dir / "stub" / name).is_file():
            problems.extend(check_stub_bodies(task_dir / "stub" / name))
    clashes = {t.name for t in tests} & set(files)
    if clashes:
        problems.append(f"test files clash with module files: {sorted(clashes)}")
    return problems, meta


def _raises_not_implemented(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                return True
    return False


def _is_exception_class(cls: ast.ClassDef) -> bool:
    names = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in cls.bases]
    return any(n.endswith(("Error", "Exception")) for n in names)


def check_stub_bodies(path: Path) -> list[str]:
    """Public functions and public/dunder methods of non-exception classes must raise NotImplementedError."""
    problems = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, functions) and not node.name.startswith("_"):
            if not _raises_not_implemented(node):
                problems.append(f"stub/{path.name}: {node.name}() does not raise NotImplementedError")
        elif isinstance(node, ast.ClassDef) and not _is_exception_class(node):
            for item in node.body:
                if not isinstance(item, functions):
                    continue
                public = not item.name.startswith("_") or item.name.startswith("__")
                if public and not _raises_not_implemented(item):
                    problems.append(
                        f"stub/{path.name}: {node.name}.{item.name}() does not raise NotImplementedError"
                    )
    return problems


def run_tests(task_dir: Path, files: list[str], source: str) -> list[dict]:
    """Copy `source` (stub|solution) module files and the tests into a temp dir; run every test_*."""
    with tempfile.TemporaryDirectory(prefix=f"polar_{task_dir.name}_") as tmp:
        tmp_path = Path(tmp)
        for name in files:
            shutil.copy2(task_dir / source / name, tmp_path / name)
        test_mods = []
        for test in sorted((task_dir / "tests").glob("test_*.py")):
            shutil.copy2(test, tmp_path / test.name)
            test_mods.append(test.stem)
        (tmp_path / "_polar_runner.py").write_text(RUNNER, encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, "-B", "_polar_runner.py", *test_mods],
                cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return [{"test": "<suite>", "ok": False, "error": f"timed out after {TIMEOUT_S}s", "secs": 0.0}]
        lines = proc.stdout.strip().splitlines()
        try:
            return json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            err = (proc.stderr or proc.stdout)[-500:]
            return [{"test": "<suite>", "ok": False, "error": f"runner crashed: {err}", "secs": 0.0}]


def check_task(task_dir: Path) -> tuple[bool, str, str | None]:
    """Return (ok, one-line report, difficulty)."""
    problems, meta = validate_format(task_dir)
    difficulty = meta.get("difficulty")
    if problems:
        return False, "; ".join(problems), difficulty
    files = meta["files"]
    sol = run_tests(task_dir, files, "solution")
    stub = run_tests(task_dir, files, "stub")
    n_tests = len([r for r in sol if not r["test"].endswith(">")])
    sol_fail = [r for r in sol if not r["ok"]]
    slow = [r for r in sol if r["ok"] and r["secs"] > SLOW_TEST_S]
    stub_pass = [r for r in stub if r["ok"]]
    stub_import = [r for r in stub if r["test"].endswith(">")]
    stub_other = [r for r in stub if not r["ok"] and not r["test"].endswith(">")
                  and not r["error"].startswith("NotImplementedError")]
    msgs = []
    if not MIN_TESTS <= n_tests <= MAX_TESTS:
        msgs.append(f"{n_tests} tests (want {MIN_TESTS}-{MAX_TESTS})")
    for r in sol_fail:
        msgs.append(f"solution FAILS {r['test']}: {r['error']}")
    for r in slow:
        msgs.append(f"slow test {r['test']} ({r['secs']:.2f}s)")
    for r in stub_pass:
        msgs.append(f"stub PASSES {r['test']}")
    for r in stub_import:
        msgs.append(f"stub import error {r['test']}: {r['error']}")
    for r in stub_other:
        msgs.append(f"stub fails {r['test']} with something other than NotImplementedError: {r['error']}")
    if msgs:
        return False, " | ".join(msgs), difficulty
    return True, f"{n_tests} tests: solution {n_tests}/{n_tests} pass, stub 0/{len(stub)} pass", difficulty


def main(argv: list[str]) -> int:
    task_dirs = sorted(p for p in SUITE_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    if argv:
        task_dirs = [d for d in task_dirs if d.name in set(argv)]
    counts = dict.fromkeys(DIFFICULTIES, 0)
    failures = 0
    for task_dir in task_dirs:
        ok, report, difficulty = check_task(task_dir)
        if difficulty in counts:
            counts[difficulty] += 1
        failures += not ok
        print(f"{'OK  ' if ok else 'FAIL'} {task_dir.name:<24} [{difficulty}] {report}")
    by_diff = ", ".join(f"{k}={v}" for k, v in counts.items())
    green = len(task_dirs) - failures
    print(f"SUMMARY: {green}/{len(task_dirs)} tasks green ({by_diff}); failures={failures}")
    return 1 if failures or not task_dirs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
