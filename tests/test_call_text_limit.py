"""A long argument streams in bounded memory: a streamed call keeps at most ``call_text_limit``
characters of its raw text (65,536 by default). The rules (``trisect.engine.call``):

* a held call keeps all of its text (it may still be content, whole);
* a streamed call keeps its first ``limit`` characters: its state, and ``copy()`` / ``to_state``,
  stay bounded however long the argument grows;
* a call the output ends inside is reported with its first ``limit`` characters and a reason
  that says how many more were not kept, streamed or not (so every stream equals ``parse()``);
* a streamed call found malformed past the limit gives back its first ``limit`` characters as
  content, reported aborted with the same note (its arguments reached the client already);
* a list of calls that must close (``whole_list``) keeps all of its text.
"""

from __future__ import annotations

import json

import pytest

import trisect
from trisect.errors import RequestError, StateError
from trisect.testing import held_text

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
LIMIT = 1000
OPENER = '<tool_call>{"name": "f", "arguments": {"a": "'


def _feed(stream: trisect.StreamParser, text: str, step: int = 97) -> trisect.MessageBuilder:
    builder = trisect.MessageBuilder()
    for i in range(0, len(text), step):
        builder.add(stream.feed(text[i : i + step]))
    builder.add(stream.finish())
    return builder


def test_a_long_streamed_argument_keeps_the_state_bounded() -> None:
    parser = trisect.Parser(tools="hermes")
    stream = parser.stream(tools=TOOLS, call_text_limit=LIMIT)
    stream.feed(OPENER)
    sizes = []
    for _ in range(400):  # 400 x 250 = 100,000 characters of one string argument
        stream.feed("x" * 250)
        sizes.append(held_text(stream.to_value()))
        assert len(stream.to_state(b"k")) < LIMIT + 1024
    assert max(sizes) <= LIMIT + 300  # the kept head, plus what the codec and lexer hold
    copy = stream.copy()  # O(held state): the copy holds no more than the stream
    assert held_text(copy.to_value()) == held_text(stream.to_value())
    (piece,) = stream.feed('"}}</tool_call>').tool_calls
    assert piece.arguments == '"}'


def test_an_unfinished_call_past_the_limit_says_how_much_was_not_kept_streamed_or_not() -> None:
    parser = trisect.Parser(tools="hermes")
    output = "Sure." + OPENER + "y" * 5000
    start = output.index("<tool_call>")
    want = output[start : start + LIMIT]
    streamed = _feed(parser.stream(tools=TOOLS, call_text_limit=LIMIT), output).message()
    whole = parser.parse(output, tools=TOOLS, call_text_limit=LIMIT)
    for msg in (streamed, whole):
        assert msg.content == "Sure." and not msg.tool_calls
        assert msg.unfinished_call is not None
        assert msg.unfinished_call.text == want
        assert f"({len(output) - start - LIMIT:,} more) was not kept" in msg.unfinished_call.reason
    assert streamed.unfinished_call == whole.unfinished_call


def test_within_the_limit_an_unfinished_call_is_all_of_its_text() -> None:
    parser = trisect.Parser(tools="hermes")
    output = OPENER + "y" * 500
    msg = _feed(parser.stream(tools=TOOLS, call_text_limit=LIMIT), output).message()
    assert msg.unfinished_call is not None and msg.unfinished_call.text == output
    assert "not kept" not in msg.unfinished_call.reason


def test_a_held_call_keeps_all_of_its_text() -> None:
    parser = trisect.Parser(tools="hermes")
    value = "z" * 5000
    output = f'{OPENER}{value}"}}}}</tool_call> and after'
    msg = parser.parse(output, tools=TOOLS, call_text_limit=LIMIT)
    (call,) = msg.tool_calls
    assert json.loads(call.arguments) == {"a": value}
    # atomic streams hold every call until it ends: a malformed one is content whole
    bad = f"{OPENER}{value}" + '"} junk}</tool_call>'
    held = parser.parse(bad, tools=TOOLS, call_text_limit=LIMIT)
    assert held.content == bad and not held.tool_calls


def test_a_streamed_call_found_malformed_past_the_limit_gives_back_its_head() -> None:
    parser = trisect.Parser(tools="hermes")
    bad = OPENER + "w" * 5000 + '"} junk}</tool_call>'
    builder = _feed(parser.stream(tools=TOOLS, call_text_limit=LIMIT), bad)
    msg = builder.message()
    assert msg.content == bad[:LIMIT]
    assert builder.aborted == {0}


def test_a_list_that_must_close_keeps_all_of_its_text() -> None:
    parser = trisect.Parser(tools="pythonic")
    tools = [{"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}]
    output = "[g(a='" + "q" * 3000
    msg = _feed(parser.stream(tools=tools, call_text_limit=LIMIT), output).message()
    assert msg.unfinished_call is not None and msg.unfinished_call.text == output


def test_the_limit_is_a_request_option_the_state_is_bound_to() -> None:
    parser = trisect.Parser(tools="hermes")
    with pytest.raises(RequestError):
        parser.stream(call_text_limit=-1)
    with pytest.raises(RequestError):
        parser.stream(call_text_limit=True)
    state = parser.stream(tools=TOOLS, call_text_limit=LIMIT).to_state(b"k")
    parser.resume(state, b"k", tools=TOOLS, call_text_limit=LIMIT)
    with pytest.raises(StateError) as info:
        parser.resume(state, b"k", tools=TOOLS)
    assert info.value.reason == "request"


@pytest.mark.parametrize(
    ("tools", "opener", "closer", "megabytes"),
    [
        # a JSON string is unescaped in Python (~60 ns a character): 20 MB is 300 times the limit
        ("hermes", '<tool_call>\n{"name": "f", "arguments": {"a": "', '"}}\n</tool_call>', 20),
        ("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n", "\n</parameter>\n</function>\n</tool_call>", 100),
    ],
)
def test_a_long_argument_streams_in_flat_memory(tools: str, opener: str, closer: str, megabytes: int) -> None:
    """The default limit: what a stream holds inside a string argument of tens of megabytes
    (100 MB of raw XML parameter text, fed 1 MB at a time, under ``tracemalloc``) stops growing
    once the kept head is full, ``copy()`` there holds no more than that, and the argument
    reaches the client whole."""
    import tracemalloc

    parser = trisect.Parser(tools=tools)
    stream = parser.stream(tools=TOOLS)
    sent = trisect.MessageBuilder()
    sent.add(stream.feed(opener))
    # ~1 MB of code in long lines: few escapes, so tracemalloc traces few small strings
    code = ("    total += x  # \u00e9 " + "y" * 1000 + "\n") * 1000
    chunk = json.dumps(code)[1:-1] if tools == "hermes" else code  # as each format writes a string
    streamed = 0
    tracemalloc.start()
    try:
        live = []
        for _ in range(megabytes):
            delta = stream.feed(chunk)
            streamed += sum(len(c.arguments or "") for c in delta.tool_calls) if delta else 0
            del delta
            live.append(tracemalloc.get_traced_memory()[0])
        copy = stream.copy()
        with_copy = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert max(live) - live[0] < 16 * 1024  # flat: not a byte per character of the argument
    assert live[-1] < 4 * 65536  # the kept head (65,536 characters) and the stream's own state
    assert with_copy - live[-1] < 4 * 65536  # the copy: O(held state), not O(argument)
    assert held_text(copy.to_value()) == held_text(stream.to_value())
    assert streamed >= megabytes * len(chunk) - 65536  # the argument streamed on as it came
    end = stream.feed(closer)
    assert end is None or not end.aborted
    assert stream.finish() is None
