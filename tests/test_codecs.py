"""Every argument codec keeps the one protocol rule (``trisect.engine.codec``).

* the boilerplate (``take``, ``close``) is the base class's, in every codec class;
* complete arguments: ``close()`` returns the rest and ``failed`` stays false;
* arguments cut anywhere before their structure completes: ``close()`` returns ``None`` and
  ``failed`` stays false (the engine reports "unfinished arguments");
* text that is not the codec's syntax: ``failed`` is set while feeding, ``close()`` is ``None``;
* a complete structure that is not a call (an envelope without a name): ``close()`` sets
  ``failed`` and returns ``None``;
* every format's codec factory is one of these classes and says how a grammar writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from trisect.codecs import (
    ENVELOPE,
    ArgSyntax,
    Codec,
    GemmaArgs,
    GemmaArgsCodec,
    JsonArgsCodec,
    JsonEnvelope,
    JsonEnvelopeCodec,
    MistralCallCodec,
    NamedArgs,
    NameKeyCodec,
    PythonicCallCodec,
    XmlParams,
    XmlParamsCodec,
)
from trisect.formats import all_formats

TOOLS = {"f": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}}
CLASSES = [
    JsonArgsCodec,
    JsonEnvelopeCodec,
    GemmaArgsCodec,
    PythonicCallCodec,
    NameKeyCodec,
    MistralCallCodec,
    XmlParamsCodec,
]


@dataclass(frozen=True)
class Sample:
    """A codec, a complete arguments text, the arguments it reads, a text it must reject."""

    id: str
    make: Callable[[], Codec]
    text: str
    arguments: dict[str, object]
    invalid: str
    name: str | None = None  # set with set_name before feeding (a name from a marker region)


def _named_mistral() -> Codec:
    codec = MistralCallCodec(TOOLS)
    codec.set_name("f")
    return codec


STRUCTURED = [
    Sample("json_args", lambda: JsonArgsCodec(TOOLS), '{"a": 1, "b": "x}"}', {"a": 1, "b": "x}"}, '{"a" 1}'),
    Sample("named_args", lambda: NamedArgs("f")(TOOLS), '{"a": 1}', {"a": 1}, "[1]"),
    Sample("envelope", lambda: ENVELOPE(TOOLS), '{"name": "f", "arguments": {"a": 1}}', {"a": 1}, '{"name" "f"}'),
    Sample(
        "envelope_list",
        lambda: JsonEnvelope(list_opener=True)(TOOLS),
        '[ {"name": "f", "parameters": {"a": 1}}',
        {"a": 1},
        '[ ["f"]',
    ),
    Sample("gemma", lambda: GemmaArgs('<|"|>')(TOOLS), '{a:1,b:<|"|>x}<|"|>}', {"a": 1, "b": "x}"}, "{a:1]"),
    Sample("pythonic", lambda: PythonicCallCodec(TOOLS), 'f(a=1, b="x)")', {"a": 1, "b": "x)"}, "f(a=1, a=2)"),
    Sample("name_key", lambda: NameKeyCodec(TOOLS), '{"f": {"a": 1, "b": "x"}}', {"a": 1, "b": "x"}, '{"f": [1]}'),
    Sample("mistral_named", _named_mistral, '{"a": 1}', {"a": 1}, "[1]"),
    Sample(
        "mistral_list",
        lambda: MistralCallCodec(TOOLS),
        '{"id": "abc123XYZ", "name": "f", "arguments": {"a": 1}}',
        {"a": 1},
        '{"id" 1}',
    ),
]


def _feed(codec: Codec, text: str) -> str:
    out = []
    i = 0
    while i < len(text) and not (codec.done or codec.failed):
        j = codec.feed(text, i, i + 1)  # one character at a time: the cut that holds most back
        out.append(codec.take())
        i = j if j > i else i + 1
    return "".join(out)


def test_the_boilerplate_is_written_once() -> None:
    for cls in CLASSES:
        assert issubclass(cls, Codec), cls
        for member in ("take", "close"):
            assert getattr(cls, member) is getattr(Codec, member), f"{cls.__name__} overrides {member}"


@pytest.mark.parametrize("sample", STRUCTURED, ids=lambda s: s.id)
def test_complete_arguments_close_with_the_rest(sample: Sample) -> None:
    codec = sample.make()
    streamed = _feed(codec, sample.text)
    assert codec.done and not codec.failed
    rest = codec.close()
    assert rest is not None and not codec.failed
    assert json.loads(streamed + rest) == sample.arguments


@pytest.mark.parametrize("sample", STRUCTURED, ids=lambda s: s.id)
def test_unfinished_arguments_close_to_none_without_failing(sample: Sample) -> None:
    for cut in range(len(sample.text)):
        codec = sample.make()
        _feed(codec, sample.text[:cut])
        assert not codec.done and not codec.failed, cut
        assert codec.close() is None, cut
        assert not codec.failed, f"close() of an unfinished structure set failed (cut {cut})"


@pytest.mark.parametrize("sample", STRUCTURED, ids=lambda s: s.id)
def test_invalid_arguments_fail_while_feeding(sample: Sample) -> None:
    codec = sample.make()
    _feed(codec, sample.invalid)
    assert codec.failed
    assert codec.close() is None and codec.failed


@pytest.mark.parametrize(
    "make",
    [lambda: ENVELOPE(TOOLS), lambda: MistralCallCodec(TOOLS)],
    ids=["envelope", "mistral_list"],
)
def test_a_complete_structure_that_is_not_a_call_fails_at_close(make: Callable[[], Codec]) -> None:
    codec = make()
    _feed(codec, '{"arguments": {"a": 1}}')
    assert codec.done and not codec.failed
    assert codec.close() is None and codec.failed


def _xml(**options: object) -> XmlParamsCodec:
    codec = XmlParams(param_start="P", param_end="E", **options)(TOOLS)  # type: ignore[arg-type]
    codec.set_name("f")
    return codec


def test_xml_parameters_keep_the_rule() -> None:
    # complete: the call's end completes the structure
    codec = _xml()
    codec.marker("P")
    codec.feed("a>\n3\n", 0, 5)
    codec.marker("E")
    out = codec.take()
    rest = codec.close()
    assert rest is not None and not codec.failed and json.loads(out + rest) == {"a": 3}
    # a value left open is closed by the call's end (a recovered shape, not an unfinished one)
    codec = _xml()
    codec.marker("P")
    codec.feed("b>x", 0, 3)
    out = codec.take()
    rest = codec.close()
    assert rest is not None and json.loads(out + rest) == {"b": "x"}
    # a key still being read: unfinished, not failed
    codec = _xml()
    codec.marker("P")
    codec.feed("a", 0, 1)
    assert codec.close() is None and not codec.failed
    # a value marker without a key: not this syntax
    codec = _xml(key_marker="K", value_start="V")
    codec.marker("V")
    assert codec.failed and codec.close() is None


def test_every_format_codec_is_a_codec_and_declares_its_grammar() -> None:
    seen = set()
    for spec in all_formats():
        if spec.codec is None:
            continue
        codec = spec.codec({})
        assert isinstance(codec, Codec), spec.name
        grammar = spec.codec.grammar
        assert grammar is None or isinstance(grammar, (ArgSyntax, str)), spec.name
        seen.add(type(codec))
    assert {JsonArgsCodec, JsonEnvelopeCodec, XmlParamsCodec, GemmaArgsCodec, PythonicCallCodec} <= seen
