"""A small template engine."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class TemplateError(ValueError):
    """Raised for invalid templates and rendering errors."""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}"}
_OPEN = re.compile(r"\{\{|\{%|\{#")
_MISSING = object()
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


# ------------------------------------------------------------------ AST


@dataclass
class _Text:
    text: str


@dataclass
class _Output:
    path: list[str]
    filters: list[str]


@dataclass
class _If:
    branches: list[tuple[tuple[bool, list[str]] | None, list[Any]]] = field(default_factory=list)


@dataclass
class _For:
    var: str
    path: list[str]
    body: list[Any] = field(default_factory=list)


def _parse_path(text: str) -> list[str]:
    parts = text.split(".")
    if not _IDENT.fullmatch(parts[0]) or not all(_PART.fullmatch(p) for p in parts[1:]):
        raise TemplateError(f"invalid path {text!r}")
    return parts


def _tokenize(template: str) -> list[tuple[str, str]]:
    tokens = []
    pos = 0
    while True:
        match = _OPEN.search(template, pos)
        if not match:
            tokens.append(("text", template[pos:]))
            return tokens
        tokens.append(("text", template[pos:match.start()]))
        opener = match.group(0)
        end = template.find(_CLOSERS[opener], match.end())
        if end < 0:
            raise TemplateError(f"unclosed {opener!r} at {match.start()}")
        tokens.append((opener, template[match.end():end]))
        pos = end + 2


def _parse(template: str) -> list[Any]:
    root: list[Any] = []
    stack: list[tuple[Any, list[Any]]] = []  # (block node, current body list)
    body = root
    for kind, content in _tokenize(template):
        if kind == "text":
            if content:
                body.append(_Text(content))
        elif kind == "{#":
            continue
        elif kind == "{{":
            pieces = [p.strip() for p in content.split("|")]
            if not pieces[0] or not all(pieces[1:]):
                raise TemplateError(f"malformed output tag {content!r}")
            body.append(_Output(_parse_path(pieces[0]), pieces[1:]))
        else:
            words = content.split()
            keyword = words[0] if words else ""
            if keyword in ("if", "elif"):
                negate = len(words) == 3 and words[1] == "not"
                if len(words) != (3 if negate else 2):
                    raise TemplateError(f"malformed {keyword} tag")
                cond = (negate, _parse_path(words[-1]))
                if keyword == "if":
                    node = _If()
                    node.branches.append((cond, []))
                    body.append(node)
                    stack.append((node, body))
                else:
                    if not stack or not isinstance(stack[-1][0], _If) or stack[-1][0].branches[-1][0] is None:
                        raise TemplateError("unexpected elif")
                    stack[-1][0].branches.append((cond, []))
                body = stack[-1][0].branches[-1][1]
            elif keyword == "else":
                if len(words) != 1 or not stack or not isinstance(stack[-1][0], _If):
                    raise TemplateError("unexpected else")
                node = stack[-1][0]
                if node.branches[-1][0] is None:
                    raise TemplateError("duplicate else")
                node.branches.append((None, []))
                body = node.branches[-1][1]
            elif keyword == "for":
                if len(words) != 4 or words[2] != "in" or not _IDENT.fullmatch(words[1]):
                    raise TemplateError("malformed for tag")
                node = _For(words[1], _parse_path(words[3]))
                body.append(node)
                stack.append((node, body))
                body = node.body
            elif keyword in ("endif", "endfor"):
                expected = _If if keyword == "endif" else _For
                if len(words) != 1 or not stack or not isinstance(stack[-1][0], expected):
                    raise TemplateError(f"unexpected {keyword}")
                _, body = stack.pop()
            else:
                raise TemplateError(f"unknown tag {keyword!r}")
    if stack:
        raise TemplateError("unclosed block")
    return root


# ------------------------------------------------------------------ rendering


def _resolve(path: list[str], scope: Mapping[str, Any]) -> Any:
    value = scope.get(path[0], _MISSING)
    for part in path[1:]:
        if value is _MISSING:
            return value
        if part.isdigit():
            index = int(part)
            ok = isinstance(value, list | tuple) and index < len(value)
            value = value[index] if ok else _MISSING
        else:
            value = value.get(part, _MISSING) if isinstance(value, Mapping) else _MISSING
    return value


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _apply_filter(name: str, value: Any) -> Any:
    if name == "len":
        try:
            return len(value)
        except TypeError as exc:
            raise TemplateError(f"value has no length: {value!r}") from exc
    text = _to_text(value)
    if name == "upper":
        return text.upper()
    if name == "lower":
        return text.lower()
    if name == "trim":
        return text.strip()
    if name == "escape":
        return "".join(_ESCAPES.get(ch, ch) for ch in text)
    raise TemplateError(f"unknown filter {name!r}")


def _render(nodes: list[Any], scope: Mapping[str, Any], out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, _Output):
            value = _resolve(node.path, scope)
            if value is _MISSING:
                raise TemplateError(f"undefined variable {'.'.join(node.path)!r}")
            for name in node.filters:
                value = _apply_filter(name, value)
            out.append(_to_text(value))
        elif isinstance(node, _If):
            for cond, body in node.branches:
                if cond is None:
                    _render(body, scope, out)
                    break
                negate, path = cond
                value = _resolve(path, scope)
                truthy = value is not _MISSING and bool(value)
                if truthy != negate:
                    _render(body, scope, out)
                    break
        else:
            items = _resolve(node.path, scope)
            if not isinstance(items, list | tuple):
                raise TemplateError(f"cannot loop over {'.'.join(node.path)!r}")
            for index, item in enumerate(items):
                loop = {"index": index + 1, "first": index == 0, "last": index == len(items) - 1}
                _render(node.body, {**scope, node.var: item, "loop": loop}, out)


def _check_filters(nodes: list[Any]) -> None:
    for node in nodes:
        if isinstance(node, _Output):
            for name in node.filters:
                if name not in ("upper", "lower", "trim", "escape", "len"):
                    raise TemplateError(f"unknown filter {name!r}")
        elif isinstance(node, _If):
            for _, body in node.branches:
                _check_filters(body)
        elif isinstance(node, _For):
            _check_filters(node.body)


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render the template with the given context."""
    nodes = _parse(template)
    _check_filters(nodes)
    out: list[str] = []
    _render(nodes, context, out)
    return "".join(out)
