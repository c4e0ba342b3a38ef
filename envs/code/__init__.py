"""polar/Code-v0: complete a stub Python module; hidden unit tests grade it from outside the module's reach.

`family.py` is the family (tasks, setup, reward spec, grading); `driver.py` runs the hidden tests on the host,
`subject.py` runs the module under test in the grading sandbox, and `code_rpc.py` is the wire between them. The
last three are standalone scripts (stdlib only) that grading copies where they run.
"""

from polar.envs.code.family import CodeFamily

__all__ = ["CodeFamily"]
