"""Typed values out of a request body: each reader returns the value (``None`` or a default when
the field is absent or ``null``) or raises a 400 ``APIError`` naming the field. Every API's
plan (chat, Responses, completions, Messages) reads its body through these, so one field is
checked one way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import APIError


def number(body: Mapping[str, Any], name: str, lo: float | None = None, hi: float | None = None) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise APIError(f"{name} must be a number", param=name)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise APIError(f"{name} must be between {lo} and {hi}", param=name)
    return value


def integer(body: Mapping[str, Any], name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise APIError(f"{name} must be an integer", param=name)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bound = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise APIError(f"{name} must be {bound}", param=name)
    return value


def boolean(body: Mapping[str, Any], name: str, default: bool) -> bool:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise APIError(f"{name} must be true or false", param=name)
    return value


def mapping(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise APIError(f"{name} must be an object", param=name)
    return dict(value)


def string(body: Mapping[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise APIError(f"{name} must be a string", param=name)
    return value


def stop(value: Any, name: str = "stop") -> tuple[str, ...]:
    """A stop field: a string or a list of strings (empty strings dropped)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return tuple(s for s in value if s)
    raise APIError(f"{name} must be a string or a list of strings", param=name)


def an_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise APIError("the request body must be a JSON object")
    return body
