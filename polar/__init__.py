"""polar-gym: any agent harness and any sandbox as a Gymnasium multi-turn environment.

A harness's model call is one env step: the observation is its `ModelRequest`, the action the `ModelReply`.
"""

from polar.errors import HarnessError, PolarError, SandboxError, TaskFormatError, UnknownNameError, VerifierError
from polar.reward import RewardComponent, RewardSpec
from polar.types import ModelReply, ModelRequest, ToolCall

__version__ = "0.1.0"

__all__ = [
    "HarnessError",
    "ModelReply",
    "ModelRequest",
    "PolarError",
    "RewardComponent",
    "RewardSpec",
    "SandboxError",
    "TaskFormatError",
    "ToolCall",
    "UnknownNameError",
    "VerifierError",
    "__version__",
]
