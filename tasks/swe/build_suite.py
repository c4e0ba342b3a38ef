"""Rebuild the swe-mini suite, SWE-smith style: real projects from PyPI sdists, bugs injected by mutation.

    python tasks/swe/build_suite.py [--per-project N] [--projects a,b]

For each project: download its sdist (`pip download --no-binary :all: --no-deps`, kept in `sdists/`), install
its test dependencies, run its whole test suite on the clean source, then try small mutations of its source
(a flipped comparison, an off-by-one constant, `and`/`or`, `min`/`max`, a dropped guard clause) in a seeded
order. A mutant is kept when it makes between 1 and MAX_F2P tests fail and the rest still pass. Its instance:

- `base_commit`: the source with the mutation and with the failing tests removed (the bug is not yet caught
  by the suite, as before a real fix), committed as one root commit with a fixed author and date;
- `test_patch`: restores the removed tests; `patch` (gold): undoes the mutation;
- `FAIL_TO_PASS` / `PASS_TO_PASS`: from actually running the suite on the mutant and on the clean source;
- `problem_statement`: a report of the symptom (a failing check and its error), not of the fix.

Writes `environments.json` and `swe-mini.jsonl` next to this file. Admission (`polar tasks admit swe-mini`)
then checks every instance in real sandboxes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path

from swebench.harness.log_parsers.python import parse_log_pytest

from polar.envs.swe.environment import GIT, RepoEnvironment, commit_tree
from polar.envs.swe.family import default_eval_script
from polar.tasks.swe import SweTask

HERE = Path(__file__).parent
PYTEST = "pytest==8.3.5"
MAX_F2P = 12
TEST_TIMEOUT_S = 120


@dataclass(frozen=True)
class Project:
    repo: str
    package: str
    version: str
    licence: str
    sources: tuple[str, ...]
    """Source files to mutate (never tests)."""
    tests: str
    """What pytest runs: the suite's files or folders."""
    requirements: tuple[str, ...] = (PYTEST,)


PROJECTS = (
    Project("jpvanhal/inflection", "inflection", "0.5.1", "MIT", ("inflection/__init__.py",), "test_inflection.py"),
    Project("more-itertools/more-itertools", "more-itertools", "10.5.0", "MIT",
            ("more_itertools/more.py", "more_itertools/recipes.py"), "tests"),
    Project("pytoolz/toolz", "toolz", "1.0.0", "BSD-3-Clause",
            ("toolz/itertoolz.py", "toolz/functoolz.py", "toolz/dicttoolz.py", "toolz/recipes.py"), "toolz/tests"),
    Project("astanin/python-tabulate", "tabulate", "0.9.0", "MIT", ("tabulate/__init__.py",), "test"),
)


def sdist(project: Project) -> Path:
    folder = HERE / "sdists"
    wanted = f"{project.package}-{project.version}.tar.gz".replace("_", "-").lower()
    found = [p for p in folder.glob("*.tar.gz") if p.name.replace("_", "-").lower() == wanted]
    if found:
        return found[0]
    folder.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d",
                    str(folder), f"{project.package}=={project.version}"], check=True)
    return sdist(project)


def environment(project: Project) -> RepoEnvironment:
    path = sdist(project)
    return RepoEnvironment(repo=project.repo, version=project.version, sdist=path,
                           sha256=hashlib.sha256(path.read_bytes()).hexdigest(), requirements=project.requirements,
                           test_command=f"python3 -m pytest -rA -p no:cacheprovider {project.tests}",
                           licence=project.licence)


def run_tests(env: RepoEnvironment, tree: Path) -> tuple[dict[str, str], str]:
    """Run the suite on `tree` with the sandboxes' python and the environment's packages: (status map, log)."""
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3"
    try:
        step = subprocess.run([python, "-m", *env.test_command.split()[2:]], cwd=tree, capture_output=True,
                              text=True, timeout=TEST_TIMEOUT_S,
                              env={**os.environ, "PYTHONPATH": str(env.site_dir()), "PYTHONDONTWRITEBYTECODE": "1"})
    except subprocess.TimeoutExpired:
        return {}, "timeout"
    log = step.stdout + step.stderr
    return parse_log_pytest(log, None), log


# --- mutations -----------------------------------------------------------------------------------------

_SWAPS = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
          ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
          ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}


@dataclass(frozen=True)
class Mutation:
    path: str
    line: int
    """1-based; the edit replaces bytes [start, end) of this line, or, with `drop_to`, deletes lines line..drop_to."""
    start: int
    end: int
    replacement: str
    kind: str
    function: str
    drop_to: int = 0

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        if self.drop_to:
            return "".join(lines[: self.line - 1] + lines[self.drop_to:])
        raw = lines[self.line - 1].encode()
        lines[self.line - 1] = (raw[: self.start] + self.replacement.encode() + raw[self.end:]).decode()
        return "".join(lines)


def _between(lines: list[bytes], a: ast.AST, b: ast.AST) -> tuple[int, int, str] | None:
    if a.end_lineno != b.lineno:
        return None
    raw = lines[b.lineno - 1]
    return a.end_col_offset, b.col_offset, raw[a.end_col_offset: b.col_offset].decode()


def mutations(path: str, text: str) -> list[Mutation]:
    """Every candidate mutation of one source file, each inside a function."""
    lines = [ln.encode() for ln in text.splitlines()]
    found: list[Mutation] = []

    def token(a: ast.AST, b: ast.AST, old: str, new: str, kind: str, fn: str) -> None:
        span = _between(lines, a, b)
        if span and span[2].strip() == old:
            start, end, seg = span
            lead = len(seg) - len(seg.lstrip())
            trail = len(seg.rstrip())
            found.append(Mutation(path, b.lineno, start + lead, start + trail, new, kind, fn))

    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name.startswith("__"):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAPS:
                old, new = _SWAPS[type(node.ops[0])]
                token(node.left, node.comparators[0], old, new, "comparison", fn.name)
            elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
                old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
                token(node.values[0], node.values[1], old, new, "boolean", fn.name)
            elif isinstance(node, ast.Constant) and type(node.value) is int and 0 <= node.value <= 2 \
                    and node.lineno == node.end_lineno:
                for delta in (1, -1):
                    if node.value + delta >= 0:
                        found.append(Mutation(path, node.lineno, node.col_offset, node.end_col_offset,
                                              str(node.value + delta), "off-by-one", fn.name))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
                f = node.func
                found.append(Mutation(path, f.lineno, f.col_offset, f.end_col_offset,
                                      "max" if f.id == "min" else "min", "min/max", fn.name))
        for holder in ast.walk(fn):
            for field in ("body", "orelse"):
                stmts = getattr(holder, field, None)
                if not isinstance(stmts, list) or len(stmts) < 2:
                    continue
                for node in stmts:
                    if isinstance(node, ast.If) and not node.orelse and len(node.body) == 1 and \
                            isinstance(node.body[0], ast.Return | ast.Raise | ast.Continue | ast.Break):
                        found.append(Mutation(path, node.lineno, 0, 0, "", "dropped branch", fn.name,
                                              drop_to=node.end_lineno))
    unique: dict[tuple, Mutation] = {}
    for m in found:
        unique.setdefault((m.line, m.start, m.end, m.replacement, m.drop_to), m)
    return list(unique.values())


# --- instances -----------------------------------------------------------------------------------------

def test_location(test_id: str) -> tuple[str, tuple[str, ...]]:
    """`path::Class::name[param]` -> (path, (Class, name))."""
    path, *names = test_id.split("::")
    return path, tuple(re.sub(r"\[.*$", "", n) for n in names)


def remove_tests(tree: Path, test_ids: list[str]) -> bool:
    """Delete the test functions behind `test_ids` from their files; False if one cannot be found."""
    wanted: dict[str, set[tuple[str, ...]]] = {}
    for test_id in test_ids:
        path, names = test_location(test_id)
        wanted.setdefault(path, set()).add(names)
    for path, names in wanted.items():
        file = tree / path
        if not file.is_file():
            return False
        text = file.read_text()
        module = ast.parse(text)
        spans: list[tuple[int, int]] = []
        for qual in names:
            scope: list[ast.stmt] = module.body
            node = None
            for part in qual:
                node = next((n for n in scope if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part),
                            None)
                if node is None:
                    return False
                scope = node.body
            assert node is not None
            if not isinstance(node, ast.FunctionDef):
                return False
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((first, node.end_lineno))
        lines = text.splitlines(keepends=True)
        for first, last in sorted(set(spans), reverse=True):
            del lines[first - 1: last]
        new = "".join(lines)
        try:
            ast.parse(new)
        except SyntaxError:
            return False  # a class left with no body
        file.write_text(new)
    return True


def git_diff(base: Path, clean: Path, paths: list[str]) -> str:
    """The diff that turns `base`'s `paths` into `clean`'s (base is a committed repository)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        shutil.copytree(base, work, symlinks=True)
        for path in paths:
            shutil.copy2(clean / path, work / path)
        return subprocess.run([*GIT, "-c", "diff.noprefix=false", "diff", "--no-color", "--no-ext-diff", "--", *paths],
                              cwd=work, capture_output=True, text=True, check=True).stdout


def failure_excerpt(log: str, test_id: str) -> str:
    """The error lines pytest reported for one test in its `-rA` log."""
    head = ".".join(test_id.split("::")[1:])
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if re.fullmatch(rf"_+ {re.escape(head)} _+", line):
            body = []
            for nxt in lines[i + 1:]:
                if re.match(r"_{3,} |={3,} ", nxt):
                    break
                body.append(nxt)
            errors = [b for b in body if b.startswith("E ")]
            if errors:
                return "\n".join(errors[:12])
    match = re.search(rf"^FAILED {re.escape(test_id)} - (.*)$", log, re.M)
    return match.group(1) if match else "the check fails"


def test_source(tree: Path, test_id: str) -> str:
    """The test function's source, decorators included."""
    path, names = test_location(test_id)
    text = (tree / path).read_text()
    scope: list[ast.stmt] = ast.parse(text).body
    node = None
    for part in names:
        node = next(n for n in scope if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part)
        scope = node.body
    assert isinstance(node, ast.FunctionDef)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return textwrap.dedent("".join(text.splitlines(keepends=True)[first - 1: node.end_lineno]))


def statement(project: Project, clean: Path, f2p: list[str], log: str) -> str:
    shown = f2p[0]
    case = re.search(r"\[(.*)\]$", shown)
    where = f" for the case `{case.group(1)}`" if case else ""
    return (f"{project.package} {project.version} misbehaves: a check of its documented behaviour that used to "
            f"pass now fails.\n\nThis code:\n\n```python\n{test_source(clean, shown).rstrip()}\n```\n\nfails{where} "
            "with:\n\n"
            f"```\n{failure_excerpt(log, shown)}\n```\n\n"
            + (f"{len(f2p) - 1} other check(s) of the same behaviour fail in the same way.\n\n" if len(f2p) > 1 else "")
            + "The values the code expects are the correct behaviour; please fix the library so it produces them.")


def build_project(project: Project, per_project: int, seed: int) -> list[dict]:
    env = environment(project)
    clean = env.source_dir()
    statuses, log = run_tests(env, clean)
    passing = {t for t, s in statuses.items() if s == "PASSED"}
    if not passing:
        raise SystemExit(f"{project.package}: no test passes on the clean source:\n{log[-3000:]}")
    print(f"{project.package}: {len(passing)} tests pass on the clean source", flush=True)
    candidates = [m for src in project.sources for m in mutations(src, (clean / src).read_text())]
    random.Random(seed).shuffle(candidates)
    by_kind: dict[str, list[Mutation]] = {}
    for m in candidates:
        by_kind.setdefault(m.kind, []).append(m)
    candidates = [m for group in zip_longest(*by_kind.values()) for m in group if m is not None]  # kinds alternate
    rows: list[dict] = []
    used_functions: set[tuple[str, str]] = set()
    for mutation in candidates:
        if len(rows) >= per_project:
            break
        if (mutation.path, mutation.function) in used_functions:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "tree"
            shutil.copytree(clean, tree, symlinks=True)
            target = tree / mutation.path
            target.write_text(mutation.apply(target.read_text()))
            statuses, mutant_log = run_tests(env, tree)
            if not statuses:
                continue
            f2p = sorted(t for t in passing if statuses.get(t) != "PASSED")
            p2p = sorted(t for t in passing if statuses.get(t) == "PASSED")
            if not 1 <= len(f2p) <= MAX_F2P or any(statuses.get(t) not in ("FAILED", "ERROR") for t in f2p):
                continue
            if not remove_tests(tree, f2p):
                continue
            test_paths = sorted({test_location(t)[0] for t in f2p})
            base_commit = commit_tree(tree, f"{env.repo} {env.version}")
            instance_id = f"{project.repo.replace('/', '__')}-{project.version}-{len(rows) + 1:02d}"
            task = SweTask(
                instance_id=instance_id, repo=env.repo, base_commit=base_commit,
                patch=git_diff(tree, clean, [mutation.path]), test_patch=git_diff(tree, clean, test_paths),
                problem_statement=statement(project, clean, f2p, mutant_log), FAIL_TO_PASS=tuple(f2p),
                PASS_TO_PASS=tuple(p2p), version=env.version, environment_setup_commit=base_commit,
                log_parser="parse_log_pytest", eval_type="pass_and_fail",
                extra={"mutation": {"file": mutation.path, "line": mutation.line, "kind": mutation.kind,
                                    "function": mutation.function}, "licence": project.licence})
            task = replace(task, eval_script=default_eval_script(task, env.test_command, run_files=False))
            rows.append(task.to_record())
            used_functions.add((mutation.path, mutation.function))
            print(f"  + {instance_id}: {mutation.kind} at {mutation.path}:{mutation.line}, {len(f2p)} F2P, "
                  f"{len(p2p)} P2P", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-project", type=int, default=10)
    parser.add_argument("--projects", help="comma-separated package names (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    chosen = [p for p in PROJECTS if not args.projects or p.package in args.projects.split(",")]
    environments = [environment(p) for p in PROJECTS]
    (HERE / "environments.json").write_text(json.dumps(
        [{"repo": e.repo, "version": e.version, "sdist": str(e.sdist.relative_to(HERE)), "sha256": e.sha256,
          "requirements": list(e.requirements), "test_command": e.test_command, "licence": e.licence}
         for e in environments], indent=1) + "\n")
    rows = [row for p in chosen for row in build_project(p, args.per_project, args.seed)]
    out = HERE / "swe-mini.jsonl"
    if args.projects and out.is_file():  # keep the other projects' instances
        keep = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
        rows = [r for r in keep if r["repo"] not in {p.repo for p in chosen}] + rows
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} instances -> {out}")


if __name__ == "__main__":
    main()
