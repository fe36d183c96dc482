"""Grammars for constrained decoding, generated from the same format description the parser runs.

``schema`` (JSON schemas for required / named), ``shape`` (the call shape a format's table
describes), ``structural`` (xgrammar structural tags and the constraint for one request),
``cfg`` (the same grammars as llama.cpp GBNF and llguidance Lark text, written through ``ebnf``
and, for GBNF's JSON, ``jsonschema``). Results are plain dicts and strings; nothing here
imports a grammar engine.
"""

from __future__ import annotations

from .cfg import Grammar, gbnf, lark, schema_gbnf
from .schema import STRICT_LEVELS, json_schema
from .shape import CallShape, Step, arg_syntax, call_shape, grammar_support
from .structural import for_request, structural_tag

__all__ = [
    "STRICT_LEVELS",
    "CallShape",
    "Grammar",
    "Step",
    "arg_syntax",
    "call_shape",
    "for_request",
    "gbnf",
    "grammar_support",
    "json_schema",
    "lark",
    "schema_gbnf",
    "structural_tag",
]
