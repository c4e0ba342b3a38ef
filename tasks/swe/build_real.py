"""Rebuild the swe-real-mini suite: SWE-bench instances from real history, one per bug fix a changelog names.

    python tasks/swe/build_real.py

Each fix sits between two consecutive releases of a project on PyPI; both sdists are downloaded as published
(`pip download --no-binary :all: --no-deps`, kept in `sdists/`). For each:

- `base_commit`: the earlier release's sdist exactly as published, committed as one root commit with a fixed
  author and date (polar makes the same commit from the same sdist, `sdist_is_base` in the environments file);
- `patch` (gold): the later release's diff of the fixing source change alone (the hunks that make the fix, not
  the version bump, docs or other changes of that release); `test_patch`: the tests that changed for it;
- `FAIL_TO_PASS` / `PASS_TO_PASS`: from running the suite (pytest 8, the sandboxes' Python 3.11) on the base with
  the test patch, without and with the gold patch;
- `problem_statement`: the changelog's own words for the fix, quoted and attributed (checked to be in the file).

Writes `real-mini-environments.json` and `real-mini.jsonl` next to this file. Admission (`polar tasks admit
swe-real-mini`) then checks every instance in real sandboxes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from build_suite import PYTEST, Project, run_tests, sdist

from polar.envs.swe.environment import GIT, RepoEnvironment, commit_tree
from polar.envs.swe.family import default_eval_script
from polar.tasks.swe import SweTask

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Fix:
    """A bug fix between two consecutive releases, as its changelog names it."""

    repo: str
    package: str
    base: str
    """The release with the bug (the instance's base)."""
    fixed: str
    """The next release, which fixed it."""
    licence: str
    copyright: str
    source: tuple[tuple[str, str], ...]
    """The fixing source change: (file, a line every kept hunk contains; "" keeps the file's whole diff)."""
    tests: tuple[tuple[str, str], ...]
    """The tests that changed for the fix, chosen the same way."""
    changelog: str
    """The changelog file in the fixed release's sdist."""
    entry: str
    """The changelog's words for the fix, verbatim."""
    test_paths: str = "tests"


FIXES = (
    Fix("tkem/cachetools", "cachetools", "4.2.0", "4.2.1", "MIT", "Thomas Kemmer",
        (("cachetools/lfu.py", ""), ("cachetools/lru.py", ""), ("cachetools/mru.py", "")),
        (("tests/__init__.py", ""),), "CHANGELOG.rst", "Handle ``__missing__()`` not storing cache items."),
    Fix("more-itertools/more-itertools", "more-itertools", "9.0.0", "9.1.0", "MIT", "Erik Rose",
        (("more_itertools/more.py", "buf = list(it)"),), (("tests/test_more.py", "([1], lambda x: x == 1, 1)"),),
        "docs/versions.rst", ":func:`maxsplit` was updated to fix a bug (thanks to abingham)"),
)


def environment(fix: Fix) -> RepoEnvironment:
    path = sdist(Project(fix.repo, fix.package, fix.base, fix.licence, (), fix.test_paths))
    return RepoEnvironment(repo=fix.repo, version=fix.base, sdist=path,
                           sha256=hashlib.sha256(path.read_bytes()).hexdigest(), requirements=(PYTEST,),
                           test_command=f"python3 -m pytest -rA -p no:cacheprovider {fix.test_paths}",
                           licence=fix.licence, sdist_is_base=True)


def unpack(path: Path, into: Path) -> Path:
    """An sdist's tree (its top folder)."""
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    (top,) = into.iterdir()
    return top


def _git(repo: Path, *argv: str, stdin: str | None = None) -> str:
    return subprocess.run([*GIT, "-c", "diff.noprefix=false", *argv], cwd=repo, input=stdin, capture_output=True,
                          text=True, check=True).stdout


def chosen_hunks(diff: str, marker: str) -> str:
    """A one-file diff with only the hunks that contain `marker` (all of them for "")."""
    head, *hunks = diff.split("\n@@")
    kept = [h for h in hunks if marker in h]
    if not kept:
        raise SystemExit(f"no hunk contains {marker!r} in:\n{diff[:2000]}")
    return "\n@@".join([head, *kept]).rstrip("\n") + "\n"


def selected_diff(base: Path, fixed: Path, picks: tuple[tuple[str, str], ...]) -> str:
    """The diff from the base repository to the fixed release over the chosen files and hunks, as git prints it
    once those hunks are applied (so its line numbers are exact)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        shutil.copytree(base, work, symlinks=True)
        for path, marker in picks:
            shutil.copy2(fixed / path, work / path)
            whole = _git(work, "diff", "--no-color", "--", path)
            _git(work, "checkout", "-q", "--", path)
            _git(work, "apply", "-", stdin=chosen_hunks(whole, marker))
        return _git(work, "diff", "--no-color", "--no-ext-diff", "--", *(p for p, _ in picks))


def applied(base: Path, into: Path, *diffs: str) -> Path:
    shutil.copytree(base, into, symlinks=True)
    for diff in diffs:
        _git(into, "apply", "-", stdin=diff)
    return into


def statement(fix: Fix) -> str:
    return (f"{fix.package} {fix.base} has a bug that its next release, {fix.fixed}, fixed. The project's changelog "
            f"describes the fix in these words:\n\n> {fix.entry}\n\n(quoted from {fix.changelog} of {fix.package} "
            f"{fix.fixed}, copyright {fix.copyright}, {fix.licence} licence)")


def build(fix: Fix) -> dict:
    env = environment(fix)
    later = sdist(Project(fix.repo, fix.package, fix.fixed, fix.licence, (), fix.test_paths))
    with tempfile.TemporaryDirectory() as tmp:
        fixed = unpack(later, Path(tmp) / "fixed")
        if fix.entry not in (fixed / fix.changelog).read_text():
            raise SystemExit(f"{fix.package} {fix.fixed}: {fix.changelog} does not say {fix.entry!r}")
        base = Path(tmp) / "base"
        shutil.copytree(env.source_dir(), base, symlinks=True)
        base_commit = commit_tree(base, f"{env.repo} {env.version}")
        patch, test_patch = selected_diff(base, fixed, fix.source), selected_diff(base, fixed, fix.tests)
        before, log = run_tests(env, applied(base, Path(tmp) / "before", test_patch))
        after, _ = run_tests(env, applied(base, Path(tmp) / "after", test_patch, patch))
    f2p = sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) != "PASSED")
    p2p = sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) == "PASSED")
    if not f2p:
        raise SystemExit(f"{fix.package} {fix.fixed}: no test goes from failing to passing:\n{log[-3000:]}")
    task = SweTask(
        instance_id=f"{fix.repo.replace('/', '__')}-{fix.fixed}", repo=fix.repo, base_commit=base_commit,
        patch=patch, test_patch=test_patch, problem_statement=statement(fix), FAIL_TO_PASS=tuple(f2p),
        PASS_TO_PASS=tuple(p2p), version=fix.base, environment_setup_commit=base_commit,
        log_parser="parse_log_pytest", eval_type="pass_and_fail",
        extra={"licence": fix.licence, "history": {"base": f"{fix.package} {fix.base}", "fix": f"{fix.package} "
                                                   f"{fix.fixed}", "changelog": fix.changelog}})
    print(f"  + {task.instance_id}: {len(f2p)} F2P, {len(p2p)} P2P", flush=True)
    return replace(task, eval_script=default_eval_script(task, env.test_command, run_files=False)).to_record()


def main() -> None:
    environments = [environment(f) for f in FIXES]
    (HERE / "real-mini-environments.json").write_text(json.dumps(
        [{"repo": e.repo, "version": e.version, "sdist": str(e.sdist.relative_to(HERE)), "sha256": e.sha256,
          "sdist_is_base": True, "requirements": list(e.requirements), "test_command": e.test_command,
          "licence": e.licence} for e in environments if e.sdist], indent=1) + "\n")
    rows = [build(fix) for fix in FIXES]
    out = HERE / "real-mini.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} instances -> {out}")


if __name__ == "__main__":
    main()
