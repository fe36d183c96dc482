"""Engine and harness rules: cut-off calls, nothing lost, bad input, tool names.

Each test names the rule it holds the engine to (the engine package docstring states them).
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect import Delta, Message, MessageBuilder, Parser, RequestError, StreamError, UnfinishedCall
from trisect.chat import ChatStream, chat_completion
from trisect.engine.trace import Span
from trisect.formats import all_formats
from trisect.testing import Case, CaseFailure, check_case, check_nothing_lost, check_truncations, losses


def _tool(name: str, props: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}}),
    _tool("f", {}),
    _tool("search", {"query": {"type": "string"}}),
]
WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CUT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ro'


def _stream(parser: Parser, pieces: list[str], *, atomic: bool, **options) -> tuple[Message, list[Delta]]:
    stream = parser.stream(atomic_tool_calls=atomic, id_factory=lambda i: f"call_{i}", **options)
    deltas = [stream.feed(p) for p in pieces] + [stream.finish()]
    builder = MessageBuilder()
    for d in deltas:
        builder.add(d)
    return builder.message(), [d for d in deltas if d is not None]


# ---------------------------------------------------------------------------- a cut-off call is not content


def test_a_cut_off_call_is_kept_apart_not_in_content() -> None:
    """Two hermes calls, the second cut off at max_tokens: the first call, no markup in content,
    the second call's raw text on the message."""
    parser = Parser("qwen3", "hermes")
    output = f"<think>\nplan\n</think>\n\nSure.\n{WEATHER}\n{CUT}"
    msg = parser.parse(output, tools=TOOLS, id_factory=lambda i: f"call_{i}")
    assert msg.content == "Sure." and [c.name for c in msg.tool_calls] == ["get_weather"]
    assert msg.unfinished_call == UnfinishedCall(text=CUT, reason=msg.unfinished_call.reason)
    assert "ended" in msg.unfinished_call.reason
    # streams: atomic and incremental (the client drops aborted calls) equal parse() exactly
    for pieces in ([output], list(output)):
        for atomic in (True, False):
            got, deltas = _stream(parser, pieces, atomic=atomic, tools=TOOLS)
            assert got == msg
            assert deltas[-1].unfinished_call == msg.unfinished_call  # on the final delta
            if not atomic and len(pieces) > 1:
                assert deltas[-1].aborted == (1,)  # it had been streamed: reported aborted too


def test_a_cut_off_call_in_raw_text_arguments_and_names() -> None:
    for fmt, output in [
        ("qwen3_coder", "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"),
        ("qwen3_coder", "Hi\n<tool_call>\n<function=get_wea"),
        ("hermes", 'Hi\n<tool_call>\n{"name": "get_w'),
        ("mistral", 'Hi [TOOL_CALLS]get_weather[ARGS]{"city": "P'),
    ]:
        parser = Parser(None, fmt)
        msg = parser.parse(output, tools=TOOLS)
        assert msg.content == "Hi" and not msg.tool_calls, (fmt, msg)
        assert msg.unfinished_call is not None and output == "Hi" + output[2:]
        assert output.endswith(msg.unfinished_call.text) and msg.unfinished_call.text.lstrip()[0] in "<[", fmt
        for atomic in (True, False):
            assert _stream(parser, list(output), atomic=atomic, tools=TOOLS)[0] == msg, (fmt, atomic)


def test_a_complete_malformed_call_stays_content_in_every_stream() -> None:
    """Malformed but complete: its text is content, and an incremental stream that had streamed
    the call (then aborted it) gives the same message once the client drops it."""
    parser = Parser(None, "hermes")
    bad = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}, "x": }\n</tool_call>'
    output = f"Hi {bad} bye"
    msg = parser.parse(output, tools=TOOLS)
    assert msg.content == output and msg.unfinished_call is None and not msg.tool_calls
    for atomic in (True, False):
        assert _stream(parser, list(output), atomic=atomic, tools=TOOLS)[0] == msg


def test_a_malformed_llama_call_streamed_per_character_keeps_all_its_text() -> None:
    """Streamed per character, the content keeps all of the malformed call's text, as parse() does
    (not just its tail 'bad}')."""
    parser = Parser(None, "llama3_json")
    output = '{"name": "f", "parameters": {bad}'
    msg = parser.parse(output, tools=TOOLS)
    assert msg.content == output
    for atomic in (True, False):
        assert _stream(parser, list(output), atomic=atomic, tools=TOOLS)[0] == msg


def test_the_openai_layer_says_length_and_keeps_the_cut_off_call_out_of_content() -> None:
    parser = Parser("qwen3", "hermes")
    output = f"<think>\nx\n</think>\n\nSure.\n{CUT}"
    whole = chat_completion(parser, output, finish_reason="length", tools=TOOLS)
    assert whole["choices"][0]["finish_reason"] == "length"
    assert whole["choices"][0]["message"]["content"] == "Sure." and "tool_calls" not in whole["choices"][0]["message"]
    chat = ChatStream(parser, tools=TOOLS)
    chunks = [c for ch in output for c in chat.feed(ch)] + chat.finish("length")
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert content == "Sure."


def test_the_harness_checks_the_cut_off_rule() -> None:
    """check_case on a truncated case compares incremental streams with parse() exactly, and the
    expected ``unfinished_call`` text; check_truncations holds every cut to the same rule."""
    case = Case(
        id="cut",
        output=f"Sure.\n{CUT}",
        expected={"content": "Sure.", "unfinished_call": CUT},
        tools_format="hermes",
        tools=TOOLS,
        truncated=True,
    )
    assert check_case(case) > 0
    wrong = Case(**{**case.__dict__, "expected": {"content": f"Sure.\n{CUT}"}})
    with pytest.raises(CaseFailure):
        check_case(wrong)
    complete = Case(
        id="two",
        output=f"Sure.\n{WEATHER}\n{WEATHER}",
        expected={"content": "Sure.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}] * 2},
        tools_format="hermes",
        tools=TOOLS,
    )
    assert check_truncations(complete) > 0


# ---------------------------------------------------------------------------- nothing lost


def _case(reasoning: str | None, fmt: str | None, output: str, **kw) -> Case:
    return Case(id="probe", output=output, expected={}, reasoning=reasoning, tools_format=fmt, **kw)


def test_nothing_lost_passes_where_every_character_is_accounted_for() -> None:
    for reasoning, fmt, output in [
        ("qwen3", "hermes", f"<think>\nplan\n</think>\n\nSure.\n{WEATHER}\n{CUT}"),
        ("qwen3", "qwen3_coder", "<think>a</think>b<tool_call>\n<function=f>\n</function>\n</tool_call>c"),
        (
            "openai_gptoss",
            "openai",
            "<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>final<|message|>Hi",
        ),
        ("qwen3", "hermes", "stray </think> text"),
        # a marker, a label and a block of calls that once lost text (tests/test_nothing_lost.py)
        (None, "mistral", "[TOOL_CALLS] b[/INST]c"),
        ("gemma4", None, "<|channel>I thought about it<channel|>Answer"),
        (None, "deepseek_v31", "Let me look that up.<｜tool▁calls▁begin｜>get_weather"),
        (None, "deepseek_v3", "Look.<｜tool▁calls▁begin｜>nothing<｜tool▁calls▁end｜>"),
    ]:
        check_nothing_lost(_case(reasoning, fmt, output, tools=TOOLS))


@pytest.mark.parametrize(
    ("output", "message", "spans", "why"),
    [
        # those outputs with messages that drop text (tests/test_nothing_lost.py): the check names the loss
        ("[TOOL_CALLS] b[/INST]c", Message(content="b[/INSTc"), [Span("marker", 0, 12)], "lost"),
        (
            "<|channel>I thought about it<channel|>Answer",
            Message(reasoning="I  about it", content="Answer"),
            [Span("marker", 0, 10), Span("label", 12, 19), Span("marker", 28, 38)],
            "label",
        ),
        (
            "Look.<b>get</b>",
            Message(content="Look.get"),
            [Span("marker", 5, 8), Span("marker", 11, 15), Span("envelope", 5, 15, 0, True)],
            "envelope",
        ),
    ],
)
def test_nothing_lost_finds_a_lost_marker_label_and_envelope(output, message, spans, why) -> None:
    assert any(p.startswith(why) for p in losses(output, message, spans))


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [b"<think>x", 42, 1.5, ["a"]])
def test_text_that_is_not_a_string_is_a_stream_error(bad) -> None:
    for parser in (Parser("qwen3", "hermes"), Parser("qwen3", "hermes", tokenizer=tk.load("qwen3"))):
        with pytest.raises(StreamError, match="string"):
            parser.stream().feed(bad)
        stream = parser.stream()
        stream.feed("<think>plan")
        with pytest.raises(StreamError, match="string"):
            stream.feed(bad)


def test_text_and_ids_that_disagree_are_a_stream_error_naming_the_offset() -> None:
    qwen = tk.load("qwen3")
    parser = Parser("qwen3", "hermes", tokenizer=qwen)
    text = "<think>\nplan the trip\n</think>\n\nSure, Paris it is."
    ids = tk.encode("qwen3", text)
    other = tk.encode("qwen3", "<think>\nsomething else entirely, and longer\n</think>\n\nNo.")
    with pytest.raises(StreamError, match=r"offset \d+"):
        parser.parse(text, token_ids=other)
    stream = parser.stream()
    with pytest.raises(StreamError, match=r"offset \d+"):  # the text drifts ahead of its ids: </think> is lost
        for k in range(0, len(ids)):
            piece = tk.decode("qwen3", [ids[k]])
            stream.feed(piece if k < 1 else piece + "x", [ids[k]])
        stream.finish()
    # text and ids that agree (a few bytes of detokenizer drift are tolerated) still parse
    assert parser.parse(text, token_ids=ids).content == "Sure, Paris it is."


@pytest.mark.parametrize("token_id", [-1, 2**40, 10**7, "12", None, 1.5, True])
@pytest.mark.parametrize("tokenizer", ["qwen3", "deepseek_v3"])
def test_bad_token_ids_are_one_typed_error_naming_the_id_and_its_position(tokenizer, token_id) -> None:
    parser = Parser("qwen3" if tokenizer == "qwen3" else "deepseek_r1", tokenizer=tk.load(tokenizer))
    good = tk.encode(tokenizer, "ok so")
    for text in (None, "ok so!"):
        with pytest.raises(StreamError) as info:
            parser.parse(text, token_ids=[*good, token_id])
        assert repr(token_id) in str(info.value) and f"position {len(good)}" in str(info.value)
    stream = parser.stream()
    stream.feed(None, good)
    with pytest.raises(StreamError, match=f"position {len(good)}"):
        stream.feed(None, [token_id])


def test_reasoning_effort_outside_the_accepted_values_is_a_request_error() -> None:
    with pytest.raises(RequestError) as info:
        Parser("qwen3").parse("x", reasoning_effort="ultra")
    for value in ("minimal", "low", "medium", "high", "none", "no_think"):
        assert value in str(info.value)
        Parser("qwen3").parse("x", reasoning_effort=value)


def test_every_effort_a_format_switches_on_is_accepted() -> None:
    from trisect.request.options import REASONING_EFFORTS

    for spec in all_formats():
        doc = spec.initial.__doc__ or ""
        if "reasoning_effort is " in doc:
            values = doc.split("reasoning_effort is ", 1)[1].split(" ", 1)[0].split("/")
            assert set(values) <= set(REASONING_EFFORTS), (spec.name, values)


# ---------------------------------------------------------------------------- tool names


def _named(fmt: str, name: str) -> str | None:
    """An output calling ``name`` in format ``fmt`` (a few families, one of each wire kind)."""
    return {
        "hermes": f'<tool_call>\n{{"name": "{name}", "arguments": {{}}}}\n</tool_call>',
        "qwen3_coder": f"<tool_call>\n<function={name}>\n</function>\n</tool_call>",
        "mistral": f"[TOOL_CALLS]{name}[ARGS]{{}}",
        "pythonic": f"[{name}()]",
        "kimi_k2": f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{{}}"
        "<|tool_call_end|><|tool_calls_section_end|>",
        "llama3_json": f'{{"name": "{name}", "parameters": {{}}}}',
    }.get(fmt)


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "mistral", "pythonic", "kimi_k2", "llama3_json"])
def test_a_tool_name_that_is_not_valid_unicode_makes_the_call_malformed(fmt: str) -> None:
    output = _named(fmt, "f\ud800")
    assert output is not None
    parser = Parser(None, fmt)
    tools = TOOLS + [_tool("f\ud800", {})]
    msg = parser.parse(output, tools=tools)
    assert not msg.tool_calls and msg.content is not None, (fmt, msg)
    for call in _stream(parser, list(output), atomic=False, tools=tools)[0].tool_calls:
        call.name.encode("utf-8")
    ok = parser.parse(_named(fmt, "f"), tools=tools)
    assert [c.name for c in ok.tool_calls] == ["f"], fmt
