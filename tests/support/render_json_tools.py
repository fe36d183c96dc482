"""Generate tests/cases/<format>/*.jsonl for the JSON-bodied tool-call formats.

Run from anywhere: ``python tests/support/render_json_tools.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed.

Outputs come from the family's real chat template where one exists (``rt`` in a case id: the
assistant message rendered after the generation prompt, up to the end-of-turn token, as in
``render_cases.py``), from the family's documents (``doc``), or are written by hand in the
exact spelling the template or document shows (``hand``), for what no template can produce:
text between calls, numbers written a particular way, malformed and truncated calls. Expected
values are the message that was rendered, or follow the rules in ``render_cases.py`` and
``docs/CONTRIBUTING-FORMATS.md``; they were never taken from running trisect.

Malformed calls (ids with ``-malformed-``): the call's own text, from the marker that opened it
to where its JSON broke, is content, and what follows is read again; markers that frame a list
of calls (``[TOOL_CALLS][`` … ``]``, ``<|tool_call|>[``) are envelope and never content.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if __name__ == "__main__":
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(TESTS))

from support import casefile  # noqa: E402
from support import tokenizers as tk  # noqa: E402
from support.render_cases import (  # noqa: E402
    _ENV,
    BOOK_FLIGHT,
    CONFIGURE,
    GET_JOKE,
    GET_TIME,
    GET_WEATHER,
    SEARCH,
    WRITE_FILE,
    Book,
    call,
    generated,
    joined,
    render,
)

TOOLS = [GET_WEATHER, GET_TIME, GET_JOKE, SEARCH, BOOK_FLIGHT, WRITE_FILE, CONFIGURE]
USER = {"role": "user", "content": "What's the weather like in Paris today?"}

PARIS = {"location": "Paris", "unit": "celsius"}
BERLIN = {"location": "Berlin"}
UTC = {"timezone": "UTC"}
UNICODE = {"location": "München 東京 😀", "unit": "celsius"}
NESTED = {
    "flight": {"from": "CDG", "to": "NRT", "legs": [{"n": 1, "via": None}, {"n": 2, "via": "HEL"}]},
    "passenger": {"name": "Zoë", "age": 31},
}
NUMBERS_TEXT = '{"count": 12345678901234567890, "ratio": 1.50e-3, "level": -0, "options": {"x": 1E+2}}'
NUMBERS = json.loads(NUMBERS_TEXT)


def tc(name: str, arguments: Any, id: str | None = None) -> dict[str, Any]:
    """An OpenAI-style tool call as chat templates take it."""
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id is not None:
        out["id"] = id
    return out


def exp(name: str, arguments: dict[str, Any], text: str | None = None, id: str | None = None) -> dict[str, Any]:
    out = call(name, arguments)
    if text is not None:
        out["arguments_text"] = text
    if id is not None:
        out["id"] = id
    return out


def j(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False)


def assistant(content: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = calls
    return msg


# --------------------------------------------------------------------------------------
# Shared scenarios: each format gives its wire spelling of a block of calls
# --------------------------------------------------------------------------------------


class Family:
    """How one format writes calls, for the hand-written cases."""

    def __init__(
        self,
        book: Book,
        prefix: str,
        block: Callable[[list[tuple[str, str]]], str],
        *,
        tokenizer: str | None,
        source: str,
        inner_marker: str,
        inner_ids: Callable[[str], list[int]] | None = None,
    ) -> None:
        self.b = book
        self.p = prefix
        self.block = block  # [(name, arguments JSON text)] -> the output text of those calls
        self.tok = tokenizer
        self.src = source
        self.inner_marker = inner_marker  # a marker of the format to put inside a string value
        self.inner_ids = inner_ids  # token ids of that case, where the family encodes it its own way

    def add(self, slug: str, how: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        kw.setdefault("tokenizer", self.tok)
        self.b.add(f"{self.p}-{slug}", f"{how} ({self.src})", output, **kw)

    def mention(self, ordinary: Callable[[str], list[int]]) -> None:
        """The family's own call block, written by the model as ordinary tokens (prose quoting
        the format): with ids it is content; as text alone it would be a call (``ids_only``)."""
        out = "The format looks like " + self.block([("get_time", j(UTC))]) + " in a reply."
        self.add(
            "hand-ids-markers-as-ordinary-tokens",
            "hand: the markers spelled with ordinary tokens are text",
            out,
            content=out,
            token_ids=ordinary(out),
            ids_only=True,
        )

    def common(self) -> None:
        blk = self.block
        paris = exp("get_weather", PARIS)
        self.add(
            "hand-content-between-and-after",
            "hand: text before, between and after two blocks",
            "Checking Paris.\n"
            + blk([("get_weather", j(PARIS))])
            + "\nNow the time.\n"
            + blk([("get_time", j(UTC))])
            + "\nDone.",
            content=joined("Checking Paris.\n", "\nNow the time.\n", "\nDone."),
            tool_calls=[paris, exp("get_time", UTC)],
        )
        self.add(
            "hand-numbers-as-written",
            "hand: exponents, a big integer and -0 kept exactly as written",
            blk([("configure", NUMBERS_TEXT)]),
            tool_calls=[exp("configure", NUMBERS, NUMBERS_TEXT)],
        )
        self.add(
            "hand-unicode-escapes-kept",
            "hand: \\u escapes in a string argument stay as the model wrote them",
            blk([("get_weather", '{"location": "M\\u00fcnchen"}')]),
            tool_calls=[exp("get_weather", {"location": "München"}, '{"location": "M\\u00fcnchen"}')],
        )
        self.add(
            "hand-after-empty-args-47901",
            "hand: arguments of the call after an empty-argument call (vLLM #47901)",
            blk([("get_random_joke", "{}"), ("get_weather", j(BERLIN)), ("get_random_joke", "{}")]),
            tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_weather", BERLIN), exp("get_random_joke", {})],
        )
        inner = {"path": "notes.md", "content": f'close with {self.inner_marker} and }} ] " done'}
        out = blk([("write_file", j(inner))])
        self.add(
            "hand-end-marker-inside-string",
            f"hand: {self.inner_marker} and }} ] inside a string argument are argument text",
            out,
            tool_calls=[exp("write_file", inner)],
            token_ids=self.inner_ids(out) if self.inner_ids else None,
        )
        self.add(
            "hand-spaced-json",
            "hand: newlines and indentation inside the JSON",
            blk([("search", '{\n    "query": "weather\\nParis",\n    "max_results": 3\n}')]),
            tool_calls=[
                exp(
                    "search",
                    {"query": "weather\nParis", "max_results": 3},
                    '{\n    "query": "weather\\nParis",\n    "max_results": 3\n}',
                )
            ],
        )
        self.add(
            "hand-content-only",
            "hand: an answer without calls",
            "It is sunny in Paris, 21 °C.",
            content="It is sunny in Paris, 21 °C.",
        )


def ordinary_for(name: str) -> Callable[[str], list[int]]:
    """Token ids of a text with every marker spelled as ordinary tokens, for tokenizer ``name``."""
    if name == "deepseek_v3":
        return lambda text: tk.encode_ordinary(name, text)
    if name == "mistral":
        return lambda text: list(tk.load("mistral").sp.encode(text))
    module = importlib.import_module(f"support.tok_{name}")
    return lambda text: module.load_ordinary().encode(text, add_special_tokens=False).ids


# --------------------------------------------------------------------------------------
# llama3_json / llama4_json
# --------------------------------------------------------------------------------------

LLAMA31 = "meta-llama-Llama-3.1-8B-Instruct.jinja"
LLAMA32 = "meta-llama-Llama-3.2-3B-Instruct.jinja"
LLAMA4 = "vllm-tool_chat_template_llama4_json.jinja"


def llama_env(name: str, args: str) -> str:
    return '{"name": "' + name + '", "parameters": ' + args + "}"


def llama3_cases() -> Book:
    b = Book("llama3_json/llama3_json.jsonl", None, "llama3_json")
    fam = Family(
        b,
        "l3",
        lambda calls: "; ".join(llama_env(n, a) for n, a in calls),
        tokenizer="llama3",
        source="Llama 3.1 template spelling; calls joined by '; '",
        inner_marker="<|python_tag|>",
    )

    def rt(template: str, calls: list[dict[str, Any]]) -> str:
        gen, _ = generated(
            template, [USER], assistant(None, calls), eot="<|eot_id|>", tools=TOOLS, bos_token="<|begin_of_text|>"
        )
        return gen

    for template, tag in ((LLAMA31, "31"), (LLAMA32, "32")):
        fam.add(
            f"rt{tag}-one-call",
            f"{template} round trip",
            rt(template, [tc("get_weather", PARIS)]),
            tool_calls=[exp("get_weather", PARIS, j(PARIS))],
        )
    fam.add(
        "rt31-unicode",
        f"{LLAMA31} round trip (tojson keeps non-ASCII)",
        rt(LLAMA31, [tc("get_weather", UNICODE)]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE))],
    )
    fam.add(
        "rt31-nested",
        f"{LLAMA31} round trip",
        rt(LLAMA31, [tc("book_flight", NESTED)]),
        tool_calls=[exp("book_flight", NESTED, j(NESTED))],
    )
    fam.add(
        "rt31-empty-args",
        f"{LLAMA31} round trip",
        rt(LLAMA31, [tc("get_random_joke", {})]),
        tool_calls=[exp("get_random_joke", {}, "{}")],
    )
    inner = {"path": "a.txt", "content": 'say <|python_tag|> then {"name": "x"}'}
    fam.add(
        "rt31-marker-inside-string",
        f"{LLAMA31} round trip: <|python_tag|> (a special token) inside a string",
        rt(LLAMA31, [tc("write_file", inner)]),
        tool_calls=[exp("write_file", inner)],
    )
    doc = (
        '<|python_tag|>{\n    "type": "function",\n    "name": "trending_songs",\n    "parameters": {\n'
        '        "n": "10",\n        "genre": "all"\n    }\n}'
    )
    songs = {
        "type": "function",
        "function": {
            "name": "trending_songs",
            "description": "Returns the trending songs",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    fam.add(
        "doc-python-tag-type-key",
        "doc: llama-models llama3_1/prompt_format.md, JSON based tool calling (before <|eom_id|>)",
        doc,
        tools=[songs],
        tool_calls=[exp("trending_songs", {"n": "10", "genre": "all"})],
    )
    fam.add(
        "doc-python-tag-code-is-content",
        "doc: llama-stack recording, <|python_tag|> then Python code: no call",
        '<|python_tag|>import webbrowser\n\nwebbrowser.open("https://www.facebook.com/hello")',
        content='<|python_tag|>import webbrowser\n\nwebbrowser.open("https://www.facebook.com/hello")',
    )
    rec = (
        '<|python_tag|>{"status":400,"error_messages":[{"localized": "[\\"Cannot get location.\\"]",'
        '"target": "/location"}], '
        '"extended": {}}\n\nUnfortunately I wasn\'t able to accomplish your request with the tool I was given.'
    )
    fam.add(
        "doc-python-tag-json-without-name",
        "doc: llama-stack recording, JSON without a name is content",
        rec,
        content=rec,
    )
    fam.add(
        "doc-python-tag-unknown-name",
        "doc: llama-stack recording (llama3.2 via Ollama), name not among the tools",
        '<|python_tag|>{"type": "function", "name": "print_hello_world", "parameters": {}}',
        content='<|python_tag|>{"type": "function", "name": "print_hello_world", "parameters": {}}',
    )
    fam.add(
        "hand-content-braces-not-a-call",
        "hand: prose that starts with '{' and is not a call",
        '{1, 2} is a set; {"a": 1} is an object.',
        content='{1, 2} is a set; {"a": 1} is an object.',
    )
    fam.add(
        "hand-arguments-key-and-string-args",
        "hand: 'arguments' instead of 'parameters', given as a JSON string",
        '{"name": "get_weather", "arguments": "{\\"location\\": \\"Paris\\"}"}',
        tool_calls=[exp("get_weather", {"location": "Paris"}, '{"location": "Paris"}')],
    )
    fam.add(
        "hand-parallel-no-separator",
        "hand: two envelopes back to back (the Llama 4 JSON template spelling)",
        llama_env("get_weather", j(PARIS)) + llama_env("get_time", j(UTC)),
        tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)],
    )
    fam.add(
        "hand-semicolon-in-prose-after-call",
        "hand: a ';' in text after a call that no call follows stays text",
        llama_env("get_time", j(UTC)) + "\nNote: UTC; not local time.",
        content="Note: UTC; not local time.",
        tool_calls=[exp("get_time", UTC)],
    )
    fam.add(
        "hand-malformed-invalid-json",
        "hand: invalid JSON inside the envelope",
        '<|python_tag|>{"name": "get_weather", "parameters": {"location": Paris}}',
        content='<|python_tag|>{"name": "get_weather", "parameters": {"location": Paris}}',
    )
    fam.add(
        "hand-truncated-in-args",
        "hand: cut inside the arguments",
        '{"name": "search", "parameters": {"query": "weath',
        unfinished_call='{"name": "search", "parameters": {"query": "weath',
        truncated=True,
    )
    fam.common()
    return b


def llama4_cases() -> Book:
    b = Book("llama4_json/llama4_json.jsonl", None, "llama4_json")
    fam = Family(
        b,
        "l4",
        lambda calls: "".join(llama_env(n, a) for n, a in calls),
        tokenizer="llama4",
        source=f"{LLAMA4} spelling",
        inner_marker="<|python_end|>",
    )

    def rt(content: str | None, calls: list[dict[str, Any]]) -> str:
        gen, _ = generated(
            LLAMA4, [USER], assistant(content or "", calls), eot="<|eot|>", tools=TOOLS, bos_token="<|begin_of_text|>"
        )
        return gen

    fam.add(
        "rt-one-call",
        f"{LLAMA4} round trip",
        rt(None, [tc("get_weather", PARIS)]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    fam.add(
        "rt-parallel",
        f"{LLAMA4} round trip",
        rt(None, [tc("get_weather", PARIS), tc("get_time", UTC)]),
        tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)],
    )
    fam.add(
        "rt-content-before",
        f"{LLAMA4} round trip: content, then the calls",
        rt("Let me check.", [tc("get_weather", PARIS)]),
        content="Let me check.",
        tool_calls=[exp("get_weather", PARIS)],
    )
    fam.add(
        "rt-unicode-nested",
        f"{LLAMA4} round trip",
        rt(None, [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    fam.add(
        "rt-empty-then-args",
        f"{LLAMA4} round trip (vLLM #47901)",
        rt(None, [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    fam.add(
        "hand-python-start-wrapper",
        "hand: calls wrapped in <|python_start|> … <|python_end|> (special tokens 200016 / 200017 of "
        "tests/data/tokenizers/llama4; dropped as vLLM 0.33 llama4_pythonic_tool_parser.py drops them)",
        "<|python_start|>" + llama_env("get_weather", j(PARIS)) + "<|python_end|>",
        tool_calls=[exp("get_weather", PARIS)],
    )
    fam.add(
        "hand-malformed-truncated-json-then-text",
        "hand: an envelope whose JSON breaks, then prose",
        '{"name": "get_weather", "parameters": {"location": "Paris"]} sorry',
        content='{"name": "get_weather", "parameters": {"location": "Paris"]} sorry',
    )
    fam.common()
    return b


# --------------------------------------------------------------------------------------
# mistral
# --------------------------------------------------------------------------------------

NEMO = "mistralai-Mistral-Nemo-Instruct-2407.jinja"
SMALL32 = "Mistral-Small-3.2-24B-Instruct-2506.jinja"
DEVSTRAL = "unsloth-mistral-Devstral-Small-2507.jinja"


def mistral_cases() -> Book:
    b = Book("mistral/mistral.jsonl", None, "mistral")

    def rt(template: str, calls: list[dict[str, Any]], content: str | None = None) -> str:
        gen, _ = generated(
            template,
            [USER],
            assistant(content or "", calls),
            eot="</s>",
            tools=TOOLS,
            bos_token="<s>",
            eos_token="</s>",
            strftime_now=lambda fmt: "2025-06-20",
        )
        return gen

    def nemo_block(calls: list[tuple[str, str]]) -> str:
        return "[TOOL_CALLS][" + ", ".join('{"name": "' + n + '", "arguments": ' + a + "}" for n, a in calls) + "]"

    def v11_block(calls: list[tuple[str, str]]) -> str:
        return "".join(f"[TOOL_CALLS]{n}[ARGS]{a}" for n, a in calls)

    def v3_ids(out: str) -> list[int]:
        # mistral-common encodes control tokens only where the format puts them: the
        # "[TOOL_CALLS]" a template writes inside a string argument is ordinary text
        assert out.startswith("[TOOL_CALLS]")
        return [5, *tk.load("mistral").sp.encode(out[len("[TOOL_CALLS]") :])]

    v3 = Family(
        b,
        "mi-v3",
        nemo_block,
        tokenizer="mistral",
        source="Mistral v3 / Nemo list spelling",
        inner_marker="[TOOL_CALLS]",
        inner_ids=v3_ids,
    )
    v11 = Family(
        b, "mi-v11", v11_block, tokenizer="magistral_v11", source=f"{DEVSTRAL} spelling", inner_marker="[ARGS]"
    )

    out = rt(NEMO, [tc("get_weather", PARIS, id="a1B2c3D4e")])
    v3.add(
        "rt-nemo-one-call",
        f"{NEMO} round trip; the id follows the name, so trisect makes its own",
        out,
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    out = rt(NEMO, [tc("get_weather", PARIS, id="a1B2c3D4e"), tc("get_time", UTC, id="Z9y8X7w6V")])
    v3.add("rt-nemo-parallel", f"{NEMO} round trip", out, tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)])
    out = rt(NEMO, [tc("get_weather", UNICODE, id="a1B2c3D4e"), tc("book_flight", NESTED, id="b1B2c3D4e")])
    v3.add(
        "rt-nemo-unicode-nested",
        f"{NEMO} round trip",
        out,
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    vec = (
        '[TOOL_CALLS] [{"name": "send_email", "arguments": {"attachment": "report.pdf", "body": "Attached is the '
        'monthly report for your review.", "subject": "Monthly Report", "to": "finance1@company.com"}, '
        '"id": "123456789"}]'
    )
    email = {
        "type": "function",
        "function": {
            "name": "send_email",
            "description": "Send an email",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    b.add(
        "mi-v3-doc-mistral-common-vector",
        "doc: mistral-common tests/data/samples/parallel_calls text_v3 (decoded "
        "assistant turn: the space after [TOOL_CALLS] is SentencePiece's dummy prefix)",
        vec,
        tokenizer="mistral",
        tools=[email],
        tool_calls=[
            exp(
                "send_email",
                {
                    "attachment": "report.pdf",
                    "body": "Attached is the monthly report for your review.",
                    "subject": "Monthly Report",
                    "to": "finance1@company.com",
                },
            )
        ],
    )
    v3.add(
        "hand-id-before-name",
        'hand: an "id" key written before the name is the call id',
        '[TOOL_CALLS][{"id": "Ab3dE6gH9", "name": "get_time", "arguments": {"timezone": "UTC"}}]',
        tool_calls=[exp("get_time", UTC, id="Ab3dE6gH9")],
    )
    v3.add(
        "hand-malformed-invalid-json",
        "hand: the second list entry is invalid JSON; the first is a call",
        '[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}, '
        '{"name": "get_weather", "arguments": {location}}]',
        content='{"name": "get_weather", "arguments": {location}}',
        tool_calls=[exp("get_time", UTC)],
    )
    v3.add(
        "hand-truncated-in-list",
        "hand: cut inside the second entry",
        '[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}, {"name": "get_wea',
        unfinished_call='{"name": "get_wea',
        tool_calls=[exp("get_time", UTC)],
        truncated=True,
    )
    v3.common()
    v3.mention(ordinary_for("mistral"))

    out = rt(DEVSTRAL, [tc("get_weather", PARIS), tc("get_time", UTC)])
    v11.add(
        "rt-devstral-parallel",
        f"{DEVSTRAL} round trip",
        out,
        tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)],
    )
    out = rt(DEVSTRAL, [tc("get_weather", UNICODE)], content="Let me check.")
    v11.add(
        "rt-devstral-content-unicode",
        f"{DEVSTRAL} round trip",
        out,
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE))],
    )
    out = rt(DEVSTRAL, [tc("get_random_joke", {}), tc("book_flight", NESTED)])
    v11.add(
        "rt-devstral-empty-nested",
        f"{DEVSTRAL} round trip",
        out,
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("book_flight", NESTED, j(NESTED))],
    )
    out = rt(SMALL32, [tc("get_weather", PARIS, id="a1B2c3D4e"), tc("get_time", UTC, id="Z9y8X7w6V")])
    v11.add(
        "rt-small32-call-ids",
        f"{SMALL32} round trip: [CALL_ID] ids are the call ids",
        out,
        tool_calls=[exp("get_weather", PARIS, id="a1B2c3D4e"), exp("get_time", UTC, id="Z9y8X7w6V")],
    )
    v11.add(
        "hand-name-brace-without-args-marker",
        "hand: [TOOL_CALLS]name{…} without [ARGS] (vLLM 0.33 parser/mistral.py: (TOOL_NAME, OPEN_BRACE))",
        '[TOOL_CALLS]get_time{"timezone": "UTC"}',
        tool_calls=[exp("get_time", UTC)],
    )
    v11.add(
        "hand-malformed-invalid-json",
        "hand: invalid arguments; the call text is content, then the next call",
        '[TOOL_CALLS]get_time[ARGS]{"timezone": UTC}[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}',
        content='[TOOL_CALLS]get_time[ARGS]{"timezone": UTC}',
        tool_calls=[exp("get_weather", {"location": "Paris"})],
    )
    v11.add(
        "hand-truncated-in-name",
        "hand: cut inside the name",
        "[TOOL_CALLS]get_wea",
        unfinished_call="[TOOL_CALLS]get_wea",
        truncated=True,
    )
    v11.common()
    v11.mention(ordinary_for("magistral_v11"))
    return b


# --------------------------------------------------------------------------------------
# kimi_k2
# --------------------------------------------------------------------------------------

KIMI = "Kimi-K2-Instruct.jinja"


def kimi_cases() -> Book:
    b = Book("kimi_k2/kimi_k2.jsonl", None, "kimi_k2")

    def block(calls: list[tuple[str, str]]) -> str:
        body = "".join(
            f"<|tool_call_begin|>functions.{n}:{k}<|tool_call_argument_begin|>{a}<|tool_call_end|>"
            for k, (n, a) in enumerate(calls)
        )
        return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"

    fam = Family(b, "k2", block, tokenizer="kimi_k2", source=f"{KIMI} spelling", inner_marker="<|tool_call_end|>")

    # The template appends to a list (``tool_response_queue.ids.append``), which the immutable
    # sandbox of render_cases refuses; render it in a mutable sandbox with the same settings.
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=list(_ENV.extensions))
    env.filters["tojson"] = _ENV.filters["tojson"]
    env.globals["raise_exception"] = _ENV.globals["raise_exception"]
    tpl = env.from_string((TESTS / "data" / "templates" / KIMI).read_text("utf-8"))

    def rt(history: list[dict[str, Any]], content: str | None, calls: list[dict[str, Any]]) -> str:
        prompt = tpl.render(messages=history, tools=TOOLS, add_generation_prompt=True)
        full = tpl.render(messages=[*history, assistant(content, calls)], tools=TOOLS, add_generation_prompt=False)
        assert full.startswith(prompt) and full.endswith("<|im_end|>"), full[-80:]
        return full[len(prompt) : -len("<|im_end|>")]

    out = rt([USER], None, [tc("get_weather", PARIS)])
    fam.add(
        "rt-one-call",
        f"{KIMI} round trip: the header is the id",
        out,
        tool_calls=[exp("get_weather", PARIS, j(PARIS), id="functions.get_weather:0")],
    )
    out = rt([USER], "Let me check both.", [tc("get_weather", UNICODE), tc("get_time", UTC)])
    fam.add(
        "rt-content-parallel-unicode",
        f"{KIMI} round trip",
        out,
        content="Let me check both.",
        tool_calls=[
            exp("get_weather", UNICODE, j(UNICODE), id="functions.get_weather:0"),
            exp("get_time", UTC, id="functions.get_time:1"),
        ],
    )
    history = [
        USER,
        assistant(None, [tc("get_weather", PARIS), tc("get_time", UTC)]),
        {"role": "tool", "content": "21 °C"},
        {"role": "tool", "content": "12:00"},
        {"role": "user", "content": "And Berlin?"},
    ]
    out = rt(history, None, [tc("get_weather", BERLIN), tc("book_flight", NESTED)])
    fam.add(
        "rt-history-continues-count",
        f"{KIMI} round trip after two earlier calls: ids :2 and :3",
        out,
        tool_calls=[
            exp("get_weather", BERLIN, id="functions.get_weather:2"),
            exp("book_flight", NESTED, j(NESTED), id="functions.book_flight:3"),
        ],
        options={"history_tool_calls": 2},
    )
    out = rt([USER], None, [tc("get_random_joke", {}), tc("get_time", UTC)])
    fam.add(
        "rt-empty-then-args",
        f"{KIMI} round trip (vLLM #47901)",
        out,
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    fam.add(
        "hand-header-without-index",
        "hand: a header without ':N' (its id, functions.NAME:K with K = history_tool_calls + "
        "index, is checked in tests/test_json_tools.py: the harness fixes ids)",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time<|tool_call_argument_begin|>"
        '{"timezone": "UTC"}'
        "<|tool_call_end|><|tool_calls_section_end|>",
        tool_calls=[exp("get_time", UTC)],
        options={"history_tool_calls": 5},
    )
    fam.add(
        "hand-malformed-invalid-json",
        "hand: invalid arguments: the call's text is content, and so is its section's (no call in it)",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{timezone: UTC}"
        "<|tool_call_end|><|tool_calls_section_end|>",
        content="<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>"
        "{timezone: UTC}<|tool_call_end|><|tool_calls_section_end|>",
    )
    fam.add(
        "hand-truncated-in-header",
        "hand: cut inside the header",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea",
        unfinished_call="<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea",
        truncated=True,
    )
    SB, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
    for slug, header in [
        ("call-id", "call_abc123:0"),
        ("no-prefix", "get_time:0"),
        ("text-after-index", "functions.get_time:0 x"),
    ]:
        bad = f"{SB}<|tool_call_begin|>{header}<|tool_call_argument_begin|>{j(UTC)}<|tool_call_end|>{SE}"
        fam.add(
            f"hand-malformed-header-{slug}",
            "issue 20: the template writes 'functions.' + name + ':' + counter; a header of another shape names no "
            "tool (never a fragment of an id): the block yields no call and is content, its markers included",
            "Checking. " + bad,
            content="Checking. " + bad,
        )
    bad = f"{SB}<|tool_call_begin|>functions.get_time:0 {j(UTC)}<|tool_call_end|>{SE}"
    fam.add(
        "hand-malformed-no-argument-marker",
        "issue 20: a header <|tool_call_argument_begin|> never follows is a call that does not read, not a name that "
        "runs on to the end of the output: content, its block's markers included, and the text after it too",
        bad + " Done.",
        content=bad + " Done.",
    )
    good = f"<|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{j(UTC)}<|tool_call_end|>"
    fam.add(
        "hand-recovery-text-between-section-markers",
        "issue 20: text in the section outside its calls is the model's and nothing is deleted: content, in order "
        "(vLLM drops it; the section's markers are structure once the section yields a call)",
        f"A {SB}then{good}and{SE} B",
        content="A thenand B",
        tool_calls=[exp("get_time", UTC, j(UTC), id="functions.get_time:0")],
    )
    fam.common()
    fam.mention(ordinary_for("kimi_k2"))
    return b


# --------------------------------------------------------------------------------------
# deepseek_v3 / deepseek_v31
# --------------------------------------------------------------------------------------

DSV31 = "deepseek-ai-DeepSeek-V3.1.jinja"
DS_EOS = "<｜end▁of▁sentence｜>"
CB, CE, C1, C2, SEP = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
)


def _dsv3_template() -> Any:
    cfg = json.loads((TESTS / "data" / "tokenizers" / "deepseek-v3" / "tokenizer_config.json").read_text("utf-8"))
    return _ENV.from_string(cfg["chat_template"])


def deepseek_v3_cases() -> Book:
    b = Book("deepseek_v3/deepseek_v3.jsonl", None, "deepseek_v3")
    tpl = _dsv3_template()

    def v3call(n: str, a: str) -> str:
        return f"{C1}function{SEP}{n}\n```json\n{a}\n```{C2}"

    fam = Family(
        b,
        "ds3",
        lambda calls: CB + "\n".join(v3call(n, a) for n, a in calls) + CE,
        tokenizer="deepseek_v3",
        source="DeepSeek-V3 tokenizer_config.json template spelling",
        inner_marker=C2,
    )

    def rt(content: str | None, calls: list[tuple[str, str]]) -> str:
        msgs = [
            USER,
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
            },
        ]
        prompt = tpl.render(messages=[USER], add_generation_prompt=True, bos_token="<｜begin▁of▁sentence｜>")
        full = tpl.render(messages=msgs, add_generation_prompt=False, bos_token="<｜begin▁of▁sentence｜>")
        assert full.startswith(prompt) and full.endswith(DS_EOS), full
        return full[len(prompt) : -len(DS_EOS)]

    fam.add(
        "rt-one-call",
        "DeepSeek-V3 template round trip",
        rt(None, [("get_weather", j(PARIS))]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    fam.add(
        "rt-parallel-content-unicode",
        "DeepSeek-V3 template round trip",
        rt("Let me check.", [("get_weather", j(UNICODE)), ("book_flight", j(NESTED))]),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    fam.add(
        "rt-empty-then-args",
        "DeepSeek-V3 template round trip (vLLM #47901)",
        rt(None, [("get_random_joke", "{}"), ("get_time", j(UTC))]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    fam.add(
        "hand-no-fence",
        "hand: the arguments without the ```json fence",
        f"{CB}{C1}function{SEP}get_time\n" + j(UTC) + f"{C2}{CE}",
        tool_calls=[exp("get_time", UTC, j(UTC))],
    )
    bad = v3call("get_time", "{timezone: UTC}")
    fam.add(
        "hand-malformed-invalid-json",
        "hand: invalid JSON in the fence: the call's text is content, and so is its block's",
        CB + bad + CE + "Sorry.",
        content=CB + bad + CE + "Sorry.",
    )
    fam.add(
        "hand-truncated-in-fence",
        "hand: cut inside the arguments",
        CB + f"{C1}function{SEP}search\n```json\n" + '{"query": "wea',
        unfinished_call=CB + f"{C1}function{SEP}search\n```json\n" + '{"query": "wea',
        truncated=True,
    )
    fam.common()
    fam.mention(ordinary_for("deepseek_v3"))

    b31 = Book("deepseek_v3/deepseek_v31.jsonl", None, "deepseek_v31")
    f31 = Family(
        b31,
        "ds31",
        lambda calls: CB + "".join(f"{C1}{n}{SEP}{a}{C2}" for n, a in calls) + CE,
        tokenizer="deepseek_v3",
        source=f"{DSV31} spelling",
        inner_marker=CE,
    )

    def rt31(content: str | None, calls: list[dict[str, Any]]) -> str:
        gen, _ = generated(
            DSV31, [USER], assistant(content, calls), eot=DS_EOS, tools=TOOLS, bos_token="<｜begin▁of▁sentence｜>"
        )
        return gen

    f31.add(
        "rt-one-call",
        f"{DSV31} round trip",
        rt31(None, [tc("get_weather", PARIS)]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    f31.add(
        "rt-parallel-content-unicode",
        f"{DSV31} round trip",
        rt31("Let me check.", [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    f31.add(
        "rt-empty-then-args",
        f"{DSV31} round trip (vLLM #47901)",
        rt31(None, [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    bad = f"{C1}get_time{SEP}" + '{"timezone": "UTC"' + C2
    f31.add(
        "hand-malformed-unclosed-json",
        "hand: the JSON is not closed before <｜tool▁call▁end｜>: content, its block's markers included",
        CB + bad + CE,
        content=CB + bad + CE,
    )
    f31.add(
        "hand-truncated-in-args",
        "hand: cut inside the arguments",
        CB + f"{C1}search{SEP}" + '{"query": "wea',
        unfinished_call=CB + f"{C1}search{SEP}" + '{"query": "wea',
        truncated=True,
    )
    bad = CB + f"{C1}get_time {j(UTC)}{C2}" + CE
    f31.add(
        "hand-malformed-no-separator",
        "issue 20: a name <｜tool▁sep｜> never follows is a call that does not read, not a name that runs on to the "
        "end of the output: content, its block's markers included, and the text after it too",
        bad + " Done.",
        content=bad + " Done.",
    )
    f31.common()
    f31.mention(ordinary_for("deepseek_v3"))
    return b, b31


# --------------------------------------------------------------------------------------
# granite / granite4
# --------------------------------------------------------------------------------------

GRANITE4 = "ibm-granite-granite-4.0.jinja"


def granite_cases() -> tuple[Book, Book]:
    b = Book("granite/granite.jsonl", None, "granite")
    fam = Family(
        b,
        "gr3",
        lambda calls: (
            "<|tool_call|>[" + ", ".join('{"name": "' + n + '", "arguments": ' + a + "}" for n, a in calls) + "]"
        ),
        tokenizer="granite3",
        source="granite-3.3 template system prompt: <|tool_call|> + a JSON list",
        inner_marker="<|tool_call|>",
    )
    fam.add(
        "hand-parallel-one-list",
        "hand: two calls in one list",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}, '
        '{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
        tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)],
    )
    fam.add(
        "hand-granite31-tool-call-tag",
        "hand: Granite 3.1's <tool_call> before the list (vLLM 0.33 parser/granite.py: TOOL_STRING; text only: "
        "the Granite 3 test vocabulary has <|tool_call|> as its added token)",
        '<tool_call>[{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
        tokenizer=None,
        tool_calls=[exp("get_time", UTC)],
    )
    fam.add(
        "hand-malformed-invalid-json",
        "hand: an invalid entry after a good one",
        '<|tool_call|>[{"name": "get_time", "arguments": {"timezone": "UTC"}}, '
        '{"name": "search", "arguments": {"query": weather}}]',
        content='{"name": "search", "arguments": {"query": weather}}',
        tool_calls=[exp("get_time", UTC)],
    )
    fam.common()
    fam.mention(ordinary_for("granite3"))

    b4 = Book("granite/granite4.jsonl", None, "granite4")
    f4 = Family(
        b4,
        "gr4",
        lambda calls: "\n".join(
            '<tool_call>\n{"name": "' + n + '", "arguments": ' + a + "}\n</tool_call>" for n, a in calls
        ),
        tokenizer=None,
        source=f"{GRANITE4} spelling",
        inner_marker="</tool_call>",
    )

    def rt(content: str, calls: list[dict[str, Any]]) -> str:
        gen, _ = generated(GRANITE4, [USER], assistant(content, calls), eot="<|end_of_text|>\n", tools=TOOLS)
        return gen

    f4.add(
        "rt-one-call",
        f"{GRANITE4} round trip",
        rt("", [tc("get_weather", PARIS)]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    f4.add(
        "rt-content-parallel-unicode",
        f"{GRANITE4} round trip",
        rt("Let me check.", [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    f4.add(
        "rt-empty-then-args",
        f"{GRANITE4} round trip (vLLM #47901)",
        rt("", [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    bad = '<tool_call>\n{"name": "get_time", "arguments": {"timezone": UTC}}\n</tool_call>'
    f4.add("hand-malformed-invalid-json", "hand: invalid JSON inside a complete block", bad, content=bad)
    f4.add(
        "hand-truncated-in-name",
        "hand: cut inside the name",
        '<tool_call>\n{"name": "get_wea',
        unfinished_call='<tool_call>\n{"name": "get_wea',
        truncated=True,
    )
    f4.common()
    return b, b4


# --------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------
# Formats whose template lives only in vLLM's examples/ (or whose format only the parser
# shows): the calls are spelled exactly as those lines write them (hand-written, not rendered)
# --------------------------------------------------------------------------------------

VLLM_EX = "vLLM examples/tool_chat_template_{}.jinja"


def env(n: str, a: str, *, name_key: str = "name", args_key: str = "arguments") -> str:
    return '{"' + name_key + '": "' + n + '", "' + args_key + '": ' + a + "}"


def standard(
    fam: Family,
    *,
    malformed: tuple[str, str],
    truncated: tuple[str, str],
    content_first: bool = True,
    kept: list[dict[str, Any]] | None = None,
) -> None:
    """One call, parallel, unicode + nested, empty then arguments, content before, a malformed
    call, a truncated one — in the family's spelling — then the common scenarios."""
    blk = fam.block
    fam.add(
        "hand-one-call",
        "hand: one call",
        blk([("get_weather", j(PARIS))]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    fam.add(
        "hand-parallel",
        "hand: two calls in one block",
        blk([("get_weather", j(PARIS)), ("get_time", j(UTC))]),
        tool_calls=[exp("get_weather", PARIS), exp("get_time", UTC)],
    )
    fam.add(
        "hand-unicode-nested",
        "hand: non-ASCII kept as written; nested objects and arrays",
        blk([("get_weather", j(UNICODE)), ("book_flight", j(NESTED))]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    fam.add(
        "hand-empty-then-args",
        "hand: an empty-argument call, then one with arguments (vLLM #47901)",
        blk([("get_random_joke", "{}"), ("get_time", j(UTC))]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    if content_first:
        fam.add(
            "hand-content-before",
            "hand: content, then the block",
            "Let me check." + blk([("get_weather", j(PARIS))]),
            content="Let me check.",
            tool_calls=[exp("get_weather", PARIS)],
        )
    out, content = malformed
    fam.add("hand-malformed-invalid-json", "hand: a call whose JSON is invalid", out, content=content, tool_calls=kept)
    out, cut = truncated  # the cut-off call's raw text: not content, the unfinished call
    fam.add("hand-truncated", "hand: cut inside a call", out, unfinished_call=cut, truncated=True, tool_calls=kept)
    fam.common()


def list_family(
    path: str,
    fmt: str,
    prefix: str,
    start: str,
    end: str,
    source: str,
    *,
    sep: str = ", ",
    codec: Callable[[str, str], str] = env,
    inner: str | None = None,
    tokenizer: str | None = None,
    markers_are_tokens: bool = True,
    lead: str = "[",
    tail: str = "]",
) -> Book:
    """A list format: ``start + lead + entries + tail + end``."""
    b = Book(path, None, fmt)

    def block(calls: list[tuple[str, str]]) -> str:
        return start + lead + sep.join(codec(n, a) for n, a in calls) + tail + end

    fam = Family(b, prefix, block, tokenizer=tokenizer, source=source, inner_marker=inner or end or start)
    good = codec("get_time", j(UTC))
    bad = codec("search", '{"query": weather}')
    standard(
        fam,
        malformed=(start + lead + good + sep + bad + tail + end, bad),
        truncated=(
            start + lead + good + sep + codec("search", '{"query": "wea').rstrip("}"),
            codec("search", '{"query": "wea').rstrip("}"),
        ),
        kept=[exp("get_time", UTC)],
    )
    if tokenizer is not None and markers_are_tokens:
        fam.mention(ordinary_for(tokenizer))
    return b


INTERNLM2 = "vllm-tool_chat_template_internlm2_tool.jinja"
MINIMAX_M1 = "vllm-tool_chat_template_minimax_m1.jinja"
XLAM_LLAMA = "vllm-tool_chat_template_xlam_llama.jinja"
NEMOTRON_JSON = "vllm-tool_chat_template_nemotron_json.jinja"
GRANITE_20B = "vllm-tool_chat_template_granite_20b_fc.jinja"


def granite_20b_turn(calls: list[dict[str, Any]]) -> str:
    """The assistant turn of the granite-20b-functioncalling template, between its
    ``ASSISTANT:`` and ``<|endoftext|>`` (its generation prompt ends ``ASSISTANT: \\n``, which a
    rendered history does not repeat, so the turn is cut out of the history)."""
    full = render(GRANITE_20B, [USER, assistant(None, calls)], tools=TOOLS, add_generation_prompt=False, bos_token="")
    start = full.rindex("\nASSISTANT:") + len("\nASSISTANT:")
    return full[start : full.index("<|endoftext|>", start)]


def nemotron_turn(content: str, calls: list[dict[str, Any]]) -> str:
    """The assistant turn as the Nemotron JSON template writes it in a history. (It drops the
    calls of a final assistant message, so the turn is rendered before a tool reply and cut out
    between its ``<SPECIAL_11>Assistant`` header and ``<SPECIAL_12>``.)"""
    history = [USER, assistant(content, calls), {"role": "tool", "content": "21 °C"}]
    full = render(NEMOTRON_JSON, history, tools=TOOLS, add_generation_prompt=False)
    head = "<SPECIAL_11>Assistant\n"
    start = full.index(head) + len(head)
    return full[start : full.index("\n<SPECIAL_12>\n", start)]


def vllm_rt(fam: Family, template: str, eot: str, content: str | None, calls: list[dict[str, Any]], **kw: Any) -> str:
    gen, _ = generated(template, [USER], assistant(content, calls), eot=eot, tools=TOOLS, bos_token="<s>", **kw)
    return gen


def more_cases() -> tuple[Book, ...]:
    books: list[Book] = []

    # granite-20b-fc: '<function_call> ' + {'name': …, 'arguments': …}|tojson per call
    b = Book("granite/granite-20b-fc.jsonl", None, "granite-20b-fc")
    rt = Family(b, "g20", lambda calls: "", tokenizer=None, source=GRANITE_20B, inner_marker="")
    rt.add(
        "rt-parallel-unicode",
        f"{GRANITE_20B} render of the assistant turn",
        granite_20b_turn([tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    rt.add(
        "rt-empty-then-args",
        f"{GRANITE_20B} render of the assistant turn (vLLM #47901)",
        granite_20b_turn([tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    fam = Family(
        b,
        "g20",
        lambda calls: "".join("<function_call> " + env(n, a) for n, a in calls),
        tokenizer=None,
        source=VLLM_EX.format("granite_20b_fc") + " spelling",
        inner_marker="<function_call>",
    )
    bad = '<function_call> {"name": "get_time", "arguments": {timezone}}'
    standard(
        fam,
        malformed=(bad + " sorry", bad + " sorry"),
        truncated=(
            '<function_call> {"name": "get_time", "arguments": {"timezone": "U',
            '<function_call> {"name": "get_time", "arguments": {"timezone": "U',
        ),
    )
    books.append(b)

    # internlm: "<|action_start|><|plugin|>\n" + '{"name": "…", "arguments": …}' + "<|action_end|>"
    b = Book("internlm/internlm.jsonl", None, "internlm")
    rt = Family(b, "ilm", lambda calls: "", tokenizer=None, source=INTERNLM2, inner_marker="")
    rt.add(
        "rt-one-call",
        f"{INTERNLM2} round trip (arguments given as the JSON string the template writes raw)",
        vllm_rt(rt, INTERNLM2, "<|im_end|>\n", None, [tc("get_weather", j(PARIS))]),
        tool_calls=[exp("get_weather", PARIS, j(PARIS))],
    )
    rt.add(
        "rt-content-parallel-unicode",
        f"{INTERNLM2} round trip",
        vllm_rt(
            rt,
            INTERNLM2,
            "<|im_end|>\n",
            "Let me check.",
            [tc("get_weather", j(UNICODE)), tc("book_flight", j(NESTED))],
        ),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    fam = Family(
        b,
        "ilm",
        lambda calls: "".join(f"<|action_start|><|plugin|>\n{env(n, a)}<|action_end|>" for n, a in calls),
        tokenizer=None,
        source=VLLM_EX.format("internlm2_tool") + " spelling",
        inner_marker="<|action_end|>",
    )
    bad = '<|action_start|><|plugin|>\n{"name": "get_time", "arguments": {"timezone": UTC}}<|action_end|>'
    standard(
        fam,
        malformed=(bad, bad),
        truncated=('<|action_start|><|plugin|>\n{"name": "get_ti', '<|action_start|><|plugin|>\n{"name": "get_ti'),
    )
    fam.add(
        "hand-arguments-as-string",
        "hand: arguments given as a JSON string (the template's |string of a string)",
        '<|action_start|><|plugin|>\n{"name": "get_time", "arguments": "{\\"timezone\\": \\"UTC\\"}"}<|action_end|>',
        tool_calls=[exp("get_time", UTC, '{"timezone": "UTC"}')],
    )
    books.append(b)

    books.append(
        list_family(
            "jamba/jamba.jsonl",
            "jamba",
            "jb",
            "<tool_calls>",
            "</tool_calls>",
            "vLLM jamba parser spelling: <tool_calls> + JSON list + </tool_calls>",
        )
    )
    books.append(
        list_family(
            "hunyuan_a13b/hunyuan_a13b.jsonl",
            "hunyuan_a13b",
            "hy",
            "<tool_calls>",
            "</tool_calls>",
            VLLM_EX.format("hunyuan_a13b") + " spelling",
            tokenizer="hunyuan_a13b",
            markers_are_tokens=False,  # ordinary token sequences (vLLM's HunyuanA13BReasoningParser)
        )
    )
    books.append(
        list_family(
            "minimax/minimax.jsonl",
            "minimax",
            "mm1",
            "<tool_calls>",
            "</tool_calls>",
            VLLM_EX.format("minimax_m1") + " spelling (one object per line)",
            sep="\n",
            lead="\n",
            tail="\n",
        )
    )
    rt = Family(books[-1], "mm1", lambda calls: "", tokenizer=None, source=MINIMAX_M1, inner_marker="")
    rt.add(
        "rt-parallel-unicode",
        f"{MINIMAX_M1} round trip",
        vllm_rt(rt, MINIMAX_M1, "<end_of_sentence>\n", None, [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    rt.add(
        "rt-empty-then-args",
        f"{MINIMAX_M1} round trip (vLLM #47901)",
        vllm_rt(rt, MINIMAX_M1, "<end_of_sentence>\n", None, [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    books.append(
        list_family(
            "phi4_mini_json/phi4_mini_json.jsonl",
            "phi4_mini_json",
            "phi",
            "functools",
            "",
            VLLM_EX.format("phi4_mini") + " system-prompt spelling: functools[…], no closer",
            inner="functools[",
        )
    )
    books.append(
        list_family(
            "apertus/apertus.jsonl",
            "apertus",
            "ap",
            "<|tools_prefix|>",
            "<|tools_suffix|>",
            VLLM_EX.format("apertus") + ' spelling: {"NAME": arguments}',
            codec=lambda n, a: '{"' + n + '": ' + a + "}",
        )
    )
    books.append(
        list_family(
            "nemotron_json/nemotron_json.jsonl",
            "nemotron_json",
            "nj",
            "<TOOLCALL>",
            "</TOOLCALL>",
            VLLM_EX.format("nemotron_json") + " spelling",
        )
    )
    rt = Family(books[-1], "nj", lambda calls: "", tokenizer=None, source=NEMOTRON_JSON, inner_marker="")
    rt.add(
        "rt-content-parallel-unicode",
        f"{NEMOTRON_JSON} render of the assistant turn",
        nemotron_turn("Let me check.", [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    rt.add(
        "rt-empty-then-args",
        f"{NEMOTRON_JSON} render of the assistant turn (vLLM #47901)",
        nemotron_turn("", [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    for fmt in ("cohere_command3", "cohere_command4"):
        books.append(
            list_family(
                f"{fmt}/{fmt}.jsonl",
                fmt,
                fmt.replace("cohere_command", "co"),
                "<|START_ACTION|>",
                "<|END_ACTION|>",
                "transformers Cohere chat-parsing test spelling",
                sep=",\n    ",
                lead="[\n    ",
                tail="\n]",
                codec=lambda n, a: '{"tool_call_id": "0", "tool_name": "' + n + '", "parameters": ' + a + "}",
                tokenizer="cohere",
            )
        )

    # Hermes-style blocks with their own tags
    for fmt, prefix, start, end, src, tok in (
        (
            "longcat",
            "lc",
            "<longcat_tool_call>",
            "</longcat_tool_call>",
            "vLLM longcat parser (Hermes with LongCat tags)",
            None,
        ),
        ("ernie45", "er", "<tool_call>", "</tool_call>", "vLLM ernie45 parser docstring spelling", "ernie45"),
    ):
        b = Book(f"{fmt}/{fmt}.jsonl", None, fmt)
        fam = Family(
            b,
            prefix,
            lambda calls, s=start, e=end: "\n".join(f"{s}\n{env(n, a)}\n{e}" for n, a in calls),
            tokenizer=tok,
            source=src,
            inner_marker=end,
        )
        bad = f'{start}\n{{"name": "get_time", "arguments": {{"timezone": UTC}}}}\n{end}'
        standard(fam, malformed=(bad, bad), truncated=(f'{start}\n{{"name": "get_ti', f'{start}\n{{"name": "get_ti'))
        if tok is not None:
            fam.mention(ordinary_for(tok))
        books.append(b)

    # gigachat3: content<|message_sep|>function call<|role_sep|>\n{json}; one call per message
    b = Book("gigachat3/gigachat3.jsonl", None, "gigachat3")
    fam = Family(
        b,
        "gc3",
        lambda calls: "".join(f"function call<|role_sep|>\n{env(n, a)}" for n, a in calls),
        tokenizer=None,
        source="vLLM gigachat3 parser spelling",
        inner_marker="<|role_sep|>",
    )
    fam.add(
        "hand-content-then-call",
        "hand: content, <|message_sep|>, then the call",
        "Let me check.<|message_sep|>function call<|role_sep|>\n" + env("get_weather", j(UNICODE)),
        content="Let me check.",
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE))],
    )
    bad = 'function call<|role_sep|>\n{"name": "get_time", "arguments": {timezone}}'
    standard(
        fam,
        malformed=(bad, bad),
        content_first=False,
        truncated=(
            'function call<|role_sep|>\n{"name": "get_time", "argu',
            'function call<|role_sep|>\n{"name": "get_time", "argu',
        ),
    )
    books.append(b)

    # xlam: bare list, ```json fence, [TOOL_CALLS], <tool_call> … </tool_call>
    b = Book("xlam/xlam.jsonl", None, "xlam")
    rt = Family(b, "xl", lambda calls: "", tokenizer=None, source=XLAM_LLAMA, inner_marker="")
    rt.add(
        "rt-parallel-unicode",
        f"{XLAM_LLAMA} round trip",
        vllm_rt(rt, XLAM_LLAMA, "<|eot_id|>", None, [tc("get_weather", UNICODE), tc("book_flight", NESTED)]),
        tool_calls=[exp("get_weather", UNICODE, j(UNICODE)), exp("book_flight", NESTED, j(NESTED))],
    )
    rt.add(
        "rt-empty-then-args",
        f"{XLAM_LLAMA} round trip (vLLM #47901)",
        vllm_rt(rt, XLAM_LLAMA, "<|eot_id|>", None, [tc("get_random_joke", {}), tc("get_time", UTC)]),
        tool_calls=[exp("get_random_joke", {}, "{}"), exp("get_time", UTC, j(UTC))],
    )
    fam = Family(
        b,
        "xl",
        lambda calls: "[" + ", ".join(env(n, a) for n, a in calls) + "]",
        tokenizer=None,
        source=VLLM_EX.format("xlam_llama") + " spelling (a bare JSON list)",
        inner_marker="]",
    )
    good, bad = env("get_time", j(UTC)), env("search", '{"query": weather}')
    standard(
        fam,
        malformed=("[" + good + ", " + bad + "]", bad),
        content_first=False,
        kept=[exp("get_time", UTC)],
        truncated=("[" + good + ', {"name": "search", "argu', '{"name": "search", "argu'),
    )
    one = env("get_weather", j(PARIS))
    for slug, out, content in (
        ("fenced", f"Sure.\n```json\n[{one}]\n```\nDone.", joined("Sure.\n", "\nDone.")),
        ("tool-calls-marker", f"[TOOL_CALLS][{one}]", None),
        ("tool-call-tags", f"<tool_call>[{one}]</tool_call>", None),
        ("indented-list", f"[\n    {one}\n]", None),
    ):
        fam.add(
            f"hand-{slug}",
            f"hand: the list {slug.replace('-', ' ')} (vLLM xlam json_code_block_patterns)",
            out,
            content=content,
            tool_calls=[exp("get_weather", PARIS)],
        )
    fam.add(
        "hand-brackets-in-prose",
        "hand: brackets in prose are content",
        "See [1] and [{x}]; done.",
        content="See [1] and [{x}]; done.",
    )
    fam.add(
        "hand-unknown-name-is-content",
        "hand: a list entry whose name is not a tool of the request is content, "
        "with the '[{' that opened it (the call's own marker); the list goes on",
        "[" + env("delete_everything", "{}") + ", " + env("get_time", j(UTC)) + "]",
        content="[" + env("delete_everything", "{}"),
        tool_calls=[exp("get_time", UTC)],
    )
    books.append(b)
    return tuple(books)


BOOKS: list[Callable[[], Any]] = [
    llama3_cases,
    llama4_cases,
    mistral_cases,
    kimi_cases,
    deepseek_v3_cases,
    granite_cases,
    more_cases,
]


def build() -> dict[Path, str]:
    return casefile.build(BOOKS)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
