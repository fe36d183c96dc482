"""Argument codecs: how the text inside one tool call becomes a name and a JSON object.

The engine owns markers and states; a codec owns the syntax of one call's arguments. It is
created per call and receives either every text piece of the argument region
(``structured = False``: XML-style parameters, where the engine finds the parameter markers and
passes them on with ``marker()``) or decides itself where its text ends (``structured = True``:
JSON, where a marker inside a string is string text and the call can end where the JSON ends).

Every codec only ever *appends* argument text: ``take()`` returns the next safe piece, and the
pieces concatenate to the final arguments, a JSON object, returned complete by ``close()``.
"""

from __future__ import annotations

from ..engine.codec import CallCodec, CodecFactory
from ..engine.options import ToolIndex
from .json_call import JsonArgsCodec, JsonEnvelopeCodec
from .xml_params import XmlParamsCodec

__all__ = ["CallCodec", "CodecFactory", "JsonArgsCodec", "JsonEnvelopeCodec", "ToolIndex", "XmlParamsCodec"]
