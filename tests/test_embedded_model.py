"""The real embedded model: SmolLM2-135M in llama.cpp (xllamacpp), alone and behind the server.

Runs only with ``-m model`` (``.ci/run``'s model step, with ``CI=true``: a skip is a failure
there). One thread, fixed seeds, shapes asserted, not wording:

* the default model downloads into an empty cache and matches its sha256;
* through the server and the official ``openai`` client: ``tool_choice`` required and named give
  a call of an offered tool with schema-valid arguments; ``auto`` with a tool-asking prompt gives
  one (and the server sent the format's lazy GBNF grammar); thinking on gives reasoning, off (the
  template's default) gives the answer as content; a fixed seed gives the same answer twice;
* against the upstream directly: every shaped format's GBNF and Lark grammars are accepted by
  llama.cpp, and text generated under a sample of them parses back through trisect to valid
  calls; a trigger token llama.cpp rejects is recovered from; stop strings and cancellation.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.extras import require
from support.grammar_cases import SHAPED, proof_cases
from trisect import Parser, grammar
from trisect.serve import default_model
from trisect.serve.demo import EXAMPLE, LiveServer
from trisect.serve.upstream.base import CompletionPiece, CompletionRequest, Constraint
from trisect.serve.upstream.embedded import EmbeddedUpstream

# every test skips (a failure under CI=true: tests/conftest.py) without the [serve] extra; the
# skip is per test, not at import, so that the CI hook sees each one
pytestmark = [pytest.mark.model, pytest.mark.usefixtures("serve_extra")]


@pytest.fixture(scope="module")
def serve_extra() -> None:
    require("xllamacpp", "serve")


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the time in a timezone",
        "parameters": {
            "type": "object",
            "properties": {
                "timezone": {"type": "string", "enum": ["UTC", "CET", "JST"]},
                "hour24": {"type": "boolean"},
            },
            "required": ["timezone"],
        },
    },
}
TOOLS = [WEATHER, TIME]
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}  # the template's default, said anyway
THINKING = {"chat_template_kwargs": {"enable_thinking": True}}


def valid(args: Any, schema: dict[str, Any]) -> bool:
    """Arguments against the flat object schemas of these tests (closed objects)."""
    if not isinstance(args, dict) or not set(schema.get("required", ())) <= set(args):
        return False
    types = {"string": str, "boolean": bool, "integer": int, "number": (int, float)}
    for key, value in args.items():
        prop = schema["properties"].get(key)
        if prop is None or not isinstance(value, types[prop["type"]]):
            return False
        if "enum" in prop and value not in prop["enum"]:
            return False
    return True


def offered_call(message: Any, tools: list[dict[str, Any]] = TOOLS) -> list[tuple[str, Any]]:
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
    for name, args in calls:
        assert name in schemas, f"{name} was not offered"
        assert valid(args, schemas[name]), f"{name}{args} does not follow its schema"
    return calls


@pytest.fixture(scope="module")
def model_path() -> Path:
    try:
        return default_model.fetch()
    except default_model.ModelError as exc:
        pytest.skip(f"the default model cannot be fetched: {exc}")


@pytest.fixture(scope="module")
def live(model_path: Path) -> Iterator[Any]:
    with LiveServer(threads=1) as server:
        sent: list[CompletionRequest] = []
        complete = server.upstream.complete

        def spy(request: CompletionRequest) -> Any:
            sent.append(request)
            return complete(request)

        server.upstream.complete = spy  # type: ignore[method-assign]
        server.sent = sent
        yield server


@pytest.fixture(scope="module")
def client(live: Any) -> Any:
    import openai

    return openai.OpenAI(base_url=live.url, api_key="test", max_retries=0)


@pytest.fixture(scope="module")
def upstream(model_path: Path) -> Iterator[EmbeddedUpstream]:
    up = EmbeddedUpstream(model_path, threads=1, slots=1)
    yield up
    asyncio.run(up.aclose())


def collect(up: EmbeddedUpstream, request: CompletionRequest) -> list[CompletionPiece]:
    async def go() -> list[CompletionPiece]:
        return [p async for p in up.complete(request)]

    return asyncio.run(go())


# ---------------------------------------------------------------------------- the model file


def test_the_default_model_downloads_into_an_empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(default_model.CACHE_ENV, str(tmp_path))
    started = time.perf_counter()
    path = default_model.fetch()
    seconds = time.perf_counter() - started
    assert path == tmp_path / "models" / default_model.FILENAME and path.stat().st_size == default_model.GGUF_SIZE
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == default_model.GGUF_SHA256
    print(f"\nfetched the default model into an empty cache in {seconds:.1f} s")


# ---------------------------------------------------------------------------- through the server


def test_required_gives_a_valid_call_of_an_offered_tool(client: Any) -> None:
    answer = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[{"role": "user", "content": "What time is it in Tokyo?"}],
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,  # a 135M model asked for all calls lists every timezone it knows
        temperature=0.7,
        seed=1,
        max_tokens=120,
        extra_body=NO_THINKING,
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls" and offered_call(choice.message)


def test_required_with_thinking_reasons_first_then_calls(live: Any, client: Any) -> None:
    """Two phases: reasoning sampled freely up to ``</think>`` (a stop string the upstream
    matches and reports), then the call under trisect's GBNF from the first token."""
    before = len(live.sent)
    answer = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[*EXAMPLE, {"role": "user", "content": "And in Rome?"}],
        tools=[WEATHER],
        tool_choice="required",
        temperature=0,
        seed=0,
        max_tokens=150,
        extra_body=THINKING,
    )
    message = answer.choices[0].message
    assert (getattr(message, "reasoning", None) or "").strip()
    assert [name for name, _ in offered_call(message, [WEATHER])] == ["get_weather"]
    first, second = live.sent[before:]
    assert first.constraint is None and "</think>" in first.stop
    assert second.constraint is not None and second.constraint.kind == "gbnf" and not second.constraint.lazy


def test_named_gives_a_valid_call_of_that_tool(client: Any) -> None:
    answer = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[{"role": "user", "content": "Which timezone is Paris in?"}],
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_time"}},
        temperature=0.7,
        seed=2,
        max_tokens=80,
        extra_body=NO_THINKING,
    )
    calls = offered_call(answer.choices[0].message)
    assert [name for name, _ in calls] == ["get_time"]


def test_auto_with_a_tool_asking_prompt_calls_the_tool_through_the_lazy_grammar(live: Any, client: Any) -> None:
    stream = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[*EXAMPLE, {"role": "user", "content": "Is it raining in Berlin right now?"}],
        tools=[WEATHER],
        temperature=0,
        seed=0,
        max_tokens=160,
        stream=True,
        extra_body=THINKING,
    )
    reasoning, names, arguments, finish = "", [], "", None
    for chunk in stream:
        for choice in chunk.choices:
            reasoning += getattr(choice.delta, "reasoning", None) or ""
            for call in choice.delta.tool_calls or ():
                if call.function and call.function.name:
                    names.append(call.function.name)
                arguments += (call.function.arguments or "") if call.function else ""
            finish = choice.finish_reason or finish
    assert names == ["get_weather"] and valid(json.loads(arguments), WEATHER["function"]["parameters"])
    assert finish == "tool_calls" and reasoning.strip()
    constraint = live.sent[-1].constraint
    assert constraint is not None and constraint.kind == "gbnf" and constraint.triggers == ("<tool_call>",)


def test_thinking_on_gives_reasoning(client: Any) -> None:
    answer = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[{"role": "user", "content": "Is 17 a prime number?"}],
        temperature=0,
        seed=0,
        max_tokens=120,
        extra_body=THINKING,
    )
    message = answer.choices[0].message
    reasoning = getattr(message, "reasoning", None)
    assert isinstance(reasoning, str) and reasoning.strip()
    assert "<think>" not in reasoning and "</think>" not in reasoning and "</think>" not in (message.content or "")


def test_thinking_off_by_default_gives_content(client: Any) -> None:
    answer = client.chat.completions.create(
        model=default_model.MODEL_NAME,
        messages=[{"role": "user", "content": "Hi! Who are you?"}],
        temperature=0,
        seed=0,
        max_tokens=60,
    )
    message = answer.choices[0].message
    assert (message.content or "").strip() and not getattr(message, "reasoning", None)


def test_a_fixed_seed_gives_the_same_answer(client: Any) -> None:
    def ask(seed: int) -> tuple[str | None, str | None]:
        answer = client.chat.completions.create(
            model=default_model.MODEL_NAME,
            messages=[{"role": "user", "content": "Name a colour."}],
            temperature=1.0,
            seed=seed,
            max_tokens=24,
            extra_body=NO_THINKING,
        )
        return answer.choices[0].message.content, answer.choices[0].finish_reason

    first = ask(7)
    assert first[0] and ask(7) == first


def test_the_live_demo_shows_reasoning_content_and_the_call(model_path: Path) -> None:
    """``trisect demo --live`` (the README's first command), against the real server."""
    import io

    from trisect.serve.demo import run

    out = io.StringIO()
    assert run(threads=1, out=out, color=False) == 0
    shown = out.getvalue()
    assert "\n[reasoning] " in shown and "\n[tool_call #0] get_weather {" in shown, shown
    assert "finish_reason: tool_calls" in shown and "valid JSON arguments" in shown


# ---------------------------------------------------------------------------- the upstream


def test_every_shaped_format_has_grammars_llama_cpp_accepts(upstream: EmbeddedUpstream) -> None:
    """Each GBNF (lazy and from the first token) and Lark grammar is read by llama.cpp's own
    grammar engines (one token each: an invalid grammar is a 400 before sampling)."""
    for fmt in SHAPED:
        parser = Parser("qwen3", fmt)
        for choice in ("auto", "required"):
            g = grammar.gbnf(parser, TOOLS, tool_choice=choice, strict_level="function", reasoning=True)
            assert g is not None
            collect(
                upstream,
                CompletionRequest(prompt="Hi", max_tokens=1, constraint=Constraint("gbnf", g.text, g.triggers)),
            )
        lark = grammar.lark(parser, TOOLS, tool_choice="required", strict_level="function")
        assert lark is not None
        collect(upstream, CompletionRequest(prompt="Hi", max_tokens=1, constraint=Constraint("lark", lark.text)))


# one format per argument syntax: JSON envelope, JSON list, Kimi's ids, the XML styles
GENERATED = ["hermes", "granite", "llama3_json", "kimi_k2", "qwen3_coder", "glm47", "deepseek_v32", "minimax_m2"]


def example_call(fmt: str) -> tuple[str, list[dict[str, Any]]]:
    """A rendered case of the format that is only calls (from its first opener on), and its tools."""
    parser = Parser(None, fmt)
    for case, _parser, _tag in proof_cases(fmt):
        g = grammar.gbnf(parser, case["tools"] or None)
        assert g is not None
        found = [case["output"].index(t) for t in g.triggers if t in case["output"]]
        if not found or not case["tools"]:
            continue
        text = case["output"][min(found) :].rstrip()
        msg = parser.parse(text, tools=case["tools"])
        if len(msg.tool_calls) == 1 and not (msg.content or "").strip():
            return text, case["tools"]
    raise AssertionError(f"{fmt}: no case with one call only")


@pytest.mark.parametrize("fmt", GENERATED)
def test_generated_calls_parse_back_to_valid_calls(upstream: EmbeddedUpstream, fmt: str) -> None:
    """The format's call blocks (what its lazy grammar writes once triggered), forced from the
    first token after one example of the format: the real model's text parses back to a call of
    an offered tool whose arguments follow its schema."""
    parser = Parser(None, fmt)
    example, tools = example_call(fmt)
    g = grammar.gbnf(parser, tools, strict_level="function", parallel_tool_calls=False)
    assert g is not None
    prompt = (
        f"<|im_start|>user\nCall a tool.<|im_end|>\n<|im_start|>assistant\n{example}<|im_end|>\n"
        "<|im_start|>user\nWhat's the weather in Berlin?<|im_end|>\n<|im_start|>assistant\n"
    )
    pieces = collect(
        upstream,
        CompletionRequest(
            prompt=prompt, max_tokens=200, temperature=0.7, seed=3, constraint=Constraint("gbnf", g.text)
        ),
    )
    text = "".join(p.text for p in pieces)
    assert pieces[-1].finish_reason == "stop", f"{fmt}: the call did not finish: {text!r}"
    msg = parser.parse(text, tools=tools)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert len(msg.tool_calls) == 1 and not (msg.content or "").strip(), f"{fmt}: {text!r}"
    call = msg.tool_calls[0]
    args = json.loads(call.arguments)
    args = {k: v.strip() if isinstance(v, str) else v for k, v in args.items()}  # XML values keep spacing
    assert call.name in schemas and schema_valid(args, schemas[call.name]), f"{fmt}: {call} from {text!r}"


def schema_valid(args: Any, schema: dict[str, Any]) -> bool:
    """``args`` against a tool schema of the cases (required keys, declared types, enums; keys
    the schema does not declare are what the grammar closed out)."""
    if not isinstance(args, dict) or not set(schema.get("required", ())) <= set(args):
        return False
    types: dict[str, Any] = {"string": str, "boolean": bool, "integer": int, "number": (int, float), "object": dict}
    types.update(array=list, null=type(None))
    for key, value in args.items():
        prop = schema.get("properties", {}).get(key)
        if prop is None:
            return False
        declared = prop.get("type")
        kinds = declared if isinstance(declared, list) else [declared] if declared else []
        if kinds and not any(
            isinstance(value, types[k]) and not (k in ("integer", "number") and isinstance(value, bool)) for k in kinds
        ):
            return False
        if "enum" in prop and value not in prop["enum"]:
            return False
    return True


def test_a_rejected_trigger_token_is_recovered(upstream: EmbeddedUpstream) -> None:
    """Greedy SmolLM2 continues this prompt with `` <tool_call>,``, whose last token completes
    the trigger and carries a ``,`` the grammar forbids: llama.cpp rejects it and fails the
    request. The upstream continues under the grammar instead, and the call is well formed."""
    g = grammar.gbnf(Parser(None, "hermes"), [WEATHER], strict_level="function", parallel_tool_calls=False)
    assert g is not None
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    prompt = f"Paris weather: write <tool_call>, then {call}. Paris weather: write"
    bodies: list[dict[str, Any]] = []
    server = upstream._server
    original = server.handle_completions

    class Spy:
        listening_address = server.listening_address

        def handle_completions(self, body: dict[str, Any], callback: Any) -> Any:
            bodies.append(body)
            return original(body, callback)

    upstream._server = Spy()
    try:
        constraint = Constraint("gbnf", g.text, g.triggers)
        pieces = collect(
            upstream, CompletionRequest(prompt=prompt, max_tokens=80, temperature=0, constraint=constraint)
        )
    finally:
        upstream._server = server
    text = "".join(p.text for p in pieces)
    assert [b.get("grammar_lazy") for b in bodies] == [True, None], "the trigger token was not rejected here"
    msg = Parser(None, "hermes").parse(text, tools=[WEATHER])
    assert [c.name for c in msg.tool_calls] == ["get_weather"], text
    assert valid(json.loads(msg.tool_calls[0].arguments), WEATHER["function"]["parameters"])


def test_stop_strings_and_token_ids(upstream: EmbeddedUpstream) -> None:
    prompt = "<|im_start|>user\nCount from one to ten in words.<|im_end|>\n<|im_start|>assistant\n"
    free = collect(upstream, CompletionRequest(prompt=prompt, max_tokens=40, temperature=0))
    text = "".join(p.text for p in free)
    assert len(text) > 12, text
    stop = text[len(text) // 2 : len(text) // 2 + 3]  # a stop string that spans tokens or not, wherever it falls
    cut = text.index(stop)
    stopped = collect(upstream, CompletionRequest(prompt=prompt, max_tokens=40, temperature=0, stop=(stop,)))
    assert "".join(p.text for p in stopped) == text[:cut]
    assert stopped[-1].finish_reason == "stop" and stopped[-1].stop_reason == stop
    ids = [i for p in free for i in (p.token_ids or ())]
    last = free[-1]
    assert last.completion_tokens is not None
    assert len(ids) == last.completion_tokens - (last.finish_reason == "stop")  # every token but the EOS one
    assert 2 not in ids  # <|im_end|>, the end-of-generation token


def test_closing_the_stream_cancels_the_generation(upstream: EmbeddedUpstream) -> None:
    prompt = "<|im_start|>user\nWrite a very long story about a dragon.<|im_end|>\n<|im_start|>assistant\n"

    async def go() -> tuple[int, float]:
        stream = upstream.complete(
            CompletionRequest(prompt=prompt, max_tokens=2000, temperature=0, sampling={"ignore_eos": True})
        )
        count = 0
        async for piece in stream:
            count += bool(piece.text)
            if count == 5:
                break
        await stream.aclose()
        started = time.perf_counter()
        after = [p async for p in upstream.complete(CompletionRequest(prompt="Hi", max_tokens=4))]  # the slot is free
        assert after[-1].finish_reason is not None
        return count, time.perf_counter() - started

    count, seconds = asyncio.run(go())
    assert count == 5 and seconds < 30  # one slot: a generation still running would hold it for ~2000 tokens
    print(f"\nafter a cancel, the next request took {seconds:.2f} s")


def test_tokens_per_second(upstream: EmbeddedUpstream) -> None:
    """Measured, not asserted: prompt and generation speed on one thread."""
    prompt = (
        "<|im_start|>user\n"
        + "Summarise: the quick brown fox jumps over the lazy dog. " * 20
        + "<|im_end|>\n<|im_start|>assistant\n"
    )
    started = time.perf_counter()
    first = None

    async def go() -> list[CompletionPiece]:
        nonlocal first
        out = []
        async for piece in upstream.complete(
            CompletionRequest(prompt=prompt, max_tokens=128, temperature=0, sampling={"ignore_eos": True})
        ):
            if first is None and piece.text:
                first = time.perf_counter() - started
            out.append(piece)
        return out

    pieces = asyncio.run(go())
    total = time.perf_counter() - started
    tokens = pieces[-1].completion_tokens or 0
    assert tokens == 128 and first is not None
    print(
        f"\n1 thread: {pieces[-1].prompt_tokens} prompt tokens in {first:.2f} s to the first token "
        f"({(pieces[-1].prompt_tokens or 0) / first:.0f} tokens/s with the first one), "
        f"then {tokens - 1} tokens at {(tokens - 1) / (total - first):.0f} tokens/s"
    )
