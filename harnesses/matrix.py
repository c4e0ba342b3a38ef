"""The harness × family matrix: which external harness runs which env family in which sandbox, at which version.

Each cell is a parameter of a proof test (through `gym.make`, with the real binary, offline: the oracle scores 1.0
and "done" or an empty reply 0.0), and the parameters come from here, computed from the adapters' declarations:
`tests/harnesses/test_cli_harnesses.py` runs `proofs("Code-v0")`, `tests/envs/swe/test_swe.py` the SWE-v0 pairs,
`tests/envs/web/test_web.py` the Web-v0 ones. So the table is the test plan, and a green CI run is its evidence; the
harnesses/README.md's table and the leaderboard site show `markdown()` / `rows()` (`python3 -m polar.harnesses.matrix`
prints it).
It lives with the harnesses because only their declarations decide it; the built-in harness runs every family in
both sandboxes (its own tests) and is not a row."""

from __future__ import annotations

FAMILIES = ("Code-v0", "SWE-v0", "Web-v0")
SANDBOXES = ("local", "docker")


def proofs(family: str) -> list[tuple[str, str]]:
    """The (harness, sandbox) pairs whose proof runs on `family`: Code-v0 for every harness in both sandboxes; SWE-v0
    for every harness with a shell tool (aider has none: it cannot run `git apply`) in docker, where the instance's
    image has no Node.js of its own; Web-v0 for every harness that reaches the env's tools over MCP."""
    from polar.harnesses import EXTERNAL, declarations  # the registry imports every adapter

    declared = declarations()
    if family == "Code-v0":
        return [(name, sandbox) for sandbox in SANDBOXES for name in EXTERNAL]
    if family == "SWE-v0":
        return [(name, "docker") for name in EXTERNAL if declared[name].shell]
    if family == "Web-v0":
        return [(name, "local") for name in EXTERNAL if declared[name].env_tool_name is not None]
    raise ValueError(f"no harness proof runs on {family!r}; families with one: {', '.join(FAMILIES)}")


def rows() -> list[tuple[str, ...]]:
    """One row per external harness, in registry order: its name, pinned version, and per family the sandboxes its
    proof runs in ("—": none)."""
    from polar.harnesses import EXTERNAL, make_harness

    cells = {family: proofs(family) for family in FAMILIES}
    return [(name, make_harness(name).version,
             *(", ".join(s for s in SANDBOXES if (name, s) in cells[family]) or "—" for family in FAMILIES))
            for name in EXTERNAL]


def markdown() -> str:
    """The matrix as harnesses/README.md shows it."""
    lines = ["| harness | version | " + " | ".join(FAMILIES) + " |", "| --- " * (2 + len(FAMILIES)) + "|"]
    lines += ["| `{}` | {} | ".format(*row[:2]) + " | ".join(row[2:]) + " |" for row in rows()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
