"""Runs hidden tests inside the grading sandbox: imports each test_*.py, calls each test_* function.

Standalone (stdlib only); polar copies it into the sandbox. Prints one JSON line, tagged with the nonce
read from stdin: the names of the tests that passed and failed.
"""

import importlib.util
import json
import signal
import sys
import traceback
from pathlib import Path

PER_TEST_S = 10


def _alarm(signum, frame):
    raise TimeoutError(f"test took longer than {PER_TEST_S}s")


def main() -> None:
    nonce = sys.stdin.readline().strip()
    sys.path.insert(0, str(Path.cwd()))
    signal.signal(signal.SIGALRM, _alarm)
    passed, failed = [], {}
    for path in sorted(Path(sys.argv[1]).glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            failed[f"{path.name}::<import>"] = traceback.format_exc(limit=3)[-800:]
            continue
        for name in sorted(n for n in vars(module) if n.startswith("test_") and callable(getattr(module, n))):
            signal.alarm(PER_TEST_S)
            try:
                getattr(module, name)()
                passed.append(f"{path.name}::{name}")
            except BaseException:
                failed[f"{path.name}::{name}"] = traceback.format_exc(limit=3)[-800:]
            finally:
                signal.alarm(0)
    print(f"POLAR-RESULT-{nonce} " + json.dumps({"passed": passed, "failed": failed}))


if __name__ == "__main__":
    main()
