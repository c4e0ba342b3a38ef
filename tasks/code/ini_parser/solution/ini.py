"""A strict INI parser."""

from typing import Any

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def parse_ini(text: str) -> dict[str, dict[str, str]]:
    """Parse INI text into {section: {key: value}}."""
    config: dict[str, dict[str, str]] = {}
    current = ""
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise ValueError(f"line {lineno}: malformed section header")
            name = line[1:-1].strip()
            if not name:
                raise ValueError(f"line {lineno}: empty section name")
            if name in config:
                raise ValueError(f"line {lineno}: duplicate section {name!r}")
            config[name] = {}
            current = name
            continue
        if "=" not in line:
            raise ValueError(f"line {lineno}: expected 'key = value'")
        key, value = line.split("=", 1)
        key = key.strip().lower()
        value = value.strip()
        if not key:
            raise ValueError(f"line {lineno}: empty key")
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        section = config.setdefault(current, {})
        if key in section:
            raise ValueError(f"line {lineno}: duplicate key {key!r}")
        section[key] = value
    return config


def get_typed(config: dict[str, dict[str, str]], section: str, key: str, kind: type) -> Any:
    """Look up a value and convert it to str, int, float or bool."""
    if kind not in (str, int, float, bool):
        raise TypeError(f"unsupported kind {kind!r}")
    value = config[section][key.lower()]
    if kind is bool:
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return kind(value)
