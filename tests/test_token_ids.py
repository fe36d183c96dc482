"""Token ids with the real Qwen3 tokenizer: special markers by id, ordinary spellings as text,
ids ahead of their text, and trisect's own UTF-8-safe detokenization."""

from __future__ import annotations

import json

import pytest

from support import tokenizers
from trisect import Delta, MessageBuilder, Parser, StreamError

THINK_END = 151668
TOOL_CALL = 151657


@pytest.fixture(scope="module")
def qwen():
    return tokenizers.load("qwen3")


def test_marker_ids_match_the_tokenizer(qwen) -> None:
    assert qwen.encode("</think>", allowed_special="all") == [THINK_END]
    assert qwen.encode("<tool_call>", allowed_special="all") == [TOOL_CALL]


def test_special_terminal_waits_for_its_text(qwen) -> None:
    """The detokenizer held the text back: the id arrives first, the terminal fires when the
    text does, so events stay in text order."""
    stream = Parser("qwen3", None, tokenizer=qwen).stream()
    plan = qwen.encode("plan")
    assert stream.feed("plan", plan + [THINK_END]) == Delta(reasoning="plan")
    assert stream.state == "REASONING"  # the id is pending, its text has not come
    assert stream.feed("</think>", []) is None
    assert stream.state == "CONTENT"
    assert stream.feed("Hi", qwen.encode("Hi")) == Delta(content="Hi")


def test_a_marker_written_with_ordinary_tokens_is_text(qwen) -> None:
    mention = qwen.encode("I will use <tool_call> tags", allowed_special=set(), disallowed_special=())
    assert TOOL_CALL not in mention
    parser = Parser("qwen3", "hermes", tokenizer=qwen)
    msg = parser.parse("I will use <tool_call> tags", token_ids=mention)
    assert msg.reasoning == "I will use <tool_call> tags" and not msg.tool_calls
    # without ids the same text is a (malformed) call: text mode cannot tell
    assert Parser("qwen3", "hermes").parse("I will use <tool_call> tags").reasoning == "I will use"


def test_special_token_inside_a_json_string_is_string_text(qwen) -> None:
    out = '<tool_call>\n{"name": "w", "arguments": {"s": "a </tool_call> b"}}\n</tool_call>'
    ids = qwen.encode(out, allowed_special="all")
    assert ids.count(151658) == 2  # the template would tokenize the string's marker as the special token
    msg = Parser(None, "hermes", tokenizer=qwen).parse(out, token_ids=ids)
    assert json.loads(msg.tool_calls[0].arguments) == {"s": "a </tool_call> b"}


def test_ids_alone_never_split_a_character(qwen) -> None:
    text = "<think>北京🚀</think>ok"
    ids = qwen.encode(text, allowed_special="all")
    stream = Parser("qwen3", None, tokenizer=qwen).stream()
    builder = MessageBuilder()
    for token_id in ids:  # byte-level BPE: 🚀 spans several tokens
        delta = stream.feed(token_ids=[token_id])
        if delta and delta.reasoning:
            assert "\ufffd" not in delta.reasoning
        builder.add(delta)
    builder.add(stream.finish())
    msg = builder.message()
    assert (msg.reasoning, msg.content) == ("北京🚀", "ok")


def test_mixing_ids_alone_and_text_with_ids_is_an_error(qwen) -> None:
    stream = Parser("qwen3", None, tokenizer=qwen).stream()
    stream.feed(token_ids=qwen.encode("a"))
    with pytest.raises(StreamError):
        stream.feed("b", qwen.encode("b"))


def test_ids_without_text_need_a_tokenizer() -> None:
    with pytest.raises(StreamError, match="tokenizer"):
        Parser("qwen3", None).stream().feed(token_ids=[1, 2])
