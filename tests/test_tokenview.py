"""The token view (``Parser.is_reasoning_end`` / ``reasoning_tracker`` / ``content_token_ids`` /
``count_reasoning_tokens``) against the text view, on every case with a reasoning format and a
tokenizer, and on the multi-turn, nested and stray-marker shapes the text view never sees."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import cases, tokenizers
from support.cuts import marker_strings, of_ids
from support.work import lines_run
from trisect import Parser, RequestError
from trisect.testing import Case, engine_deltas

CASES = [d for d in cases.load_cases() if d.get("reasoning") and d.get("tokenizer")]


def _ends(values: list[bool]) -> list[int]:
    """Indexes where a view turns from 'reasoning' to 'ended'."""
    return [k for k in range(1, len(values)) if values[k] and not values[k - 1]]


def _token_view(data: dict) -> tuple[Case, Parser, list[int], dict, list[bool]]:
    """The case, its parser, ids and request, and whether a tracker fed the ids one by one has
    seen reasoning end, before each id and after the last."""
    case = cases.as_case(data)
    ids = case.ids()
    assert ids is not None
    parser = case.parser(with_tokenizer=True)
    request = case.request()
    tracker = parser.reasoning_tracker(**request)
    return case, parser, ids, request, [tracker.ended] + [tracker.feed([token_id]) for token_id in ids]


@cases.parametrize(CASES)
def test_token_view_ends_reasoning_where_the_text_view_does(data: dict) -> None:
    case, parser, ids, request, token_view = _token_view(data)
    stream = parser.stream(**request)
    text_view = [stream.reasoning_ended]
    for token_id in ids:
        stream.feed(None, [token_id])
        text_view.append(stream.reasoning_ended)
    assert text_view[0] == token_view[0], "initial state"
    assert _ends(token_view) == _ends(text_view), (text_view, token_view)
    assert token_view[-1] == text_view[-1]
    # the same with the text an engine's detokenizer sends next to each id
    stream = parser.stream(**request)
    with_text = [stream.reasoning_ended]
    for text, chunk in engine_deltas(case.tokenizer, ids, [1] * len(ids)):
        if chunk:
            stream.feed(text, chunk)
            with_text.append(stream.reasoning_ended)
    assert _ends(with_text) == _ends(token_view), (with_text, token_view)
    # the whole-sequence call agrees with the streaming one at the cuts (tests/support/cuts.py;
    # every prefix in the exhaustive suite's test below)
    at = of_ids(data, marker_strings(data["reasoning"], None))
    assert at is not None
    for k in sorted(at):
        assert parser.is_reasoning_end(ids[:k], **request) == token_view[k], k
    count = parser.count_reasoning_tokens(ids, **request)
    assert 0 <= count <= len(ids)
    content_ids = parser.content_token_ids(ids, **request)
    assert content_ids == (ids[len(ids) - len(content_ids) :] if content_ids else [])


@pytest.mark.exhaustive
@cases.parametrize(CASES)
def test_the_whole_sequence_view_agrees_at_every_prefix(data: dict) -> None:
    _case, parser, ids, request, view = _token_view(data)
    for k in range(len(ids) + 1):
        assert parser.is_reasoning_end(ids[:k], **request) == view[k], k


# the reasoning formats whose vocabulary is staged or synthesized (tests/support/tok_*.py)
TOKENIZED_FORMATS = {
    "deepseek_r1", "deepseek_v3", "holo2", "deepseek_v4", "deepseek_v41", "qwen3", "mimo", "seed_oss", "nemotron_v3",
    "glm45", "glm47", "ling3", "kimi_k2", "minimax_m2", "minimax_m2_append_think", "mistral", "gemma4", "granite",
    "ernie45", "hunyuan_a13b", "hy_v3", "olmo3", "step3", "step3p5", "cohere_command3", "cohere_command4", "identity",
}  # fmt: skip


def test_there_is_a_case_with_a_tokenizer_for_every_reasoning_format() -> None:
    names = {d["reasoning"] for d in CASES}
    assert TOKENIZED_FORMATS <= names


# ---------------------------------------------------------------------- targeted


def _qwen() -> Parser:
    return Parser("qwen3", tokenizer=tokenizers.load("qwen3"))


def enc(text: str) -> list[int]:
    return tokenizers.encode("qwen3", text)


def test_needs_a_tokenizer() -> None:
    with pytest.raises(RequestError):
        Parser("qwen3").is_reasoning_end([1, 2, 3])


def test_multi_turn_prompt_with_earlier_think_pairs() -> None:
    p = _qwen()
    history = (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nold\n</think>\n\nHello!<|im_end|>\n"
        "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
    )
    # the earlier pair is closed, but a new turn began: thinking (default on) is open again
    assert p.is_reasoning_end(enc(history)) is False
    assert p.is_reasoning_end(enc(history), chat_template_kwargs={"enable_thinking": False}) is True
    assert p.is_reasoning_end(enc(history + "<think>\nnew")) is False
    assert p.is_reasoning_end(enc(history + "<think>\nnew</think>\n\nSunny")) is True
    # the same history pre-filling '<think>\n' with thinking switched off: the prompt, given as
    # the prompt, decides; one list of ids alone carries no prompt, and with thinking off Qwen3's
    # markers are text (FormatSpec.plain_when_off): the switch decides
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    assert p.is_reasoning_end([], prompt_token_ids=enc(history + "<think>\n"), **off) is False
    assert p.is_reasoning_end(enc(history + "<think>\n"), **off) is True
    tracker = p.reasoning_tracker()
    assert tracker.feed(enc(history)) is False
    assert tracker.feed(enc("<think>\nabc")) is False
    assert tracker.feed(enc("</think>")) is True
    assert tracker.feed(enc("\n\nanswer")) is True


def test_output_only_uses_the_request_and_the_prompt() -> None:
    p = _qwen()
    out = enc("just an answer")
    assert p.is_reasoning_end(out) is False  # thinking on by default: still thinking
    assert p.is_reasoning_end(out, chat_template_kwargs={"enable_thinking": False}) is True
    closed = enc("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert p.is_reasoning_end(out, prompt_token_ids=closed) is True
    assert p.content_token_ids(out, prompt_token_ids=closed) == out
    assert p.content_token_ids(out) == []


def test_content_ids_and_count() -> None:
    p = _qwen()
    r, c = "Think about it.", "Done."
    ids = enc(f"<think>{r}</think>{c}")
    assert p.count_reasoning_tokens(ids) == len(enc(r))
    assert p.content_token_ids(ids) == enc(c)
    # the prompt pre-filled the start marker
    ids = enc(f"{r}</think>{c}")
    assert p.count_reasoning_tokens(ids) == len(enc(r))
    assert p.content_token_ids(ids) == enc(c)


def test_nested_and_stray_markers_never_count_negative() -> None:
    p = _qwen()
    a = enc("a")
    assert p.count_reasoning_tokens(enc("<think><think>a</think></think>x")) == len(a)
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    assert p.count_reasoning_tokens(enc("</think></think></think>x"), **off) == 0
    assert p.count_reasoning_tokens(enc("</think></think>x")) == 0
    assert p.count_reasoning_tokens(enc("<think></think>")) == 0
    # the duplicate end marker is absorbed: content starts after the first one
    ids = enc("<think>a</think>b</think>c")
    assert p.content_token_ids(ids) == enc("b</think>c")
    assert p.is_reasoning_end(ids) is True


def test_think_in_content_is_text_unless_the_format_opens_blocks_there() -> None:
    p = _qwen()
    ids = enc("<think>a</think>b") + tokenizers.encode_ordinary("qwen3", "<think>") + enc("c")
    assert p.is_reasoning_end(ids) is True  # qwen3: '<think>' written with ordinary tokens is text
    assert p.count_reasoning_tokens(ids) == len(enc("a"))
    ids = enc("<think>a</think>b<think>c")
    assert p.is_reasoning_end(ids) is False  # qwen3: the special token opens a second block
    assert p.count_reasoning_tokens(ids) == len(enc("a")) + len(enc("c"))
    kimi = Parser("kimi_k2", tokenizer=tokenizers.load("kimi_k2"))
    ids = tokenizers.encode("kimi_k2", "<think>a</think>b<think>c")
    assert kimi.is_reasoning_end(ids) is False  # kimi: a block may open in content
    assert kimi.reasoning_tracker().feed(ids) is False


def test_marker_written_with_ordinary_tokens_is_not_a_marker() -> None:
    p = _qwen()
    ids = enc("<think>see ") + tokenizers.encode_ordinary("qwen3", "</think>") + enc(" here")
    assert p.is_reasoning_end(ids) is False
    assert p.count_reasoning_tokens(ids) == len(ids) - 1


def test_text_markers_are_matched_in_decoded_text() -> None:
    g = Parser("granite", tokenizer=tokenizers.load("granite3"))
    r, c = "Paris is sunny.", "Sunny."
    ids = tokenizers.encode("granite3", f"Here's my thought process:\n{r}\nHere's my response:\n{c}")
    tracker = g.reasoning_tracker()
    values = [tracker.feed([t]) for t in ids]
    assert values[-1] is True and values.count(False) > 0
    assert g.is_reasoning_end(ids) is True
    n = g.count_reasoning_tokens(ids)
    assert 0 < n <= len(tokenizers.encode("granite3", f"\n{r}\n")) + 1
    content = tokenizers.decode("granite3", g.content_token_ids(ids))
    assert content.strip() == c


def test_tool_marker_that_ends_reasoning() -> None:
    kimi = Parser("kimi_k2", tokenizer=tokenizers.load("kimi_k2"))
    ids = tokenizers.encode("kimi_k2", "<think>need a tool<|tool_calls_section_begin|><|tool_call_begin|>x")
    assert kimi.is_reasoning_end(ids) is True
    assert kimi.count_reasoning_tokens(ids) == len(tokenizers.encode("kimi_k2", "need a tool"))


def test_streaming_cost_is_per_new_id() -> None:
    """Feeding ids one by one to a tracker never rescans: a 100x longer stream costs 100x the work
    (lines of trisect run, counted: the same on a busy machine as on an idle one)."""
    p = _qwen()
    unit = enc("<think>" + "word " * 50)

    def run(n: int) -> int:
        tracker = p.reasoning_tracker()

        def feed() -> None:
            for _ in range(n):
                for t in unit:
                    tracker.feed((t,))

        return lines_run(feed)

    small, big = run(5), run(500)
    assert small > 0 and big <= small * 100 * 1.01


# ---------------------------------------------------------------------- random marker soups

SOUPS = {
    # format: (tokenizer, pieces the model may emit: markers and ordinary text)
    "qwen3": ("qwen3", ["<think>", "</think>", "<tool_call>", "a", " b", "\n", "é", "日本"]),
    "deepseek_r1": ("deepseek_v3", ["<think>", "</think>", "x", " y", "\n\n", "😀"]),
    "kimi_k2": ("kimi_k2", ["<think>", "</think>", "<|tool_calls_section_begin|>", "a", " b", "\n"]),
    "mistral": ("magistral", ["[THINK]", "[/THINK]", "[TOOL_CALLS]", "a", " b", "\n"]),
    "gemma4": ("gemma4", ["<|channel>", "<channel|>", "thought\n", "a", " b", "\n"]),
    "granite": ("granite3", ["Here's my thought process:", "Here is my response:", "Here", " my", "a", "\n"]),
    "olmo3": ("olmo3", ["<think>", "</think>", "<", "think", ">", "a", "\n"]),
    "hunyuan_a13b": ("hunyuan_a13b", ["<think>", "</think>", "<answer>", "</answer>", "a", "\n"]),
    "nemotron_v3": ("nemotron_v3", ["<think>", "</think>", "a", " b"]),
    "step3": ("step3", ["<think>", "</think>", "a", " b"]),
}
SOUP_OPTIONS = [{}, {"chat_template_kwargs": {"enable_thinking": False}}, {"chat_template_kwargs": {"thinking": False}}]


@pytest.mark.parametrize("fmt", sorted(SOUPS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_marker_soups_agree_and_never_count_negative(fmt: str, data: st.DataObject) -> None:
    tok, pieces = SOUPS[fmt]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=14)))
    options = data.draw(st.sampled_from(SOUP_OPTIONS))
    parser = Parser(fmt, tokenizer=tokenizers.load(tok))
    ids = tokenizers.encode(tok, text)
    stream = parser.stream(**options)
    tracker = parser.reasoning_tracker(**options)
    text_view, token_view = [stream.reasoning_ended], [tracker.ended]
    for token_id in ids:
        stream.feed(None, [token_id])
        text_view.append(stream.reasoning_ended)
        token_view.append(tracker.feed([token_id]))
    assert _ends(token_view) == _ends(text_view), (text, text_view, token_view)
    assert token_view[-1] == text_view[-1] and token_view[0] == text_view[0]
    assert parser.is_reasoning_end(ids, **options) == token_view[-1]
    assert 0 <= parser.count_reasoning_tokens(ids, **options) <= len(ids)


@cases.parametrize(CASES)
def test_a_copy_probes_ids_without_moving_its_original(data: dict) -> None:
    """``tracker.copy()`` fed the rest of the ids ends where the whole sequence does, and the
    tracker it was copied from stays where it was (what engines' speculative probes rely on:
    the plugins feed a copy the pending ids instead of re-reading the whole output)."""
    case = cases.as_case(data)
    ids = case.ids()
    assert ids is not None
    parser = case.parser(with_tokenizer=True)
    request = case.request()
    whole = parser.is_reasoning_end(ids, **request)
    tracker = parser.reasoning_tracker(**request)
    step = max(1, len(ids) // 8)
    for k in range(len(ids) + 1):
        if k % step == 0 or k == len(ids):
            before = (tracker.ended, tracker.reasoning_tokens, tracker.content_start)
            assert tracker.copy().feed(ids[k:]) == whole, k
            assert (tracker.ended, tracker.reasoning_tokens, tracker.content_start) == before, k
        if k < len(ids):
            tracker.feed([ids[k]])


def test_channel_formats_track_with_the_engine_and_copy_it() -> None:
    """The copy test above reaches the engine-backed tracker too (channel formats)."""
    kinds = set()
    for data in CASES:
        case = cases.as_case(data)
        kinds.add(type(case.parser(with_tokenizer=True).reasoning_tracker(**case.request())).__name__)
    assert {"ReasoningTracker", "EngineTracker"} <= kinds, kinds
