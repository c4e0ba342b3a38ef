"""A tree of files where some contents repeat (same size, different content too, to catch size-only checks)."""

import random
from pathlib import Path

rng = random.Random(3)
root = Path("/app/files")
bodies = [f"record {i}\n" * rng.randint(1, 5) for i in range(12)]
bodies.append("record 1\n" * 2)  # same size as some others
folders = ["", "a", "a/deep", "b", "c/d/e", "notes"]
for i in range(30):
    folder = root / rng.choice(folders)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"file{i:02d}.txt").write_text(bodies[rng.randrange(len(bodies))] if i % 3 else f"unique {i}\n")
(root / "empty1.txt").write_text("")
(root / "notes" / "empty2.txt").write_text("")
