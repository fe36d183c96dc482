"""Grammars for constrained decoding, generated from the same format description the parser runs.

``schema`` (JSON schemas for required / named), ``shape`` (the call shape a format's table
describes), ``structural`` (xgrammar structural tags and the constraint for one request).
Results are plain dicts; nothing here imports xgrammar.
"""

from __future__ import annotations

from .schema import STRICT_LEVELS, json_schema
from .shape import CallShape, Step, arg_syntax, call_shape, grammar_support
from .structural import for_request, structural_tag

__all__ = [
    "STRICT_LEVELS",
    "CallShape",
    "Step",
    "arg_syntax",
    "call_shape",
    "for_request",
    "grammar_support",
    "json_schema",
    "structural_tag",
]
