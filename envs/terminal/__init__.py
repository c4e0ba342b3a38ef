"""polar/Terminal-v0: Harbor-format tasks (Terminal-Bench 2.0 and others) graded by their own tests.sh.

`family.py` is the family (setup per backend, grading after the process reset, re-grading); `tamper.py` checks
what test.sh will execute against the image or the read-only host; `changes.py` is the artefact (what the agent
changed since setup) that `regrade` replays on a fresh sandbox.
"""

from polar.envs.terminal.family import TerminalFamily

__all__ = ["TerminalFamily"]
