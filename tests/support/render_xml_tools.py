"""Generate the case files of the XML-parameter, DSML and custom-grammar tool-call formats.

Run from anywhere: ``python tests/support/render_xml_tools.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed. The machinery (Jinja configured as
transformers does, ``Book``, the tools, the checks) is ``render_cases.py``'s; read its
docstring for the round-trip method and the normalisation the expected values follow.

Per family, a *writer* spells calls exactly as the family's chat template does. Where a
template is staged (GLM-4.6, GLM-4.7-Flash, MiniMax-M2, DeepSeek-V3.2) round-trip cases render
the assistant message through the template itself, and the writer is checked against the
template's own output before it is used for hand-written cases (malformed, truncated, values
that are not valid for their type). Where no template is staged, the writer follows the wire
format of the family's vLLM 0.33 parser (its docstring, regexes and engine config) and ``source``
names it. Expected values come from
the message that was rendered and the family's documented value rule, never from trisect:

* string values: GLM, DeepSeek DSML (``string="true"``), MiniMax-M2 and Step-3 keep them
  verbatim (their templates, and Step-3's steptml markup, write the value between the tags with
  nothing around it); Seed-OSS too: its template (llama.cpp
  ``models/templates/ByteDance-Seed-OSS.jinja``) writes ``<parameter=k>`` + value +
  ``</parameter>\n``, with no wrapping newlines; Step-3.5 drops one wrapping newline, as the
  Qwen3-Coder template writes one around the value;
* other values: the JSON the template wrote (``tojson``), typed by the tool schema; a value
  not valid for its type stays a string.

Reasoning: where the family's own reasoning format is registered, cases use it; otherwise a
format with the same semantics stands in (named in ``REASONING``).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
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
    USER,
    WRITE_FILE,
    Book,
    call,
    coder_turn,
    cut_call,
    joined,
    render,
)

TOOLS = [GET_WEATHER, GET_TIME, GET_JOKE, SEARCH, WRITE_FILE, CONFIGURE]
PARIS = call("get_weather", {"location": "Paris", "unit": "celsius"})
TOKYO_TIME = call("get_time", {"timezone": "Asia/Tokyo"})
# code whose indentation and end newline are the value's (issue 20: a code-editing tool's old_string)
CODE = "    if x:\n        return 1\n"
JOKE = call("get_random_joke", {})
PY_FILE = 'def main():\n    print("hi")\n\n\nif __name__ == "__main__":\n    main()\n'
EVERY_TYPE = call(
    "configure",
    {
        "count": 3,
        "ratio": 0.75,
        "enabled": True,
        "options": {"depth": 2, "paths": ["a/b", "c"], "strict": False},
        "tags": ["x", "y z"],
        "note": None,
        "label": "plain text",
        "mode": "safe",
        "level": 2,
        "nothing": None,
    },
)
# string-typed values that look like other types stay strings; a union takes text as a string
STRINGS_THAT_LOOK_TYPED = call("configure", {"label": "42", "mode": "fast", "note": "null or not"})
REASONING_TEXT = "The user wants the weather in Paris, so I will call get_weather."

Params = list[tuple[str, str, bool]]  # (key, raw value text, value is a string)
Calls = list[tuple[str, Params]]


def raw_params(arguments: dict[str, Any]) -> Params:
    """Values as templates write them: strings raw, everything else ``tojson``."""
    return [
        (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), isinstance(v, str))
        for k, v in arguments.items()
    ]


def as_calls(calls: list[dict[str, Any]]) -> Calls:
    return [(c["name"], raw_params(c["arguments"])) for c in calls]


def tool_calls_field(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]


def ordinary(tokenizer: str, text: str) -> list[int]:
    """Ids of ``text`` with every marker string spelled with ordinary tokens."""
    if tokenizer in tk.NAMES:
        return tk.encode_ordinary(tokenizer, text)
    module = importlib.import_module(f"support.tok_{tokenizer}")
    return module.load_ordinary().encode(text, add_special_tokens=False).ids


@dataclass
class Family:
    tag: str  # case id prefix
    path: str  # case file under tests/cases/
    tools_format: str
    reasoning: str | None  # reasoning format the cases run with
    tokenizer: str | None
    write: Callable[[Calls], str]  # the tool-call part of an output
    turn: Callable[[str | None, str, list[dict[str, Any]]], str]  # (reasoning, content, calls) -> output
    source: str  # where ``turn`` outputs come from
    value_close: str  # closing tag of a value
    call_close: str  # closing tag of a call block
    tool_start: str  # the first marker of a call
    validates: bool = True
    think_open: str | None = None  # an opener of unterminated reasoning a tool-call marker ends
    expect_str: Callable[[str], str] = staticmethod(lambda s: s)  # type: ignore[assignment]
    tool_start_special: bool = True
    options: dict[str, Any] | None = None
    prefix: str = ""  # what the template writes before the content of a turn without reasoning
    prefix_reasoning: str | None = None  # the reasoning ``prefix`` carries
    # the content a rejected call leaves: all of the block's text, its wrapper included (a block
    # that yields no call is content whole: the engine's rule), minus what is not the block's
    rejected: Callable[[str], str | None] = staticmethod(joined)  # type: ignore[assignment]
    # raw values that are not valid for their schema type, and what they become
    bad_values: tuple[Params, dict[str, Any]] | None = None

    def book(self) -> Book:
        return Book(self.path, self.reasoning, self.tools_format)

    def expect(self, c: dict[str, Any]) -> dict[str, Any]:
        args = {k: (self.expect_str(v) if isinstance(v, str) else v) for k, v in c["arguments"].items()}
        return call(c["name"], args)


def standard(b: Book, f: Family) -> None:
    """The cases every family has: one call, parallel calls, every schema type, content and
    reasoning around calls, marker text inside a value, malformed and truncated output."""
    opts = f.options

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        kw.setdefault("options", opts)
        b.add(f"{f.tag}-{id}", source, output, tokenizer=f.tokenizer, **kw)

    def hw(id: str, source: str, output: str, **kw: Any) -> None:  # hand-written: after the template's prefix
        if "token_ids" in kw:
            kw["token_ids"] = tk.encode(f.tokenizer, f.prefix) + kw["token_ids"] if f.prefix else kw["token_ids"]
        kw.setdefault("reasoning", f.prefix_reasoning)
        add(id, source, f.prefix + output, **kw)

    def rt(id: str, calls: list[dict[str, Any]], content: str = "", reasoning: str | None = None, note: str = ""):
        out = f.turn(reasoning, content, calls)
        add(
            id,
            f.source + note,
            out,
            reasoning=reasoning.strip() if reasoning else None,
            content=content.strip() or None,
            tool_calls=[f.expect(c) for c in calls],
        )

    r = REASONING_TEXT if f.reasoning else None
    rt("rt-one-call", [PARIS], reasoning=r)
    rt("rt-parallel-calls", [PARIS, TOKYO_TIME], reasoning=r)
    rt("rt-content-before-call", [PARIS], content="Let me check the weather for you.", reasoning=r)
    rt("rt-every-schema-type", [EVERY_TYPE], reasoning=r, note="; integer, number, boolean, object, array, null, enum")
    rt("rt-strings-that-look-typed", [STRINGS_THAT_LOOK_TYPED], note="; '42' for a string stays a string")
    rt("rt-zero-arguments", [JOKE])
    rt("rt-content-only", [], content="The answer is 42.", reasoning=r)
    rt(
        "rt-unicode",
        [call("get_weather", {"location": "München"}), call("search", {"query": "東京 天気 ☀️", "max_results": 5})],
    )
    rt("rt-multiline-value", [call("write_file", {"path": "main.py", "content": PY_FILE})])
    tricky = f"a line with {f.value_close} inside\nand {f.call_close} too\n"
    rt(
        "rt-marker-text-inside-value",
        [call("write_file", {"path": "notes.txt", "content": tricky})],
        note="; the value spells the family's closing tags mid-line (text-only rule: a closer counts only "
        "where the structure goes on after it)",
    )
    if f.reasoning:
        rt("rt-reasoning-then-call", [PARIS], reasoning="Short.\nTwo lines of thought.")

    hand = "hand-written in the writer's spelling (" + f.source.split(";")[0] + ")"
    bad, typed = f.bad_values or (
        [
            ("count", "many", False),
            ("ratio", "0.5x", False),
            ("enabled", "yes", False),
            ("options", "{not json", False),
            ("tags", "a, b", False),
            ("level", "2", False),
            ("nothing", "nil", False),
        ],
        {
            "count": "many",
            "ratio": "0.5x",
            "enabled": "yes",
            "options": "{not json",
            "tags": "a, b",
            "level": 2,
            "nothing": "nil",
        },
    )
    out = f.write([("configure", bad)])
    hw(
        "invalid-for-type-stays-string",
        hand + "; a value that is not valid for its schema type stays a string",
        out,
        tool_calls=[call("configure", typed)],
    )
    if f.validates:
        out = "Checking.\n" + f.write([("get_stock_price", [("symbol", "ACME", True)])])
        hw(
            "malformed-unknown-tool",
            hand + "; the family validates names (vLLM 0.33 validate_tool_names): an unknown tool is no call, "
            "its text is content",
            out,
            content=f.rejected(out),
        )
    whole = f.write(as_calls([call("search", {"query": "weather in Paris", "max_results": 3})]))
    cut = whole[: whole.index("weather in Paris") + len("weather in")]
    hw(
        "truncated-inside-value",
        hand + "; cut by max_tokens inside a string value: not a call, and not content (the unfinished call)",
        "Searching. " + cut,
        content="Searching.",
        unfinished_call=cut_call(b.tools_format, cut),
        truncated=True,
    )
    if f.think_open is not None:
        out = f"{f.think_open}I need the weather first.\n" + f.write(as_calls([PARIS]))
        add(
            "tool-marker-ends-unterminated-reasoning",
            hand + "; the tool-call opener inside an unterminated reasoning block ends reasoning",
            out,
            reasoning="I need the weather first.",
            tool_calls=[f.expect(PARIS)],
        )
    if f.tokenizer and f.tool_start_special:
        text = f"Calls start with {f.tool_start} and this is only prose."
        i = text.index(f.tool_start)
        ids = (
            tk.encode(f.tokenizer, text[:i])
            + ordinary(f.tokenizer, f.tool_start)
            + tk.encode(f.tokenizer, text[i + len(f.tool_start) :])
        )
        hw(
            "ids-marker-mention-in-content",
            "hand-written: content mentions the call opener as ordinary tokens; with ids it stays text",
            text,
            content=text,
            token_ids=ids,
            ids_only=True,
        )


# --------------------------------------------------------------------------------------
# GLM (glm45 / glm47, ling3, poolside_v1)
# --------------------------------------------------------------------------------------

GLM46 = "GLM-4.6.jinja"
GLM47 = "GLM-4.7-Flash.jinja"


def template_turn(
    template: str, *, eot: str = "", **kwargs: Any
) -> Callable[[str | None, str, list[dict[str, Any]]], str]:
    def turn(reasoning: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        msg: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            msg["reasoning_content"] = reasoning
        if calls:
            msg["tool_calls"] = tool_calls_field(calls)
        prompt = render(template, [USER], add_generation_prompt=True, tools=TOOLS, **kwargs)
        full = render(template, [USER, msg], add_generation_prompt=False, tools=TOOLS, **kwargs)
        opener = "<think>\n" if prompt.endswith("<think>\n") else "<think>"
        if not full.startswith(prompt) and prompt.endswith(opener) and full.startswith(prompt[: -len(opener)]):
            # the prompt opens the think block; a past turn without reasoning renders without
            # it (GLM-4.7: only "</think>", which is what the model wrote after the prompt's
            # "<think>"; MiniMax-M2: nothing)
            prompt = prompt[: -len(opener)]
        if not full.startswith(prompt):
            raise ValueError(f"{template}: the prompt is not a prefix of the rendered turn")
        gen = full[len(prompt) :]
        if not gen.endswith(eot):
            raise ValueError(f"{template}: the turn does not end with {eot!r}")
        return gen[: len(gen) - len(eot)]

    return turn


def glm46_write(calls: Calls) -> str:
    return "".join(
        f"\n<tool_call>{name}\n"
        + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v, _ in ps)
        + "</tool_call>"
        for name, ps in calls
    )


def glm47_write(calls: Calls) -> str:
    return "".join(
        f"<tool_call>{name}"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v, _ in ps)
        + "</tool_call>"
        for name, ps in calls
    )


# where each GLM-like family without a staged template takes the GLM-4.7 grammar from
GLM_LIKE = {
    "ling3": "vLLM 0.33 parser/ling3.py (Ling3Parser subclasses Glm47MoeParser)",
    "poolside_v1": "vLLM 0.33 poolside_v1_tool_parser.py (<tool_call>NAME<arg_key>…<arg_value>…)",
}


def glm_family(tag: str, path: str, fmt: str, template: str | None, write: Callable[[Calls], str]) -> Family:
    if template is not None:
        turn = template_turn(template)
        source = f"{template} round trip"
        reasoning: str | None = "glm47" if template == GLM47 else "glm45"
        think_open: str | None = "<think>" if template == GLM47 else "\n<think>"
        prefix = "</think>" if template == GLM47 else "\n<think></think>"
    else:

        def turn(reasoning: str | None, content: str, calls: list[dict[str, Any]]) -> str:
            return content + write(as_calls(calls))

        source = "written in the GLM-4.7 spelling (GLM-4.7-Flash.jinja); the same grammar: " + GLM_LIKE[fmt]
        reasoning = None
        think_open = None
        prefix = ""
    return Family(
        tag=tag,
        path=path,
        tools_format=fmt,
        reasoning=reasoning,
        tokenizer="glm",
        write=write,
        turn=turn,
        source=source,
        value_close="</arg_value>",
        call_close="</tool_call>",
        tool_start="<tool_call>",
        think_open=think_open,
        prefix=prefix,
    )


def glm_extra(b: Book, f: Family) -> None:
    w = f.write
    src = "hand-written in the " + ("GLM-4.6" if w is glm46_write else "GLM-4.7") + " spelling"

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        if kw.get("token_ids") is not None and f.prefix:
            kw["token_ids"] = tk.encode("glm", f.prefix) + kw["token_ids"]
        b.add(f"{f.tag}-{id}", src + "; " + source, f.prefix + output, tools=TOOLS, tokenizer=f.tokenizer, **kw)

    two = w(as_calls([PARIS])).replace("</tool_call>", "") + w(as_calls([TOKYO_TIME]))
    add(
        "missing-close-between-calls",
        "'</tool_call>' missing before the next '<tool_call>' (trisect's recovery, src/trisect/formats/glm_tools.py; "
        "vLLM 0.33's parser/glm47_moe.py has no (TOOL_ARGS, TOOL_START) row)",
        two,
        tool_calls=[PARIS, TOKYO_TIME],
    )
    out = w(as_calls([PARIS])).replace("Paris</arg_value>", "Paris")
    lost = "Paris\n" if w is glm46_write else "Paris"  # the newline the template writes after the closer
    add(
        "missing-value-close",
        "'</arg_value>' missing: the next '<arg_key>' closes the value, which keeps its text verbatim",
        out,
        tool_calls=[call("get_weather", {"location": lost, "unit": "celsius"})],
    )
    out = "Sure." + w([("get_weather", [("location", "Paris", True)])]) + " Done."
    add(
        "content-after-call",
        "text after a complete call is content (whitespace between the runs kept)",
        out,
        content="Sure. Done." if w is glm47_write else "Sure.\n Done.",
        tool_calls=[call("get_weather", {"location": "Paris"})],
    )
    out = w([("get_weather", [("location", "  two\nlines  \n", True)])])
    add(
        "whitespace-in-value-kept",
        "GLM keeps a value verbatim, wrapping spaces and newlines included (vLLM 0.33 parser/glm47_moe.py keeps "
        "the <arg_value> text as it stands)",
        out,
        tool_calls=[call("get_weather", {"location": "  two\nlines  \n"})],
    )
    out = w([("get_weather", [("location", "Paris", True)])]).removesuffix("</tool_call>")
    add(
        "unclosed-call-at-end",
        "the output ends after the last value without '</tool_call>': the call is unfinished, so it is no "
        "call, and not content (the unfinished call)",
        out,
        unfinished_call=cut_call(b.tools_format, out),
        truncated=True,
    )
    out = "Okay." + w([("get_weather", [])])
    add(
        "name-without-arguments-closed",
        "'<tool_call>NAME</tool_call>' is a call without arguments (vLLM 0.33 parser/glm47_moe.py: "
        "(TOOL_NAME, TOOL_END) ends the call)",
        out,
        content="Okay.",
        tool_calls=[call("get_weather", {})],
    )
    text = w([("write_file", [("path", "a.txt", True), ("content", "x </arg_value> y", True)])])
    i = text.index("</arg_value> y")
    ids = tk.encode("glm", text[:i]) + tk.encode("glm", "</arg_value>") + tk.encode("glm", text[i + 12 :])
    assert ids == tk.encode("glm", text)
    value = "see </arg_value><arg_key>x</arg_key> here"
    t2 = w([("write_file", [("path", "a.txt", True), ("content", value, True)])])
    i = t2.index(value)
    ids2 = tk.encode("glm", t2[:i]) + ordinary("glm", value) + tk.encode("glm", t2[i + len(value) :])
    add(
        "ids-markers-as-ordinary-tokens-inside-value",
        "the value spells '</arg_value><arg_key>' with ordinary tokens: with ids they are value text "
        "(the text-only rule would end the value there)",
        t2,
        tool_calls=[call("write_file", {"path": "a.txt", "content": value})],
        token_ids=ids2,
        ids_only=True,
    )
    if f.reasoning is not None:
        mention = "A call looks like <tool_call>NAME then its arguments."
        t2 = ("<think>" if w is glm47_write else "\n<think>") + mention + "</think>" + w(as_calls([PARIS]))
        j = t2.index("<tool_call>NAME")
        ids2 = tk.encode("glm", t2[:j]) + ordinary("glm", "<tool_call>") + tk.encode("glm", t2[j + 11 :])
        b.add(
            f"{f.tag}-ids-tool-call-mention-in-reasoning",
            src + "; reasoning mentions '<tool_call>' as ordinary tokens: with ids it does not end reasoning "
            "(vLLM #40861)",
            t2,
            reasoning=mention,
            tool_calls=[PARIS],
            tools=TOOLS,
            tokenizer="glm",
            token_ids=ids2,
            ids_only=True,
        )
    add(
        "closer-token-inside-value",
        "the template tokenizes '</arg_value>' inside a value as the added token, so ids do not "
        "disambiguate: the text-only rule decides (' y' does not continue the structure)",
        text,
        tool_calls=[call("write_file", {"path": "a.txt", "content": "x </arg_value> y"})],
    )


def glm_book(tag: str, path: str, fmt: str, template: str | None, write: Callable[[Calls], str]) -> Callable[[], Book]:
    def make() -> Book:
        f = glm_family(tag, path, fmt, template, write)
        if template is not None:  # the writer spells calls exactly as the template does
            assert f.turn(None, "", [PARIS, EVERY_TYPE]) == f.prefix + write(as_calls([PARIS, EVERY_TYPE]))
        b = f.book()
        standard(b, f)
        glm_extra(b, f)
        if template is not None:
            out = template_turn(template, enable_thinking=False)(None, "", [PARIS])
            b.add(
                f"{tag}-rt-thinking-off",
                f"{template} round trip with enable_thinking=false (the prompt closes the think block)",
                out,
                tool_calls=[PARIS],
                tools=TOOLS,
                tokenizer="glm",
                options={"chat_template_kwargs": {"enable_thinking": False}},
            )
        return b

    return make


# --------------------------------------------------------------------------------------
# MiniMax-M2
# --------------------------------------------------------------------------------------

MINIMAX = "MiniMax-M2.jinja"


def minimax_write(calls: Calls) -> str:
    body = "".join(
        f'<invoke name="{name}">\n'
        + "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v, _ in ps)
        + "</invoke>\n"
        for name, ps in calls
    )
    return f"\n<minimax:tool_call>\n{body}</minimax:tool_call>"


def minimax_cases() -> Book:
    rendered = template_turn(MINIMAX, eot="[e~[\n")

    def turn(reasoning: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        # the template writes no think block for a turn without reasoning; the model always
        # closes the block the prompt opened, so such a turn starts with "</think>"
        out = rendered(reasoning, content, calls)
        return out if reasoning else "</think>\n\n" + out

    f = Family(
        tag="mm2",
        path="minimax_m2/minimax_m2-template.jsonl",
        tools_format="minimax_m2",
        reasoning="minimax_m2",
        tokenizer="minimax",
        write=minimax_write,
        turn=turn,
        source=f"{MINIMAX} round trip (a turn without reasoning starts with '</think>')",
        value_close="</parameter>",
        call_close="</invoke>",
        tool_start="<minimax:tool_call>",
        prefix="</think>\n\n",
    )
    assert rendered(None, "", [PARIS, EVERY_TYPE]) == minimax_write(as_calls([PARIS, EVERY_TYPE]))
    b = f.book()
    standard(b, f)
    src = "hand-written in the MiniMax-M2 template spelling"

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        kw.setdefault("tools", TOOLS)
        b.add(f"mm2-{id}", f"{src}; {source}", f.prefix + output, tokenizer="minimax", **kw)

    out = minimax_write(as_calls([PARIS])).replace('"', "'") + minimax_write(as_calls([TOKYO_TIME])).replace('"', "")
    add(
        "quote-styles",
        "names and keys quoted with ' and unquoted (vLLM 0.33 parser/minimax_m2.py: the three invoke prefixes)",
        out,
        tool_calls=[PARIS, TOKYO_TIME],
    )
    out = minimax_write(as_calls([PARIS, TOKYO_TIME])).replace("</invoke>\n<invoke", "<invoke")
    add("missing-invoke-close", "'</invoke>' missing before the next '<invoke'", out, tool_calls=[PARIS, TOKYO_TIME])
    out = minimax_write([("write_file", [("path", "  a.py \n", True), ("content", CODE, True)])])
    add(
        "values-verbatim",
        "the template writes a string value as it is ('<parameter name=\"' + k + '\">' + v + '</parameter>'): "
        "indentation and newlines at its ends are the value's",
        out,
        tool_calls=[call("write_file", {"path": "  a.py \n", "content": CODE})],
    )
    out = minimax_write(as_calls([PARIS, call("get_stock_price", {"symbol": "ACME"})]))
    add(
        "malformed-unknown-tool-second",
        "the second invoke names a tool not in the request: the first is a call, the second's text is content",
        out,
        content=joined(out[out.index('<invoke name="get_stock_price">') :].removesuffix("</minimax:tool_call>")),
        tool_calls=[PARIS],
    )
    value = "x </minimax:tool_call>\n<minimax:tool_call> y"
    text = minimax_write([("write_file", [("path", "a.txt", True), ("content", value, True)])])
    i = text.index(value)
    ids = tk.encode("minimax", f.prefix + text[:i]) + ordinary("minimax", value)
    ids += tk.encode("minimax", text[i + len(value) :])
    add(
        "ids-markers-as-ordinary-tokens-inside-value",
        "the value spells the block's closer and opener with ordinary tokens: with ids they are value text "
        "(the text-only rule would end the call there, as the closer is followed by an opener)",
        text,
        tool_calls=[call("write_file", {"path": "a.txt", "content": value})],
        token_ids=ids,
        ids_only=True,
    )
    out = "Done.</minimax:tool_call>"
    add(
        "stray-block-close-absorbed",
        "a stray '</minimax:tool_call>' in content is absorbed (vLLM 0.33 parser/minimax_m2.py: (CONTENT, TOOL_END))",
        out,
        content="Done.",
    )
    return b


# --------------------------------------------------------------------------------------
# DeepSeek DSML (deepseek_v32, deepseek_v4, deepseek_v41)
# --------------------------------------------------------------------------------------

DSV32 = "deepseek-ai-DeepSeek-V3.2.jinja"
DS_BOS, DS_EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
WEATHER_ARGS_TOOL = {
    "type": "function",
    "function": {
        "name": "run_query",
        "description": "A tool whose schema declares 'arguments' itself.",
        "parameters": {"type": "object", "properties": {"arguments": {"type": "object"}}},
    },
}


def dsml_writer(dsml: str, block: str) -> Callable[[Calls], str]:
    def write(calls: Calls) -> str:
        body = "".join(
            f'<{dsml}invoke name="{name}">\n'
            + "".join(
                f'<{dsml}parameter name="{k}" string="{"true" if is_str else "false"}">{v}</{dsml}parameter>\n'
                for k, v, is_str in ps
            )
            + f"</{dsml}invoke>\n"
            for name, ps in calls
        )
        return f"\n\n<{dsml}{block}>\n{body}</{dsml}{block}>"

    return write


def dsml_cases(tag: str, fmt: str, dsml: str, block: str, reasoning: str) -> Callable[[], Book]:
    write = dsml_writer(dsml, block)
    v32 = fmt == "deepseek_v32"
    options = {"chat_template_kwargs": {"thinking": True}} if v32 else None

    def make() -> Book:
        if v32:
            turn = template_turn(DSV32, eot=DS_EOS, thinking=True, bos_token=DS_BOS)
            assert turn(None, "", [PARIS, EVERY_TYPE]) == "</think>" + write(as_calls([PARIS, EVERY_TYPE]))
            source = f"{DSV32} round trip (thinking=true)"
        else:

            def turn(reasoning: str | None, content: str, calls: list[dict[str, Any]]) -> str:
                return (reasoning or "") + "</think>" + content + (write(as_calls(calls)) if calls else "")

            source = f"written in the {DSV32} spelling with the {fmt} block " + (
                "'<｜DSML｜tool_calls>' (vLLM 0.33 parser/deepseek_v4.py)"
                if fmt == "deepseek_v4"
                else "and spaced tags (vLLM 0.33 parser/deepseek_v41.py)"
            )
        f = Family(
            tag=tag,
            path=f"{fmt}/{fmt}.jsonl",
            tools_format=fmt,
            reasoning=reasoning,
            tokenizer="deepseek_v3",
            write=write,
            turn=turn,
            source=source,
            value_close=f"</{dsml}parameter>",
            call_close=f"</{dsml}invoke>",
            tool_start=f"<{dsml}{block}>",
            validates=False,
            think_open=None if v32 else "",
            tool_start_special=False,
            options=options,
            prefix="</think>",
        )
        b = f.book()
        standard(b, f)
        src = "hand-written in the writer's spelling"

        def add(id: str, source: str, output: str, **kw: Any) -> None:
            kw.setdefault("tools", TOOLS)
            kw.setdefault("options", options)
            b.add(f"{tag}-{id}", f"{src}; {source}", "</think>" + output, tokenizer="deepseek_v3", **kw)

        out = write([("write_file", [("path", "a.txt", True), ("content", "  indented\n\ttab\n\n", True)])])
        add(
            "string-true-keeps-whitespace",
            'string="true" values keep their whitespace (vLLM 0.33 parser/deepseek_v4.py: a string="true" value '
            "is taken as it stands)",
            out,
            tool_calls=[call("write_file", {"path": "a.txt", "content": "  indented\n\ttab\n\n"})],
        )
        out = write([("configure", [("count", " 7 ", False), ("tags", '[\n  "a"\n]', False), ("label", "true", True)])])
        add(
            "string-false-is-json",
            'string="false" values are JSON (surrounding whitespace is not part of it); string="true" '
            "'true' stays the string 'true'",
            out,
            tool_calls=[call("configure", {"count": 7, "tags": ["a"], "label": "true"})],
        )
        out = write([("configure", [("label", '"quoted"', False), ("mode", "fast", False)])])
        add(
            "string-false-json-string-and-bare-word",
            'string="false" with a JSON string literal is that string; a bare word is not JSON and stays as written',
            out,
            tool_calls=[call("configure", {"label": "quoted", "mode": "fast"})],
        )
        out = write(as_calls([PARIS])).replace(' string="true"', "")
        add(
            "no-string-attribute-schema-typed",
            "parameters without the string attribute are typed by the schema",
            out,
            tool_calls=[PARIS],
        )
        out = write(as_calls([PARIS, TOKYO_TIME])).replace(f"</{dsml}invoke>\n<{dsml}invoke", f"<{dsml}invoke")
        add(
            "missing-invoke-close",
            f"'</{dsml}invoke>' missing before the next invoke",
            out,
            tool_calls=[PARIS, TOKYO_TIME],
        )
        out = write(as_calls([PARIS])).replace(f"</{dsml}invoke>\n", "")
        add(
            "missing-invoke-close-at-block-end",
            "the block's end closes the open invoke (vLLM 0.33 parser/deepseek_v4.py: (TOOL_ARGS, TOOL_END))",
            out,
            tool_calls=[PARIS],
        )
        out = f"\n\n<{dsml}{block}>\n</{dsml}{block}>"
        add(
            "empty-block-is-content",
            "an empty block is not a call; its text is content",
            "Nothing." + out,
            content=joined("Nothing." + out),
        )
        if not v32:
            args = '{"location": "Paris", "unit": "celsius"}'
            for key in ("arguments", "input"):
                add(
                    f"unwraps-{key}",
                    f"a lone '{key}' parameter holding the arguments object, not in the schema, is unwrapped "
                    "(vLLM 0.33 parser/deepseek_v4.py: _unwrap_wrapper_args)",
                    write([("get_weather", [(key, args, False)])]),
                    tool_calls=[PARIS],
                )
            add(
                "no-unwrap-when-schema-declares-it",
                "the schema declares 'arguments': the parameter stays",
                write([("run_query", [("arguments", '{"q": 1}', False)])]),
                tool_calls=[call("run_query", {"arguments": {"q": 1}})],
                tools=[*TOOLS, WEATHER_ARGS_TOOL],
            )
            add(
                "no-unwrap-with-other-parameters",
                "'arguments' followed by another parameter is an ordinary parameter",
                write([("get_weather", [("arguments", '{"a": 1}', False), ("location", "Paris", True)])]),
                tool_calls=[call("get_weather", {"arguments": {"a": 1}, "location": "Paris"})],
            )
            # thinking off: the template closes the block in the prompt, so the output holds no
            # '</think>' (one there, where no block is open, would be content text)
            b.add(
                f"{tag}-thinking-off-reasoning-effort-none",
                f"{src}; reasoning_effort 'none' turns thinking off: all content (vLLM 0.33 parser/deepseek_v4.py "
                "reads it from chat_template_kwargs; trisect also from the request field, as here)",
                "Here." + write(as_calls([PARIS])),
                content="Here.",
                tool_calls=[PARIS],
                tools=TOOLS,
                options={"reasoning_effort": "none"},
                tokenizer="deepseek_v3",
            )
        invoke = f'<{dsml}invoke name="get_weather">\n{{"location": "Paris"}}\n</{dsml}invoke>\n'
        body = f"\n\n<{dsml}{block}>\n{invoke}</{dsml}{block}>"
        add(
            "malformed-json-body",
            "issue 20: an invoke whose body is JSON rather than parameters does not read (the template writes "
            "only parameter elements in an invoke): the block is malformed and its whole text is content, never {}",
            body,
            content=body.strip(),
        )
        return b

    return make


# --------------------------------------------------------------------------------------
# The <function=…> grammar in other wrappers: Seed-OSS, Step-3.5
# --------------------------------------------------------------------------------------


def function_writer(start: str, end: str, wrap: str = "\n") -> Callable[[Calls], str]:
    """Calls in the Qwen3-Coder.jinja spelling inside the family's wrapper; ``wrap``: what the
    template writes around a value (Qwen3-Coder a newline; Seed-OSS nothing)."""

    def write(calls: Calls) -> str:
        return "\n".join(
            f"{start}\n<function={name}>\n"
            + "".join(f"<parameter={k}>{wrap}{v}{wrap}</parameter>\n" for k, v, _ in ps)
            + f"</function>\n{end}"
            for name, ps in calls
        )

    return write


def function_xml_cases(
    tag: str,
    fmt: str,
    start: str,
    end: str,
    *,
    reasoning: str,
    think: tuple[str, str],
    tokenizer: str | None,
    reference: str,
    wrap: str = "\n",
) -> Callable[[], Book]:
    write = function_writer(start, end, wrap)
    open_, close = think

    def make() -> Book:
        def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
            block = write(as_calls(calls))
            return f"{open_}{r or ''}{close}" + content + ("\n\n" if content and block else "") + block

        if start == "<tool_call>":  # the writer is the Qwen3-Coder template's spelling
            rendered = coder_turn("Hi.", [(c["name"], c["arguments"]) for c in (PARIS, TOKYO_TIME)], tools=TOOLS)
            assert rendered == "Hi.\n\n" + write(as_calls([PARIS, TOKYO_TIME])), rendered
        f = Family(
            tag=tag,
            path=f"{fmt}/{fmt}.jsonl",
            tools_format=fmt,
            reasoning=reasoning,
            tokenizer=tokenizer,
            write=write,
            turn=turn,
            source=(
                f"written in the Qwen3-Coder.jinja spelling with the {fmt} wrappers and reasoning markers "
                if wrap
                else f"written in the {fmt} template's spelling (values with no wrapping newlines) "
            )
            + f"({reference})",
            value_close="</parameter>",
            call_close=end,
            tool_start=start,
            validates=False,
            think_open=open_ if fmt == "seed_oss" else None,
            tool_start_special=tokenizer is not None,
            prefix=f"{open_}{close}",
        )
        b = f.book()
        standard(b, f)

        def add(id: str, source: str, output: str, **kw: Any) -> None:
            b.add(f"{tag}-{id}", "hand-written; " + source, f.prefix + output, tools=TOOLS, tokenizer=tokenizer, **kw)

        out = write(as_calls([PARIS, TOKYO_TIME])).replace(f"{end}\n{start}", start)
        add(
            "missing-close-between-calls",
            f"'{end}' missing before the next '{start}' (Qwen3-Coder recovery)",
            out,
            tool_calls=[PARIS, TOKYO_TIME],
        )
        out = write(as_calls([PARIS])).replace("</function>\n", "")
        add("missing-function-close", f"'</function>' missing: '{end}' closes the call", out, tool_calls=[PARIS])
        out = write([("write_file", [("path", "\na.py\n", True), ("content", CODE, True)])])
        add(
            "values-as-written",
            f"a string value is what the template wrote between {wrap!r} and {wrap!r}, byte for byte "
            "(indentation and end newlines included)",
            out,
            tool_calls=[call("write_file", {"path": "\na.py\n", "content": CODE})],
        )
        return b

    return make


# --------------------------------------------------------------------------------------
# Step-3 (steptml) and MuseGlimmer (ATEM)
# --------------------------------------------------------------------------------------


def step3_write(calls: Calls) -> str:
    body = "".join(
        f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">'
        + "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v, _ in ps)
        + "</steptml:invoke><｜tool_call_end｜>"
        for name, ps in calls
    )
    return f"<｜tool_calls_begin｜>{body}<｜tool_calls_end｜>"


def step3_cases() -> Book:
    def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        return f"{r or ''}</think>{content}" + (step3_write(as_calls(calls)) if calls else "")

    f = Family(
        tag="step3",
        path="step3/step3.jsonl",
        tools_format="step3",
        reasoning="step3",
        tokenizer="step3",
        write=step3_write,
        turn=turn,
        source="written from vLLM 0.33 step3_tool_parser.py (its tokens and regexes; no template staged)",
        value_close="</steptml:parameter>",
        call_close="</steptml:invoke>",
        tool_start="<｜tool_calls_begin｜>",
        validates=False,
        prefix="</think>",
    )
    b = f.book()
    standard(b, f)

    def add(id: str, source: str, output: str, **kw: Any) -> None:
        b.add(f"step3-{id}", "hand-written; " + source, "</think>" + output, tools=TOOLS, tokenizer="step3", **kw)

    out = step3_write([("write_file", [("path", " a.py\n", True), ("content", CODE, True)])])
    add(
        "values-as-written",
        "the steptml markup writes a value between its tags with nothing around it "
        "('<steptml:parameter name=\"k\">(.*?)</steptml:parameter>'): the value is that text, byte for byte",
        out,
        tool_calls=[call("write_file", {"path": " a.py\n", "content": CODE})],
    )
    out = step3_write(as_calls([PARIS, TOKYO_TIME]))
    add(
        "missing-call-end",
        "'<｜tool_call_end｜>' missing before the next call",
        out.replace("<｜tool_call_end｜><｜tool_call_begin｜>", "<｜tool_call_begin｜>"),
        tool_calls=[PARIS, TOKYO_TIME],
    )
    add(
        "missing-invoke-end",
        "'</steptml:invoke>' missing before '<｜tool_call_end｜>'",
        out.replace("</steptml:invoke>", ""),
        tool_calls=[PARIS, TOKYO_TIME],
    )
    add("single-quoted-names", "names and keys in single quotes", out.replace('"', "'"), tool_calls=[PARIS, TOKYO_TIME])
    return b


# --------------------------------------------------------------------------------------
# Gemma 4 and FunctionGemma (custom argument grammar)
# --------------------------------------------------------------------------------------


def gemma_value(value: Any, quote: str) -> str:
    """A Python value in the Gemma argument syntax (vLLM 0.33 parser/gemma4.py, ``_parse_gemma4_args``)."""
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{gemma_value(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma_value(v, quote) for v in value) + "]"
    return json.dumps(value)


def gemma_writer(start: str, end: str, quote: str) -> Callable[[Calls], str]:
    def write(calls: Calls) -> str:
        def raw(v: str, is_str: bool) -> str:
            if is_str:
                return f"{quote}{v}{quote}"
            try:
                return gemma_value(json.loads(v), quote)
            except ValueError:
                return v  # a bare word as the model wrote it

        return "".join(
            f"{start}call:{name}{{" + ",".join(f"{k}:{raw(v, is_str)}" for k, v, is_str in ps) + f"}}{end}"
            for name, ps in calls
        )

    return write


GEMMA_BAD: tuple[Params, dict[str, Any]] = (
    [
        ("count", "many", False),
        ("ratio", "0.5x", False),
        ("enabled", "yes", False),
        ("level", "2", False),
        ("mode", "fast", False),
    ],
    {"count": "many", "ratio": "0.5x", "enabled": "yes", "level": 2, "mode": "fast"},
)


GEMMA_SOURCE = {
    "gemma4": "vLLM 0.33 parser/gemma4.py",
    "functiongemma": "vLLM 0.33 functiongemma_tool_parser.py",
}


def gemma_cases(tag: str, fmt: str, start: str, end: str, quote: str, tokenizer: str) -> Callable[[], Book]:
    write = gemma_writer(start, end, quote)
    reasoning = "gemma4" if fmt == "gemma4" else None

    def make() -> Book:
        def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
            think = f"<|channel>thought\n{r}<channel|>" if r else ""
            return think + content + write(as_calls(calls))

        f = Family(
            tag=tag,
            path=f"{fmt}/{fmt}.jsonl",
            tools_format=fmt,
            reasoning=reasoning,
            tokenizer=tokenizer,
            write=write,
            turn=turn,
            source=f"written in the {fmt} spelling of {GEMMA_SOURCE[fmt]} (no template staged)",
            value_close="}",
            call_close=end,
            tool_start=start,
            validates=False,
            think_open="<|channel>thought\n" if reasoning else None,
            bad_values=GEMMA_BAD,
        )
        b = f.book()
        standard(b, f)

        def add(id: str, source: str, output: str, **kw: Any) -> None:
            kw.setdefault("tools", TOOLS)
            b.add(f"{tag}-{id}", "hand-written; " + source, output, tokenizer=tokenizer, **kw)

        nested = call(
            "configure",
            {
                "options": {"flight": {"from": "SFO", "legs": [{"n": 1, "via": None}, {"n": 2, "via": ["ORD"]}]}},
                "tags": [],
            },
        )
        add(
            "nested-objects-and-arrays",
            "nested objects, arrays of objects, an empty array",
            write(as_calls([nested])),
            tool_calls=[nested],
        )
        text = 'braces { } [ ] , : and "quotes" and a\nnewline'
        add(
            "string-with-grammar-characters",
            "a delimited string holds the grammar's own characters as text",
            write([("search", [("query", text, True)])]),
            tool_calls=[call("search", {"query": text})],
        )
        out = write(as_calls([PARIS, TOKYO_TIME])).replace(end + start, start)
        add(
            "missing-close-between-calls",
            f"'{end}' missing before the next '{start}'",
            out,
            tool_calls=[PARIS, TOKYO_TIME],
        )
        out = write(as_calls([PARIS])).replace(end, "") + " And more."
        add(
            "missing-close-call-complete",
            "the arguments' closing brace completes the call without its closer",
            out,
            content="And more.",
            tool_calls=[PARIS],
        )
        out = "Try: " + write([("get_weather", [("location", "Paris", True)])]).replace(":" + quote, " " + quote, 1)
        add(
            "malformed-missing-colon",
            "a key without ':' is not the grammar: no call, text is content",
            out,
            content=joined(out),
        )
        out = (
            write([("get_weather", [("location", "Paris", True)])]).replace(end, "")
            + "call:get_time{timezone:"
            + f"{quote}UTC{quote}}}{end}"
        )
        add(
            "two-calls-one-block",
            "a second 'call:' in the same block (accepted; vLLM 0.33's source does not say whether models write it)",
            out,
            tool_calls=[call("get_weather", {"location": "Paris"}), call("get_time", {"timezone": "UTC"})],
        )
        return b

    return make


# --------------------------------------------------------------------------------------
# vLLM 0.33 names: dots, mimo, step5, hy_v3 / hy_v4, k2_horizon (written from their sources)
# --------------------------------------------------------------------------------------


def dots_write(calls: Calls) -> str:
    body = "".join(
        f'<invoke name="{name}">\n'
        + "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v, _ in ps)
        + "</invoke>\n"
        for name, ps in calls
    )
    return f"\n<dots_function_call>\n{body}</dots_function_call>"


def dots_cases() -> Book:
    def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        return content + (dots_write(as_calls(calls)) if calls else "")

    f = Family(
        tag="dots",
        path="dots/dots.jsonl",
        tools_format="dots",
        reasoning=None,
        tokenizer=None,
        write=dots_write,
        turn=turn,
        source="written from vLLM 0.33 dots_tool_parser.py (the DotsToolParser docstring's layout)",
        value_close="</parameter>",
        call_close="</invoke>",
        tool_start="<dots_function_call>",
        expect_str=staticmethod(lambda v: v.strip()),  # type: ignore[arg-type]
    )
    b = f.book()
    standard(b, f)
    src = "hand-written from vLLM 0.33 dots_tool_parser.py"
    out = dots_write(as_calls([PARIS])).replace('"', "'") + dots_write(as_calls([TOKYO_TIME])).replace('"', "")
    b.add(
        "dots-quote-styles",
        src + ": _extract_name strips ' and \" quotes or none",
        out,
        tool_calls=[PARIS, TOKYO_TIME],
        tools=TOOLS,
        tokenizer=None,
    )
    b.add(
        "dots-stray-close-dropped",
        src + ": a '</dots_function_call>' in normal text is dropped (streaming path)",
        "Done.</dots_function_call>",
        content="Done.",
        tools=TOOLS,
        tokenizer=None,
    )
    out = dots_write([("get_weather", [("location", "  Paris \n", True), ("unit", " celsius", True)])])
    b.add(
        "dots-values-stripped",
        src + ": parameter values are .strip()-ed",
        out,
        tool_calls=[call("get_weather", {"location": "Paris", "unit": "celsius"})],
        tools=TOOLS,
        tokenizer=None,
    )
    return b


def mimo_write(calls: Calls) -> str:
    """The compact parameters MiMo writes (vLLM parser/mimo.py: values verbatim)."""
    return "\n".join(
        f"<tool_call>\n<function={name}>\n"
        + "".join(f"<parameter={k}>{v}</parameter>\n" for k, v, _ in ps)
        + "</function>\n</tool_call>"
        for name, ps in calls
    )


def mimo_cases() -> Book:
    def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        block = mimo_write(as_calls(calls))
        return f"<think>\n{r or ''}\n</think>\n\n" + content + ("\n\n" if content and block else "") + block

    f = Family(
        tag="mimo",
        path="mimo/mimo.jsonl",
        tools_format="mimo",
        reasoning="mimo",
        tokenizer="qwen3",
        write=mimo_write,
        turn=turn,
        source="written in the Qwen3 XML grammar with compact parameters (vLLM 0.33 parser/mimo.py: values verbatim)",
        value_close="</parameter>",
        call_close="</tool_call>",
        tool_start="<tool_call>",
        validates=False,
        prefix="<think>\n\n</think>\n\n",
    )
    b = f.book()
    standard(b, f)
    out = mimo_write([("write_file", [("path", "a.txt", True), ("content", "\nkept\n", True)])])
    b.add(
        "mimo-wrapping-newlines-kept",
        "hand-written; vLLM 0.33 parser/mimo.py (trim_newlines=False): a value's own newlines are kept",
        f.prefix + out,
        tool_calls=[call("write_file", {"path": "a.txt", "content": "\nkept\n"})],
        tools=TOOLS,
        tokenizer="qwen3",
    )
    return b


def hy_writer(sep: str) -> Callable[[Calls], str]:
    def write(calls: Calls) -> str:
        body = "".join(
            f"<tool_call>{name}{sep}"
            + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v, _ in ps)
            + "</tool_call>"
            for name, ps in calls
        )
        return f"<tool_calls>{body}</tool_calls>"

    return write


def hy_cases(version: str) -> Callable[[], Book]:
    write = hy_writer("<tool_sep>" if version == "v3" else "")
    fmt = f"hy_{version}"

    def make() -> Book:
        def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
            return f"{r or ''}</think>{content}" + (write(as_calls(calls)) if calls else "")

        f = Family(
            tag=fmt,
            path=f"{fmt}/{fmt}.jsonl",
            tools_format=fmt,
            reasoning=fmt,
            tokenizer="hy",
            write=write,
            turn=turn,
            source=f"written from vLLM 0.33 {fmt}_tool_parser.py (its markers and regexes)",
            value_close="</arg_value>",
            call_close="</tool_call>",
            tool_start="<tool_calls>",
            validates=False,
            options={"reasoning_effort": "high"},
            prefix="</think>",
        )
        b = f.book()
        standard(b, f)
        src = f"hand-written from vLLM 0.33 {fmt}_tool_parser.py"
        out = write(as_calls([PARIS, TOKYO_TIME])).replace("</tool_call><tool_call>", "<tool_call>")
        b.add(
            f"{fmt}-missing-call-close",
            src + ": '</tool_call>' missing before the next call",
            "</think>" + out,
            tool_calls=[PARIS, TOKYO_TIME],
            tools=TOOLS,
            tokenizer="hy",
            options=f.options,
        )
        out = write(as_calls([PARIS])).replace("</tool_call></tool_calls>", "</tool_calls>")
        b.add(
            f"{fmt}-block-end-closes-call",
            src + ": '</tool_calls>' ends a call left open (v3: tool_call_portion_regex)",
            "</think>" + out,
            tool_calls=[PARIS],
            tools=TOOLS,
            tokenizer="hy",
            options=f.options,
        )
        return b

    return make


def k2_write(calls: Calls) -> str:
    body = "".join(
        f"<ifm|tool_call>{name}"
        + "".join(f"<ifm|arg_key>{k}</ifm|arg_key><ifm|arg_value>{v}</ifm|arg_value>" for k, v, _ in ps)
        + "</ifm|tool_call>"
        for name, ps in calls
    )
    return f"<ifm|tool_calls>{body}</ifm|tool_calls>"


def k2_horizon_cases() -> Book:
    def turn(r: str | None, content: str, calls: list[dict[str, Any]]) -> str:
        return f"<ifm|think>{r or ''}</ifm|think>{content}" + (k2_write(as_calls(calls)) if calls else "")

    f = Family(
        tag="k2h",
        path="k2_horizon/k2_horizon.jsonl",
        tools_format="k2_horizon",
        reasoning="k2_horizon",
        tokenizer="k2_horizon",
        write=k2_write,
        turn=turn,
        source="written from vLLM 0.33 k2_horizon_tool_parser.py (tool_call_format 'xml')",
        value_close="</ifm|arg_value>",
        call_close="</ifm|tool_call>",
        tool_start="<ifm|tool_calls>",
        prefix="<ifm|think></ifm|think>",
        think_open="<ifm|think>",
        rejected=staticmethod(  # type: ignore[arg-type]
            lambda out: joined(out.replace("<ifm|think></ifm|think>", ""))  # the empty think block
        ),
    )
    b = f.book()
    standard(b, f)
    src = "hand-written from vLLM 0.33 k2_horizon_tool_parser.py"
    typed = k2_write(as_calls([PARIS])).replace("</ifm|arg_key>", "</ifm|arg_key><ifm|arg_type>string</ifm|arg_type>")
    b.add(
        "k2h-xml-typed",
        src + ": tool_call_format 'xml_typed' writes <ifm|arg_type> between key and value (_ARG_RE)",
        f.prefix + typed,
        tool_calls=[PARIS],
        tools=TOOLS,
        tokenizer="k2_horizon",
        options={"chat_template_kwargs": {"tool_call_format": "xml_typed"}},
    )
    return b


VLLM033_BOOKS: list[Callable[[], Book]] = [
    dots_cases,
    mimo_cases,
    function_xml_cases(
        "step5",
        "step5",
        "<tool_call>",
        "</tool_call>",
        reasoning="step5",
        think=("", "</think>\n"),
        tokenizer="step5",
        reference="vLLM 0.33 step5_tool_parser.py: the Qwen3-Coder grammar",
    ),
    hy_cases("v3"),
    hy_cases("v4"),
    k2_horizon_cases,
]


# --------------------------------------------------------------------------------------
# Checks and output
# --------------------------------------------------------------------------------------

BOOKS: list[Callable[[], Book]] = [
    glm_book("glm45", "glm45/glm46-template.jsonl", "glm45", GLM46, glm46_write),
    glm_book("glm47", "glm47/glm47-template.jsonl", "glm47", GLM47, glm47_write),
    glm_book("ling3", "ling3/ling3.jsonl", "ling3", None, glm47_write),
    glm_book("poolside", "poolside_v1/poolside_v1.jsonl", "poolside_v1", None, glm47_write),
    minimax_cases,
    dsml_cases("dsv32", "deepseek_v32", "｜DSML｜", "function_calls", "deepseek_v3"),
    dsml_cases("dsv4", "deepseek_v4", "｜DSML｜", "tool_calls", "deepseek_v4"),
    dsml_cases("dsv41", "deepseek_v41", "｜DSML｜ ", "calls", "deepseek_v41"),
    function_xml_cases(
        "seed",
        "seed_oss",
        "<seed:tool_call>",
        "</seed:tool_call>",
        reasoning="seed_oss",
        think=("<seed:think>", "</seed:think>"),
        tokenizer="seed_oss",
        reference="llama.cpp models/templates/ByteDance-Seed-OSS.jinja: '<parameter=' + k + '>' + value + "
        "'</parameter>\\n'; vLLM 0.33 parser/seed_oss.py: the Qwen3 grammar with the Seed wrappers",
        wrap="",
    ),
    function_xml_cases(
        "step3p5",
        "step3p5",
        "<tool_call>",
        "</tool_call>",
        reasoning="step3p5",
        think=("", "</think>\n"),
        tokenizer=None,
        reference="vLLM 0.33 step3p5_tool_parser.py: the Qwen3-Coder grammar",
    ),
    step3_cases,
    *VLLM033_BOOKS,
    gemma_cases("gemma4", "gemma4", "<|tool_call>", "<tool_call|>", '<|"|>', "gemma4"),
    gemma_cases("fgemma", "functiongemma", "<start_function_call>", "<end_function_call>", "<escape>", "functiongemma"),
]


def build() -> dict[Path, str]:
    return casefile.build(BOOKS)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
