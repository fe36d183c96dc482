"""The OpenAI response layer (trisect.chat): every object validates against the official
``openai`` types, and a stream folded by the client's own accumulation
(``openai.lib.streaming.chat.ChatCompletionStreamState``) equals the non-streaming response."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from support import tokenizers as tk
from trisect import Parser
from trisect.chat import ChatStream, chat_completion, make_call_id, resolve_finish_reason
from trisect.formats import tool_format
from trisect.openai.call_ids import CallIds
from trisect.request.choice import keeps_native_markers
from trisect.request.tokenview import ReasoningTokens


def _tool(name: str, props: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


TOOLS = [_tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}), _tool("get_time", {})]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {})]
REQUIRED_OUT = (
    '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, {"name": "get_time", "parameters": {}}]'
)
NAMED_OUT = '{"city": "Paris", "days": 3}'


def _registered(fmt: str) -> bool:
    try:
        tool_format(fmt)
    except Exception:  # noqa: BLE001 - a format another engineer has not landed yet
        return False
    return True


# family -> (reasoning, tools, output with reasoning "plan", content "Sure." and CALLS)
FAMILIES = {
    "json": (
        "qwen3",
        "hermes",
        '<think>\nplan\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", '
        '"days": 3}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
    ),
    "xml": (
        "qwen3",
        "qwen3_coder",
        "<think>\nplan\n</think>\n\nSure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
        "<function=get_time>\n</function>\n</tool_call>",
    ),
    "pythonic": (
        None,
        "pythonic",
        "Sure. [get_weather(city='Paris', days=3), get_time()]",
    ),
    "harmony": (
        "openai_gptoss",
        "openai",
        "<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>commentary<|message|>Sure.<|end|>"
        '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris", "days": 3}'
        "<|call|><|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>",
    ),
}


HARMONY_CALL = (
    '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris", "days": 3}'
    "<|call|>"
)
NATIVE_CONSTRAINED = {
    "harmony": {
        "required": "<|channel|>analysis<|message|>plan<|end|>"
        + HARMONY_CALL
        + "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>",
        "named": "<|channel|>analysis<|message|>plan<|end|>" + HARMONY_CALL,
    }
}


def parser_tool_spec(parser: Parser):
    return tool_format(parser.tools)


def _family(name: str) -> tuple[Parser, str, str | None]:
    reasoning, fmt, output = FAMILIES[name]
    if not _registered(fmt):
        pytest.skip(f"format {fmt} is not registered yet")
    return Parser(reasoning, fmt), output, ("plan" if reasoning else None)


def _stream(parser: Parser, output: str, pieces: list[str], finish: str = "stop", **options) -> list[dict]:
    chat = ChatStream(parser, id="chatcmpl-1", model="m", created=1, tool_call_id="kimi", **options)
    chunks: list[dict] = []
    for piece in pieces:
        chunks += chat.feed(piece)
    chunks += chat.finish(finish)
    return chunks


def _fold(chunks: list[dict], tools=None) -> tuple[dict, str | None]:
    """The openai client's own accumulation of a stream."""
    state = ChatCompletionStreamState() if tools is None else ChatCompletionStreamState(input_tools=tools)
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    # the accumulated snapshot: get_final_completion() raises on "length" / "content_filter"
    final = state.current_completion_snapshot
    return _message(final.choices[0].message.model_dump()), final.choices[0].finish_reason


def _args(call: dict) -> object:
    try:
        return json.loads(call["function"]["arguments"])
    except ValueError:  # a call cut off mid-stream (finish_reason "length")
        return call["function"]["arguments"]


def _message(message: dict) -> dict:
    calls = [
        {
            "id": c["id"],
            "type": c["type"],
            "name": c["function"]["name"],
            "arguments": _args(c),
        }
        for c in message.get("tool_calls") or []
    ]
    return {"content": message.get("content"), "reasoning": message.get("reasoning"), "tool_calls": calls}


def _completion(parser: Parser, output: str, finish: str = "stop", **options) -> tuple[dict, str]:
    whole = chat_completion(
        parser, output, id="chatcmpl-1", model="m", created=1, tool_call_id="kimi", finish_reason=finish, **options
    )
    validated = ChatCompletion.model_validate(whole)
    return _message(validated.choices[0].message.model_dump()), validated.choices[0].finish_reason


def _check_chunk_rules(chunks: list[dict], *, first_delta_only: bool = True) -> None:
    assert chunks[0]["choices"][0]["delta"].get("role") == "assistant"
    seen: dict[int, str] = {}
    for k, chunk in enumerate(chunks):
        ChatCompletionChunk.model_validate(chunk)
        assert chunk["object"] == "chat.completion.chunk"
        if not chunk["choices"]:
            continue
        choice = chunk["choices"][0]
        final = choice["finish_reason"] is not None
        assert final == (k == len(chunks) - 1 or not chunks[-1]["choices"] and k == len(chunks) - 2)
        delta = choice["delta"]
        if k and not final:
            assert delta, f"empty chunk {k}"
        for piece in delta.get("tool_calls", ()):
            assert "index" in piece
            if piece["index"] not in seen:
                assert piece["id"] and piece["type"] == "function" and piece["function"]["name"]
                seen[piece["index"]] = piece["id"]
            else:
                assert "name" not in piece["function"]
                if first_delta_only:
                    assert "id" not in piece and "type" not in piece
                else:
                    assert piece["id"] == seen[piece["index"]] and piece["type"] == "function"


def _expected(name: str, choice) -> tuple[dict, str]:
    _, _, reasoning = FAMILIES[name][0], None, ("plan" if FAMILIES[name][0] else None)
    ids = [f"functions.{n}:{i}" for i, (n, _a) in enumerate(CALLS)]
    calls = [{"id": i, "type": "function", "name": n, "arguments": a} for i, (n, a) in zip(ids, CALLS, strict=True)]
    if choice == "none":
        return {"content": None, "reasoning": reasoning, "tool_calls": []}, "stop"
    if choice == "named":
        return {"content": None, "reasoning": reasoning, "tool_calls": calls[:1]}, "stop"
    content = "Sure." if choice == "auto" else None
    return {"content": content, "reasoning": reasoning, "tool_calls": calls}, "tool_calls"


CHOICES = {"auto": "auto", "none": "none", "required": "required", "named": NAMED}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("choice", sorted(CHOICES))
@pytest.mark.parametrize("split", ["whole", "per-char"])
def test_every_tool_choice_streamed_and_whole(family: str, choice: str, split: str) -> None:
    parser, native, _reasoning = _family(family)
    output = native
    if choice in ("required", "named") and keeps_native_markers(parser_tool_spec(parser)):
        # the model keeps its own markers under constraint (Harmony): the calls, no text
        output = NATIVE_CONSTRAINED[family][choice]
    elif choice in ("required", "named"):
        prefix = native[: native.index("Sure.")] if FAMILIES[family][0] else ""
        output = prefix + (REQUIRED_OUT if choice == "required" else NAMED_OUT)
    options = {"tools": TOOLS, "tool_choice": CHOICES[choice]}
    pieces = [output] if split == "whole" else list(output)
    chunks = _stream(parser, output, pieces, **options)
    _check_chunk_rules(chunks)
    streamed, stream_reason = _fold(chunks)
    whole, whole_reason = _completion(parser, output, **options)
    assert streamed == whole
    assert stream_reason == whole_reason
    expected, reason = _expected(family, choice)
    if choice == "none":  # the markers stay text, in content (#42747)
        assert whole["tool_calls"] == [] and whole["content"]
        whole = {**whole, "content": None}
    assert (whole, whole_reason) == (expected, reason)


# ---------------------------------------------------------------------------- finish_reason


HERMES = Parser("qwen3", "hermes")
CUT_IN_CALL = '<think>\nx\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
ONE_CALL = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'


@pytest.mark.parametrize(
    ("output", "engine", "options", "reason"),
    [
        ("Hello.", "stop", {}, "stop"),
        (ONE_CALL, "stop", {}, "tool_calls"),
        (ONE_CALL, "length", {}, "length"),
        (CUT_IN_CALL, "length", {}, "length"),  # #47903: a call cut by max_tokens is not tool_calls
        ("Hello.", "length", {}, "length"),
        (ONE_CALL, "stop", {"tool_choice": "none"}, "stop"),  # #42747
        ('{"city": "Paris"}', "stop", {"tool_choice": NAMED}, "stop"),  # OpenAI: a named choice stops
        ('{"city": "Par', "length", {"tool_choice": NAMED}, "length"),
        ('[{"name": "get_time", "parameters": {}}]', "stop", {"tool_choice": "required"}, "tool_calls"),
        (ONE_CALL, "content_filter", {}, "content_filter"),
    ],
)
@pytest.mark.parametrize("split", ["whole", "per-char"])
def test_finish_reason(output: str, engine: str, options: dict, reason: str, split: str) -> None:
    pieces = [output] if split == "whole" else list(output)
    options = {**options, "chat_template_kwargs": {"enable_thinking": False}}
    chunks = _stream(HERMES, output, pieces, engine, tools=TOOLS, **options)
    _check_chunk_rules(chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == reason
    assert _fold(chunks)[1] == reason
    assert _completion(HERMES, output, engine, tools=TOOLS, **options)[1] == reason


def test_resolve_finish_reason() -> None:
    assert resolve_finish_reason(None, tool_calls=False, named=False) == "stop"
    assert resolve_finish_reason("stop", tool_calls=True, named=False) == "tool_calls"
    assert resolve_finish_reason("stop", tool_calls=True, named=True) == "stop"
    assert resolve_finish_reason("length", tool_calls=True, named=False) == "length"


def test_cut_inside_a_call_has_no_tool_calls_in_the_whole_response() -> None:
    whole = chat_completion(HERMES, CUT_IN_CALL, finish_reason="length", tools=TOOLS)
    assert "tool_calls" not in whole["choices"][0]["message"]
    assert whole["choices"][0]["finish_reason"] == "length"


# ---------------------------------------------------------------------------- chunk rules


def test_repeat_tool_call_ids_on_every_delta() -> None:
    """#42696: strict clients validate every chunk on its own."""
    _reasoning, _fmt, output = FAMILIES["json"]
    chat = ChatStream(HERMES, repeat_tool_call_ids=True, tools=TOOLS)
    chunks = [c for ch in output for c in chat.feed(ch)] + chat.finish()
    _check_chunk_rules(chunks, first_delta_only=False)
    deltas = [p for c in chunks for p in c["choices"][0]["delta"].get("tool_calls", ())]
    assert len(deltas) > 4 and all("id" in p and p["type"] == "function" for p in deltas)


def test_no_chunk_for_held_back_text_but_the_final_one() -> None:
    chat = ChatStream(HERMES, tools=TOOLS, chat_template_kwargs={"enable_thinking": False})
    first = chat.feed("Hi <tool")
    assert [c["choices"][0]["delta"] for c in first] == [{"role": "assistant", "content": "Hi"}]
    assert chat.feed("_ca") == []
    final = chat.finish()
    assert final[-1]["choices"][0]["delta"] == {"content": " <tool_ca"}
    assert final[-1]["choices"][0]["finish_reason"] == "stop"


def test_role_alone_when_the_first_delta_says_nothing() -> None:
    chat = ChatStream(HERMES, tools=TOOLS)
    assert chat.feed("<thi")[0]["choices"][0]["delta"] == {"role": "assistant"}


# ---------------------------------------------------------------------------- hidden reasoning


SECRET = "the secret plan is zebra-42"


def _token_chunks(include_reasoning: bool, *, continuous: bool = False) -> tuple[list[dict], list[int], dict]:
    parser = Parser("qwen3", "hermes", tokenizer=tk.load("qwen3"))
    output = f"<think>\n{SECRET}\n</think>\n\nSure.{ONE_CALL}"
    ids = tk.encode("qwen3", output)
    chat = ChatStream(
        parser,
        tools=TOOLS,
        include_reasoning=include_reasoning,
        return_token_ids=True,
        include_usage=True,
        continuous_usage=continuous,
        prompt_tokens=7,
    )
    chunks: list[dict] = []
    for token_id in ids:
        text = tk.decode("qwen3", [token_id])
        logprob = {"token": text, "bytes": list(text.encode()), "logprob": -0.5, "top_logprobs": []}
        chunks += chat.feed(None, [token_id], logprobs=[logprob])
    chunks += chat.finish()
    whole = chat_completion(
        parser,
        None,
        token_ids=ids,
        tools=TOOLS,
        include_reasoning=include_reasoning,
        return_token_ids=True,
        prompt_tokens=7,
        logprobs=[{"token": "x", "bytes": [120], "logprob": -1.0, "top_logprobs": []}] * len(ids),
    )
    return chunks, ids, whole


def test_hidden_reasoning_leaks_through_no_field() -> None:
    chunks, ids, whole = _token_chunks(include_reasoning=False)
    secret_ids = tk.encode("qwen3", f"\n{SECRET}\n")
    for obj in [*chunks, whole]:
        text = json.dumps(obj, ensure_ascii=False)
        assert "secret" not in text and "zebra" not in text
        assert "reasoning" not in text.replace("reasoning_tokens", "")
        assert "token_ids" not in text and '"logprobs": null' in text or not obj["choices"]
        numbers = {int(n) for n in re.findall(r"\b\d+\b", text)}
        assert not (set(secret_ids) - {0, 1, 7}) & numbers
    folded, _reason = _fold(chunks)
    assert folded["content"] == "Sure." and folded["reasoning"] is None and len(folded["tool_calls"]) == 1
    ChatCompletion.model_validate(whole)
    assert whole["choices"][0]["logprobs"] is None and "reasoning" not in whole["choices"][0]["message"]


def test_shown_reasoning_keeps_logprobs_and_token_ids() -> None:
    chunks, ids, whole = _token_chunks(include_reasoning=True)
    sent_ids = [i for c in chunks for ch in c["choices"] for i in ch.get("token_ids", ())]
    assert sent_ids == ids
    lps = [lp for c in chunks for ch in c["choices"] if ch["logprobs"] for lp in ch["logprobs"]["content"]]
    assert len(lps) == len(ids)
    assert _fold(chunks)[0]["reasoning"] == SECRET
    assert whole["choices"][0]["token_ids"] == ids and len(whole["choices"][0]["logprobs"]["content"]) == len(ids)


@pytest.mark.parametrize("include_reasoning", [True, False])
def test_usage_counts_reasoning_tokens_without_markers(include_reasoning: bool) -> None:
    chunks, ids, whole = _token_chunks(include_reasoning)
    expected = len(tk.encode("qwen3", f"\n{SECRET}\n"))
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    assert usage["completion_tokens_details"]["reasoning_tokens"] == expected
    assert usage["completion_tokens"] == len(ids) and usage["prompt_tokens"] == 7
    assert usage["total_tokens"] == 7 + len(ids)
    assert whole["usage"] == usage


def test_continuous_usage_on_every_chunk() -> None:
    chunks, ids, _whole = _token_chunks(True, continuous=True)
    counts = [c["usage"]["completion_tokens"] for c in chunks]
    assert all("usage" in c for c in chunks) and counts == sorted(counts) and counts[-1] == len(ids)
    reasoning = [c["usage"]["completion_tokens_details"]["reasoning_tokens"] for c in chunks]
    assert reasoning == sorted(reasoning) and reasoning[-1] == len(tk.encode("qwen3", f"\n{SECRET}\n"))


def test_reasoning_tokens_without_a_tokenizer_count_deltas_inside_reasoning() -> None:
    chat = ChatStream(HERMES, tools=TOOLS)
    chat.feed("<think>\nab", [1, 2, 3])
    chat.feed("cd", [4, 5])
    chat.feed("</think>ok", [6, 7])
    chat.finish()
    assert chat.usage()["completion_tokens_details"]["reasoning_tokens"] == 5
    assert chat.usage()["completion_tokens"] == 7


def test_reasoning_tokens_without_a_tokenizer_in_a_block_opened_mid_output() -> None:
    """The deltas that cross ``[THINK]`` and ``[/THINK]`` carry markers: not counted; the count
    is right whenever it is read."""
    chat = ChatStream(Parser("mistral"))
    counts = []
    for text, ids in [("Hi ", [1]), ("[THINK]x", [2, 3]), ("yz", [4, 5]), ("w", [6]), ("[/THINK]ok", [7]), ("!", [8])]:
        chat.feed(text, ids)
        counts.append(chat.reasoning_tokens)
    chat.finish()
    assert counts == [0, 0, 2, 3, 3, 3] and chat.reasoning_tokens == 3


def test_the_token_view_counts_a_stream_without_a_tokenizer() -> None:
    """``ReasoningTokens`` (the token view) is what ``ChatStream`` reads: the same rule over the
    engine stream alone, read at any point."""
    stream = Parser("mistral").stream().engine
    tokens = ReasoningTokens(stream, None)
    counts = []
    for text, ids in [("Hi ", [1]), ("[THINK]x", [2, 3]), ("yz", [4, 5]), ("w", [6]), ("[/THINK]ok", [7])]:
        stream.feed(text, ids)
        tokens.fed(ids)
        counts.append(tokens.count)
    assert counts == [0, 0, 2, 3, 3]


# ---------------------------------------------------------------------------- call ids


def test_call_ids_replace_only_the_ids_the_model_did_not_write() -> None:
    ids = CallIds("kimi", history_tool_calls=2)
    assert ids.first(0, ids.mint(0), "get_time") == "functions.get_time:2"
    assert ids.first(1, "model_written", "get_time") == "model_written"
    assert (ids.sent(0), ids.sent(1), ids.sent(2)) == ("functions.get_time:2", "model_written", None)
    with pytest.raises(ValueError, match="tool_call_id"):
        CallIds("uuid")


def test_tool_call_id_styles() -> None:
    assert make_call_id("kimi", 1, "get_time", history_tool_calls=4) == "functions.get_time:5"
    assert re.fullmatch(r"[A-Za-z0-9]{9}", make_call_id("mistral", 0, "f"))
    assert re.fullmatch(r"call_[0-9a-f]{24}", make_call_id("random", 0, "f"))
    with pytest.raises(ValueError):
        make_call_id("uuid", 0, "f")
    for style, pattern in [
        ("mistral", r"[A-Za-z0-9]{9}"),
        ("random", r"call_[0-9a-f]{24}"),
        ("kimi", r"functions\.get_time:0"),
    ]:
        whole = chat_completion(HERMES, ONE_CALL, tools=TOOLS, tool_call_id=style)
        assert re.fullmatch(pattern, whole["choices"][0]["message"]["tool_calls"][0]["id"])


def test_caller_id_factory_wins_over_the_style() -> None:
    whole = chat_completion(HERMES, ONE_CALL, tools=TOOLS, tool_call_id="kimi", id_factory=lambda i: f"mine-{i}")
    assert whole["choices"][0]["message"]["tool_calls"][0]["id"] == "mine-0"


def test_parallel_tool_calls_false_in_the_response() -> None:
    _r, _f, output = FAMILIES["json"]
    chunks = _stream(HERMES, output, list(output), tools=TOOLS, parallel_tool_calls=False)
    folded, reason = _fold(chunks)
    whole, whole_reason = _completion(HERMES, output, tools=TOOLS, parallel_tool_calls=False)
    assert folded == whole and [c["name"] for c in whole["tool_calls"]] == ["get_weather"]
    assert reason == whole_reason == "tool_calls"


def test_strict_tools_fold_with_parsed_arguments() -> None:
    """The client parses arguments of strict tools as they stream (partial JSON): ours stay valid."""
    tools = [{**t, "function": {**t["function"], "strict": True}} for t in TOOLS]
    _r, _f, output = FAMILIES["json"]
    chunks = _stream(HERMES, output, list(output), tools=tools)
    folded, _reason = _fold(chunks, tools=tools)
    assert [c["arguments"] for c in folded["tool_calls"]] == [a for _n, a in CALLS]


def test_atomic_tool_calls_never_show_a_call_that_is_cut_off() -> None:
    chat = ChatStream(HERMES, tools=TOOLS, atomic_tool_calls=True, chat_template_kwargs={"enable_thinking": False})
    chunks = [c for ch in CUT_IN_CALL for c in chat.feed(ch)] + chat.finish("length")
    assert not any("tool_calls" in c["choices"][0]["delta"] for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    folded, _reason = _fold(chunks)
    assert folded["tool_calls"] == [] and "<tool_call>" not in folded["content"]  # a cut-off call is not content


def test_include_reasoning_false_with_every_tool_choice() -> None:
    for choice, output in [("none", ONE_CALL), ("required", '[{"name": "get_time", "parameters": {}}]')]:
        text = "<think>\nhidden thoughts\n</think>\n\n" + output
        chunks = _stream(HERMES, text, list(text), tools=TOOLS, tool_choice=choice, include_reasoning=False)
        assert "hidden" not in json.dumps(chunks)
        whole = chat_completion(HERMES, text, tools=TOOLS, tool_choice=choice, include_reasoning=False)
        assert "hidden" not in json.dumps(whole)
        assert _fold(chunks)[0]["content"] == ("<tool_call>" in output and output or None)


# ---------------------------------------------------------------------------- layer hygiene


def test_the_openai_layer_uses_only_public_members() -> None:
    """The layer is a fold over the public API: no ``other._private`` and no private imports
    (``self._x`` of its own classes is fine)."""
    package = Path(__file__).resolve().parent.parent / "src" / "trisect" / "openai"
    found = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    found.append(f"{path.name}:{node.lineno}: .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.level:
                found += [f"{path.name}:{node.lineno}: import {a.name}" for a in node.names if a.name.startswith("_")]
    assert not found, found


def test_completion_tokens_are_the_ids_fed_unless_the_caller_counts() -> None:
    chat = ChatStream(HERMES, tools=TOOLS)
    chat.feed("Hel", [1, 2])
    chat.feed("lo", [3])
    assert chat.completion_tokens == 3
    chat.finish(completion_tokens=10)
    assert chat.usage()["completion_tokens"] == 10 and chat.usage()["total_tokens"] == 10


def test_the_token_view_count_is_exact_across_its_batches() -> None:
    """With a tokenizer the token view counts; it reads the ids in batches, so a count read at
    any point (continuous usage) must equal the count of the ids fed so far."""
    parser = Parser("qwen3", "hermes", tokenizer=tk.load("qwen3"))
    output = "<think>\n" + "word " * 700 + "\n</think>\n\nDone."
    ids = tk.encode("qwen3", output)
    chat = ChatStream(parser, tools=TOOLS)
    for k, token_id in enumerate(ids, 1):
        chat.feed(None, [token_id])
        if k % 97 == 0 or k == len(ids):
            assert chat.reasoning_tokens == parser.count_reasoning_tokens(ids[:k], tools=TOOLS)
    assert chat.reasoning_tokens == len(tk.encode("qwen3", "\n" + "word " * 700 + "\n"))
