"""Semantic versioning."""

import re
from typing import NamedTuple


class Version(NamedTuple):
    """A parsed semantic version."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()


_NUM = r"(0|[1-9][0-9]*)"
_IDENT = r"[0-9A-Za-z-]+"
_VERSION = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?"
)
_OPERATORS = (">=", "<=", "==", "!=", ">", "<")


def parse(version: str) -> Version:
    """Parse a SemVer 2.0.0 string."""
    match = _VERSION.fullmatch(version)
    if not match or not version.isascii():
        raise ValueError(f"invalid version {version!r}")
    major, minor, patch, pre, build = match.groups()
    prerelease = tuple(pre.split(".")) if pre else ()
    for ident in prerelease:
        if ident.isdigit() and len(ident) > 1 and ident.startswith("0"):
            raise ValueError(f"numeric identifier with leading zero in {version!r}")
    return Version(int(major), int(minor), int(patch), prerelease, tuple(build.split(".")) if build else ())


def _ident_key(ident: str) -> tuple[int, int, str]:
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


def _key(v: Version) -> tuple:
    # Versions without prerelease sort after all prereleases of the same core version.
    pre = (1,) if not v.prerelease else (0, tuple(_ident_key(i) for i in v.prerelease))
    return (v.major, v.minor, v.patch, pre)


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 comparing the precedence of a and b."""
    ka, kb = _key(parse(a)), _key(parse(b))
    return (ka > kb) - (ka < kb)


def satisfies(version: str, spec: str) -> bool:
    """Return True if version satisfies every comparator in spec."""
    parse(version)
    checks = []
    for raw in spec.split(","):
        comparator = raw.strip()
        op = next((o for o in _OPERATORS if comparator.startswith(o)), None)
        if op is None:
            raise ValueError(f"bad comparator {raw!r}")
        target = comparator[len(op):].strip()
        result = compare(version, target)  # validates target
        checks.append({
            ">=": result >= 0, "<=": result <= 0, ">": result > 0,
            "<": result < 0, "==": result == 0, "!=": result != 0,
        }[op])
    return all(checks)
