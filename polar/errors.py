"""Typed errors. Each one says what went wrong and what to do about it."""

from __future__ import annotations

from collections.abc import Iterable


class PolarError(Exception):
    """Base class for every error polar-gym raises on purpose."""


class SandboxError(PolarError):
    """A sandbox could not start, run a command, or stop."""


class SandboxUnsupported(SandboxError):
    """The task cannot run on this sandbox backend at all (a docker-only task in the local sandbox): admission
    skips it there, an episode ends with status `sandbox_error` and this reason."""


class HarnessError(PolarError):
    """An agent harness could not be installed, launched or talked to."""


class PolicyError(PolarError):
    """A policy could not answer one model request (a prompt longer than the model's context, a server error): the
    episode ends with status `policy_error` and this message, and the run goes on."""


class TaskFormatError(PolarError, ValueError):
    """A task file breaks its schema; the message names the file and the field."""


class VerifierError(PolarError):
    """Grading itself failed (not the agent): the episode's status becomes `verifier_error`."""


class UnknownNameError(PolarError, KeyError):
    """A name (env id, harness, sandbox, policy, suite) that is not registered."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]):
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; valid names: {', '.join(self.valid)}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.args[0]
