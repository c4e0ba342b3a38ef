"""polar/SWE-v0: fix an issue in a real repository; swebench's own log parsers and grading decide.

`family.py` is the family (the patch filter, grading in a fresh sandbox, the record as received); `polar_verdict.py`
is the pytest plugin grading copies into that sandbox; `environment.py` builds each repository's environment;
`admission.py` checks a suite (gold resolves, empty and sabotaging patches do not); `swebench_specs.py` reads
SWE-bench's spec table; `canaries.py` and `canary_placer.py` make and place the must-fail canaries. `polar images`
is `envs/images_command.py`.
"""

from polar.envs.swe.family import SweFamily

__all__ = ["SweFamily"]
