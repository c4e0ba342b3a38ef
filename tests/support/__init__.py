"""What several test modules share that is not a fixture: task writers, eval runs, process probes.

Importable as `support.<module>` from any test folder (pytest puts tests/, the folder of the root conftest.py, on
sys.path).
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository's root, wherever a test module sits under tests/."""

NESTED_SUBVOLUME = ("python3 -c 'import fcntl, os, struct; fcntl.ioctl(os.open(\".\", os.O_RDONLY), 0x5000940E, "
                    "bytearray(struct.pack(\"q4088s\", 0, b\"nest\")))'")
"""`btrfs subvolume create nest` in a sandbox's working directory, without btrfs-progs: a subvolume has a quota group
of its own, unless it joins its parent's, as polar's simple quotas make it; and dockerd's removal of a layer, or
the kernel's, must find it."""
