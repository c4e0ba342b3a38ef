"""Admission of SWE-bench instances: each is graded for real, in the sandbox it will run in.

An instance is admitted when
- the gold patch resolves it (and every PASS_TO_PASS test passes with it),
- the empty patch does not, and no FAIL_TO_PASS test passes without the fix,
- patches that sabotage the tests instead of fixing the code do not: one deletes the files the test patch
  touches, one adds a `conftest.py` that skips every test, one rewrites the failing tests to pass. They are
  graded as an agent's patch is (`grade_patch`: the filter, the clean environment, the verdict record), so the
  whole grading path must hold; the red-team battery (tests/envs/swe/test_redteam_swe.py) goes further.
Any failure names the instance and the reason. `polar tasks admit SUITE --sandbox S` runs it, several instances at
once (`polar.evaluation.admission`).
"""

from __future__ import annotations

import asyncio
import time

from polar.envs.swe.family import SweFamily
from polar.errors import PolarError
from polar.protocols import Admission, Grade, SandboxBackend
from polar.tasks.swe import SweTask

SKIP_ALL = ("import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n"
            "        item.add_marker(pytest.mark.skip(reason='sabotage'))\n")


async def sabotage_patches(family: SweFamily, task: SweTask, backend: SandboxBackend) -> dict[str, str]:
    """Patches that go after the tests rather than the bug, made against the instance's own repository."""
    runtime = await asyncio.to_thread(family.runtime, task, backend.name)
    sandbox = await backend.start(runtime.spec)
    patches = {}
    try:
        await family.materialize(task, sandbox, runtime.environment)
        await sandbox.write("/tmp/polar_skip_all.py", SKIP_ALL)
        files = " ".join(f"'{f}'" for f in task.test_files())
        for name, command in {
            "delete the test files": f"git rm -q --ignore-unmatch -- {files}",
            "skip every test (conftest.py)": "cat /tmp/polar_skip_all.py >> conftest.py",
            "rewrite the failing tests to pass": "for f in " + files + "; do [ -f \"$f\" ] && "
            "sed -i -E 's/^([[:space:]]*)(assert|self\\.assert)/\\1pass  # \\2/' \"$f\"; done; true",
        }.items():
            await sandbox.exec("cd /testbed && git reset -q --hard && git clean -fdq", timeout=60)
            result = await sandbox.exec(f"cd /testbed && {command} && git add -A && "
                                        f"git diff --cached --binary {task.base_commit}", timeout=60)
            if result.exit_code == 0 and result.output.strip():
                patches[name] = result.output
    finally:
        await sandbox.stop()
    return patches


async def admit(family: SweFamily, task: SweTask, backend: SandboxBackend) -> Admission:
    """Run every admission check of one instance; the result lists what failed."""
    started = time.monotonic()
    result = Admission(task.instance_id)
    try:
        runtime = await asyncio.to_thread(family.runtime, task, backend.name)
        if runtime.environment is not None:  # where it came from, and the Python asked for beside the one used
            result.outcomes["environment"] = runtime.environment.describe()
        gold = await family.grade_patch(task, task.patch, backend)
        result.outcomes["gold"] = _seen(gold)
        if gold.error or gold.components["resolved"] != 1.0:
            result.reasons.append(f"the gold patch does not resolve it ({gold.error or _report(gold.log)})")
        empty = await family.grade_patch(task, "", backend)
        result.outcomes["empty"] = _seen(empty)
        if empty.error:
            result.reasons.append(f"grading the empty patch failed: {empty.error}")
        elif empty.components["resolved"] != 0.0:
            result.reasons.append("the empty patch resolves it: FAIL_TO_PASS tests already pass without the fix")
        elif empty.components["f2p_frac"] > 0.0:
            result.reasons.append(f"some FAIL_TO_PASS tests already pass without the fix ({_report(empty.log)})")
        for name, patch in (await sabotage_patches(family, task, backend)).items():
            grade = await family.grade_patch(task, patch, backend)
            result.outcomes[name] = _seen(grade)
            if grade.error:
                result.reasons.append(f"grading the patch that would {name} failed: {grade.error}")
            elif grade.components["resolved"] != 0.0:
                result.reasons.append(f"a patch that would {name} resolves it")
    except PolarError as e:
        result.reasons.append(str(e))
    result.seconds = time.monotonic() - started
    return result


def _seen(grade: Grade) -> str:
    """One grade of an admission in words."""
    said = f", tampered: {grade.tampered[:200]}" if grade.tampered else f", error: {grade.error[:200]}" \
        if grade.error else ""
    return f"resolved {grade.components['resolved']:g}{said}"


def _report(log: str) -> str:
    marker = ">>>>> polar swebench report"
    return log.split(marker, 1)[1].strip()[:1500] if marker in log else log[-1500:]
