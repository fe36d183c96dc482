"""``StreamParser.to_state`` and ``Parser.resume``: a stream written out and read back, in this
process or another, continues exactly as it would have; every way a state can be wrong is a
``StateError`` naming why, and yields nothing. (Every case at every cut: ``check_states`` in
``tests/test_cases.py``; the envelope's layout: ``tests/test_state_envelope.py``.)"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

import trisect
from support import tokenizers
from trisect.engine import envelope
from trisect.errors import StateError
from trisect.testing import STATE_SLACK, held_text

KEY = b"a state key of thirty-two bytes!"
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]
OUTPUT = (
    "<think>\nLet me look both up.\n</think>\n\nSure.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>'
)


def _ids(index: int) -> str:
    return f"id-{index}"


def _deltas(stream: trisect.StreamParser, pieces: list[Any], ids: bool) -> list[Any]:
    out = [stream.feed(None, p) if ids else stream.feed(p) for p in pieces]
    return [*out, stream.finish()]


@pytest.mark.parametrize("mode", ["text", "ids"])
def test_a_resumed_stream_gives_the_same_deltas_as_the_original(mode: str) -> None:
    tok = tokenizers.load("qwen3") if mode == "ids" else None
    parser = trisect.Parser("qwen3", "hermes", tokenizer=tok)
    options = {"tools": TOOLS, "id_factory": _ids}
    pieces: list[Any] = [[t] for t in tokenizers.encode("qwen3", OUTPUT)] if mode == "ids" else list(OUTPUT)
    want = _deltas(parser.stream(**options), pieces, mode == "ids")
    for cut in range(len(pieces) + 1):
        stream = parser.stream(**options)
        got = [stream.feed(None, p) if mode == "ids" else stream.feed(p) for p in pieces[:cut]]
        resumed = parser.resume(stream.to_state(KEY), KEY, **options)
        got += _deltas(resumed, pieces[cut:], mode == "ids")
        assert got == want, cut  # the very same deltas: call ids and indexes included


def test_a_resumed_call_keeps_its_index_and_later_calls_number_on() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    stream = parser.stream(tools=TOOLS)
    first = trisect.MessageBuilder()
    cut = OUTPUT.index('{"zone"')
    first.add(stream.feed(OUTPUT[:cut]))
    resumed = parser.resume(stream.to_state(KEY), KEY, tools=TOOLS)
    rest = [resumed.feed(OUTPUT[cut:]), resumed.finish()]
    indexes = [c.index for d in rest if d for c in d.tool_calls]
    assert indexes == [1]  # the open call, streamed before the cut, goes on as call 1
    assert all(c.id is None for d in rest if d for c in d.tool_calls)  # its id was sent once, before


def test_every_request_option_travels_with_the_state() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    options = {
        "tools": TOOLS,
        "parallel_tool_calls": False,
        "include_reasoning": False,
        "tool_choice": "auto",
        "chat_template_kwargs": {"enable_thinking": True},
        "id_factory": _ids,
    }
    want = parser.parse(OUTPUT, **options)
    stream = parser.stream(atomic_tool_calls=True, **options)
    builder = trisect.MessageBuilder()
    builder.add(stream.feed(OUTPUT[:40]))
    resumed = parser.resume(stream.to_state(KEY), KEY, atomic_tool_calls=True, **options)
    builder.add(resumed.feed(OUTPUT[40:]))
    builder.add(resumed.finish())
    assert builder.message() == want
    assert want.reasoning is None and len(want.tool_calls) == 1


OPTIONS = [
    {},
    {"tool_choice": "none"},
    {"tool_choice": "required"},
    {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    {"parallel_tool_calls": False},
    {"include_reasoning": False},
    {"chat_template_kwargs": {"enable_thinking": False}},
    {"reasoning_effort": "low"},
    {"history_tool_calls": 2},
    {"call_text_limit": 10},
    {"prompt_text": "<|im_start|>assistant\n<think>\n"},
    {"atomic_tool_calls": True},
]


@pytest.mark.parametrize("mode", ["text", "ids"])
@pytest.mark.parametrize("extra", OPTIONS, ids=[",".join(o) or "defaults" for o in OPTIONS])
def test_resumed_at_every_chunk_with_each_request_option(extra: dict[str, Any], mode: str) -> None:
    """Each option a stream can be made with, one at a time: a stream resumed from its state
    after every chunk gives the kept stream's very deltas (the prompt on the first chunk only)."""
    tok = tokenizers.load("qwen3") if mode == "ids" else None
    parser = trisect.Parser("qwen3", "hermes", tokenizer=tok)
    options = {"tools": TOOLS, "id_factory": _ids, **extra}
    atomic = options.pop("atomic_tool_calls", False)
    later = {k: v for k, v in options.items() if k != "prompt_text"}
    ids = mode == "ids"
    pieces: list[Any] = [[t] for t in tokenizers.encode("qwen3", OUTPUT)] if ids else list(OUTPUT)
    want = _deltas(parser.stream(atomic_tool_calls=atomic, **options), pieces, ids)
    stream = parser.stream(atomic_tool_calls=atomic, **options)
    got = []
    for p in pieces:
        got.append(stream.feed(None, p) if ids else stream.feed(p))
        stream = parser.resume(stream.to_state(KEY), KEY, atomic_tool_calls=atomic, **later)
    got.append(stream.finish())
    assert got == want


def test_the_prompt_need_not_come_again() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    prompt = "<|im_start|>assistant\n<think>\n"  # the template opened reasoning
    whole = parser.parse("still thinking</think>\n\nDone.", prompt_text=prompt)
    builder = trisect.MessageBuilder()
    stream = parser.stream(prompt_text=prompt)
    builder.add(stream.feed("still thinking"))
    resumed = parser.resume(stream.to_state(KEY), KEY)  # no prompt: the state knows where it is
    builder.add(resumed.feed("</think>\n\nDone."))
    builder.add(resumed.finish())
    assert builder.message() == whole
    assert whole.reasoning == "still thinking" and whole.content == "Done."


def test_a_state_never_grows_with_what_was_emitted() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    stream = parser.stream()
    sizes = []
    for i in range(5000):
        stream.feed(f"word{i} ")
        sizes.append(len(stream.to_state(KEY)))
    assert max(sizes) - min(sizes) <= 8  # a few counter bytes, not the 40 KB emitted
    assert max(sizes) <= envelope.OVERHEAD + STATE_SLACK


def test_a_state_is_bounded_by_the_text_it_holds() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    stream = parser.stream(tools=TOOLS)
    stream.feed('<tool_call>\n{"name": "get_weather", "arguments": {"city": "' + "P" * 20000)
    state = stream.to_state(KEY)
    assert len(state) <= held_text(stream.to_value()) + STATE_SLACK


def test_the_caller_can_carry_a_value_with_the_state() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = parser.stream().to_state(KEY, carry=(True, 3, ("a", None)))
    assert parser.resume(state, KEY).carried == (True, 3, ("a", None))
    assert parser.resume(parser.stream().to_state(KEY), KEY).carried is None


def test_a_state_read_in_another_process_continues_there() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    stream = parser.stream(tools=TOOLS, id_factory=_ids)
    stream.feed(OUTPUT[:100])
    state = stream.to_state(KEY)
    code = (
        "import sys, trisect\n"
        "def ids(i): return f'id-{i}'\n"
        "p = trisect.Parser('qwen3', 'hermes')\n"
        f"tools = {TOOLS!r}\n"
        "s = p.resume(bytes.fromhex(sys.argv[1]), sys.argv[2].encode(), tools=tools, id_factory=ids)\n"
        f"print([s.feed({OUTPUT[100:]!r}), s.finish()])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, state.hex(), KEY.decode()], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == str([stream.feed(OUTPUT[100:]), stream.finish()])  # the same deltas there as here


# ---------------------------------------------------------------------------------------- refusals


def _state(parser: trisect.Parser, **options: Any) -> bytes:
    stream = parser.stream(**options)
    stream.feed(OUTPUT[:60])
    return stream.to_state(KEY)


def _refused(call: Any) -> str:
    with pytest.raises(StateError) as info:
        call()
    return info.value.reason


def test_an_altered_state_is_refused_at_every_byte() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = _state(parser, tools=TOOLS)
    for i in range(len(state)):
        altered = state[:i] + bytes([state[i] ^ 0x20]) + state[i + 1 :]
        assert _refused(lambda a=altered: parser.resume(a, KEY, tools=TOOLS)) in ("malformed", "version", "signature")


def test_a_truncated_state_is_refused_at_every_length() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = _state(parser, tools=TOOLS)
    for n in range(len(state)):
        assert _refused(lambda n=n: parser.resume(state[:n], KEY, tools=TOOLS)) in ("malformed", "signature")


def test_a_state_signed_with_another_key_is_refused() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    assert _refused(lambda: parser.resume(_state(parser), b"another key entirely, 32 bytes!")) == "signature"


def test_a_state_of_another_parser_or_formats_is_refused() -> None:
    state = _state(trisect.Parser("qwen3", "hermes"))
    for other in (trisect.Parser("qwen3", "qwen3_coder"), trisect.Parser("deepseek_r1", "hermes"), trisect.Parser()):
        assert _refused(lambda o=other: o.resume(state, KEY)) == "formats"


def test_a_state_of_another_tokenizer_is_refused() -> None:
    with_qwen = trisect.Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3"))
    with_deepseek = trisect.Parser("qwen3", "hermes", tokenizer=tokenizers.load("deepseek_v3"))
    state = _state(with_qwen)
    assert _refused(lambda: with_deepseek.resume(state, KEY)) == "tokenizer"
    assert _refused(lambda: trisect.Parser("qwen3", "hermes").resume(state, KEY)) == "tokenizer"


def test_a_state_of_another_trisect_state_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = _state(parser)
    monkeypatch.setattr(envelope, "STATE_VERSION", envelope.STATE_VERSION + 1)
    assert _refused(lambda: parser.resume(state, KEY)) == "version"


@pytest.mark.parametrize(
    "other",
    [
        {"tools": TOOLS[:1]},
        {"tools": TOOLS, "tool_choice": "none"},
        {"tools": TOOLS, "parallel_tool_calls": False},
        {"tools": TOOLS, "include_reasoning": False},
        {"tools": TOOLS, "chat_template_kwargs": {"enable_thinking": False}},
        {"tools": TOOLS, "reasoning_effort": "low"},
        {"tools": TOOLS, "strict": True},
        {"tools": TOOLS, "history_tool_calls": 2},
        {"tools": TOOLS, "call_text_limit": 10},
        {"tools": TOOLS, "atomic_tool_calls": True},
    ],
)
def test_a_state_of_another_request_is_refused(other: dict[str, Any]) -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = _state(parser, tools=TOOLS)
    assert _refused(lambda: parser.resume(state, KEY, **other)) == "request"


def test_an_expired_state_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = trisect.Parser("qwen3", "hermes")
    stream = parser.stream()
    state = stream.to_state(KEY, ttl=60)
    parser.resume(state, KEY)
    now = time.time()
    monkeypatch.setattr(envelope.time, "time", lambda: now + 61)
    assert _refused(lambda: parser.resume(state, KEY)) == "expired"


def test_an_oversized_state_is_refused_before_it_is_read() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    state = _state(parser)
    assert _refused(lambda: parser.resume(state, KEY, max_bytes=len(state) - 1)) == "oversized"
    assert _refused(lambda: parser.resume(b"\x00" * 10_000, KEY, max_bytes=1000)) == "oversized"


def test_what_is_not_a_state_is_refused() -> None:
    parser = trisect.Parser("qwen3", "hermes")
    for junk in (b"", b"hello", bytes(200)):
        assert _refused(lambda j=junk: parser.resume(j, KEY)) == "malformed"


def test_a_stream_not_made_by_a_parser_has_no_state() -> None:
    from trisect.errors import StreamError

    stream = trisect.Parser("qwen3", "hermes").stream()
    bare = trisect.StreamParser(stream.engine)
    with pytest.raises(StreamError):
        bare.to_state(KEY)
