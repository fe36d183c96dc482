"""Targeted tests of the engine's policies (the case files cover the formats)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trisect
from trisect import (
    FormatError,
    MalformedOutputError,
    Parser,
    RequestError,
    StreamError,
    ToolSchemaError,
)
from trisect.engine.compile import compile_format
from trisect.engine.spec import combine
from trisect.formats import all_formats
from trisect.testing import Case, check_case

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


def test_public_api_is_sorted_and_complete() -> None:
    assert trisect.__all__ == sorted(trisect.__all__)
    for name in trisect.__all__:
        assert hasattr(trisect, name), name


def test_core_imports_with_third_party_packages_blocked() -> None:
    code = textwrap.dedent(
        """
        import sys
        allowed = set(sys.stdlib_module_names) | {"trisect", "_distutils_hack", "__editable___trisect_0_1_0_finder"}
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] not in allowed:
                    raise ImportError("blocked third-party import: " + name)
                return None
        sys.meta_path.insert(0, Block())
        import trisect, trisect.testing, trisect.cli
        from trisect.formats import all_formats
        specs = all_formats()
        for spec in specs:
            trisect.Parser(*((spec.name, None) if spec.kind == "reasoning" else (None, spec.name)))
        out = '<think>a</think>b<tool_call>{"name": "f", "arguments": {}}</tool_call>'
        msg = trisect.Parser("qwen3", "hermes").parse(out)
        assert msg.tool_calls[0].name == "f", msg
        print("ok", len(specs))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_every_format_compiles_alone_and_with_every_other() -> None:
    specs = all_formats()
    reasoning = [s for s in specs if s.kind == "reasoning"]
    tools = [s for s in specs if s.kind == "tools"]
    assert reasoning and tools
    for spec in specs:
        compiled = compile_format(spec)
        assert compiled.states
        assert spec.models, f"{spec.name} names no model"
        assert spec.reference, f"{spec.name} has no reference"
    for r in reasoning:
        for t in tools:
            try:
                compile_format(combine(r, t))
            except FormatError as exc:  # a pair may legitimately clash; it must say so clearly
                assert r.name in str(exc) and t.name in str(exc)


def test_unknown_names_and_options_are_typed_errors() -> None:
    with pytest.raises(FormatError, match="unknown reasoning format"):
        Parser("nope")
    with pytest.raises(FormatError, match="unknown tool-call format"):
        Parser(None, "nope")
    parser = Parser("qwen3", "hermes")
    with pytest.raises(RequestError, match="unknown request option"):
        parser.parse("x", temperature=0.5)
    with pytest.raises(ToolSchemaError):
        parser.parse("x", tools=[{"type": "function"}])
    with pytest.raises(ToolSchemaError):
        parser.parse("x", tools="get_weather")
    with pytest.raises(RequestError):
        parser.parse("x", chat_template_kwargs=["enable_thinking"])


def test_feed_after_finish_is_an_error_and_nothing_received_is_lost() -> None:
    stream = Parser("qwen3", None).stream()
    first = stream.feed("<think>plan</think>answer")
    last = stream.finish()
    with pytest.raises(StreamError):
        stream.feed("more")
    with pytest.raises(StreamError):
        stream.finish()
    builder = trisect.MessageBuilder()
    builder.add(first)
    builder.add(last)
    assert builder.message() == trisect.Message(reasoning="plan", content="answer")


def test_marker_split_across_deltas_is_held_no_longer_than_needed() -> None:
    stream = Parser("qwen3", None).stream()
    assert stream.feed("thinking <") == trisect.Delta(reasoning="thinking")  # "<" might start </think>
    assert stream.feed("/th") is None  # still a prefix of </think>
    delta = stream.feed("ink>")  # completes the marker: nothing to emit yet
    assert delta is None and stream.state == "CONTENT"
    stream2 = Parser("qwen3", None).stream()
    stream2.feed("a <")
    assert stream2.feed("b") == trisect.Delta(reasoning=" <b")  # released as soon as it cannot be a marker


def test_held_text_never_exceeds_the_longest_live_marker_prefix() -> None:
    parser = Parser("qwen3", "qwen3_coder")
    stream = parser.stream()
    longest = max(len(s) for v in parser.spec.terminals.values() for s in v) - 1
    text = "reasoning <tool_cal"
    stream.feed(text)
    assert len(stream.engine.held) <= longest  # the engine's own hold buffer
    assert stream.engine.held == "<tool_cal"


def test_strict_mode_raises_a_typed_error_with_position() -> None:
    parser = Parser(None, "hermes")
    bad = 'Hi <tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>'
    assert parser.parse(bad).content == bad  # default: degrade, text kept
    with pytest.raises(MalformedOutputError) as info:
        parser.parse(bad, strict=True)
    assert info.value.position == 3


def test_incremental_stream_reports_a_cut_off_call_as_aborted() -> None:
    parser = Parser(None, "qwen3_coder")
    stream = parser.stream(tools=WEATHER)
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"
    deltas = [stream.feed(text), stream.finish()]
    assert deltas[0].tool_calls[0].name == "get_weather"
    assert deltas[-1].aborted == (0,)
    # parse() and atomic streams never return it, and its raw text is not content either: the
    # message keeps it apart, exactly as the incremental stream ends
    cut = parser.parse(text, tools=WEATHER)
    assert cut.content is None and not cut.tool_calls and cut.unfinished_call is not None
    assert cut.unfinished_call.text == text and deltas[-1].unfinished_call == cut.unfinished_call
    atomic = parser.stream(tools=WEATHER, atomic_tool_calls=True)
    assert atomic.feed(text) is None
    assert atomic.finish() == trisect.Delta(unfinished_call=cut.unfinished_call)


def test_typed_values_are_only_appended() -> None:
    """#48702: coercing "42" -> 42 at the end must not shrink text already sent."""
    parser = Parser(None, "qwen3_coder")
    stream = parser.stream(tools=WEATHER)
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n42\n</parameter>\n"
        "<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
    )
    sent = ""
    snapshots = []
    for ch in text:
        delta = stream.feed(ch)
        for call in delta.tool_calls if delta else ():
            sent += call.arguments
            snapshots.append(sent)
    stream.finish()
    assert not any('"42' in snap for snap in snapshots)  # never sent as a string first
    assert '{"days": 42' in snapshots and '{"days": 4' not in snapshots  # the typed value arrives whole
    assert json.loads(sent) == {"days": 42, "city": "Oslo"}
    assert sent == '{"days": 42, "city": "Oslo"}'


def test_reasoning_end_event_and_state() -> None:
    stream = Parser("qwen3", "hermes").stream()
    events = stream.events("<think>x</think>y")
    assert [type(e).__name__ for e in events] == ["ReasoningText", "ReasoningEnd", "ContentText"]
    assert stream.reasoning_ended


def test_prompt_decides_the_initial_state() -> None:
    parser = Parser("qwen3", None)
    # the prompt already closed reasoning (enable_thinking=false render): content first
    closed = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert parser.parse("Hello", prompt_text=closed).content == "Hello"
    # the prompt ends inside <think>: reasoning first, even with thinking switched off
    opened = "<|im_start|>assistant\n<think>\n"
    msg = parser.parse("plan</think>Hello", prompt_text=opened, chat_template_kwargs={"enable_thinking": False})
    assert (msg.reasoning, msg.content) == ("plan", "Hello")
    # an earlier turn's think block does not decide
    history = (
        "<|im_start|>assistant\n<think>\nold\n</think>\n\nold<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert parser.parse("<think>new</think>answer", prompt_text=history).reasoning == "new"
    # Qwen3's template leaves the opener to the model: an output that does not write it is content
    assert parser.parse("new</think>answer", prompt_text=history).content == "new</think>answer"
    # DeepSeek R1's models may start thinking without it: the same output is reasoning there
    assert Parser("deepseek_r1", None).parse("new</think>answer", prompt_text=history).reasoning == "new"


CASE = Case(
    id="hypothesis",
    output=(
        "<think>\nplan 北京 🚀\n</think>\n\nSure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"
        "Paris </parameter> x\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
    expected={
        "reasoning": "plan 北京 🚀",
        "content": "Sure.",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris </parameter> x", "days": 3}}],
    },
    reasoning="qwen3",
    tools_format="qwen3_coder",
    tools=WEATHER,
)


def test_hand_case_replays_under_every_chunking() -> None:
    assert check_case(CASE) > 100


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(CASE.output)), max_size=12))
def test_any_cut_points_give_the_same_message(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [CASE.output[a:b] for a, b in zip([0, *points], [*points, len(CASE.output)], strict=True)]
    parser = Parser("qwen3", "qwen3_coder")
    for atomic in (False, True):
        stream = parser.stream(tools=WEATHER, atomic_tool_calls=atomic)
        builder = trisect.MessageBuilder()
        for chunk in chunks:
            builder.add(stream.feed(chunk))
        builder.add(stream.finish())
        msg = builder.message()
        assert (msg.reasoning, msg.content) == ("plan 北京 🚀", "Sure.")
        assert json.loads(msg.tool_calls[0].arguments) == {"city": "Paris </parameter> x", "days": 3}


def test_whitespace_only_deltas_are_held_then_kept_between_text() -> None:
    """Trailing whitespace is held as pieces (cost per delta stays flat) and released intact."""
    parser = Parser("qwen3", "minimax_m2")
    tools = [{"type": "function", "function": {"name": "w", "parameters": {"properties": {"c": {"type": "string"}}}}}]
    pieces = ["<think>a", *["\n"] * 50, "b</think>x", *[" "] * 30]
    pieces += ['<minimax:tool_call>\n<invoke name="w">\n<parameter name="c">v', *[" "] * 40, "w  </parameter>"]
    pieces += ["\n</invoke>\n</minimax:tool_call>"]
    stream = parser.stream(tools=tools)
    builder = trisect.MessageBuilder()
    for piece in pieces:
        builder.add(stream.feed(piece))
    builder.add(stream.finish())
    msg = builder.message()
    assert msg == parser.parse("".join(pieces), tools=tools, id_factory=lambda i: msg.tool_calls[0].id)
    assert (msg.reasoning, msg.content) == ("a" + "\n" * 50 + "b", "x")
    # the MiniMax-M2 template writes a value as it is: its trailing spaces are the value's
    assert json.loads(msg.tool_calls[0].arguments) == {"c": "v" + " " * 40 + "w  "}


def test_ids_without_a_tokenizer_match_markers_as_text() -> None:
    """Token ids fed with text to a parser that has no tokenizer: every marker is matched as text
    (the fast path once skipped special-token markers here)."""
    stream = Parser("qwen3", "hermes").stream()
    deltas = [stream.feed("<think>\nab", [1, 2, 3]), stream.feed("</think>ok", [4, 5]), stream.finish()]
    builder = trisect.MessageBuilder()
    for delta in deltas:
        builder.add(delta)
    assert builder.message() == Parser("qwen3", "hermes").parse("<think>\nab</think>ok")
    assert builder.message().content == "ok"


# ---------------------------------------------------------------------------- copy()


def _fold(sent: trisect.Delta | None, stream: trisect.StreamParser, *pieces: str) -> trisect.Message:
    """The message a client gets: ``sent`` before the fork, then the fork's deltas."""
    builder = trisect.MessageBuilder()
    builder.add(sent)
    for piece in pieces:
        builder.add(stream.feed(piece))
    builder.add(stream.finish())
    return builder.message()


def test_copies_diverge_independently() -> None:
    """Beam search: one prefix, several continuations, each fork keeps its own open call."""
    parser = Parser("qwen3", "hermes")
    stream = parser.stream(tools=WEATHER, id_factory=lambda i: f"c{i}")
    sent = stream.feed('<think>\nwhere?\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa')
    assert sent is not None and sent.tool_calls[0].name == "get_weather"  # streamed before the fork
    paris, rome = stream.copy(), stream.copy()
    msg_paris = _fold(sent, paris, 'ris"}}\n</tool_call>')
    msg_rome = _fold(sent, rome, 'lermo", "days": 2}}\n</tool_call>')
    msg_cut = _fold(sent, stream)
    assert json.loads(msg_paris.tool_calls[0].arguments) == {"city": "Paris"}
    assert json.loads(msg_rome.tool_calls[0].arguments) == {"city": "Palermo", "days": 2}
    assert msg_cut.tool_calls == () and msg_paris.reasoning == msg_cut.reasoning == "where?"


def test_a_copy_keeps_held_text_queued_ids_and_the_request_filter() -> None:
    from support import tokenizers

    qwen = tokenizers.load("qwen3")
    parser = Parser("qwen3", "hermes", tokenizer=qwen)
    one = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    ids = qwen.encode(f"<think>\nx\n</think>\n\n{one}{one}", allowed_special="all")
    stream = parser.stream(tools=WEATHER, parallel_tool_calls=False)
    half = len(ids) * 3 // 4  # inside the second call: the filter has seen the first one end
    stream.feed(None, ids[:half])
    fork = stream.copy()
    for s in (stream, fork):
        rest = s.feed(None, ids[half:])
        final = s.finish()
        assert not (rest and rest.tool_calls) and not (final and final.tool_calls)  # the second call is dropped
    text = parser.stream().engine
    text.feed("hmm </thi")  # a marker prefix held back
    held = text.copy()
    assert held.held == "</thi" and [type(e).__name__ for e in held.feed("nk>ok")] == ["ReasoningEnd", "ContentText"]
    assert text.held == "</thi"


def test_copy_is_o_held_state() -> None:
    """A fork after a long output carries only what is still open (the open call's text)."""
    parser = Parser(None, "hermes")
    stream = parser.stream(tools=WEATHER, atomic_tool_calls=True)
    stream.feed("x " * 100_000 + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"')
    fork = stream.copy()
    call = fork.engine._calls.open
    assert call is not None and sum(map(len, call.raw)) < 100  # the call's raw text, not the output
    delta = fork.feed("}}\n</tool_call>")  # atomic: the call comes whole once complete
    assert delta is not None and json.loads(delta.tool_calls[0].arguments) == {"city": "Oslo"}
    assert not stream.finish().tool_calls  # the original is still cut off there
