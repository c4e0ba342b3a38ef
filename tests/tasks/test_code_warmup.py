"""The code-warmup suite: its splits, that no held-out task is a train task renamed, and admission for real (the
reference scores 1, the untouched stub 0) in the local sandbox, and in docker as a slow test."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys

import pytest

from polar.evaluation.admission import admit_suite
from polar.tasks.code import WARMUP, load_suite

TRAIN, HELDOUT = (load_suite(s) for s in ("code-warmup-train", "code-warmup-heldout"))


def shape(source: str) -> str:
    """A solution with every name and constant blanked: two tasks of the same shape differ only in those."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for field in ("name", "id", "arg", "attr"):
            if isinstance(getattr(node, field, None), str):
                setattr(node, field, "_")
        if isinstance(node, ast.Constant):
            node.value = 0
        if isinstance(node, ast.FunctionDef | ast.arg):
            node.returns = node.annotation = None  # the signature's types are names too
    return ast.dump(tree)


def test_the_splits_are_disjoint_cover_the_suite_and_hold_60_tasks():
    train, heldout = {t.id for t in TRAIN}, {t.id for t in HELDOUT}
    assert not train & heldout and train | heldout == {t.id for t in load_suite("code-warmup")}
    assert len(train | heldout) >= 60 and min(len(train), len(heldout)) >= 25


def test_no_held_out_task_is_a_train_task_with_other_names_or_constants():
    train = {shape(next(iter(t.solution.values()))): t.id for t in TRAIN}
    same = [(train[s], t.id) for t in HELDOUT if (s := shape(next(iter(t.solution.values())))) in train]
    assert same == []


def test_the_folders_are_what_build_suite_writes(tmp_path):
    """The committed tasks are the builder's output: editing a folder by hand would be undone by the next build."""
    script = f"import sys; sys.path.insert(0, {str(WARMUP)!r}); import build_suite as b; " \
             f"from pathlib import Path; [b.write(t, Path({str(tmp_path)!r})) for t in b.TASKS]"
    subprocess.run([sys.executable, "-c", script], check=True)
    for built in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        assert (WARMUP / built.relative_to(tmp_path)).read_text() == built.read_text(), built


@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.slow)])
def test_admission_the_reference_scores_1_and_the_untouched_stub_0(request, sandbox):
    request.getfixturevalue("bwrap" if sandbox == "local" else "docker")
    env_id, admissions = asyncio.run(admit_suite("code-warmup", sandbox=sandbox, jobs=4))
    assert env_id == "polar/Code-v0" and len(admissions) == len(TRAIN) + len(HELDOUT)
    assert [(a.task_id, a.reasons) for a in admissions if not a.admitted] == []
