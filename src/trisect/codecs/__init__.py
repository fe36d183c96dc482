"""Argument codecs: how the text inside one tool call becomes a name and a JSON object.

The engine owns markers and states; a codec owns the syntax of one call's arguments. It is
created per call and receives either every text piece of the argument region
(``structured = False``: XML-style parameters, where the engine finds the parameter markers and
passes them on with ``marker()``) or decides itself where its text ends (``structured = True``:
JSON, where a marker inside a string is string text and the call can end where the JSON ends).

Every codec only ever *appends* argument text: ``take()`` returns the next safe piece, and the
pieces concatenate to the final arguments, a JSON object, returned complete by ``close()``.
Every codec subclasses ``Codec`` (``base``), which holds the protocol's boilerplate and the one
``close()`` / ``failed`` rule. A codec without options is its own factory; the others have a
frozen options object as factory (``JsonEnvelope``, ``XmlParams``, ``GemmaArgs``).
"""

from __future__ import annotations

from ..engine.codec import ArgSyntax, CallCodec, CodecFactory
from ..engine.stream_options import ToolIndex
from .base import Codec
from .gemma_args import GemmaArgs, GemmaArgsCodec
from .json_call import ENVELOPE, JsonArgsCodec, JsonEnvelope, JsonEnvelopeCodec, NamedArgs
from .mistral import MistralCallCodec
from .name_key import NameKeyCodec
from .pythonic import PythonicCallCodec
from .xml_params import JSON_TEXT, XmlParams, XmlParamsCodec

__all__ = [
    "ENVELOPE",
    "JSON_TEXT",
    "ArgSyntax",
    "CallCodec",
    "Codec",
    "CodecFactory",
    "GemmaArgs",
    "GemmaArgsCodec",
    "JsonArgsCodec",
    "JsonEnvelope",
    "JsonEnvelopeCodec",
    "MistralCallCodec",
    "NameKeyCodec",
    "NamedArgs",
    "PythonicCallCodec",
    "ToolIndex",
    "XmlParams",
    "XmlParamsCodec",
]
