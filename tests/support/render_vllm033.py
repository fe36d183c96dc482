"""Cases for vLLM 0.33 names whose wire format is a channel or block grammar of its own: Muse
(``muse`` / ``musespark1x``) and Muse Glimmer, PLaMo 3's tool requests, Kimi K3's channels with
calls, ``qwen3_json`` (Hermes), and HY v4 with a checkpoint's suffixed tokens.

Run from anywhere: ``python tests/support/render_vllm033.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed.

No template or tokenizer of these families is staged, so every output is written by hand in the
wire format the family's vLLM 0.33 source states (its docstrings, regexes and engine configs),
and each case's ``source`` names the file. Expected values follow from how each output was built
and from the rules those sources state (and, where trisect's rule differs, the format module's
docstring says so), never from running trisect. Normalisation as in ``render_cases.py``.
"""

from __future__ import annotations

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
from support.render_cases import Book, call, tool  # noqa: E402

R = "The user asks for the weather in Paris. I should check the forecast first."
C = "It is sunny in Paris today, 22 °C."

WEATHER = tool(
    "get_weather",
    "Get the current weather for a location.",
    {"location": {"type": "string"}, "days": {"type": "integer"}},
    ["location"],
)
DOTTED = tool(
    "weather.get", "Weather by city (a dotted name).", {"city": {"type": "string"}, "days": {"type": "integer"}}
)
CONFIGURE = tool(
    "configure",
    "Set configuration values.",
    {"label": {"type": "string"}, "count": {"type": "integer"}, "options": {"type": "object"}},
)
TOOLS = [WEATHER, DOTTED, CONFIGURE]
PARIS = call("get_weather", {"location": "Paris", "days": 3})


# --------------------------------------------------------------------------------------
# Muse / Muse Glimmer
# --------------------------------------------------------------------------------------

MUSE_SRC = "hand-written from vLLM 0.33 muse_tool_parser.py / muse_reasoning_parser.py"


def atem(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params)
    return f'<atem:function_calls>\n<atem:invoke name="{name}">\n{body}</atem:invoke>\n</atem:function_calls>'


def msg(recipient: str | None, body: str, *, first: bool = False, end: str = "<|eom|>") -> str:
    """One message; the first of a turn has no ``<|start|>assistant`` (the prompt wrote it)."""
    head = "" if first else "<|start|>assistant"
    to = f" to={recipient}" if recipient is not None else ""
    return f"{head}{to}<|message|>{body}{end}"


PARIS_ATEM = atem("get_weather", [("location", "Paris"), ("days", "3")])


def muse_books() -> tuple[Book, ...]:
    spark = Book("muse/muse.jsonl", "muse", "muse")

    def add(book: Book, id: str, source: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        book.add(id, f"{MUSE_SRC}; {source}", output, tokenizer="muse", **kw)

    full = msg("self", R, first=True) + msg("get_weather", PARIS_ATEM) + msg("user", C, end="<|eot|>")
    add(
        spark,
        "muse-reasoning-call-answer",
        "the muse_tool_parser docstring's turn: to=self reasoning, a call in a tool channel, the to=user answer",
        full,
        reasoning=R,
        content=C,
        tool_calls=[PARIS],
    )
    add(
        spark,
        "muse-bare-header-is-reasoning",
        "a bare <|message|> header (no recipient) is reasoning in Spark",
        msg(None, R, first=True) + msg("user", C, end="<|eot|>"),
        reasoning=R,
        content=C,
    )
    add(
        spark,
        "muse-commentary-is-content",
        "to=commentary is content (_content_recipients)",
        msg("commentary", "Checking the forecast.", first=True)
        + msg("get_weather", PARIS_ATEM)
        + msg("user", C, end="<|eot|>"),
        content=f"Checking the forecast.{C}",
        tool_calls=[PARIS],
    )
    add(
        spark,
        "muse-developer-is-reasoning",
        "to=developer, which vLLM drops, is never content (the muse format module's rule: reasoning)",
        msg("developer", "internal note", first=True) + msg("user", C, end="<|eot|>"),
        reasoning="internal note",
        content=C,
    )
    echoed = msg("self", "I could write " + PARIS_ATEM, first=True) + msg("user", C, end="<|eot|>")
    add(
        spark,
        "muse-invoke-in-reasoning-is-text",
        "channel scoping: an invoke echoed inside to=self is no call",
        echoed,
        reasoning="I could write " + PARIS_ATEM,
        content=C,
    )
    quoted = msg("user", "Write " + PARIS_ATEM + " to call it.", first=True, end="<|eot|>")
    add(
        spark,
        "muse-invoke-in-answer-is-text",
        "channel scoping: an invoke inside to=user is answer text",
        quoted,
        content="Write " + PARIS_ATEM + " to call it.",
    )
    typed = atem("configure", [("label", "42"), ("count", "7"), ("options", '{"a": [1, 2]}')])
    add(
        spark,
        "muse-string-parameters-kept",
        "_preserve_string_parameters: a string-typed key stays raw, others are JSON-decoded",
        msg("configure", typed, first=True),
        tool_calls=[call("configure", {"label": "42", "count": 7, "options": {"a": [1, 2]}})],
    )
    two = atem("get_weather", [("location", "Paris")]).replace(
        "</atem:function_calls>",
        '<atem:invoke name="weather.get">\n<atem:parameter name="city">Rome'
        "</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
    )
    add(
        spark,
        "muse-two-invokes-one-block",
        "_INVOKE_RE finds every invoke of the tool channel",
        msg("get_weather", two, first=True),
        tool_calls=[call("get_weather", {"location": "Paris"}), call("weather.get", {"city": "Rome"})],
    )
    whole = msg("self", R, first=True) + msg("get_weather", PARIS_ATEM)
    cut = whole[: whole.rindex("Paris") + 3]
    add(
        spark,
        "muse-truncated-in-value",
        "cut inside a value: no complete </atem:invoke>, no call, and not content (the unfinished call)",
        cut,
        reasoning=R,
        unfinished_call=cut[cut.index("<atem:function_calls>") :],
        truncated=True,
    )
    add(
        spark,
        "muse-other-role-header-malformed",
        "_MSG_HEADER_RE reads assistant messages only: another role's header is text",
        "<|start|>user<|message|>hi<|eot|>",
        content="<|start|>user<|message|>hi",
    )
    alias = Book("muse/musespark1x.jsonl", "musespark1x", "musespark1x")
    add(
        alias,
        "musespark1x-alias",
        "vLLM registers musespark1x as MuseReasoningParser / MuseToolParser",
        full,
        reasoning=R,
        content=C,
        tool_calls=[PARIS],
    )
    alone = Book("muse/reasoning.jsonl", "muse", None)
    add(
        alone,
        "muse-reasoning-only-tool-channel-is-content",
        "muse_reasoning_parser.py without a tool parser: the tool channel's body is handed on as content",
        full,
        reasoning=R,
        content=PARIS_ATEM + C,
    )

    glimmer = Book("muse_glimmer/muse_glimmer.jsonl", "muse_glimmer", "muse_glimmer")
    dotted = atem("weather.get", [("city", "Paris"), ("days", "3")])
    add(
        glimmer,
        "muse-glimmer-dotted-name",
        "the muse_tool_parser docstring's ATEM example (tool.fn names)",
        msg("self", R, first=True) + msg("weather.get", dotted) + msg("user", C, end="<|eot|>"),
        reasoning=R,
        content=C,
        tool_calls=[call("weather.get", {"city": "Paris", "days": 3})],
    )
    add(
        glimmer,
        "muse-glimmer-bare-header-is-content",
        "Glimmer profile: a recipient-less message is content (_content_recipients = (None, 'user'))",
        msg(None, C, first=True, end="<|eot|>"),
        content=C,
    )
    add(
        glimmer,
        "muse-glimmer-commentary-is-a-tool-channel",
        "Glimmer profile: to=commentary is not a content recipient, so its ATEM block is a call",
        msg("commentary", PARIS_ATEM, first=True),
        tool_calls=[PARIS],
    )
    add(
        glimmer,
        "muse-glimmer-values-decoded",
        "Glimmer profile (_preserve_string_parameters = False): every "
        "value that is valid JSON is decoded, a string-typed key too",
        msg("configure", typed, first=True),
        tool_calls=[call("configure", {"label": 42, "count": 7, "options": {"a": [1, 2]}})],
    )
    add(
        glimmer,
        "muse-glimmer-invoke-in-reasoning-is-text",
        "channel scoping in the Glimmer profile",
        echoed,
        reasoning="I could write " + PARIS_ATEM,
        content=C,
    )
    return spark, alias, alone, glimmer


# --------------------------------------------------------------------------------------
# PLaMo 3 tool requests
# --------------------------------------------------------------------------------------

PLAMO_SRC = "hand-written from vLLM 0.33 parser/plamo3.py (plamo3_config)"


def plamo_request(name: str, args: str) -> str:
    return (
        "<|plamo:begin_tool_request:plamo|>"
        f"<|plamo:begin_tool_name:plamo|>{name}<|plamo:end_tool_name:plamo|>"
        f"<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{args}"
        "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
    )


def plamo_block(*requests: str) -> str:
    return "<|plamo:begin_tool_requests:plamo|>" + "".join(requests) + "<|plamo:end_tool_requests:plamo|>"


def plamo3_book() -> Book:
    b = Book("plamo3/plamo3.jsonl", "plamo3", "plamo3")

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        b.add(id, f"{PLAMO_SRC}; {source}", output, tokenizer="plamo3", **kw)

    think = f"{R}<|plamo:end_think:plamo|>"
    one = plamo_block(plamo_request("get_weather", '{"location": "Paris", "days": 3}'))
    add(
        "plamo3-reasoning-content-call",
        "reasoning (the prompt opened the block), content, one request",
        f"{think}{C}{one}",
        reasoning=R,
        content=C,
        tool_calls=[PARIS],
    )
    two = plamo_block(
        plamo_request("get_weather", '{"location": "Paris", "days": 3}'),
        plamo_request("weather.get", '{"city": "Rome"}'),
    )
    add(
        "plamo3-two-requests",
        "two requests in one block",
        f"{think}{two}",
        reasoning=R,
        tool_calls=[PARIS, call("weather.get", {"city": "Rome"})],
    )
    add(
        "plamo3-call-while-thinking",
        "(REASONING, TOOL_REQUESTS_START) -> TOOL_PREAMBLE ends reasoning",
        f"{R}{one}",
        reasoning=R,
        tool_calls=[PARIS],
    )
    marker = '{"label": "ends with <|plamo:end_tool_arguments:plamo|>"}'
    add(
        "plamo3-marker-inside-json-string",
        "tool_args_json: the JSON decides where the arguments end",
        f"{think}{plamo_block(plamo_request('configure', marker))}",
        reasoning=R,
        tool_calls=[call("configure", {"label": "ends with <|plamo:end_tool_arguments:plamo|>"})],
    )
    add(
        "plamo3-no-arguments",
        "an empty arguments element is {} (_extract_args_json)",
        f"{think}{plamo_block(plamo_request('get_weather', '{}'))}",
        reasoning=R,
        tool_calls=[call("get_weather", {})],
    )
    whole = f"{think}{one}"
    cut = whole[: whole.rindex("Paris")]
    add(
        "plamo3-truncated-in-arguments",
        "cut inside the arguments: no call, and not content (the unfinished call); the block it opened in goes with it",
        cut,
        reasoning=R,
        unfinished_call=cut[len(think) :],
        truncated=True,
    )
    bad = plamo_request("get_weather", "{location: Paris}")
    add(
        "plamo3-malformed-arguments",
        "arguments that are not JSON: not a call; its block yields no call, so all of the block is content",
        f"{think}{plamo_block(bad)}",
        reasoning=R,
        content=plamo_block(bad),
    )
    return b


# --------------------------------------------------------------------------------------
# Kimi K3 channels with calls, qwen3_json, HY v4 suffixed tokens
# --------------------------------------------------------------------------------------

K3_SRC = "hand-written from vLLM 0.33 kimi_k3_tool_parser.py / kimi_k3_reasoning_parser.py"


def k3_call(name: str, args: list[tuple[str, str | None, str]]) -> str:
    parts = []
    for key, typ, value in args:
        attr = f' type="{typ}"' if typ is not None else ""
        parts.append(f'<|open|>argument key="{key}"{attr}<|sep|>{value}<|close|>argument<|sep|>')
    return f'<|open|>call tool="{name}" index="1"<|sep|>' + "".join(parts) + "<|close|>call<|sep|>"


def kimi_k3_book() -> Book:
    b = Book("kimi_k3/kimi_k3-channels.jsonl", "kimi_k3", "kimi_k3")

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        b.add(id, f"{K3_SRC}; {source}", output, tokenizer="kimi_k3", **kw)

    tools_channel = (
        "<|open|>tools<|sep|>"
        + k3_call("get_weather", [("location", "string", "Paris"), ("days", "integer", "3")])
        + "<|close|>tools<|sep|>"
    )
    response = f"<|open|>response<|sep|>{C}<|close|>response<|sep|>"
    add(
        "k3-think-response-tools",
        "the think, response and tools channels of one turn (the prefix pre-filled the think opener)",
        f"{R}<|close|>think<|sep|>{response}{tools_channel}",
        reasoning=R,
        content=C,
        tool_calls=[PARIS],
    )
    untyped = "<|open|>tools<|sep|>" + k3_call("get_weather", [("location", None, "Paris"), ("days", "integer", "3")])
    add(
        "k3-no-type-key-defaults-to-string",
        "_decode_call: arg_attrs.get('type', 'string')",
        f"{R}<|close|>think<|sep|>{untyped}<|close|>tools<|sep|>",
        reasoning=R,
        tool_calls=[PARIS],
    )
    add(
        "k3-thinking-off-tools",
        "instruct mode (thinking false): the response body and the call",
        f"{response}{tools_channel}",
        content=C,
        tool_calls=[PARIS],
        options={"chat_template_kwargs": {"thinking": False}},
    )

    end = "<|close|>message<|sep|>"
    add(
        "k3-recovery-tools-before-think-close",
        "issue 20: a complete tools section written before <|close|>think<|sep|> is the call; it ends the "
        "reasoning (as a call opener ends unterminated reasoning in the other families) and the think "
        "closer after it is a stray marker",
        f"{R}{tools_channel}<|close|>think<|sep|>{end}",
        reasoning=R,
        tool_calls=[PARIS],
    )
    add(
        "k3-recovery-turn-end-closes-open-section",
        "issue 20: <|close|>message<|sep|> ends the turn, so it closes a tools section left open; it is a "
        "marker, never content",
        f"{R}<|close|>think<|sep|>" + tools_channel.replace("<|close|>tools<|sep|>", "") + end,
        reasoning=R,
        tool_calls=[PARIS],
    )
    bad = '<|open|>call tool="get_weather" index="0"<|sep|>junk<|close|>call<|sep|>'
    add(
        "k3-recovery-malformed-call-then-turn-end",
        "issue 20: a malformed call is its own text (content, markers included); the section's closer and "
        "the turn's end stay markers while the good call is returned",
        f"{R}<|close|>think<|sep|>" + tools_channel.replace("<|open|>tools<|sep|>", "<|open|>tools<|sep|>" + bad) + end,
        reasoning=R,
        content=bad,
        tool_calls=[PARIS],
    )

    alone = Book("kimi_k3/kimi_k3-tools-only.jsonl", None, "kimi_k3")
    alone.add(
        "k3-tools-format-unwraps-response",
        f"{K3_SRC}; the tool parser's _content prefers the unwrapped response channel",
        f"{response}{tools_channel}",
        content=C,
        tool_calls=[PARIS],
        tools=TOOLS,
        tokenizer="kimi_k3",
    )
    return b, alone  # type: ignore[return-value]


def qwen3_json_book() -> Book:
    b = Book("qwen3_json/qwen3_json.jsonl", "qwen3", "qwen3_json")
    src = "vLLM 0.33 registers qwen3_json as Hermes2ProToolParser; the Qwen3 template's <tool_call> JSON"
    envelope = '{"name": "get_weather", "arguments": {"location": "Paris", "days": 3}}'
    out = f"<think>\n{R}\n</think>\n\n<tool_call>\n{envelope}\n</tool_call>"
    b.add("qwen3-json-call", src, out, reasoning=R, tool_calls=[PARIS], tools=TOOLS)
    b.add("qwen3-json-content", src, f"<think>\n{R}\n</think>\n\n{C}", reasoning=R, content=C, tools=TOOLS)
    return b


SUFFIX = ":6124c78e"


def hy_suffixed_book() -> Book:
    b = Book("hy_v4/hy_v4-suffixed.jsonl", "hy_v4", "hy_v4")
    src = (
        "vLLM 0.33 hy_v4_reasoning_parser.py / hy_v4_tool_parser.py detect_token_suffix: every structural "
        "token carries the checkpoint's suffix (the example ':6124c78e')"
    )

    def s(marker: str) -> str:
        return marker[:-1] + SUFFIX + ">"

    out = (
        f"{R}{s('</think>')}{C}{s('<tool_calls>')}{s('<tool_call>')}get_weather{s('<arg_key>')}location"
        f"{s('</arg_key>')}{s('<arg_value>')}Paris{s('</arg_value>')}{s('<arg_key>')}days{s('</arg_key>')}"
        f"{s('<arg_value>')}3{s('</arg_value>')}{s('</tool_call>')}{s('</tool_calls>')}"
    )
    b.add(
        "hy_v4-suffixed-tokens",
        src + "; the markers are matched as the tokenizer spells them",
        out,
        reasoning=R,
        content=C,
        tool_calls=[PARIS],
        tools=TOOLS,
        tokenizer="hy_suffixed",
        token_ids=tk.encode("hy_suffixed", out),
        ids_only=True,
    )
    plain = f"{R}</think>{C}"
    b.add(
        "hy_v4-unsuffixed-text-with-suffixed-tokenizer",
        src + "; with a suffixed vocabulary the unsuffixed spelling is text",
        plain,
        reasoning=plain,
        tools=TOOLS,
        tokenizer="hy_suffixed",
        token_ids=tk.encode("hy_suffixed", plain),
        ids_only=True,
        truncated=True,
    )
    return b


def inkling_book() -> Book:
    b = Book("inkling/inkling-kinds.jsonl", "inkling", "inkling")
    src = "hand-written from vLLM 0.33 parser/inkling.py (inkling_config)"
    call_json = '{"name": "get_weather", "args": {"location": "Paris", "days": 3}}'
    out = (
        f"<|content_thinking|>{R}<|end_message|><|message_model|><|content_invoke_tool_text|>raw tool text"
        f"<|end_message|><|message_model|><|content_invoke_tool_json|>{call_json}<|end_message|>"
    )
    b.add(
        "inkling-raw-tool-text-is-content",
        src + ": a <|content_invoke_tool_text|> block renders as text",
        out,
        reasoning=R,
        content="raw tool text",
        tool_calls=[PARIS],
        tools=TOOLS,
        tokenizer=None,
    )
    out = f"<|content_thinking|>{R}<|content_model_end_sampling|>"
    b.add(
        "inkling-end-sampling-ends-block",
        src + ": <|content_model_end_sampling|> ends a block like <|end_message|>",
        out,
        reasoning=R,
        tools=TOOLS,
        tokenizer=None,
    )
    out = f"<|content_thinking|>{R}<|end_message|><|message_model|><|content_text|>Sunny.<|end_message|>"
    b.add(
        "inkling-end-sampling-ends-the-turn",
        src + ": <|content_model_end_sampling|> after the last <|end_message|> is the normal end of a turn "
        "((CONTENT, END_SAMPLING) absorbed there): framing, never content",
        out + "<|content_model_end_sampling|>",
        reasoning=R,
        content="Sunny.",
        tools=TOOLS,
        tokenizer=None,
    )
    b.add(
        "inkling-end-sampling-as-a-message-kind",
        src + ": <|content_model_end_sampling|> right after <|message_model|> ends the turn too",
        out + "<|message_model|><|content_model_end_sampling|>",
        reasoning=R,
        content="Sunny.",
        tools=TOOLS,
        tokenizer=None,
    )
    out = f"<|content_thinking|>{R}<|content_invoke_tool_json|>{call_json}<|end_message|>"
    b.add(
        "inkling-tool-block-ends-reasoning",
        src + ": (REASONING, TOOL_START) ends reasoning and opens the call",
        out,
        reasoning=R,
        tool_calls=[PARIS],
        tools=TOOLS,
        tokenizer=None,
    )
    return b


BOOKS = [muse_books, plamo3_book, kimi_k3_book, qwen3_json_book, hy_suffixed_book, inkling_book]


def build() -> dict[Path, str]:
    return casefile.build(BOOKS, natural_ids_when_ids_only=True)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
