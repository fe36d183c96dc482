"""vLLM's ``hf`` parsers: formats compiled from a model's ``response_template``.

The expected values of ``CASES`` were produced by running vLLM 0.33's own response-template
parser (``parser/response_template.py``, through the composed ``hf`` + ``hf`` parser as serving
builds it, ``parse()`` and streamed ``parse_delta()`` agreeing) on the same template, output and
prompt. Where trisect keeps its own documented rule (``formats/hf.py``), the test says so and
gives vLLM's value.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

import trisect
from support import tokenizers
from trisect import FormatError, Parser
from trisect.formats import _catalogue
from trisect.formats.hf import response_template_formats, template_of
from trisect.testing import Case, check_case

QWEN = {
    "version": 1,
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
    },
}
LISTED = {
    "version": 1,
    "start_anchor": ["<|assistant|>", "<|start_of_role|>assistant<|end_of_role|>"],
    "fields": {
        "content": {},
        "tool_calls": {
            "open": ["<tool_calls>", "<|tool_calls|>"],
            "close": "</tool_calls>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{parameters}"}},
        },
    },
}
TEMPLATES = {"qwen": QWEN, "listed": LISTED}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
USER = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": args}


# (id, template, reasoning?, tools?, prompt, output, expected reasoning, content, calls)
CASES: list[tuple[str, str, bool, bool, str | None, str, str | None, str | None, list[dict[str, Any]]]] = [
    (
        "think-content-call",
        "qwen",
        True,
        True,
        USER,
        '<think>plan</think>Sure.\n<tool_call>{"name": "get_weather", '
        '"arguments": {"city": "Paris", "days": 3}}</tool_call>',
        "plan",
        "Sure.\n",
        [_call("get_weather", {"city": "Paris", "days": 3})],
    ),
    (
        "whitespace-kept-two-calls",
        "qwen",
        True,
        True,
        None,
        '<think>\nplan\n</think>\n\nOne.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>\nand\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>\n',
        "\nplan\n",
        "\n\nOne.\n\nand\n\n",
        [_call("get_weather", {"city": "Paris"}), _call("get_weather", {"city": "Rome"})],
    ),
    ("prompt-opened-think", "qwen", True, True, USER + "<think>", "plan</think>Answer", "plan", "Answer", []),
    (
        "earlier-turn-does-not-decide",
        "qwen",
        True,
        True,
        "<|im_start|>assistant\n<think>old</think>x<|im_end|>\n" + USER,
        "Answer",
        None,
        "Answer",
        [],
    ),
    (
        "tool-marker-inside-thinking-is-text",
        "qwen",
        True,
        True,
        None,
        "<think>maybe <tool_call> later</think>Done",
        "maybe <tool_call> later",
        "Done",
        [],
    ),
    ("plain-content-verbatim", "qwen", True, True, None, "\n\nHello there.\n", None, "\n\nHello there.\n", []),
    (
        "stray-closers-are-text",
        "qwen",
        True,
        True,
        None,
        "a </think> b </tool_call> c",
        None,
        "a </think> b </tool_call> c",
        [],
    ),
    (
        "second-think-block",
        "qwen",
        True,
        True,
        None,
        "<think>one</think>mid<think>two</think>end",
        "onetwo",
        "midend",
        [],
    ),
    ("think-unclosed", "qwen", True, True, None, "<think>still thinking", "still thinking", None, []),
    (
        "reasoning-parser-only",
        "qwen",
        True,
        False,
        None,
        '<think>plan</think>Answer <tool_call>{"name": "x", "arguments": {}}</tool_call>',
        "plan",
        'Answer <tool_call>{"name": "x", "arguments": {}}</tool_call>',
        [],
    ),
    (
        "tool-parser-only-thinking-is-content",
        "qwen",
        False,
        True,
        None,
        '<think>plan</think>Sure.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
        None,
        "planSure.",
        [_call("get_weather", {"city": "Oslo"})],
    ),
    (
        "a-list-of-calls",
        "listed",
        False,
        True,
        None,
        'Checking.<tool_calls>[{"name": "get_weather", "parameters": {"city": "Paris"}}, '
        '{"name": "get_weather", "parameters": {"city": "Rome", "days": 2}}]</tool_calls>',
        None,
        "Checking.",
        [_call("get_weather", {"city": "Paris"}), _call("get_weather", {"city": "Rome", "days": 2})],
    ),
    (
        "another-opener-spelling",
        "listed",
        False,
        True,
        None,
        '<|tool_calls|>[{"name": "get_weather", "parameters": {"city": "Oslo"}}]</tool_calls> after',
        None,
        " after",
        [_call("get_weather", {"city": "Oslo"})],
    ),
    # trisect's rules where vLLM differs (formats/hf.py): the JSON decides where the call ends,
    # so a closer inside a string is text (vLLM: the region ends there, the call is dropped and
    # content is 'b"}}</tool_call>'); a malformed region keeps its text (vLLM: content 'Hi  bye')
    (
        "closer-inside-a-json-string",
        "qwen",
        True,
        True,
        None,
        '<tool_call>{"name": "get_weather", "arguments": {"city": "a</tool_call>b"}}</tool_call>',
        None,
        None,
        [_call("get_weather", {"city": "a</tool_call>b"})],
    ),
    (
        "malformed-region-keeps-its-text",
        "qwen",
        True,
        True,
        None,
        'Hi <tool_call>{"name": get_weather}</tool_call> bye',
        None,
        'Hi <tool_call>{"name": get_weather}</tool_call> bye',
        [],
    ),
]


def _parser(template: str, reasoning: bool, tools: bool) -> Parser:
    r, t = response_template_formats(TEMPLATES[template], reasoning=reasoning)
    return Parser(r if reasoning else None, t if tools else None)


def _message(msg: trisect.Message) -> tuple[str | None, str | None, list[dict[str, Any]]]:
    return msg.reasoning, msg.content, [_call(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hf_parses_as_vllm_does(case: tuple[Any, ...]) -> None:
    _id, template, reasoning, tools, prompt, output, *expected = case
    msg = _parser(template, reasoning, tools).parse(output, prompt_text=prompt, tools=TOOLS)
    assert _message(msg) == tuple(expected)


@pytest.fixture(scope="module")
def registered() -> Iterator[None]:
    saved = {kind: dict(formats) for kind, formats in _catalogue().items()}
    for template in TEMPLATES:
        for with_reasoning in (True, False):
            r, t = response_template_formats(TEMPLATES[template], reasoning=with_reasoning)
            for spec in (r, t):
                if spec is not None and (with_reasoning or spec.kind == "tools"):
                    trisect.register_format(replace(spec, name=f"hf_{template}_{with_reasoning}"))
    yield
    for kind, formats in _catalogue().items():
        formats.clear()
        formats.update(saved[kind])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hf_keeps_the_streaming_contract(case: tuple[Any, ...], registered: None) -> None:
    _id, template, reasoning, tools, prompt, output, r, c, calls = case
    options = {"prompt_text": prompt} if prompt else {}
    replay = Case(
        id=_id,
        output=output,
        expected={"reasoning": r, "content": c, "tool_calls": calls},
        reasoning=f"hf_{template}_True" if reasoning else None,
        tools_format=f"hf_{template}_{reasoning}" if tools else None,
        tools=TOOLS,
        options=options,
    )
    assert check_case(replay) > 0


class _WithTemplate:
    """A tokenizer that carries a response_template, as a transformers tokenizer does."""

    def __init__(self, tokenizer: Any, template: Any) -> None:
        self._tokenizer = tokenizer
        self.init_kwargs = {"response_template": template}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)


def test_hf_by_name_reads_the_tokenizers_template_and_matches_markers_by_id() -> None:
    tok = _WithTemplate(tokenizers.load("qwen3"), QWEN)
    assert template_of(tok) == QWEN
    parser = Parser("hf", "hf", tokenizer=tok)
    assert parser.reasoning == parser.tools == "hf"
    assert {"THINK_START", "THINK_END"} <= parser.reasoning_spec.special  # type: ignore[union-attr]
    assert {"TOOL_START", "TOOL_END"} <= parser.tools_spec.special  # type: ignore[union-attr]
    output = '<think>plan</think>Sure.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    ids = tokenizers.encode("qwen3", output)
    for msg in (parser.parse(output), parser.parse(token_ids=ids), parser.parse(output, token_ids=ids)):
        assert _message(msg) == ("plan", "Sure.\n", [_call("get_weather", {"city": "Paris"})])
    think_end = ids.index(tokenizers.encode("qwen3", "</think>")[0])
    assert not parser.is_reasoning_end(ids[:think_end]) and parser.is_reasoning_end(ids[: think_end + 1])
    # a marker written as ordinary tokens is text
    ordinary = tokenizers.encode_ordinary("qwen3", "<think>plan</think>ok")
    assert _message(parser.parse(token_ids=ordinary)) == (None, "<think>plan</think>ok", [])
    alone = Parser(None, "hf", tokenizer=tok).parse("<think>plan</think>ok")
    assert (alone.reasoning, alone.content) == (None, "planok")


def test_hf_without_a_template_says_where_it_comes_from() -> None:
    with pytest.raises(FormatError, match="--reasoning-parser hf reads the model's response_template"):
        Parser("hf")
    with pytest.raises(FormatError, match="--tool-call-parser hf reads"):
        Parser(tools="hf", tokenizer=tokenizers.load("qwen3"))
    with pytest.raises(FormatError, match="--reasoning-parser hf needs a 'thinking' field"):
        Parser("hf", tokenizer=_WithTemplate(tokenizers.load("qwen3"), LISTED))


def _with(path: str, value: Any) -> dict[str, Any]:
    template = json.loads(json.dumps(QWEN))
    *parents, last = path.split(".")
    node = template
    for key in parents:
        node = node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return template


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (_with("version", 2), "version: 2 is not a supported version"),
        (_with("start_anchor", None), "give exactly one of start_anchor / start_anchor_pattern"),
        (_with("fields.refusal", {"open": "<no>"}), "fields.refusal: only thinking, content, tool_calls"),
        (_with("fields.thinking.open_pattern", "<think:[0-9]+>"), "fields.thinking.open_pattern: regex delimiters"),
        (
            {**QWEN, "fields": {"thinking": {"close": "</think>"}, "content": {"open": "</think>"}}},
            "fields.thinking.open: only content may be the implicit region",
        ),
        (_with("fields.content.open", "<answer>"), "fields.content.open: a content field with an opener"),
        (_with("fields.content.content", "json"), 'fields.content: must be content "text"'),
        (_with("fields.tool_calls.content", "xml-inline"), "fields.tool_calls.content: trisect reads tool regions"),
        (_with("fields.tool_calls.transform", {"function": "{content}"}), "fields.tool_calls.transform: must map"),
        (
            _with(
                "fields.tool_calls.transform", {"function": {"name": "{content.fn.name}", "arguments": "{content.a}"}}
            ),
            "fields.tool_calls.transform.function.name: must be a placeholder {content.KEY}",
        ),
        (_with("fields.tool_calls.colour", 1), "fields.tool_calls.colour: unknown key"),
        (_with("defaults", {"role": "assistant", "x": 1}), "defaults: may only set role"),
        ([1], "response_template must be an object"),
    ],
)
def test_a_template_trisect_cannot_read_is_a_format_error(template: Any, message: str) -> None:
    with pytest.raises(FormatError) as info:
        response_template_formats(template)
    assert message in str(info.value)


def test_a_call_id_key() -> None:
    template = _with(
        "fields.tool_calls.transform",
        {"id": "{content.id}", "function": {"name": "{content.name}", "arguments": "{content.arguments}"}},
    )
    _r, tools = response_template_formats(template)
    msg = Parser(None, tools).parse('<tool_call>{"id": "c7", "name": "f", "arguments": {}}</tool_call>')
    assert [(c.id, c.name) for c in msg.tool_calls] == [("c7", "f")]


def test_trisect_formats_lists_hf() -> None:
    import io

    from trisect.cli import main

    out = io.StringIO()
    assert main(["formats", "--json"], out=out) == 0
    kinds = {row["kind"] for row in json.loads(out.getvalue()) if "hf" in row["names"]}
    assert kinds == {"reasoning", "tools"}
