"""The interface between the engine and an argument codec.

The engine owns markers and states; a codec owns the syntax of one call's arguments. It is
created per call by the format's ``CodecFactory`` and receives either every text piece of the
argument region (``structured = False``: XML-style parameters, where the engine finds the
parameter markers and passes them on with ``marker()``) or decides itself where its text ends
(``structured = True``: JSON, where a marker inside a string is string text and the call can
end where the JSON ends).

Every codec only ever *appends* argument text: ``take()`` returns the next safe piece, and the
pieces concatenate to the final arguments, a JSON object, returned complete by ``close()``.
One rule for ``close()`` and ``failed``, kept by every codec (``trisect.codecs.base.Codec``):
``failed`` means the text is not this codec's syntax (set as soon as that is known, or by
``close()`` when the structure is complete but still not a call, e.g. an envelope without a
name); ``close()`` returns ``None`` when ``failed`` or when the structure is unfinished, and an
unfinished structure does not set ``failed`` (the engine tells "invalid" from "unfinished"
arguments by it).

A factory also says how a grammar writes its arguments (``grammar``: an ``ArgSyntax``, or the
reason none can); the engine never reads that, ``trisect.grammar`` does. The codecs
themselves live in ``trisect.codecs``.

A codec's state is a plain value (``engine.value``): ``to_value()`` writes it, ``restore(value)``
reads it into a fresh codec of the same factory (the factory and the request's tools are the
configuration, never part of the value). A stream's ``copy()`` and its written-out state go
through them, so a codec keeps nothing else between calls.

The rest of the output: where ``s[i:end]`` is all the text there is (a whole output, read at
once), the engine calls ``feed_last`` instead of ``feed``; a codec may read it faster there (the
JSON codecs hand the whole value to the standard library's C decoder), with the same result.

String fast path: inside a string of a streamed call (``in_string`` / ``in_string_value``), the
engine hands a delta that holds none of ``string_stops`` to ``string_piece`` when
``fast_strings`` is set: ``feed`` + ``take`` in one call, the same result, or ``None`` where the
delta is not plain string text (the engine then feeds it, and ``feed`` says where it stopped: a
value that breaks stops at the same character however it was cut).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .stream_options import ToolIndex
from .value import Value


class CallCodec(Protocol):
    @property
    def structured(self) -> bool: ...
    @property
    def name(self) -> str | None: ...  # set when the codec itself reads the tool name (JSON envelopes)
    @property
    def call_id(self) -> str | None: ...
    @property
    def done(self) -> bool: ...  # its own structure is complete (structured codecs; XML: after close)
    @property
    def failed(self) -> bool: ...  # the text is not this codec's syntax (see the module docstring)
    @property
    def in_value(self) -> bool: ...  # inside a raw-text value, where a marker may be value text (Rule.follow)
    @property
    def in_string(self) -> bool: ...  # inside a JSON string (structured codecs), where every marker is text
    @property
    def in_string_value(self) -> bool: ...  # inside a streamed raw string value (unstructured codecs)

    @property
    def fast_strings(self) -> bool: ...  # string_piece applies (see the module docstring)
    @property
    def string_stops(self) -> str: ...  # characters that may end a string (structured codecs)

    def accepts_key(self, raw: str) -> bool: ...  # inside a value: may this key open the next parameter (Rule.key_end)

    def feed(self, s: str, i: int, end: int) -> int: ...
    def feed_last(self, s: str, i: int, end: int) -> int: ...  # feed, where s[i:end] is the rest of the output
    def marker(self, terminal: str) -> None: ...
    def set_name(self, name: str) -> None: ...
    def take(self) -> str: ...
    def close(self) -> str | None: ...
    def string_piece(self, text: str) -> str | None: ...  # None: not plain, feed it
    def to_value(self) -> Value: ...
    def restore(self, value: Value) -> None: ...


@dataclass(frozen=True, slots=True)
class ArgSyntax:
    """How a grammar writes a codec's arguments.

    ``style``: ``"json"`` (the arguments object), ``"json_envelope"`` (``{NAME_KEY: name,
    ARGS_KEY: {…}}``, keys in ``envelope_keys``) or an xgrammar XML argument style (``qwen_xml``,
    ``glm_xml``, ``minimax_xml``, ``deepseek_xml``, ``deepseek_v4_1_xml``, ``kimi_k3_xml``).
    ``opener``: for raw-text styles, the format's terminal that begins the arguments (the first
    parameter's marker); JSON styles begin with ``{``. ``list_opener``: the call's opening marker
    may also open the list around it (``[{``: xLAM)."""

    style: str
    envelope_keys: tuple[str, str] = ("name", "arguments")
    opener: str = ""
    list_opener: bool = False


class CodecFactory(Protocol):
    """Makes the codec of each call (a codec class, or an options object of one)."""

    @property
    def grammar(self) -> ArgSyntax | str | None: ...  # None: no style, for no stated reason

    def __call__(self, tools: ToolIndex, /) -> CallCodec: ...
