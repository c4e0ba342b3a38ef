"""Which Chromium processes run under a process: how the tests see that a browser was stopped."""

from polar.envs.sandbox.shell import descendants


def browsers_of(pid: int) -> dict[int, int]:
    """{pid: start ticks} of the Chromium processes under `pid`."""
    found = {}
    for child, started in descendants(pid).items():
        try:
            with open(f"/proc/{child}/comm") as f:
                if "chrom" in f.read():
                    found[child] = started
        except OSError:
            pass
    return found
