"""Run by polar's eval script in the grading sandbox, once the test patch is applied and before pytest starts: it
reads the canary tests from canaries.json beside it, deletes both files (so no code that pytest later imports can
read which tests are canaries), and writes each block into its test file before a top-level function or class
chosen at random, or at the end. A file the sandbox's Python cannot parse gets none: pytest fails on it anyway.

It runs in the repository's own interpreter, which may be older than polar's."""
# ruff: noqa: UP031, UP015
import ast
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def _boundaries(tree):
    """Line numbers (1-based) before which a block may go: the start of each top-level def or class after the
    docstring and the `__future__` imports (with its decorators); None stands for the end of the file."""
    lines = [None]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            lines = [None]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.append(min([node.lineno] + [d.lineno for d in node.decorator_list]))
    return lines


def place(path, blocks, rng):
    try:
        with open(path) as f:
            source = f.read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return
    lines = source.splitlines(True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    inserts = {}
    for block in blocks:
        line = rng.choice(_boundaries(tree))
        block = block.rstrip("\n")
        inserts.setdefault(line, []).append(block + "\n\n\n" if line else "\n\n\n" + block + "\n")
    out = []
    for number, line in enumerate(lines, 1):
        out.extend(inserts.get(number, ()))
        out.append(line)
    out.extend(inserts.get(None, ()))
    with open(path, "w") as f:
        f.write("".join(out))


def main():
    data_path = os.path.join(HERE, "canaries.json")
    with open(data_path) as f:
        data = json.load(f)
    os.remove(data_path)
    os.remove(os.path.abspath(__file__))
    rng = random.SystemRandom()
    for path, blocks in data.items():
        place(path, blocks, rng)


if __name__ == "__main__":
    main()
