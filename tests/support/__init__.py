"""What several test modules share that is not a fixture: task writers, eval runs, process probes.

Importable as `support.<module>` from any test folder (pytest puts tests/, the folder of the root conftest.py, on
sys.path).
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository's root, wherever a test module sits under tests/."""
