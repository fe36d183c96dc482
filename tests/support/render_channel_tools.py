"""Generate the case files of the pythonic and channel tool-call formats.

Run from anywhere: ``python tests/support/render_channel_tools.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed. The machinery (Jinja configured as
transformers does, ``Book``, the tools) is ``render_cases.py``'s; read its docstring for the
round-trip method and the normalisation the expected values follow.

Sources, per format (expected values come from them, never from running trisect):

* ``openai`` / ``openai_gptoss`` (gpt-oss Harmony): round trips through the gpt-oss chat
  template (``tests/data/templates/openai-gpt-oss-120b.jinja``: one call per assistant message,
  ``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>``, the
  final answer ``<|channel|>final<|message|>…<|return|>``); openai/harmony's own test data
  (``test_simple_tool_call``, ``test_simple_reasoning_response`` with their token ids,
  ``test_streamable_parser`` text); hand-written messages in the template's wire format for
  parallel calls (several messages), built-in recipients and malformed headers. Expected: the
  ``analysis`` bodies are reasoning, ``final`` / recipient-less ``commentary`` bodies content,
  a message with a recipient a call named after it (``functions.`` dropped) with its JSON body.
* ``pythonic`` / ``llama4_pythonic``: the real model responses quoted in Meta's prompt-format
  documents (``llama3_2_text_prompt_format.md``, ``llama4_prompt_format.md``) and calls in the
  same syntax for the other cases; expected arguments are the Python literals read by hand.
* ``olmo3`` / ``lfm2``: vLLM 0.33's ``olmo3_tool_parser.py`` / ``lfm2_tool_parser.py`` (no
  template or output is staged): hand-written.
* ``kimi_k3`` (XTML) and ``inkling``: vLLM 0.33's ``kimi_k3_tool_parser.py`` and
  ``parser/inkling.py``: hand-written.

Token ids: ``gpt_oss`` (o200k Harmony) for Harmony, ``llama3`` for pythonic, ``llama4`` for
llama4_pythonic; the others have no tokenizer here and run on text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if __name__ == "__main__":  # run as a script: import `support` as a package, not by file
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(TESTS))

from support import casefile  # noqa: E402
from support import tokenizers as tk  # noqa: E402
from support.render_cases import (  # noqa: E402
    CONFIGURE,
    GET_JOKE,
    GET_TIME,
    GET_WEATHER,
    SEARCH,
    WRITE_FILE,
    Book,
    call,
    joined,
    render,
    tool,
)

LOCAL_HARMONY = TESTS / "data" / "outputs" / "gpt-oss-harmony"
TOOLS = [GET_WEATHER, GET_TIME, GET_JOKE, SEARCH, WRITE_FILE, CONFIGURE]


def ordinary(tokenizer: str, text: str) -> list[int]:
    """Ids of ``text`` with marker strings spelled as ordinary tokens."""
    if tokenizer == "lfm2":  # synthetic: the same BPE without its added tokens
        from support import tok_lfm2

        return list(tok_lfm2.load_ordinary().encode(text, add_special_tokens=False).ids)
    return list(tk.load(tokenizer).encode(text, allowed_special=set(), disallowed_special=()))


def ids(tokenizer: str, *pieces: tuple[str, bool]) -> list[int]:
    out: list[int] = []
    for text, as_ordinary in pieces:
        out += ordinary(tokenizer, text) if as_ordinary else tk.encode(tokenizer, text)
    return out


# ======================================================================================
# gpt-oss Harmony
# ======================================================================================

GPT_OSS = "openai-gpt-oss-120b.jinja"
H_USER = {"role": "user", "content": "What is the weather in Tokyo?"}
LOOKUP_WEATHER = tool(
    "lookup_weather",
    "Use this tool to lookup the weather in a given location.",
    {"location": {"type": "string"}},
    ["location"],
)


def harmony_turn(
    assistant: dict[str, Any], *, history: list[dict[str, Any]] | None = None, tools: list | None = None
) -> str:
    """The text the model generates for ``assistant``: the full render minus the prompt (which
    ends with ``<|start|>assistant``), the closing ``<|call|>`` / ``<|return|>`` kept."""
    msgs = [H_USER, *(history or [])]
    kw = {"tools": tools if tools is not None else TOOLS, "strftime_now": lambda _fmt: "2025-06-28"}
    prompt = render(GPT_OSS, msgs, add_generation_prompt=True, **kw)
    full = render(GPT_OSS, [*msgs, assistant], add_generation_prompt=False, **kw)
    assert prompt.endswith("<|start|>assistant") and full.startswith(prompt), (prompt[-40:], full[-80:])
    return full[len(prompt) :]


def tc(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": "x", "type": "function", "function": {"name": name, "arguments": arguments}}


def h_call(name: str, args: str, *, header: str = "assistant to=functions.{n}<|channel|>commentary json") -> str:
    return "<|start|>" + header.format(n=name) + "<|message|>" + args + "<|call|>"


def harmony_book(reasoning: str | None, path: str) -> Book:
    b = Book(path, reasoning, "openai")
    tok = "gpt_oss"
    p = "h-" if reasoning else "h-tools-only-"
    src = "gpt-oss template (openai-gpt-oss-120b.jinja)"

    # ---- round trips through the template --------------------------------------------
    think = "User wants the weather in Tokyo. Use get_weather."
    out = harmony_turn(
        {"role": "assistant", "thinking": think, "tool_calls": [tc("get_weather", {"location": "Tokyo"})]}
    )
    b.add(
        p + "rt-one-call",
        src,
        out,
        reasoning=think,
        tool_calls=[call("get_weather", {"location": "Tokyo"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = harmony_turn(
        {
            "role": "assistant",
            "content": "Tokyo weather: I will call the tool.",
            "tool_calls": [tc("get_weather", {"location": "Tokyo", "unit": "celsius"})],
        }
    )
    b.add(
        p + "rt-call-content-as-analysis",
        src + ": content of a tool-call message is rendered as analysis",
        out,
        reasoning="Tokyo weather: I will call the tool.",
        tool_calls=[call("get_weather", {"location": "Tokyo", "unit": "celsius"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = harmony_turn({"role": "assistant", "tool_calls": [tc("get_random_joke", {})]})
    b.add(p + "rt-no-args", src, out, tool_calls=[call("get_random_joke", {})], tools=TOOLS, tokenizer=tok)
    typed = {
        "count": 3,
        "ratio": 0.25,
        "enabled": True,
        "options": {"a": [1, 2], "b": None},
        "tags": ["x", "y"],
        "note": None,
        "label": 'Zürich "quoted" \\ back\nslash',
        "mode": "fast",
        "level": 2,
        "nothing": None,
    }
    out = harmony_turn({"role": "assistant", "thinking": "Set them all.", "tool_calls": [tc("configure", typed)]})
    b.add(
        p + "rt-schema-types",
        src,
        out,
        reasoning="Set them all.",
        tool_calls=[call("configure", typed)],
        tools=TOOLS,
        tokenizer=tok,
    )
    marker_args = {"path": "notes.txt", "content": "ends with <|call|> then <|end|><|start|>assistant<|channel|>final"}
    out = harmony_turn({"role": "assistant", "thinking": "Write it.", "tool_calls": [tc("write_file", marker_args)]})
    b.add(
        p + "rt-marker-text-in-value",
        src + ": a Harmony marker string inside a JSON string argument",
        out,
        reasoning="Write it.",
        tool_calls=[call("write_file", marker_args)],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = harmony_turn({"role": "assistant", "thinking": "Simple question.", "content": "It is sunny in Tokyo."})
    b.add(
        p + "rt-final-answer",
        src + ": last assistant turn (analysis + final ending in <|return|>)",
        out,
        reasoning="Simple question.",
        content="It is sunny in Tokyo.",
        tools=TOOLS,
        tokenizer=tok,
    )
    hist = [
        {"role": "assistant", "tool_calls": [tc("get_weather", {"location": "Tokyo"})]},
        {"role": "tool", "content": '{"temp": 20}'},
    ]
    out = harmony_turn(
        {"role": "assistant", "thinking": "The tool said 20.", "content": "It is 20 °C in Tokyo."}, history=hist
    )
    b.add(
        p + "rt-answer-after-tool-result",
        src + ": answer after a tool message",
        out,
        reasoning="The tool said 20.",
        content="It is 20 °C in Tokyo.",
        tools=TOOLS,
        tokenizer=tok,
    )

    # ---- openai/harmony test data ------------------------------------------------------
    data = LOCAL_HARMONY
    simple_ids = [int(x) for x in (data / "test_simple_tool_call.txt").read_text().split()] + [200012]
    text = tk.decode(tok, simple_ids)
    b.add(
        p + "harmony-test-simple-tool-call",
        "openai/harmony test-data/test_simple_tool_call.txt (+ <|call|>, as its test appends): recipient "
        "lookup_weather in the role header, channel 'analysis code'",
        text,
        reasoning='User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.',
        tool_calls=[call("lookup_weather", {"location": "Tokyo"})],
        tools=[LOOKUP_WEATHER],
        tokenizer=tok,
        token_ids=None if simple_ids == tk.encode(tok, text) else simple_ids,
    )
    reason_ids = [int(x) for x in (data / "test_simple_reasoning_response.txt").read_text().split()]
    text = tk.decode(tok, reason_ids)
    b.add(
        p + "harmony-test-simple-reasoning",
        "openai/harmony test-data/test_simple_reasoning_response.txt",
        text,
        reasoning='User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.',
        content="2 + 2 = 4.",
        tools=[],
        tokenizer=tok,
        token_ids=None if reason_ids == tk.encode(tok, text) else reason_ids,
    )
    stream_text = (data / "test_streamable_parser.txt").read_text()
    stream_text = stream_text[: stream_text.index("<|call|>") + len("<|call|>")]
    analysis = stream_text[len("<|channel|>analysis<|message|>") : stream_text.index("<|end|>")]
    b.add(
        p + "harmony-test-streamable-parser",
        "openai/harmony test-data/test_streamable_parser.txt up to the model's <|call|> (the tool's own reply "
        "after it is not model output): built-in recipient browser.search after the channel",
        stream_text,
        reasoning=analysis.strip(),
        tool_calls=[call("browser.search", {"query": "current US president July 2025", "topn": 10, "source": "news"})],
        tools=TOOLS,
        options={"chat_template_kwargs": {"builtin_tools": ["browser"]}},
        tokenizer=tok,
    )
    finals = "<|channel|>analysis<|message|>thinking 3+5<|end|><|start|>assistant<|channel|>final<|message|>8<|end|>"
    b.add(
        p + "harmony-test-analysis-then-final",
        "openai/harmony test-data/test_keep_analysis_between_finals.txt, last assistant turn",
        finals,
        reasoning="thinking 3+5",
        content="8",
        tools=[],
        tokenizer=tok,
    )

    # ---- hand-written in the template's wire format ------------------------------------
    hw = "hand-written in the gpt-oss template's wire format"
    a1 = '{"location":"Paris"}'
    a2 = '{"timezone":"Europe/Paris"}'
    out = "<|channel|>analysis<|message|>Two tools.<|end|>" + h_call("get_weather", a1) + h_call("get_time", a2)
    b.add(
        p + "parallel-calls",
        hw + ": two call messages in a row",
        out,
        reasoning="Two tools.",
        tool_calls=[call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = (
        "<|channel|>analysis<|message|>First the weather.<|end|>"
        + h_call("get_weather", a1)
        + "<|start|>assistant<|channel|>analysis<|message|>Now the time.<|end|>"
        + h_call("get_time", a2)
    )
    b.add(
        p + "interleaved-analysis-calls",
        hw,
        out,
        reasoning="First the weather.Now the time.",
        tool_calls=[call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = "<|channel|>commentary<|message|>Checking the weather for you.<|end|>" + h_call(
        "get_weather", a1, header="assistant<|channel|>commentary to=functions.{n} <|constrain|>json"
    )
    b.add(
        p + "preamble-and-constrain",
        hw + ": commentary preamble without recipient is content; recipient after the channel; <|constrain|>json",
        out,
        content="Checking the weather for you.",
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = " to=functions.get_weather<|channel|>commentary json<|message|>" + a1 + "<|call|>"
    b.add(
        p + "recipient-right-after-prompt",
        hw + ": the first message's role header continues the prompt's <|start|>assistant",
        out,
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=TOOLS,
        tokenizer=tok,
    )
    out = (
        "<|channel|>analysis<|message|>Search first.<|end|>"
        + h_call(
            "browser.search", '{"query":"weather Paris","topn":3}', header="assistant<|channel|>analysis to={n} code"
        )
        + "<|start|>assistant<|channel|>final<|message|>Searching.<|return|>"
    )
    b.add(
        p + "builtin-browser",
        hw + ": a request to a built-in tool on the analysis channel is reasoning (vLLM 0.33 "
        "HarmonyParser: browser.* is not a function recipient, harmony_utils.py:33-61)",
        out,
        reasoning='Search first.{"query":"weather Paris","topn":3}',
        content="Searching.",
        tools=TOOLS,
        options={"chat_template_kwargs": {"builtin_tools": ["browser"]}},
        tokenizer=tok,
    )
    out = "<|channel|>final<|message|>Part one. <|end|><|start|>assistant<|channel|>final<|message|>Part two.<|return|>"
    b.add(
        p + "two-finals",
        hw + ": the text of two final messages is concatenated",
        out,
        content="Part one. Part two.",
        tools=TOOLS,
        tokenizer=tok,
    )
    out = (
        "<|channel|>analysis<|message|>Explain <|call|> and <|end|> tokens.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
    )
    b.add(
        p + "ordinary-marker-text-in-reasoning",
        hw + ": marker strings written as ordinary tokens",
        out,
        reasoning="Explain <|call|> and <|end|> tokens.",
        content="Done.",
        tools=TOOLS,
        tokenizer=tok,
        token_ids=ids(
            tok,
            ("<|channel|>analysis<|message|>", False),
            ("Explain <|call|> and <|end|> tokens.", True),
            ("<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>", False),
        ),
        ids_only=True,
    )
    out = "<|channel|>final<|message|>Done with no stop token"
    b.add(
        p + "final-without-end",
        hw + ": output stops before <|return|>",
        out,
        content="Done with no stop token",
        tools=TOOLS,
        tokenizer=tok,
    )
    out = (
        "<|channel|>analysis<|message|>Call it.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>" + a1
    )
    b.add(
        p + "call-without-call-token",
        hw + ": the JSON is complete, the <|call|> stop token not in the text",
        out,
        reasoning="Call it.",
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=TOOLS,
        tokenizer=tok,
    )

    # ---- malformed ---------------------------------------------------------------------
    bad = "<|channel|>bogus<|message|>hello<|end|>"
    b.add(
        p + "malformed-unknown-channel",
        hw + ": unknown channel: the header is kept as text",
        bad,
        content="<|channel|>bogus<|message|>hello",
        tools=TOOLS,
        tokenizer=tok,
    )
    bad = "<|start|>assistant<|message|>no channel<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"
    b.add(
        p + "malformed-no-channel",
        hw + ": header without a channel is kept as text",
        bad,
        content="<|start|>assistant<|message|>no channelok",
        tools=TOOLS,
        tokenizer=tok,
    )
    bad = (
        "<|channel|>analysis<|message|>Try.<|end|>"
        + h_call("get_weather", "{location: Paris}")
        + "<|start|>assistant<|channel|>final<|message|>Sorry.<|return|>"
    )
    b.add(
        p + "malformed-invalid-json",
        hw + ": a call body that is not JSON is not a call; its text is content",
        bad,
        reasoning="Try.",
        content=(
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{location: Paris}"
            "<|call|>Sorry."
        ),
        tools=TOOLS,
        tokenizer=tok,
    )
    bad = (
        "<|channel|>analysis<|message|>Run code.<|end|>"
        "<|start|>assistant to=python<|channel|>analysis code<|message|>print(1)<|call|>"
    )
    b.add(
        p + "malformed-python-code-body",
        hw + ": built-in python on the analysis channel is reasoning, its code included (vLLM 0.33 "
        "HarmonyParser: python is not a function recipient)",
        bad,
        reasoning="Run code.print(1)",
        tools=TOOLS,
        tokenizer=tok,
    )
    bad = "<|channel|>commentary to=functions.a to=functions.b<|message|>{}<|call|>"
    b.add(
        p + "malformed-two-recipients",
        hw + ": two recipients",
        bad,
        content="<|channel|>commentary to=functions.a to=functions.b<|message|>{}",
        tools=TOOLS,
        tokenizer=tok,
    )
    bad = "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>fin"
    b.add(
        p + "malformed-header-cut-off",
        hw + ": output ends inside a header",
        bad,
        reasoning="Hm.",
        content="<|start|>assistant<|channel|>fin",
        tools=TOOLS,
        tokenizer=tok,
    )
    return b


# ======================================================================================
# pythonic families
# ======================================================================================

LLAMA32_DOC = "Meta llama3_2_text_prompt_format.md (meta-llama/llama-models), model response"
LLAMA4_DOC = "Meta llama4_prompt_format.md (meta-llama/llama-models), model response"
DOC_WEATHER = tool(
    "get_weather",
    "Get weather info for places",
    {"city": {"type": "string"}, "metric": {"type": "string"}},
    ["city"],
)
DOC_USER_INFO = tool(
    "get_user_info",
    "Retrieve details for a specific user by their unique identifier.",
    {"user_id": {"type": "integer"}, "special": {"type": "string"}},
    ["user_id"],
)
DOC_TOOLS = [DOC_WEATHER, DOC_USER_INFO]
PY_TOOLS = [*TOOLS, DOC_USER_INFO]

TYPED_SRC = (
    "configure(count=3, ratio=-0.25, enabled=True, options={'a': [1, 2], \"b\": None}, tags=('x', 'y'), "
    'note=None, label=\'it\\\'s "quoted"\\n\\tZürich \\u00e9\', mode="fast", level=2, nothing=None)'
)
TYPED = {
    "count": 3,
    "ratio": -0.25,
    "enabled": True,
    "options": {"a": [1, 2], "b": None},
    "tags": ["x", "y"],
    "note": None,
    "label": 'it\'s "quoted"\n\tZürich é',
    "mode": "fast",
    "level": 2,
    "nothing": None,
}
# the raw-string formats (OLMo 3, LFM2: their templates write `key='` + value + `'`, no escapes)
# read a '…' string as written, so their typed case writes the escaped label double-quoted
RAW_TYPED_SRC = TYPED_SRC.replace(
    "label='it\\'s \"quoted\"\\n\\tZürich \\u00e9'", 'label="it\'s \\"quoted\\"\\n\\tZürich \\u00e9"'
)
RAW_SRC = "write_file(path='C:\\path\\to', content='    if x:\n        return \"a\\nb\"\n')"
RAW = {"path": "C:\\path\\to", "content": '    if x:\n        return "a\\nb"\n'}
RAW_REF = (
    ': the template writes each string raw between single quotes (`"\'" + value + "\'"`): '
    "backslashes and newlines are the value's own"
)
JSONISH_SRC = 'configure(enabled=true, note=null, options={"k": false}, ratio=1e-3, count=1_000)'
JSONISH = {"enabled": True, "note": None, "options": {"k": False}, "ratio": 0.001, "count": 1000}
TRIPLE_SRC = "write_file(path='main.py', content='''def main():\n    print(\"hi\")\n''')"
TRIPLE = {"path": "main.py", "content": 'def main():\n    print("hi")\n'}


def pythonic_common(b: Book, p: str, tok: str | None, wrap: tuple[str, str], src: str) -> None:
    """Cases every bare-list pythonic family shares; ``wrap`` = the family's optional markers."""
    o, c = wrap
    b.add(
        p + "typed-literals",
        src + ": every literal kind",
        "[" + TYPED_SRC + "]",
        tool_calls=[call("configure", TYPED)],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        p + "json-names",
        src + ": JSON true/false/null, exponent, digit groups",
        "[" + JSONISH_SRC + "]",
        tool_calls=[call("configure", JSONISH)],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        p + "triple-quoted",
        src + ": a triple-quoted multi-line string",
        "[" + TRIPLE_SRC + "]",
        tool_calls=[call("write_file", TRIPLE)],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        p + "no-args-and-trailing-comma",
        src,
        "[get_random_joke(), get_time(timezone='UTC',)]",
        tool_calls=[call("get_random_joke", {}), call("get_time", {"timezone": "UTC"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = o + '[search(query="what does ], ) or [f(x=1)] mean?", max_results=2)]' + c
    b.add(
        p + "marker-text-in-value",
        src + ": list and call syntax inside a string value",
        out,
        tool_calls=[call("search", {"query": "what does ], ) or [f(x=1)] mean?", "max_results": 2})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = o + '[get_weather(location="Paris")]' + c + "\nLooking that up."
    b.add(
        p + "content-after",
        src,
        out,
        content="Looking that up.",
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = "I'll check both. " + o + "[get_weather(location='Paris'), get_time(timezone='Europe/Paris')]" + c + " Done."
    b.add(
        p + "content-around",
        src + ": text before and after a list (the doc calls it incorrect; it is kept)",
        out,
        content=joined("I'll check both. ", " Done."),
        tool_calls=[call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    text = "See [1] and [the docs](https://example.com), or a list [1, 2, 3]."
    b.add(
        p + "brackets-in-prose",
        src + ": a [ that does not begin a call is content",
        text,
        content=text,
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = "[get_weather(location='Zürich'), get_weather(location='東京')]"
    b.add(
        p + "unicode",
        src,
        out,
        tool_calls=[call("get_weather", {"location": "Zürich"}), call("get_weather", {"location": "東京"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    # not calls: never evaluated; the text stays content
    for slug, text in [
        ("malformed-positional", "[get_weather('Paris')]"),
        ("malformed-bare-name", "[get_weather(location=Paris)]"),
        ("malformed-attribute", "[os.system(command='ls')]"),
        ("malformed-import", "[__import__('os').system('echo pwned')]"),
        ("malformed-nested-call", "[get_weather(location=str(1))]"),
        ("malformed-comprehension", "[search(query=[x for x in 'ab'])]"),
        ("malformed-operator", "[configure(count=1+1)]"),
        ("malformed-duplicate-keyword", "[get_weather(location='a', location='b')]"),
        ("malformed-fstring", "[get_weather(location=f'{x}')]"),
    ]:
        b.add(p + slug, src + ": not a literal call: content", text, content=text, tools=PY_TOOLS, tokenizer=tok)
    text = "[get_random_joke(), get_weather(location=open('/etc/passwd').read())]"
    b.add(
        p + "malformed-second-call",
        src + ": the first call is complete; the second is not a call, so the list is none: a block"
        " is all of its text or none (DESIGN, contract 10; vLLM's pythonic parser gives it all as content too)",
        text,
        content=text,
        tools=PY_TOOLS,
        tokenizer=tok,
    )


def pythonic_book() -> Book:
    b = Book("pythonic/pythonic.jsonl", None, "pythonic")
    tok = "llama3"
    out = "[get_weather(city='San Francisco', metric='celsius'), get_weather(city='Seattle', metric='celsius')]"
    b.add(
        "py-doc-llama32-parallel",
        LLAMA32_DOC + " (zero-shot function calling, system message)",
        out,
        tool_calls=[
            call("get_weather", {"city": "San Francisco", "metric": "celsius"}),
            call("get_weather", {"city": "Seattle", "metric": "celsius"}),
        ],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    out = "[get_user_info(user_id=7890, special='black')]"
    b.add(
        "py-doc-llama32-user-info",
        LLAMA32_DOC + " (zero-shot function calling, user message)",
        out,
        tool_calls=[call("get_user_info", {"user_id": 7890, "special": "black"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    out = '<|python_tag|>[get_weather(city="San Francisco", metric="celsius")]'
    b.add(
        "py-doc-llama32-python-tag",
        LLAMA32_DOC + " (the assistant turn with <|python_tag|>)",
        out,
        tool_calls=[call("get_weather", {"city": "San Francisco", "metric": "celsius"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    b.add(
        "py-python-tag-as-text",
        LLAMA32_DOC + ": <|python_tag|> written as ordinary tokens is text",
        out,
        content="<|python_tag|>",
        tool_calls=[call("get_weather", {"city": "San Francisco", "metric": "celsius"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
        token_ids=ids(tok, ("<|python_tag|>", True), (out[len("<|python_tag|>") :], False)),
        ids_only=True,
    )
    pythonic_common(b, "py-", tok, ("", ""), "pythonic syntax of the Llama 3.2 doc")
    return b


def llama4_book() -> Book:
    b = Book("llama4_pythonic/llama4_pythonic.jsonl", None, "llama4_pythonic")
    tok = "llama4"
    out = '[get_weather(city="San Francisco"), get_weather(city="Seattle")]'
    b.add(
        "l4-doc-parallel",
        LLAMA4_DOC + " (zero-shot function calling, system message)",
        out,
        tool_calls=[call("get_weather", {"city": "San Francisco"}), call("get_weather", {"city": "Seattle"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    out = "[get_user_info(user_id=7890, special='black')]"
    b.add(
        "l4-doc-user-info",
        LLAMA4_DOC + " (zero-shot function calling, user message)",
        out,
        tool_calls=[call("get_user_info", {"user_id": 7890, "special": "black"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    out = '<|python_start|>[get_weather(city="Paris")]<|python_end|>'
    b.add(
        "l4-wrapped",
        "vLLM 0.33 llama4_pythonic_tool_parser.py: an optional <|python_start|> / <|python_end|> around the list",
        out,
        tool_calls=[call("get_weather", {"city": "Paris"})],
        tools=DOC_TOOLS,
        tokenizer=tok,
    )
    out = '<|python_start|>[write_file(path="a.txt", content="x <|python_end|> y")]<|python_end|>'
    b.add(
        "l4-wrap-marker-in-value",
        "trisect's rule (src/trisect/formats/pythonic.py): the closing marker inside a string value is value "
        "text (encoded as its special token, as templates do); vLLM 0.33 llama4_pythonic_tool_parser.py "
        "removes every <|python_end|>, the value's too",
        out,
        tool_calls=[call("write_file", {"path": "a.txt", "content": "x <|python_end|> y"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = "<|python_start|>[write_file(path='b.txt', content='<|python_end|>')]<|python_end|>"
    b.add(
        "l4-wrap-marker-whole-value",
        "trisect's rule (src/trisect/formats/pythonic.py): a value that is just the closing marker (special "
        "token right after the quote) is value text",
        out,
        tool_calls=[call("write_file", {"path": "b.txt", "content": "<|python_end|>"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    bad = '<|python_start|>[get_weather(city="Paris"<|python_end|>'
    b.add(
        "l4-malformed-closed-early",
        "trisect's rule (src/trisect/formats/pythonic.py): <|python_end|> before the call closes; as "
        "text the call breaks at '<' and the closer is dropped as after any list",
        bad,
        content='[get_weather(city="Paris"',
        tools=DOC_TOOLS,
        tokenizer=None,
    )
    b.add(
        "l4-malformed-closed-early-ids",
        "trisect's rule (src/trisect/formats/pythonic.py): <|python_end|> by id interrupts the call, "
        "which ends there: its text, the closer included, is content",
        bad,
        content='[get_weather(city="Paris"<|python_end|>',
        tools=DOC_TOOLS,
        tokenizer=tok,
        token_ids=ids(tok, ("<|python_start|>", False), ('[get_weather(city="Paris"', True), ("<|python_end|>", False)),
        ids_only=True,
    )
    pythonic_common(b, "l4-", tok, ("<|python_start|>", "<|python_end|>"), "pythonic syntax of the Llama 4 doc")
    return b


OLMO_SRC = "vLLM 0.33 olmo3_tool_parser.py: <function_calls> newline-separated calls </function_calls>"


def olmo3_book(reasoning: str | None, path: str) -> Book:
    b = Book(path, reasoning, "olmo3")
    p = "olmo3-think-" if reasoning else "olmo3-"
    think = "<think>The user wants the weather.</think>" if reasoning else ""
    r = "The user wants the weather." if reasoning else None
    opts = {"chat_template_kwargs": {"enable_thinking": True}} if reasoning else {}
    blk = '<function_calls>\nget_weather(location="Paris")\nget_time(timezone="Europe/Paris")\n</function_calls>'
    two = [call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})]
    b.add(
        p + "two-calls",
        OLMO_SRC,
        think + blk,
        reasoning=r,
        tool_calls=two,
        tools=PY_TOOLS,
        tokenizer=None,
        options=opts,
    )
    b.add(
        p + "one-call-inline",
        OLMO_SRC,
        think + '<function_calls>get_weather(location="Paris")</function_calls>',
        reasoning=r,
        tool_calls=two[:1],
        tools=PY_TOOLS,
        tokenizer=None,
        options=opts,
    )
    out = think + "Let me check.\n" + blk + "\nDone."
    b.add(
        p + "content-around",
        OLMO_SRC,
        out,
        reasoning=r,
        content=joined("Let me check.\n", "\nDone."),
        tool_calls=two,
        tools=PY_TOOLS,
        tokenizer=None,
        options=opts,
    )
    if reasoning:
        return b
    b.add(
        p + "typed",
        OLMO_SRC,
        "<function_calls>\n" + RAW_TYPED_SRC + "\n" + JSONISH_SRC + "\n</function_calls>",
        tool_calls=[call("configure", TYPED), call("configure", JSONISH)],
        tools=PY_TOOLS,
        tokenizer=None,
    )
    b.add(
        p + "raw-strings",
        "vllm-tool_chat_template_olmo3.jinja (tests/data/detect/heldout) lines 61-62" + RAW_REF,
        "<function_calls>\n" + RAW_SRC + "\n</function_calls>",
        tool_calls=[call("write_file", RAW)],
        tools=PY_TOOLS,
        tokenizer=None,
    )
    b.add(
        p + "marker-text-in-value",
        OLMO_SRC,
        '<function_calls>\nsearch(query="</function_calls>\\nget_time(timezone=1)")\n</function_calls>',
        tool_calls=[call("search", {"query": "</function_calls>\nget_time(timezone=1)"})],
        tools=PY_TOOLS,
        tokenizer=None,
    )
    b.add(
        p + "triple-quoted",
        OLMO_SRC,
        "<function_calls>\n" + TRIPLE_SRC + "\n</function_calls>",
        tool_calls=[call("write_file", TRIPLE)],
        tools=PY_TOOLS,
        tokenizer=None,
    )
    text = "<function_calls>\nget_weather(location=Paris)\n</function_calls>"
    b.add(
        p + "malformed-bare-name",
        OLMO_SRC + ": not a literal call; the block yields no call, so all of its text is content",
        text,
        content=text,
        tools=PY_TOOLS,
        tokenizer=None,
    )
    text = "Lists like [1, 2] are content."
    b.add(p + "brackets-are-content", OLMO_SRC, text, content=text, tools=PY_TOOLS, tokenizer=None)
    return b


LFM2_SRC = "vLLM 0.33 lfm2_tool_parser.py: <|tool_call_start|>[pythonic list]<|tool_call_end|>"


def lfm2_book() -> Book:
    b = Book("lfm2/lfm2.jsonl", None, "lfm2")
    s, e = "<|tool_call_start|>", "<|tool_call_end|>"
    tok = "lfm2"
    two = [call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})]
    b.add(
        "lfm2-one-call",
        LFM2_SRC,
        s + '[get_weather(location="Paris")]' + e,
        tool_calls=two[:1],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        "lfm2-parallel",
        LFM2_SRC,
        s + "[get_weather(location='Paris'), get_time(timezone='Europe/Paris')]" + e,
        tool_calls=two,
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    out = "Checking now. " + s + '[get_weather(location="Paris")]' + e + " The result follows."
    b.add(
        "lfm2-content-around",
        LFM2_SRC,
        out,
        content=joined("Checking now. ", " The result follows."),
        tool_calls=two[:1],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        "lfm2-typed",
        LFM2_SRC,
        s + "[" + RAW_TYPED_SRC + ", " + JSONISH_SRC + "]" + e,
        tool_calls=[call("configure", TYPED), call("configure", JSONISH)],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        "lfm2-raw-strings",
        "LFM2.5-8B-A1B.jinja (tests/data/detect/heldout) lines 5-6" + RAW_REF,
        s + "[" + RAW_SRC + "]" + e,
        tool_calls=[call("write_file", RAW)],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    b.add(
        "lfm2-marker-text-in-value",
        LFM2_SRC,
        s + '[search(query="' + e + ' and ]")]' + e,
        tool_calls=[call("search", {"query": e + " and ]"})],
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    text = "Lists like [get_weather(location='Paris')] outside the markers are content."
    b.add(
        "lfm2-list-outside-markers",
        LFM2_SRC + ": only a list between the markers is a call",
        text,
        content=text,
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    bad = s + "[get_weather(location=Paris)]" + e
    b.add(
        "lfm2-malformed-bare-name",
        LFM2_SRC + ": not a literal call; the block yields no call, so all of its text is content",
        bad,
        content=bad,
        tools=PY_TOOLS,
        tokenizer=tok,
    )
    text = s + '[get_weather(location="Paris")]' + e
    b.add(
        "lfm2-ordinary-markers",
        LFM2_SRC + ": the markers written as ordinary tokens are text, so the list is content",
        text,
        content=text,
        tools=PY_TOOLS,
        tokenizer=tok,
        token_ids=ids(tok, (s, True), ('[get_weather(location="Paris")]', False), (e, True)),
        ids_only=True,
    )
    return b


# ======================================================================================
# Kimi K3 XTML and Inkling: written from vLLM 0.33 sources
# ======================================================================================

K3_SRC = "vLLM 0.33 kimi_k3_tool_parser.py (XTML): hand-written in its wire format"
PYTHON = tool("python", "Run Python code.", {"code": {"type": "string"}}, ["code"])
K3_TOOLS = [*TOOLS, PYTHON]


def k3_arg(key: str, value: str, typ: str = "string") -> str:
    return f'<|open|>argument key="{key}" type="{typ}"<|sep|>{value}<|close|>argument<|sep|>'


def k3_call(name: str, index: int, *args: str) -> str:
    return f'<|open|>call tool="{name}" index="{index}"<|sep|>' + "".join(args) + "<|close|>call<|sep|>"


def k3_tools(*calls: str, sep: str = "") -> str:
    return "<|open|>tools<|sep|>" + sep + sep.join(calls) + sep + "<|close|>tools<|sep|>"


def kimi_k3_book() -> Book:
    b = Book("kimi_k3/kimi_k3.jsonl", None, "kimi_k3")
    kw: dict[str, Any] = {"tools": K3_TOOLS, "tokenizer": None}
    out = k3_tools(k3_call("python", 1, k3_arg("code", "print(1)")))
    b.add(
        "k3-catalogue-example",
        K3_SRC + " (the catalogue's own example)",
        out,
        tool_calls=[call("python", {"code": "print(1)"})],
        **kw,
    )
    out = (
        "Let me check.\n"
        + k3_tools(
            k3_call("get_weather", 1, k3_arg("location", "Paris")),
            k3_call("get_time", 2, k3_arg("timezone", "Europe/Paris")),
            sep="\n",
        )
        + "\nBoth requested."
    )
    b.add(
        "k3-parallel-content-around",
        K3_SRC,
        out,
        content=joined("Let me check.\n", "\nBoth requested."),
        tool_calls=[call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "Europe/Paris"})],
        **kw,
    )
    typed = [
        k3_arg("count", "3", "integer"),
        k3_arg("ratio", "0.25", "number"),
        k3_arg("enabled", "true", "boolean"),
        k3_arg("options", '{"a": [1, 2], "b": null}', "object"),
        k3_arg("tags", '["x", "y"]', "array"),
        k3_arg("note", "null", "null"),
        k3_arg("label", '  raw text, "quotes" and\nnewlines kept  '),
        k3_arg("level", "two", "integer"),
    ]
    b.add(
        "k3-schema-types",
        K3_SRC + ': type="string" raw, other types JSON (invalid JSON stays a string)',
        k3_tools(k3_call("configure", 1, *typed)),
        tool_calls=[
            call(
                "configure",
                {
                    "count": 3,
                    "ratio": 0.25,
                    "enabled": True,
                    "options": {"a": [1, 2], "b": None},
                    "tags": ["x", "y"],
                    "note": None,
                    "label": '  raw text, "quotes" and\nnewlines kept  ',
                    "level": "two",
                },
            )
        ],
        **kw,
    )
    out = k3_tools(
        k3_call(
            "write_file",
            1,
            k3_arg("path", "a&amp;b.txt"),
            '<|open|>argument key="content" type="string"<|sep|>x &amp; y<|close|>argument<|sep|>',
        )
    )
    out = out.replace('key="path"', 'key="pa&quot;th"')
    b.add(
        "k3-attribute-unescaping",
        K3_SRC + ": attribute values are HTML-unescaped, string values are raw",
        out,
        tool_calls=[call("write_file", {'pa"th': "a&amp;b.txt", "content": "x &amp; y"})],
        **kw,
    )
    value = "line <|close|>argument<|sep|> mid-line\n<|sep|> and <|open|>argument here"
    b.add(
        "k3-marker-text-in-value",
        K3_SRC + ": element markers inside a raw value that the structure does not follow are value text",
        k3_tools(k3_call("write_file", 1, k3_arg("path", "x.txt"), k3_arg("content", value))),
        tool_calls=[call("write_file", {"path": "x.txt", "content": value})],
        **kw,
    )
    b.add(
        "k3-no-arguments",
        K3_SRC,
        k3_tools(k3_call("get_random_joke", 1)),
        tool_calls=[call("get_random_joke", {})],
        **kw,
    )
    bad = '<|open|>call tool="python" index="1"<|sep|>' + k3_arg("code", "print(1)") + "<|close|>tools<|sep|>"
    b.add(
        "k3-malformed-no-call-close",
        K3_SRC + ": a call counts only with <|close|>call<|sep|>; never closed, it is unfinished at the end",
        "<|open|>tools<|sep|>" + bad,
        unfinished_call="<|open|>tools<|sep|>" + bad,  # the block's opener goes with the cut-off call
        **kw,
    )
    bad = '<|open|>call index="1"<|sep|>' + k3_arg("code", "print(1)") + "<|close|>call<|sep|>"
    b.add(
        "k3-malformed-no-tool-attribute",
        K3_SRC + ": a call without a tool name is content; the block yields no call: all of its text",
        "<|open|>tools<|sep|>" + bad + "<|close|>tools<|sep|>",
        content="<|open|>tools<|sep|>" + bad + "<|close|>tools<|sep|>",
        **kw,
    )
    for id, body in [
        ("json-element", '<|open|>json<|sep|>{"code": "print(1)"}<|close|>json<|sep|>'),
        ("argument-without-key", '<|open|>argument type="object"<|sep|>{"code": "print(1)"}<|close|>argument<|sep|>'),
        ("arguments-element", '<|open|>arguments<|sep|>{"code": "print(1)"}<|close|>arguments<|sep|>'),
    ]:
        out = k3_tools('<|open|>call tool="python" index="1"<|sep|>' + body + "<|close|>call<|sep|>")
        b.add(
            f"k3-malformed-body-{id}",
            K3_SRC + ": a call's body holds argument elements, each named by key=; any other element does "
            "not read, so the call is malformed and its whole text is content (never {} or a key '')",
            out,
            content=out,
            **kw,
        )
    return b


INK_SRC = "vLLM 0.33 parser/inkling.py: hand-written in its wire format"


def ink_msg(kind: str, body: str) -> str:
    return f"<|message_model|><|content_{kind}|>{body}<|end_message|>"


def inkling_book(reasoning: str | None, path: str) -> Book:
    b = Book(path, reasoning, "inkling")
    p = "ink-" if reasoning else "ink-tools-only-"
    kw: dict[str, Any] = {"tools": TOOLS, "tokenizer": None}
    first = "<|content_thinking|>The user wants the weather.<|end_message|>"
    env = '{"name": "get_weather", "args": {"location": "Paris", "unit": "celsius"}}'
    b.add(
        p + "think-call-text",
        INK_SRC + ": prompt ends with <|message_model|>",
        first + ink_msg("invoke_tool_json", env) + ink_msg("text", "Checking the weather."),
        reasoning="The user wants the weather.",
        content="Checking the weather.",
        tool_calls=[call("get_weather", {"location": "Paris", "unit": "celsius"})],
        **kw,
    )
    env2 = '{"name": "get_time", "args": {"timezone": "Europe/Paris"}}'
    b.add(
        p + "parallel",
        INK_SRC,
        first + ink_msg("invoke_tool_json", env) + ink_msg("invoke_tool_json", env2),
        reasoning="The user wants the weather.",
        tool_calls=[
            call("get_weather", {"location": "Paris", "unit": "celsius"}),
            call("get_time", {"timezone": "Europe/Paris"}),
        ],
        **kw,
    )
    typed = {
        "count": 3,
        "ratio": 0.5,
        "enabled": False,
        "options": {"k": [1, None]},
        "tags": [],
        "note": None,
        "label": 'Zürich "q"\n',
        "mode": "safe",
        "level": 3,
        "nothing": None,
    }
    b.add(
        p + "schema-types",
        INK_SRC,
        "<|content_invoke_tool_json|>"
        + json.dumps({"name": "configure", "args": typed}, ensure_ascii=False)
        + "<|end_message|>",
        tool_calls=[call("configure", typed)],
        **kw,
    )
    marker = {"path": "m.txt", "content": "<|end_message|><|message_model|><|content_text|>not a message"}
    b.add(
        p + "marker-text-in-value",
        INK_SRC + ": markers inside a JSON string are string text",
        "<|content_invoke_tool_json|>" + json.dumps({"name": "write_file", "args": marker}) + "<|end_message|>",
        tool_calls=[call("write_file", marker)],
        **kw,
    )
    b.add(
        p + "prompt-opened-thinking",
        INK_SRC + ": the prompt ends inside a thinking message",
        "Still thinking.<|end_message|>" + ink_msg("text", "Answer."),
        reasoning="Still thinking.",
        content="Answer.",
        options={"prompt_text": "<|message_model|><|content_thinking|>"},
        **kw,
    )
    b.add(p + "text-only", INK_SRC, "<|content_text|>Hello there.<|end_message|>", content="Hello there.", **kw)
    bad = '<|content_invoke_tool_json|>{"name": "get_weather", args: {}}<|end_message|>'
    b.add(
        p + "malformed-invalid-json",
        INK_SRC + ": an invalid envelope is content",
        bad + ink_msg("text", " Sorry."),
        content=joined(bad, " Sorry."),
        **kw,
    )
    return b


# ======================================================================================

BOOKS = [
    lambda: harmony_book("openai_gptoss", "openai/openai.jsonl"),
    lambda: harmony_book(None, "openai/openai_tools_only.jsonl"),
    pythonic_book,
    llama4_book,
    lambda: olmo3_book(None, "olmo3/olmo3.jsonl"),
    lambda: olmo3_book("olmo3", "olmo3/olmo3_think.jsonl"),
    lfm2_book,
    kimi_k3_book,
    lambda: inkling_book("inkling", "inkling/inkling.jsonl"),
    lambda: inkling_book(None, "inkling/inkling_tools_only.jsonl"),
]


def build() -> dict[Path, str]:
    return casefile.build(BOOKS, extra_tool_names={"browser.search"}, natural_ids_when_ids_only=True)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
