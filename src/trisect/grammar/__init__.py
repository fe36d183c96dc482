"""Grammars for constrained decoding, generated from the same format description the parser runs.

See ``tags`` for the rules. Results are plain dicts; nothing here imports xgrammar.
"""

from __future__ import annotations

from .tags import (
    STRICT_LEVELS,
    CallShape,
    Step,
    call_shape,
    for_request,
    grammar_support,
    json_schema,
    structural_tag,
)

__all__ = [
    "STRICT_LEVELS",
    "CallShape",
    "Step",
    "call_shape",
    "for_request",
    "grammar_support",
    "json_schema",
    "structural_tag",
]
