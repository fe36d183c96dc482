"""Generate tests/cases/**.jsonl: model outputs rendered through the real chat templates.

Run from anywhere: ``python tests/support/render_cases.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed.

How an output is made (a *round trip*): take an assistant message (reasoning, content,
tool calls), render the conversation with the model's chat template twice, once ending
with that message (``add_generation_prompt=False``) and once ending with the generation
prompt (``add_generation_prompt=True``). The generated text is the difference: everything
after the prompt (so a ``<think>\\n`` the template pre-fills belongs to the prompt) up to the
end-of-turn marker (``<|im_end|>``, ``<｜end▁of▁sentence｜>``). The expected message is the
message that was rendered. Jinja runs as transformers runs it (sandboxed, trim_blocks,
lstrip_blocks, loopcontrols, ``tojson`` = ``json.dumps(ensure_ascii=False)`` without HTML
escaping, ``raise_exception``).

Where no template can produce an output (text between calls, malformed or truncated calls,
recovery paths, regression reports) the case is written by hand in the wire format the
template shows, and ``source`` says so. Expected values were established by reading the
templates and the vLLM 0.33 parsers each case names (``vllm/parser/qwen3.py`` and the like, from
the ``vllm==0.33.0`` wheel), never by running trisect.

Normalisation the expected values follow (the trisect contract as briefed):

* reasoning / content: the runs of text of one field are concatenated as they stand in the
  output, then the whole field is ``str.strip()``-ed (template newlines around markers go,
  whitespace between two runs stays), empty → ``None``;
* arguments are compared as parsed JSON objects;
* qwen3_coder values: one leading and one trailing ``\\n`` removed, then typed by the tool
  schema (a value that is not valid JSON for its type stays a string);
* a malformed call is no call; its raw text (markers included) is content; a call cut off by
  the end of the output is no call either, and its raw text is the message's unfinished call
  (cases with "-malformed-" in their id carry ``"malformed": true``: an incremental stream
  may have shown such a call before it turned out malformed);
* a call whose own structure is complete counts even if the output stops before the
  family's outer closer (JSON complete before ``</tool_call>``; ``</function>`` seen before
  ``</tool_call>``); a qwen3_coder call missing ``</function>`` is closed by ``</tool_call>``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if __name__ == "__main__":  # run as a script: import `support` as a package, not by file
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(TESTS))

from support import casefile  # noqa: E402
from support import tokenizers as tk  # noqa: E402

TEMPLATES = TESTS / "data" / "templates"
LLAMA_STACK = TESTS / "data" / "outputs" / "llama-stack-qwen3-0.6b.jsonl"
CASES = TESTS / "cases"


QWEN_EOT = "<|im_end|>\n"
R1_EOS = "<｜end▁of▁sentence｜>"
R1_BOS = "<｜begin▁of▁sentence｜>"


# --------------------------------------------------------------------------------------
# Jinja, configured as transformers configures it for chat templates
# --------------------------------------------------------------------------------------


def _environment() -> Any:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


_ENV = _environment()
_COMPILED: dict[str, Any] = {}


def render(template: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    if template not in _COMPILED:
        _COMPILED[template] = _ENV.from_string((TEMPLATES / template).read_text("utf-8"))
    kwargs = {k: v for k, v in kwargs.items() if v is not None}  # None -> undefined
    return _COMPILED[template].render(messages=messages, **kwargs)


def generated(
    template: str,
    history: list[dict[str, Any]],
    assistant: dict[str, Any],
    *,
    eot: str,
    **kwargs: Any,
) -> tuple[str, str]:
    """(generated text, prompt) for ``assistant`` answering ``history``."""
    prompt = render(template, history, add_generation_prompt=True, **kwargs)
    full = render(template, [*history, assistant], add_generation_prompt=False, **kwargs)
    if not full.startswith(prompt):
        raise ValueError(f"{template}: the prompt is not a prefix of the rendered turn")
    gen = full[len(prompt) :]
    if not gen.endswith(eot):
        raise ValueError(f"{template}: rendered turn does not end with {eot!r}: {gen[-40:]!r}")
    return gen[: -len(eot)], prompt


def prompt_tail(prompt: str, turn_start: str) -> str:
    """The prompt from the start of the assistant turn on (what options.prompt_text holds)."""
    return prompt[prompt.rindex(turn_start) :]


# --------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------


def tool(name: str, description: str, properties: dict[str, Any], required: Iterable[str] = ()):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


GET_WEATHER = tool(
    "get_weather",
    "Get the current weather for a location.",
    {
        "location": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {
            "type": "string",
            "enum": ["celsius", "fahrenheit"],
            "description": "Temperature unit",
        },
    },
    ["location"],
)
GET_TIME = tool(
    "get_time",
    "Get the current time in a timezone.",
    {"timezone": {"type": "string", "description": "IANA timezone name"}},
    ["timezone"],
)
GET_JOKE = tool("get_random_joke", "Tell a random joke.", {})
SEARCH = tool(
    "search",
    "Search the web.",
    {
        "query": {"type": "string", "description": "Search query"},
        "max_results": {"type": "integer", "description": "How many results"},
    },
    ["query"],
)
BOOK_FLIGHT = tool(
    "book_flight",
    "Book a flight.",
    {
        "flight": {"type": "object", "description": "from, to, date and legs"},
        "passenger": {"type": "object", "description": "name and age"},
    },
    ["flight", "passenger"],
)
WRITE_FILE = tool(
    "write_file",
    "Write a text file.",
    {
        "path": {"type": "string", "description": "File path"},
        "content": {"type": "string", "description": "Full file content"},
    },
    ["path", "content"],
)
CONFIGURE = tool(
    "configure",
    "Set configuration values.",
    {
        "count": {"type": "integer", "description": "an integer"},
        "ratio": {"type": "number", "description": "a number"},
        "enabled": {"type": "boolean", "description": "a boolean"},
        "options": {"type": "object", "description": "an object"},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "an array"},
        "note": {"type": ["string", "null"], "description": "string or null"},
        "label": {"type": "string", "description": "a string"},
        "mode": {"type": "string", "enum": ["fast", "safe"], "description": "a string enum"},
        "level": {"type": "integer", "enum": [1, 2, 3], "description": "an integer enum"},
        "nothing": {"type": "null", "description": "always null"},
    },
)
SET_COUNT = tool(
    "set_count",
    "Set a counter and label it.",
    {
        "count": {"type": "integer", "description": "new value"},
        "label": {"type": "string", "description": "label"},
    },
    ["count"],
)

WEATHER_TOOLS = [GET_WEATHER, GET_TIME, GET_JOKE, SEARCH]


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def joined(*runs: str) -> str | None:
    """Expected text of a field made of several runs of output text: the runs as they stand
    in the output, whitespace included, concatenated; the whole field is then stripped
    (whitespace between two runs is kept, only the field's own ends are template formatting)."""
    return "".join(runs).strip() or None


class Book:
    """The cases of one file."""

    def __init__(self, path: str, reasoning: str | None, tools_format: str | None) -> None:
        self.path = path
        self.reasoning = reasoning
        self.tools_format = tools_format
        self.cases: list[dict[str, Any]] = []

    def add(
        self,
        id: str,
        source: str,
        output: str,
        *,
        reasoning: str | None = None,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        tokenizer: str | None = "qwen3",
        token_ids: list[int] | None = None,
        options: dict[str, Any] | None = None,
        truncated: bool = False,
        ids_only: bool = False,
        unfinished_call: str | None = None,
    ) -> None:
        case: dict[str, Any] = {
            "id": id,
            "source": source,
            "reasoning": self.reasoning,
            "tools_format": self.tools_format,
            "tokenizer": tokenizer,
            "token_ids": token_ids,
            "output": output,
            "tools": tools or [],
            "options": options or {},
            "truncated": truncated,
            "expected": {
                "reasoning": reasoning,
                "content": content,
                "tool_calls": tool_calls or [],
            },
        }
        if unfinished_call is not None:  # the raw text of a call the output ends inside: not content
            case["expected"]["unfinished_call"] = unfinished_call
        if ids_only:
            case["ids_only"] = True
        if "-malformed-" in id:
            case["malformed"] = True
        self.cases.append(case)


def cut_call(tools_format: str, text: str) -> str:
    """The raw text of the first call, cut off, that an output ends inside: ``text`` from the
    first marker that opens a call, or the block of calls it opened in (a block that yielded no
    call goes with it), in the format's table (that text is the message's
    ``unfinished_call``, not content)."""
    from trisect.engine.spec import Act, Region
    from trisect.formats import tool_format

    spec = tool_format(tools_format)
    fields = (Region.CONTENT, Region.REASONING)
    opens_call = {st for (st, _t), r in spec.table.items() if Act.CALL_START in r.acts}
    openers = {
        s
        for (st, t), r in spec.table.items()
        if Act.CALL_START in r.acts
        or (spec.regions.get(st) in fields and spec.regions.get(r.next) not in fields and r.next in opens_call)
        for s in spec.terminals.get(t, ())
    }
    found = [i for s in openers if (i := text.find(s)) >= 0]
    return text[min(found) :] if found else text


def ordinary_ids(tokenizer: str, *pieces: tuple[str, bool]) -> list[int]:
    """Token ids of the concatenated pieces; pieces marked True are ordinary tokens."""
    ids: list[int] = []
    for text, as_ordinary in pieces:
        ids += tk.encode_ordinary(tokenizer, text) if as_ordinary else tk.encode(tokenizer, text)
    return ids


USER = {"role": "user", "content": "What's the weather like in Paris today?"}


# ---- Qwen3 template (reasoning qwen3, tool calls hermes-style JSON) -------------------

QWEN3 = "Qwen-Qwen3-0.6B.jinja"


def qwen3_turn(
    reasoning: str,
    content: str = "",
    calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    tools: list[dict[str, Any]] | None = None,
    enable_thinking: bool | None = None,
    user: dict[str, Any] = USER,
) -> tuple[str, str]:
    msg: dict[str, Any] = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    if calls:
        msg["tool_calls"] = [
            {"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls
        ]
    gen, prompt = generated(QWEN3, [user], msg, eot=QWEN_EOT, tools=tools, enable_thinking=enable_thinking)
    return gen, prompt_tail(prompt, "<|im_start|>")


def hermes_block(name: str, arguments_json: str) -> str:
    """One call in the exact spelling of the Qwen3 / Qwen2.5 / Hermes templates."""
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments_json}}}\n</tool_call>'


# ---- Qwen3-Coder templates (tool calls qwen3_coder) ------------------------------------

CODER = "Qwen3-Coder.jinja"
CODER_30B = "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja"


def coder_turn(
    content: str,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    tools: list[dict[str, Any]],
    template: str = CODER,
    user: dict[str, Any] = USER,
) -> str:
    """Generated text of a Qwen3-Coder turn; argument values are passed to the template
    as given (the template writes strings raw, mappings/lists as JSON, scalars with
    Jinja's ``|string``)."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]
    gen, _ = generated(template, [user], msg, eot=QWEN_EOT, tools=tools)
    return gen


def coder_block(name: str, params: list[tuple[str, str]]) -> str:
    """One call in the exact spelling of Qwen3-Coder.jinja; values are raw text."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def think(reasoning: str) -> str:
    """The Qwen3 template's thinking block for a final assistant turn."""
    return f"<think>\n{reasoning}\n</think>\n\n"


# ---- DeepSeek R1 templates -------------------------------------------------------------

R1_DISTILL_QWEN = "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"
R1_DISTILL_LLAMA = "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"
R1_LLAMA_CPP = "llama-cpp-deepseek-r1.jinja"


def r1_prompt_and_answer(
    template: str, content: str, *, enable_thinking: bool | None = None, user: str
) -> tuple[str, str]:
    """(prompt tail, answer as the template renders an assistant turn's content).

    The R1 templates drop the thinking of past turns (``content.split('</think>')[-1]``),
    so the thinking part of an output cannot be rendered; the answer part can."""
    history = [{"role": "user", "content": user}]
    prompt = render(
        template,
        history,
        add_generation_prompt=True,
        bos_token=R1_BOS,
        eos_token=R1_EOS,
        enable_thinking=enable_thinking,
    )
    full = render(
        template,
        [*history, {"role": "assistant", "content": content}],
        add_generation_prompt=False,
        bos_token=R1_BOS,
        eos_token=R1_EOS,
        enable_thinking=enable_thinking,
    )
    turn = full[full.rindex("<｜Assistant｜>") + len("<｜Assistant｜>") :]
    if not turn.endswith(R1_EOS):
        raise ValueError(f"{template}: assistant turn does not end with EOS")
    return prompt_tail(prompt, "<｜Assistant｜>"), turn[: -len(R1_EOS)]


# --------------------------------------------------------------------------------------
# tests/cases/qwen3/qwen3.jsonl — reasoning qwen3, no tool parser
# --------------------------------------------------------------------------------------


KEEP_CLOSER = (
    "; the closer where no block is open is content text as written (the template writes an "
    "assistant message's content verbatim after the closer; vLLM absorbs it, trisect drops no text)"
)


def qwen3_cases() -> Book:
    b = Book("qwen3/qwen3.jsonl", "qwen3", None)
    src = f"{QWEN3} round trip"

    r = "The user asks for 2 + 2. That is 4."
    out, _ = qwen3_turn(r, "2 + 2 = 4.")
    b.add("qwen3-rt-thinking-on", src, out, reasoning=r, content="2 + 2 = 4.")

    r = "First, parse the question.\n\nSecond, answer it briefly:\n- 4 is even\n- 4 = 2 * 2"
    c = "**Answer:** 4\n\nIt is even.\n\n```python\nprint(2 + 2)\n```"
    out, _ = qwen3_turn(r, c)
    b.add("qwen3-rt-multiline", src, out, reasoning=r, content=c)

    out, tail = qwen3_turn("", "The capital of France is Paris.", enable_thinking=False)
    b.add(
        "qwen3-rt-thinking-off-17349",
        f"{src} with enable_thinking=false (prompt ends '<think>\\n\\n</think>\\n\\n'); "
        "vLLM #17349/#19839: answer must not land in reasoning",
        out,
        content="The capital of France is Paris.",
        options={"chat_template_kwargs": {"enable_thinking": False}, "prompt_text": tail},
    )

    out, tail = qwen3_turn("", "Paris.", enable_thinking=True)
    b.add(
        "qwen3-rt-thinking-explicit-on-empty-reasoning",
        f"{src} with enable_thinking=true; the model wrote an empty think block",
        out,
        content="Paris.",
        options={"chat_template_kwargs": {"enable_thinking": True}},
    )

    out, _ = qwen3_turn("Just a greeting; nothing to say back.", "")
    b.add(
        "qwen3-rt-reasoning-only",
        f"{src}; content empty",
        out,
        reasoning="Just a greeting; nothing to say back.",
    )

    r = "用户问的是北京的天气。我应该用中文回答 😀 — and mention Münster too."
    c = "北京今天晴，气温 25°C ☀️。Münster: bewölkt, 18 °C."
    out, _ = qwen3_turn(r, c)
    b.add("qwen3-rt-unicode", src, out, reasoning=r, content=c)

    # QwQ-32B (llama.cpp copy): the prompt pre-fills '<think>\n'; with enable_thinking
    # undefined or false it also closes it ('</think>'), with enable_thinking=true it does not.
    r = "Let me count the letters in strawberry: s-t-r-a-w-b-e-r-r-y, three r's."
    c = "There are 3 r's in strawberry."
    gen, prompt = generated(
        "Qwen-QwQ-32B.jinja",
        [{"role": "user", "content": "How many r's are in strawberry?"}],
        {"role": "assistant", "content": f"<think>\n{r}\n</think>\n\n{c}"},
        eot=QWEN_EOT,
        enable_thinking=True,
    )
    tail = prompt_tail(prompt, "<|im_start|>")
    assert tail == "<|im_start|>assistant\n<think>\n" and not gen.startswith("<think>")
    b.add(
        "qwen3-qwq-prompt-ends-in-think",
        "Qwen-QwQ-32B.jinja round trip with enable_thinking=true: the prompt ends "
        "'<think>\\n', the output has only '</think>'",
        gen,
        reasoning=r,
        content=c,
        options={"prompt_text": tail},
    )
    b.add(
        "qwen3-start-marker-missing-no-prompt",
        "same output as qwen3-qwq-prompt-ends-in-think without prompt_text: qwen3 starts in reasoning by default",
        gen,
        reasoning=r,
        content=c,
    )
    b.add(
        "qwen3-think-repeated-after-prefill",
        "hand-written: the prompt pre-fills '<think>\\n' (Qwen-QwQ-32B.jinja) and the model "
        "writes '<think>' again; REASONING+THINK_START is absorbed (vLLM 0.33 parser/qwen3.py)",
        f"<think>\n{gen}",
        reasoning=r,
        content=c,
        options={"prompt_text": tail},
    )

    b.add(
        "qwen3-end-marker-missing-truncated",
        "hand-written: Qwen3 thinking cut by max_tokens before '</think>'",
        "<think>\nThe user wants a poem about the sea. I could start with waves, or",
        reasoning="The user wants a poem about the sea. I could start with waves, or",
        truncated=True,
    )
    b.add(
        "qwen3-truncated-inside-end-marker",
        "hand-written: cut by max_tokens in the middle of '</think>'; the partial marker is text and is kept",
        "<think>\nAlmost done thinking.\n</thi",
        reasoning="Almost done thinking.\n</thi",
        truncated=True,
    )
    b.add(
        "qwen3-truncated-after-think-start",
        "hand-written: cut by max_tokens right after '<think>\\n'",
        "<think>\n",
        truncated=True,
    )
    b.add(
        "qwen3-empty-output",
        "hand-written: the model stopped at once",
        "",
    )
    b.add(
        "qwen3-no-markers-thinking-on",
        "hand-written: thinking on (default) and no '</think>': everything is reasoning "
        "(trisect qwen3 rule; the #17349 flip side)",
        "Paris",
        reasoning="Paris",
    )
    b.add(
        "qwen3-no-markers-thinking-off",
        "hand-written: enable_thinking=false and no markers: everything is content",
        "Paris",
        content="Paris",
        options={
            "chat_template_kwargs": {"enable_thinking": False},
            "prompt_text": "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        },
    )
    b.add(
        "qwen3-duplicate-end-marker",
        "hand-written from the Qwen3 template spelling: '</think>' twice; the second is content "
        "text: the template writes content verbatim after '</think>' (qwen3-rt-content-holds-closer); "
        "vLLM 0.33 parser/qwen3.py absorbs it, trisect drops no text",
        think("I will answer 4.") + "</think>\n\n4",
        reasoning="I will answer 4.",
        content="</think>\n\n4",
    )
    out, _ = qwen3_turn("I will answer 4.", "4 </think> is a closing tag.")
    b.add(
        "qwen3-rt-content-holds-closer",
        f"{src}: a content that holds '</think>' is written verbatim after the block, so a closer "
        "where no block is open is content text",
        out,
        reasoning="I will answer 4.",
        content="4 </think> is a closing tag.",
    )
    second = think("First thought.") + "Partial answer." + think("Second thought.") + "Final answer."
    b.add(
        "qwen3-ids-second-block-is-reasoning",
        "hand-written: a second '<think>' block after content, its markers the special tokens "
        "151667 / 151668: reasoning, appended to the first (the template never writes the markers "
        "inside content); whitespace between the two pieces of each field is kept",
        second,
        reasoning="First thought.\n\nSecond thought.",
        content="Partial answer.\n\nFinal answer.",
        token_ids=tk.encode("qwen3", second),
        ids_only=True,
    )
    b.add(
        "qwen3-second-block-as-text-is-content",
        "hand-written: the same second block as text with no ids: text cannot tell a thought from "
        "an answer that mentions the tags, so the block is content text, both markers included "
        "(nothing is dropped)",
        second,
        reasoning="First thought.",
        content="Partial answer.<think>\nSecond thought.\n</think>\n\nFinal answer.",
        tokenizer=None,
    )
    b.add(
        "qwen3-thinking-off-stray-end-marker",
        "hand-written: enable_thinking=false, the model still writes '</think>' first; with "
        "thinking off the markers are text (vLLM 0.33 Qwen3Parser.extract_reasoning returns the "
        "raw output, parser/qwen3.py:337-344): content as written",
        "</think>\n\nHello! How can I help?",
        content="</think>\n\nHello! How can I help?",
        options={
            "chat_template_kwargs": {"enable_thinking": False},
            "prompt_text": "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        },
    )
    b.add(
        "qwen3-whitespace-around-markers",
        "hand-written: extra spaces/newlines next to the markers and at the ends are "
        "template formatting and are stripped",
        "\n <think> \n\n  Think hard.  \n\n </think>  \n\n\n  Answer.  \n\n",
        reasoning="Think hard.",
        content="Answer.",
    )
    b.add(
        "qwen3-no-whitespace-around-markers",
        "hand-written: markers with no whitespace at all",
        "<think>x</think>y",
        reasoning="x",
        content="y",
    )
    b.add(
        "qwen3-content-mentions-think-tag",
        "hand-written: after reasoning ended, '<think>' in content written as ordinary tokens (or as "
        "text, with no ids) is plain text; only the special token given by id opens a second block",
        think("Explain the tag.") + "Qwen3 wraps its reasoning in a <think> block.",
        reasoning="Explain the tag.",
        content="Qwen3 wraps its reasoning in a <think> block.",
        token_ids=ordinary_ids(
            "qwen3", (think("Explain the tag.") + "Qwen3 wraps its reasoning in a", False), (" <think> block.", True)
        ),
    )
    mention_r = "The closing tag </think> ends this block; I am still thinking."
    out = think(mention_r) + "Done."
    b.add(
        "qwen3-ids-end-marker-as-ordinary-tokens",
        "hand-written: reasoning mentions '</think>' written as ordinary tokens; with token "
        "ids it is reasoning text (THINK_END is a token-id terminal)",
        out,
        reasoning=mention_r,
        content="Done.",
        token_ids=ordinary_ids(
            "qwen3",
            ("<think>\nThe closing tag ", False),
            ("</think>", True),
            (" ends this block; I am still thinking.\n</think>\n\nDone.", False),
        ),
        ids_only=True,
    )

    # llama-stack recording (real Qwen3-0.6B output, vLLM). The recording holds the
    # server's reasoning and content deltas; '<think>' + reasoning + '</think>' + content
    # is the raw output the Qwen3 format implies (the model writes '<think>' itself: the
    # Qwen3 template does not pre-fill it).
    rec = _llama_stack("d1edbcabe60496d2d6073375fcfbc8020ef21e310e798d441adf22f3e5804fd8")
    out = "<think>" + rec["server_reasoning"] + "</think>" + rec["raw_content"]
    b.add(
        "qwen3-llama-stack-multi-turn-reasoning",
        f"{rec['source']} (real Qwen3-0.6B output; raw text rebuilt as '<think>' + "
        "reasoning + '</think>' + content from the recorded deltas)",
        out,
        reasoning=rec["server_reasoning"].strip(),
        content=rec["raw_content"].strip(),
    )
    return b


# --------------------------------------------------------------------------------------
# tests/cases/deepseek_r1/deepseek_r1.jsonl — reasoning deepseek_r1, no tool parser
# --------------------------------------------------------------------------------------


def deepseek_r1_cases() -> Book:
    b = Book("deepseek_r1/deepseek_r1.jsonl", "deepseek_r1", None)
    tok = "deepseek_v3"
    note = (
        "; output = reasoning + '\\n</think>\\n\\n' + the answer as the template renders it "
        "(R1 templates strip past thinking, so only the answer part is rendered); token ids "
        "in the DeepSeek-R1 (V3) vocabulary"
    )

    r = "The user asks 1 + 1. Basic arithmetic: 1 + 1 = 2."
    tail, answer = r1_prompt_and_answer(R1_DISTILL_LLAMA, "1 + 1 = 2.", user="What is 1 + 1?")
    assert tail == "<｜Assistant｜><think>\n"
    out = f"{r}\n</think>\n\n{answer}"
    b.add(
        "r1-prompt-ends-in-think-13125",
        f"{R1_DISTILL_LLAMA}: the prompt ends '<think>\\n' so the output has only "
        f"'</think>' (vLLM #13125/#13375, DeepSeek-R1#350){note}",
        out,
        reasoning=r,
        content="1 + 1 = 2.",
        tokenizer=tok,
        options={"prompt_text": tail},
    )
    b.add(
        "r1-start-marker-missing-no-prompt",
        "same output as r1-prompt-ends-in-think-13125 without prompt_text: deepseek_r1 "
        "treats text before '</think>' as reasoning",
        out,
        reasoning=r,
        content="1 + 1 = 2.",
        tokenizer=tok,
    )
    b.add(
        "r1-with-think-start",
        "hand-written: older R1 behaviour (before the template pre-filled '<think>\\n'): "
        "the model writes '<think>' itself",
        f"<think>\n{r}\n</think>\n\n1 + 1 = 2.",
        reasoning=r,
        content="1 + 1 = 2.",
        tokenizer=tok,
    )

    r = "Okay, the user wants a haiku about autumn.\n\n5-7-5 syllables. Leaves falling, cool wind.\n\nLet me draft it."
    c = "Crimson leaves drifting\nWhispers of the cooling wind\nAutumn settles in"
    tail, answer = r1_prompt_and_answer(R1_LLAMA_CPP, c, user="Write a haiku about autumn.")
    b.add(
        "r1-llama-cpp-template-multiline",
        f"{R1_LLAMA_CPP}: prompt ends '<｜Assistant｜><think>\\n'{note}",
        f"{r}\n</think>\n\n{answer}",
        reasoning=r,
        content=c,
        tokenizer=tok,
        options={"prompt_text": tail},
    )

    r = "用户问的是“你好”的意思。这是中文的问候语 😀，Münster 无关。"
    c = "“你好”的意思是 hello 👋（Münster: „Hallo“）。"
    tail, answer = r1_prompt_and_answer(R1_DISTILL_LLAMA, c, user="“你好”是什么意思？")
    b.add(
        "r1-unicode",
        f"{R1_DISTILL_LLAMA}{note}",
        f"{r}\n</think>\n\n{answer}",
        reasoning=r,
        content=c,
        tokenizer=tok,
        options={"prompt_text": tail},
    )

    # The llama.cpp copy of the R1-Distill-Qwen template closes thinking in the prompt
    # unless enable_thinking is true: '{% if not enable_thinking %}</think>{% endif %}'.
    tail, answer = r1_prompt_and_answer(
        R1_DISTILL_QWEN, "The answer is 4.", enable_thinking=False, user="What is 2 + 2?"
    )
    assert tail == "<｜Assistant｜><think>\n</think>"
    b.add(
        "r1-prompt-closes-think",
        f"{R1_DISTILL_QWEN} (llama.cpp copy) with enable_thinking false/undefined: the "
        "prompt ends '<think>\\n</think>', so the output is all answer",
        "\n\n" + answer,
        content="The answer is 4.",
        tokenizer=tok,
        options={"chat_template_kwargs": {"enable_thinking": False}, "prompt_text": tail},
    )
    tail, _ = r1_prompt_and_answer(R1_DISTILL_QWEN, "x", enable_thinking=True, user="What is 2 + 2?")
    assert tail == "<｜Assistant｜><think>\n"
    b.add(
        "r1-distill-qwen-thinking-on",
        f"{R1_DISTILL_QWEN} (llama.cpp copy) with enable_thinking=true: prompt ends '<think>\\n'",
        "2 plus 2 is 4.\n</think>\n\nThe answer is 4.",
        reasoning="2 plus 2 is 4.",
        content="The answer is 4.",
        tokenizer=tok,
        options={"chat_template_kwargs": {"enable_thinking": True}, "prompt_text": tail},
    )

    b.add(
        "r1-no-end-marker-finished",
        "hand-written: no '</think>' at all ⇒ everything is reasoning (deepseek_r1 rule, "
        "vLLM 0.33 reasoning/basic_parsers.py), even when the model stopped normally",
        "The answer is 4.",
        reasoning="The answer is 4.",
        tokenizer=tok,
        options={"prompt_text": "<｜Assistant｜><think>\n"},
    )
    b.add(
        "r1-end-marker-missing-truncated",
        "hand-written: cut by max_tokens while thinking",
        "Let me consider the first option. If we take x = 3, then",
        reasoning="Let me consider the first option. If we take x = 3, then",
        tokenizer=tok,
        truncated=True,
    )
    b.add(
        "r1-truncated-inside-end-marker",
        "hand-written: cut in the middle of '</think>'; the partial marker is text",
        "Nearly there.\n</thin",
        reasoning="Nearly there.\n</thin",
        tokenizer=tok,
        truncated=True,
    )
    b.add(
        "r1-empty-reasoning",
        "hand-written: the model closes the pre-filled '<think>' at once",
        "\n</think>\n\nHello!",
        content="Hello!",
        tokenizer=tok,
        options={"prompt_text": "<｜Assistant｜><think>\n"},
    )
    b.add(
        "r1-reasoning-only",
        "hand-written: nothing after '</think>'",
        "Nothing to add.\n</think>\n\n",
        reasoning="Nothing to add.",
        tokenizer=tok,
    )
    b.add(
        "r1-duplicate-end-marker",
        "hand-written: '</think>' twice; the second is content text, as the R1 template writes "
        "content verbatim after the block and the legacy deepseek_r1 parser keeps it in content",
        "Short thought.\n</think>\n\n</think>\n\nThe answer.",
        reasoning="Short thought.",
        content="</think>\n\nThe answer.",
        tokenizer=tok,
    )
    mention = "I must not print </think> early; keep thinking."
    b.add(
        "r1-ids-end-marker-as-ordinary-tokens",
        "hand-written: reasoning mentions '</think>' as ordinary tokens; with token ids it stays reasoning",
        f"{mention}\n</think>\n\nOK.",
        reasoning=mention,
        content="OK.",
        tokenizer=tok,
        token_ids=ordinary_ids(
            tok,
            ("I must not print ", False),
            ("</think>", True),
            (" early; keep thinking.\n</think>\n\nOK.", False),
        ),
        ids_only=True,
    )
    return b


# --------------------------------------------------------------------------------------
# tests/cases/hermes/*.jsonl
# --------------------------------------------------------------------------------------

PARIS = call("get_weather", {"location": "Paris", "unit": "celsius"})
BERLIN = call("get_weather", {"location": "Berlin"})
TOKYO_TIME = call("get_time", {"timezone": "Asia/Tokyo"})
JOKE = call("get_random_joke", {})
FLIGHT = call(
    "book_flight",
    {
        "flight": {
            "from": "SFO",
            "to": "JFK",
            "date": "2025-07-01",
            "legs": [{"n": 1, "via": None}, {"n": 2, "via": ["ORD", "DEN"]}],
        },
        "passenger": {"name": "John Doe", "age": 42, "vip": True, "meals": []},
    },
)
UNICODE_CALLS = [
    call("get_weather", {"location": "Münster"}),
    call("get_weather", {"location": "北京"}),
    call("search", {"query": "best ramen 🍜 in Zürich", "max_results": 3}),
]
TRICKY_STRING = call(
    "search",
    {"query": 'match "}" and "{" in C:\\path\\file; then a newline\nand a tab\tend }'},
)
CLOSE_TAG_STRING = call("search", {"query": "what does </tool_call> mean?"})


def hermes_qwen3_cases() -> Book:
    b = Book("hermes/qwen3.jsonl", "qwen3", "hermes")
    tools = WEATHER_TOOLS
    src = f"{QWEN3} round trip"

    def rt(id: str, reasoning: str, content: str, calls: list[dict[str, Any]], **kw: Any):
        out, tail = qwen3_turn(reasoning, content, calls, tools=kw.pop("tools", tools), **kw)
        return out, tail

    r = "The user wants the weather in Paris. I'll call get_weather."
    out, _ = rt("", r, "", [PARIS])
    b.add("hq-rt-one-call", src, out, reasoning=r, tool_calls=[PARIS], tools=tools)

    out, _ = rt("", r, "Let me check the weather for you.", [PARIS])
    b.add(
        "hq-rt-content-before-call",
        src,
        out,
        reasoning=r,
        content="Let me check the weather for you.",
        tool_calls=[PARIS],
        tools=tools,
    )

    r2 = "Two cities, two calls."
    out, _ = rt("", r2, "", [PARIS, BERLIN])
    b.add("hq-rt-two-calls", src, out, reasoning=r2, tool_calls=[PARIS, BERLIN], tools=tools)

    r3 = "Weather in two cities and the time in Tokyo."
    out, _ = rt("", r3, "Checking all three.", [PARIS, BERLIN, TOKYO_TIME])
    b.add(
        "hq-rt-three-calls-with-content",
        src,
        out,
        reasoning=r3,
        content="Checking all three.",
        tool_calls=[PARIS, BERLIN, TOKYO_TIME],
        tools=tools,
    )

    r4 = "用户想知道 Münster 和北京的天气，还要搜索拉面 🍜。"
    out, _ = rt("", r4, "好的，我来查一下 😀", UNICODE_CALLS)
    b.add(
        "hq-rt-unicode-17703",
        f"{src}; non-ASCII arguments written raw (tojson ensure_ascii=False), vLLM #17703",
        out,
        reasoning=r4,
        content="好的，我来查一下 😀",
        tool_calls=UNICODE_CALLS,
        tools=tools,
    )

    out = think("Escaped non-ASCII.") + hermes_block(
        "search", '{"query": "M\\u00fcnster \\u5317\\u4eac \\ud83d\\ude00"}'
    )
    b.add(
        "hq-unicode-escaped-arguments-17703",
        f"{QWEN3} spelling, arguments written with \\u escapes (ensure_ascii=True JSON) as "
        "a string `arguments`; compared as parsed JSON (vLLM #17703)",
        out,
        reasoning="Escaped non-ASCII.",
        tool_calls=[call("search", {"query": "Münster 北京 😀"})],
        tools=tools,
    )

    out, _ = rt("", "Book it.", "", [FLIGHT], tools=[BOOK_FLIGHT])
    b.add(
        "hq-rt-nested-arguments",
        src,
        out,
        reasoning="Book it.",
        tool_calls=[FLIGHT],
        tools=[BOOK_FLIGHT],
    )

    out, _ = rt("", "A joke, then the weather.", "", [JOKE, PARIS])
    b.add(
        "hq-rt-call-after-empty-arguments-47901",
        f"{src}; a call after an empty-argument call (cf. vLLM #47901)",
        out,
        reasoning="A joke, then the weather.",
        tool_calls=[JOKE, PARIS],
        tools=tools,
    )

    out, _ = rt("", "Search with awkward characters.", "", [TRICKY_STRING])
    b.add(
        "hq-rt-string-with-braces-quotes-backslashes",
        f"{src}; a string argument holding '}}', '{{', quotes, backslashes, \\n and \\t",
        out,
        reasoning="Search with awkward characters.",
        tool_calls=[TRICKY_STRING],
        tools=tools,
    )

    out, _ = rt("", "Search for the tag.", "", [CLOSE_TAG_STRING])
    inner = out.index("</tool_call> mean")
    b.add(
        "hq-rt-string-with-close-tag",
        f"{src}; a string argument holding '</tool_call>', written as ordinary tokens in "
        "the ids (the real closer is the special token)",
        out,
        reasoning="Search for the tag.",
        tool_calls=[CLOSE_TAG_STRING],
        tools=tools,
        token_ids=ordinary_ids(
            "qwen3",
            (out[:inner], False),
            ("</tool_call>", True),
            (out[inner + len("</tool_call>") :], False),
        ),
    )

    out, tail = rt("", "", "", [PARIS], enable_thinking=False)
    b.add(
        "hq-rt-thinking-off-17349",
        f"{src} with enable_thinking=false (vLLM #17349)",
        out,
        tool_calls=[PARIS],
        tools=tools,
        options={"chat_template_kwargs": {"enable_thinking": False}, "prompt_text": tail},
    )
    out, tail = rt("", "", "Sure, checking.", [PARIS, TOKYO_TIME], enable_thinking=False)
    b.add(
        "hq-rt-thinking-off-content-and-calls",
        f"{src} with enable_thinking=false",
        out,
        content="Sure, checking.",
        tool_calls=[PARIS, TOKYO_TIME],
        tools=tools,
        options={"chat_template_kwargs": {"enable_thinking": False}, "prompt_text": tail},
    )

    # QwQ-32B: prompt pre-fills '<think>\n' (enable_thinking=true), Hermes-style calls.
    r = "I need the weather; call the tool."
    qwq_tools = tools
    gen, prompt = generated(
        "Qwen-QwQ-32B.jinja",
        [USER],
        {
            "role": "assistant",
            "content": f"<think>\n{r}\n</think>\n\nOne moment.",
            "tool_calls": [{"type": "function", "function": PARIS}],
        },
        eot=QWEN_EOT,
        tools=qwq_tools,
        enable_thinking=True,
    )
    b.add(
        "hq-qwq-prompt-ends-in-think",
        "Qwen-QwQ-32B.jinja round trip with enable_thinking=true: prompt ends '<think>\\n'",
        gen,
        reasoning=r,
        content="One moment.",
        tool_calls=[PARIS],
        tools=qwq_tools,
        options={"prompt_text": prompt_tail(prompt, "<|im_start|>")},
    )

    blk = hermes_block("get_weather", '{"location": "Paris", "unit": "celsius"}')
    b.add(
        "hq-think-end-adjacent-tool-call-47606",
        "hand-written in the Qwen3 spelling: '</think><tool_call>' with nothing between "
        "(vLLM #47606: the call leaked into content when both arrived in one delta)",
        f"<think>\nCall the tool.</think>{blk}",
        reasoning="Call the tool.",
        tool_calls=[PARIS],
        tools=tools,
    )
    b.add(
        "hq-tool-call-ends-unterminated-reasoning",
        "hand-written: '<tool_call>' while thinking, no '</think>': REASONING+TOOL_START "
        "ends reasoning (vLLM 0.33 parser/qwen3.py; cf. vLLM #42400 for GLM)",
        f"<think>\nI should check the weather.\n{blk}",
        reasoning="I should check the weather.",
        tool_calls=[PARIS],
        tools=tools,
    )
    b.add(
        "hq-tool-call-in-reasoning-then-stray-end-marker",
        "hand-written: reasoning ended by '<tool_call>', then a late '</think>' and an answer" + KEEP_CLOSER,
        f"<think>\nCheck first.\n{blk}\n</think>\n\nDone.",
        reasoning="Check first.",
        content="</think>\n\nDone.",
        tool_calls=[PARIS],
        tools=tools,
    )
    b.add(
        "hq-duplicate-end-marker-then-call",
        "hand-written: '</think>' twice before a call" + KEEP_CLOSER,
        think("Weather.") + "</think>\n\n" + blk,
        reasoning="Weather.",
        content="</think>",
        tool_calls=[PARIS],
        tools=tools,
    )

    mention = "The format says to wrap each call in <tool_call> tags, so I will do that."
    out = think(mention) + blk
    i = out.index("<tool_call> tags")
    b.add(
        "hq-ids-tool-call-mention-in-reasoning",
        "hand-written: reasoning mentions '<tool_call>' written as ordinary tokens (cf. "
        "vLLM #40915/#40861); with ids it stays reasoning text",
        out,
        reasoning=mention,
        tool_calls=[PARIS],
        tools=tools,
        token_ids=ordinary_ids(
            "qwen3",
            (out[:i], False),
            ("<tool_call>", True),
            (out[i + len("<tool_call>") :], False),
        ),
        ids_only=True,
    )

    first = "First Paris."
    between = "Now Berlin."
    after = "Both requested."
    out = (
        think("Two calls with commentary.")
        + f"{first}\n{blk}\n{between}\n"
        + hermes_block("get_weather", '{"location": "Berlin"}')
        + f"\n{after}"
    )
    b.add(
        "hq-content-between-and-after-calls-join",
        "hand-written in the Qwen3 spelling: text before, between and after calls (the "
        "Qwen3 template cannot render text after a call); runs joined as they stand, field stripped",
        out,
        reasoning="Two calls with commentary.",
        content=joined(first + "\n", "\n" + between + "\n", "\n" + after),
        tool_calls=[PARIS, BERLIN],
        tools=tools,
    )

    bad = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}\n</tool_call>'
    b.add(
        "hq-malformed-missing-brace",
        "hand-written: the JSON misses its final '}'; no call, raw text kept as content",
        think("Call it.") + bad,
        reasoning="Call it.",
        content=bad,
        tools=tools,
    )
    bad2 = "<tool_call>\n{name: get_weather, arguments: {location: Paris}}\n</tool_call>"
    b.add(
        "hq-malformed-then-valid-call",
        "hand-written: an invalid call (unquoted keys) then a valid one",
        think("Try twice.") + bad2 + "\n" + blk,
        reasoning="Try twice.",
        content=bad2,
        tool_calls=[PARIS],
        tools=tools,
    )
    cut = '<tool_call>\n{"name": "get_weather", "arguments": {"locat'
    b.add(
        "hq-truncated-call",
        "hand-written: cut by max_tokens inside the arguments; no call, raw text as content (cf. vLLM #47903)",
        think("Call it.") + cut,
        reasoning="Call it.",
        unfinished_call=cut,
        tools=tools,
        truncated=True,
    )
    b.add(
        "hq-truncated-after-opener-47137",
        "hand-written: cut right after '<tool_call>' (vLLM #47137: streaming dropped it, non-streaming leaked it)",
        think("Call it.") + "<tool_call>",
        reasoning="Call it.",
        unfinished_call="<tool_call>",
        tools=tools,
        truncated=True,
    )
    b.add(
        "hq-truncated-in-reasoning",
        "hand-written: cut by max_tokens while thinking, tools offered",
        "<think>\nShould I call get_weather or answer from memory? The user",
        reasoning="Should I call get_weather or answer from memory? The user",
        tools=tools,
        truncated=True,
    )
    b.add(
        "hq-arguments-before-name",
        "hand-written: JSON object with 'arguments' before 'name' (still the format's object with both keys)",
        think("Order swapped.")
        + '<tool_call>\n{"arguments": {"location": "Berlin"}, "name": "get_weather"}\n</tool_call>',
        reasoning="Order swapped.",
        tool_calls=[BERLIN],
        tools=tools,
    )
    b.add(
        "hq-compact-call",
        "hand-written: compact JSON, no newlines inside the tags",
        think("Compact.") + '<tool_call>{"name":"get_time","arguments":{"timezone":"Asia/Tokyo"}}</tool_call>',
        reasoning="Compact.",
        tool_calls=[TOKYO_TIME],
        tools=tools,
    )

    # llama-stack recordings: real Qwen3-0.6B outputs served without a reasoning parser.
    for digest, id in [
        ("524ead18daaddb6228284820adaa3fb312d2a525cc35e20c181190ddf40793e6", "process-data"),
        ("77cf218283607bfac37623e1bb4e6f33cae670df7d6995d432bca34c5dfb0e43", "tool-choice-none"),
        ("cfb292c0f41dbc4a2c0fb39016760f6c23c248a7bbffea19ac6bcab7bf25292d", "book-flight"),
    ]:
        rec = _llama_stack(digest)
        raw = rec["raw_content"]
        r, c = raw.split("</think>")
        assert r.startswith("<think>") and rec["server_tool_calls"] is None
        b.add(
            f"hq-llama-stack-{id}",
            f"{rec['source']} (real Qwen3-0.6B output, verbatim; no tool call)",
            raw,
            reasoning=r[len("<think>") :].strip(),
            content=c.strip(),
            tools=LLAMA_STACK_TOOLS[id],
        )
    rec = _llama_stack("452805c3c85951c86e4e5dfeef078a2e184866dafee83186cd84932daae1af42")
    block = hermes_block("no_args_tool", "{}")
    b.add(
        "hq-llama-stack-no-args-tool",
        f"{rec['source']} (real Qwen3-0.6B output; the recording keeps the text before the "
        "call, the call block is rebuilt in the Qwen3 template spelling from the server's "
        "tool_calls)",
        rec["raw_content"] + block,
        reasoning=rec["raw_content"].split("</think>")[0][len("<think>") :].strip(),
        tool_calls=[call("no_args_tool", {})],
        tools=LLAMA_STACK_TOOLS["no-args"],
    )
    return b


def _llama_stack(digest: str) -> dict[str, Any]:
    for line in LLAMA_STACK.read_text("utf-8").splitlines():
        rec = json.loads(line)
        if digest in rec["source"]:
            return rec
    raise KeyError(digest)


# Tool definitions reconstructed from the llama-stack test names and the model's reasoning
# (the recordings do not keep the request); they do not affect these expected values.
LLAMA_STACK_TOOLS = {
    "process-data": [
        tool(
            "process_data",
            "Process structured data.",
            {"data": {"type": "array", "items": {"type": "number"}, "description": "numbers"}},
            ["data"],
        )
    ],
    "tool-choice-none": [GET_WEATHER],
    "book-flight": [
        tool(
            "book_flight",
            "Book a flight.",
            {
                "flight": {"type": "object", "description": "FlightInfo"},
                "passenger": {"type": "object", "description": "name and age"},
            },
            ["flight", "passenger"],
        )
    ],
    "no-args": [tool("no_args_tool", "Tool with no arguments.", {})],
    "weather": [GET_WEATHER],
}


HERMES_2_PRO = "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
HERMES_3 = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"
QWEN25 = "Qwen-Qwen2.5-7B-Instruct.jinja"


def hermes_turn(
    template: str,
    content: str,
    calls: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    user: dict[str, Any] = USER,
) -> str:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [{"type": "function", "function": c} for c in calls]
    gen, _ = generated(template, [user], msg, eot=QWEN_EOT, tools=tools, bos_token="<|begin_of_text|>")
    return gen


def hermes_cases() -> Book:
    b = Book("hermes/hermes.jsonl", None, "hermes")
    tools = WEATHER_TOOLS

    for tpl, id in [(HERMES_2_PRO, "hermes2pro"), (HERMES_3, "hermes3")]:
        out = hermes_turn(tpl, "", [PARIS], tools)
        b.add(
            f"h-rt-{id}-one-call",
            f"{tpl} round trip (Llama-3 vocabulary: no tokenizer here)",
            out,
            tool_calls=[PARIS],
            tools=tools,
            tokenizer=None,
        )
    out = hermes_turn(HERMES_3, "", [PARIS, BERLIN, TOKYO_TIME], tools)
    b.add(
        "h-rt-hermes3-three-calls",
        f"{HERMES_3} round trip",
        out,
        tool_calls=[PARIS, BERLIN, TOKYO_TIME],
        tools=tools,
        tokenizer=None,
    )
    out = hermes_turn(HERMES_2_PRO, "", [JOKE, BERLIN], tools)
    b.add(
        "h-rt-hermes2pro-call-after-empty-arguments-47901",
        f"{HERMES_2_PRO} round trip (cf. vLLM #47901)",
        out,
        tool_calls=[JOKE, BERLIN],
        tools=tools,
        tokenizer=None,
    )
    out = hermes_turn(HERMES_2_PRO, "It is sunny in Paris.", [], tools)
    b.add(
        "h-rt-hermes2pro-content-only",
        f"{HERMES_2_PRO} round trip, no call",
        out,
        content="It is sunny in Paris.",
        tools=tools,
        tokenizer=None,
    )

    src = f"{QWEN25} round trip"
    out = hermes_turn(QWEN25, "", [PARIS], tools)
    b.add("h-rt-qwen25-one-call", src, out, tool_calls=[PARIS], tools=tools)
    out = hermes_turn(QWEN25, "I'll look that up.", [PARIS, BERLIN], tools)
    b.add(
        "h-rt-qwen25-content-before-calls",
        src,
        out,
        content="I'll look that up.",
        tool_calls=[PARIS, BERLIN],
        tools=tools,
    )
    out = hermes_turn(QWEN25, "查询中 🔎", UNICODE_CALLS, tools)
    b.add(
        "h-rt-qwen25-unicode-17703",
        f"{src} (vLLM #17703)",
        out,
        content="查询中 🔎",
        tool_calls=UNICODE_CALLS,
        tools=tools,
    )
    out = hermes_turn(QWEN25, "", [FLIGHT], [BOOK_FLIGHT])
    b.add("h-rt-qwen25-nested", src, out, tool_calls=[FLIGHT], tools=[BOOK_FLIGHT])
    out = hermes_turn(QWEN25, "", [JOKE], tools)
    b.add("h-rt-qwen25-empty-arguments", src, out, tool_calls=[JOKE], tools=tools)
    out = hermes_turn(QWEN25, "", [TRICKY_STRING, JOKE, TOKYO_TIME], tools)
    b.add(
        "h-rt-qwen25-tricky-string-then-empty-then-call",
        src,
        out,
        tool_calls=[TRICKY_STRING, JOKE, TOKYO_TIME],
        tools=tools,
    )
    out = hermes_turn(QWEN25, "", [CLOSE_TAG_STRING], tools)
    inner = out.index("</tool_call> mean")
    b.add(
        "h-rt-qwen25-string-with-close-tag",
        f"{src}; the argument holds '</tool_call>' (ordinary tokens in the ids)",
        out,
        tool_calls=[CLOSE_TAG_STRING],
        tools=tools,
        token_ids=ordinary_ids(
            "qwen3",
            (out[:inner], False),
            ("</tool_call>", True),
            (out[inner + len("</tool_call>") :], False),
        ),
    )
    out = hermes_turn(QWEN25, "Paris is sunny, 24 °C.", [], tools)
    b.add("h-rt-qwen25-content-only", src, out, content="Paris is sunny, 24 °C.", tools=tools)

    blk = hermes_block("get_weather", '{"location": "Paris", "unit": "celsius"}')
    blk_b = hermes_block("get_weather", '{"location": "Berlin"}')
    b.add(
        "h-content-between-and-after-calls-join",
        "hand-written in the Qwen2.5 spelling: text before, between and after calls; runs "
        "joined as they stand, field stripped",
        f"Paris first.\n{blk}\nThen Berlin.\n{blk_b}\nThat's all.",
        content=joined("Paris first.\n", "\nThen Berlin.\n", "\nThat's all."),
        tool_calls=[PARIS, BERLIN],
        tools=tools,
    )
    b.add(
        "h-content-after-call-56263",
        "hand-written: a call, then text (vLLM #56263: non-streaming dropped text after the call)",
        f"{blk}\n\nI have asked for the weather.",
        content="I have asked for the weather.",
        tool_calls=[PARIS],
        tools=tools,
    )
    bad = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris",}}\n</tool_call>'
    b.add(
        "h-malformed-trailing-comma",
        "hand-written: invalid JSON (trailing comma); no call, raw text is content",
        bad,
        content=bad,
        tools=tools,
    )
    b.add(
        "h-malformed-between-valid-calls",
        "hand-written: valid, invalid, valid",
        f"{blk}\n{bad}\n{blk_b}",
        content=bad,
        tool_calls=[PARIS, BERLIN],
        tools=tools,
    )
    cut = '<tool_call>\n{"name": "search", "arguments": {"query": "long'
    b.add(
        "h-truncated-call-after-valid-call",
        "hand-written: one call, then a second cut by max_tokens",
        f"{blk}\n{cut}",
        unfinished_call=cut,
        tool_calls=[PARIS],
        tools=tools,
        truncated=True,
    )
    b.add(
        "h-truncated-before-close-tag",
        "hand-written: JSON complete but cut before '</tool_call>': the JSON decides where "
        "the call ends, so the call is complete",
        '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n',
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=tools,
        truncated=True,
    )
    b.add(
        "h-ids-tool-call-mention-in-content",
        "hand-written: content mentions '<tool_call>' as ordinary tokens; with ids it is text, not a call",
        "Wrap calls in <tool_call> tags.",
        content="Wrap calls in <tool_call> tags.",
        tools=tools,
        token_ids=ordinary_ids(
            "qwen3",
            ("Wrap calls in ", False),
            ("<tool_call>", True),
            (" tags.", False),
        ),
        ids_only=True,
    )

    # llama-stack recordings served without a reasoning parser: the think block is content.
    rec = _llama_stack("77cf218283607bfac37623e1bb4e6f33cae670df7d6995d432bca34c5dfb0e43")
    b.add(
        "h-llama-stack-think-block-is-content",
        f"{rec['source']} (real Qwen3-0.6B output, verbatim): with no reasoning parser the "
        "think block is ordinary content",
        rec["raw_content"],
        content=rec["raw_content"].strip(),
        tools=LLAMA_STACK_TOOLS["tool-choice-none"],
    )
    rec = _llama_stack("0248ff8a1be5ff5ba88046947059ffbde15a1c52adbeea456bb42abdfc931bd1")
    weather = call("get_weather", {"location": "San Francisco, CA"})
    b.add(
        "h-llama-stack-think-block-then-call",
        f"{rec['source']} (real Qwen3-0.6B output; the call block is rebuilt in the Qwen3 "
        "template spelling from the server's tool_calls)",
        rec["raw_content"] + hermes_block("get_weather", '{"location": "San Francisco, CA"}'),
        content=rec["raw_content"].strip(),
        tool_calls=[weather],
        tools=LLAMA_STACK_TOOLS["weather"],
    )
    return b


# --------------------------------------------------------------------------------------
# tests/cases/qwen3_coder/*.jsonl
# --------------------------------------------------------------------------------------

CODER_TOOLS = [GET_WEATHER, GET_TIME, GET_JOKE, SEARCH, WRITE_FILE]

PY_FILE = 'def main():\n    print("hi")\n\n\nif __name__ == "__main__":\n    main()\n'


def coder_typed(b: Book, prefix: str, think_part: str, reasoning: str | None) -> None:
    """Typed-parameter cases, shared by both qwen3_coder files."""
    tools = [CONFIGURE]
    # Python values rendered by Qwen3-Coder.jinja: ints/floats via |string, dict/list via
    # tojson; booleans and None spelled as JSON here (|string would write True / None).
    args = {
        "count": 42,
        "ratio": 0.75,
        "enabled": "true",
        "options": {"retries": 3, "backoff": [1, 2.5], "name": "Zürich", "x": None},
        "tags": ["a", "b c", "ü"],
        "note": "null",
        "mode": "safe",
        "level": 2,
        "nothing": "null",
    }
    expected = {
        "count": 42,
        "ratio": 0.75,
        "enabled": True,
        "options": {"retries": 3, "backoff": [1, 2.5], "name": "Zürich", "x": None},
        "tags": ["a", "b c", "ü"],
        "note": None,
        "mode": "safe",
        "level": 2,
        "nothing": None,
    }
    out = think_part + coder_turn("", [("configure", args)], tools=tools)
    b.add(
        f"{prefix}-rt-typed-parameters",
        f"{CODER} round trip (booleans/null passed as JSON text); typed by the schema: "
        "integer, number, boolean, object, array, ['string','null'] with 'null', string "
        "enum, integer enum, null",
        out,
        reasoning=reasoning,
        tool_calls=[call("configure", expected)],
        tools=tools,
    )

    params = [
        ("count", "five"),
        ("ratio", "1e3"),
        ("enabled", "false"),
        ("note", "just a note"),
        ("tags", "[]"),
        ("options", "{}"),
        ("label", "42"),
        ("unknown_param", "123"),
    ]
    out = think_part + coder_block("configure", params)
    b.add(
        f"{prefix}-typed-invalid-and-edge-values",
        f"hand-written in the {CODER} spelling: 'five' is not an integer (stays a string), "
        "1e3 is a number, ['string','null'] with text, empty array/object, a numeric-looking "
        "string-typed value stays a string, a parameter missing from the schema stays a "
        "string",
        out,
        reasoning=reasoning,
        tool_calls=[
            call(
                "configure",
                {
                    "count": "five",
                    "ratio": 1000.0,
                    "enabled": False,
                    "note": "just a note",
                    "tags": [],
                    "options": {},
                    "label": "42",
                    "unknown_param": "123",
                },
            )
        ],
        tools=tools,
    )

    tools = [SET_COUNT]
    out = think_part + coder_turn("", [("set_count", {"count": 7, "label": "seven"})], tools=tools)
    b.add(
        f"{prefix}-rt-integer-before-string-48702",
        f"{CODER} round trip; an integer parameter then a string one (vLLM #48702: streamed "
        "arguments truncated after type coercion)",
        out,
        reasoning=reasoning,
        tool_calls=[call("set_count", {"count": 7, "label": "seven"})],
        tools=tools,
    )
    cut = "<tool_call>\n<function=set_count>\n<parameter=count>\n4"
    b.add(
        f"{prefix}-truncated-in-integer-48702",
        "hand-written: cut by max_tokens inside an integer value (vLLM #48702); no call, raw text as content",
        think_part + cut,
        reasoning=reasoning,
        unfinished_call=cut,
        tools=tools,
        truncated=True,
    )


def coder_common(b: Book, prefix: str, think_part: str, reasoning: str | None) -> None:
    """Cases shared by both qwen3_coder files; ``think_part`` precedes every output."""
    tools = CODER_TOOLS

    def turn(content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any) -> str:
        return think_part + coder_turn(content, calls, tools=kw.pop("tools", tools), **kw)

    paris = {"location": "Paris", "unit": "celsius"}
    out = turn("", [("get_weather", paris)])
    b.add(
        f"{prefix}-rt-one-call",
        f"{CODER} round trip",
        out,
        reasoning=reasoning,
        tool_calls=[call("get_weather", paris)],
        tools=tools,
    )
    out = turn("", [("get_weather", paris)], template=CODER_30B)
    b.add(
        f"{prefix}-rt-one-call-30b-template",
        f"{CODER_30B} round trip",
        out,
        reasoning=reasoning,
        tool_calls=[call("get_weather", paris)],
        tools=tools,
    )
    calls = [
        ("get_weather", {"location": "Paris"}),
        ("get_weather", {"location": "Berlin"}),
        ("get_time", {"timezone": "Europe/Berlin"}),
    ]
    out = turn("I'll check both cities and the time.", calls)
    b.add(
        f"{prefix}-rt-content-and-three-calls",
        f"{CODER} round trip (content is written '\\n' + content|trim + '\\n' before the calls)",
        out,
        reasoning=reasoning,
        content="I'll check both cities and the time.",
        tool_calls=[call(n, a) for n, a in calls],
        tools=tools,
    )
    uni = [
        ("get_weather", {"location": "Münster"}),
        ("search", {"query": "北京 烤鸭 🦆 推荐", "max_results": 5}),
    ]
    out = turn("好的 👍", uni)
    b.add(
        f"{prefix}-rt-unicode-17703",
        f"{CODER} round trip (vLLM #17703)",
        out,
        reasoning=reasoning,
        content="好的 👍",
        tool_calls=[call(n, a) for n, a in uni],
        tools=tools,
    )
    calls = [("get_random_joke", {}), ("get_time", {"timezone": "UTC"})]
    out = turn("", calls)
    b.add(
        f"{prefix}-rt-call-after-empty-arguments-47901",
        f"{CODER} round trip; an empty-argument call renders '<function=NAME>\\n</function>'",
        out,
        reasoning=reasoning,
        tool_calls=[call(n, a) for n, a in calls],
        tools=tools,
    )
    fa = {"path": "src/main.py", "content": PY_FILE}
    out = turn("", [("write_file", fa)])
    b.add(
        f"{prefix}-rt-multiline-value-trailing-newline",
        f"{CODER} round trip; a value with its own trailing newline and blank lines "
        "(only one '\\n' on each side belongs to the format)",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fa)],
        tools=tools,
    )
    fb = {"path": "notes.txt", "content": "\n  indented first line\n\n"}
    out = turn("", [("write_file", fb)])
    b.add(
        f"{prefix}-rt-value-leading-newline-and-spaces",
        f"{CODER} round trip; a value starting with '\\n' and spaces, ending with '\\n\\n'",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fb)],
        tools=tools,
    )
    fc = {"path": "empty.txt", "content": ""}
    out = turn("", [("write_file", fc)])
    b.add(
        f"{prefix}-rt-empty-string-value",
        f"{CODER} round trip; an empty string value renders '<parameter=content>\\n\\n</parameter>'",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fc)],
        tools=tools,
    )
    fd = {"path": "doc.md", "content": "Close each value with </parameter> and go on."}
    out = turn("", [("write_file", fd)])
    b.add(
        f"{prefix}-rt-value-holds-parameter-close-tag",
        f"{CODER} round trip; a value mentions '</parameter>' mid-line. Only the "
        "'\\n</parameter>\\n' followed by '<parameter=' or '</function>' ends a value; "
        "vLLM's converter regex (non-greedy up to the first '</parameter>') cuts it short",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fd)],
        tools=tools,
    )
    fd = {"path": "doc.md", "content": "End a call with </tool_call>; JSON ends with }."}
    out = turn("", [("write_file", fd)])
    b.add(
        f"{prefix}-rt-value-holds-tool-call-close-tag",
        f"{CODER} round trip; a value mentions '</tool_call>' and '}}': no TOOL_ARGS row "
        "for TOOL_END in vLLM 0.33 parser/qwen3.py, so it is value text (by text and by id)",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fd)],
        tools=tools,
    )
    fe = {"path": "a.json", "content": '{"a": [1, 2], "b": {"c": null}}'}
    out = turn("", [("write_file", fe)])
    b.add(
        f"{prefix}-rt-string-param-looks-like-json",
        f"{CODER} round trip; a string-typed value that is valid JSON stays a string",
        out,
        reasoning=reasoning,
        tool_calls=[call("write_file", fe)],
        tools=tools,
    )

    blk_p = coder_block("get_weather", [("location", "Paris")])
    blk_b = coder_block("get_weather", [("location", "Berlin")])
    paris1 = call("get_weather", {"location": "Paris"})
    berlin1 = call("get_weather", {"location": "Berlin"})
    b.add(
        f"{prefix}-content-between-and-after-calls-join",
        f"hand-written in the {CODER} spelling: text before, between and after calls "
        "(the template says 'NOT after'); runs joined as they stand, field stripped",
        think_part + f"Paris first.\n\n{blk_p}\nNow Berlin.\n{blk_b}\nDone.",
        reasoning=reasoning,
        content=joined("Paris first.\n\n", "\nNow Berlin.\n", "\nDone."),
        tool_calls=[paris1, berlin1],
        tools=tools,
    )
    no_end = "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</tool_call>"
    b.add(
        f"{prefix}-recovery-missing-function-end",
        "hand-written: '</function>' missing; '</tool_call>' closes the call (trisect's recovery of a "
        "missing '</function>', src/trisect/formats/qwen3_coder.py; vLLM 0.33 parser/qwen3.py has no "
        "TOOL_ARGS+TOOL_END row)",
        think_part + no_end,
        reasoning=reasoning,
        tool_calls=[call("get_weather", {"location": "Paris"})],
        tools=tools,
    )
    no_angle = "<tool_call>\n<function=get_random_joke\n</function>\n</tool_call>"
    b.add(
        f"{prefix}-recovery-missing-angle-after-name",
        "hand-written: '>' missing after the function name; TOOL_NAME+FUNC_END ends the "
        "call (vLLM 0.33 parser/qwen3.py, 'Malformed: </function> while still in TOOL_NAME'); name is trimmed",
        think_part + no_angle,
        reasoning=reasoning,
        tool_calls=[call("get_random_joke", {})],
        tools=tools,
    )
    two = "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</function>\n" + blk_b
    b.add(
        f"{prefix}-recovery-missing-close-between-calls",
        "hand-written: no '</tool_call>' before the next '<tool_call>' (TOOL_BETWEEN+TOOL_START)",
        think_part + two,
        reasoning=reasoning,
        tool_calls=[paris1, berlin1],
        tools=tools,
    )
    shared = (
        "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n"
        "</function>\n<function=get_weather>\n<parameter=location>\nBerlin\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    b.add(
        f"{prefix}-recovery-two-functions-one-wrapper",
        "hand-written: two <function=…> blocks inside one <tool_call> (TOOL_BETWEEN+FUNC_PREFIX)",
        think_part + shared,
        reasoning=reasoning,
        tool_calls=[paris1, berlin1],
        tools=tools,
    )
    bare = "<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n</function>"
    b.add(
        f"{prefix}-recovery-bare-function",
        "hand-written: '<function=' without '<tool_call>' (CONTENT+FUNC_PREFIX)",
        think_part + "Checking the time.\n" + bare,
        reasoning=reasoning,
        content="Checking the time.",
        tool_calls=[call("get_time", {"timezone": "UTC"})],
        tools=tools,
    )
    b.add(
        f"{prefix}-truncated-after-function-end",
        "hand-written: cut by max_tokens after '</function>' but before '</tool_call>'; "
        "the call already ended (TOOL_ARGS+FUNC_END emits TOOL_CALL_END)",
        think_part + blk_p[: -len("</tool_call>")],
        reasoning=reasoning,
        tool_calls=[paris1],
        tools=tools,
        truncated=True,
    )
    cut = "<tool_call>\n<function=search>\n<parameter=query>\nhow to"
    b.add(
        f"{prefix}-truncated-in-value-after-call",
        "hand-written: one complete call, then one cut inside a value",
        think_part + blk_p + "\n" + cut,
        reasoning=reasoning,
        unfinished_call=cut,
        tool_calls=[paris1],
        tools=tools,
        truncated=True,
    )
    cut = "<tool_call>\n<function=get_wea"
    b.add(
        f"{prefix}-truncated-in-name",
        "hand-written: cut inside the function name",
        think_part + cut,
        reasoning=reasoning,
        unfinished_call=cut,
        tools=tools,
        truncated=True,
    )
    coder_typed(b, prefix, think_part, reasoning)


def qwen3_coder_cases() -> Book:
    b = Book("qwen3_coder/qwen3_coder.jsonl", None, "qwen3_coder")
    coder_common(b, "qc", "", None)

    tools = [CONFIGURE]
    out = coder_turn("", [("configure", {"enabled": True, "note": None})], tools=tools)
    assert "\nTrue\n" in out and "\nNone\n" in out
    b.add(
        "qc-rt-template-python-bool-and-none",
        f"{CODER} round trip with Python True/None: the template's |string writes 'True' "
        "and 'None', so that is what the model learned to write: the boolean / "
        "['string','null'] schema types read them back as true / null",
        out,
        tool_calls=[call("configure", {"enabled": True, "note": None})],
        tools=tools,
    )
    out = coder_turn(
        "",
        [("configure", {"options": {"a": 1, "b": [True, None]}})],
        tools=tools,
        template=CODER_30B,
    )
    assert "{'a': 1, 'b': [True, None]}" in out
    b.add(
        "qc-rt-30b-template-python-repr-object-is-json",
        f"{CODER_30B} round trip: this template writes non-string values with |string, so "
        "a dict becomes Python repr \"{'a': 1, …}\": an object parameter written as a Python "
        "literal is that JSON object (vLLM's legacy parser falls back to ast.literal_eval too)",
        out,
        tool_calls=[call("configure", {"options": {"a": 1, "b": [True, None]}})],
        tools=tools,
    )
    b.add(
        "qc-content-only",
        f"{CODER} round trip, no call",
        coder_turn("The answer is 42.", [], tools=CODER_TOOLS),
        content="The answer is 42.",
        tools=CODER_TOOLS,
    )
    b.add(
        "qc-think-tags-are-content-without-reasoning-parser",
        "hand-written: no reasoning parser, so '<think>' text is content",
        "<think>\nhmm\n</think>\n\nHi.",
        content="<think>\nhmm\n</think>\n\nHi.",
        tools=CODER_TOOLS,
    )
    b.add(
        "qc-ids-tool-call-mention-in-content",
        "hand-written: content mentions '<tool_call>' as ordinary tokens",
        "Calls start with <tool_call> in this format.",
        content="Calls start with <tool_call> in this format.",
        tools=CODER_TOOLS,
        token_ids=ordinary_ids(
            "qwen3",
            ("Calls start with ", False),
            ("<tool_call>", True),
            (" in this format.", False),
        ),
        ids_only=True,
    )
    return b


def qwen3_coder_qwen3_cases() -> Book:
    b = Book("qwen3_coder/qwen3.jsonl", "qwen3", "qwen3_coder")
    r = "The user needs weather data; I'll call the tool."
    # No template renders Qwen3 thinking together with Qwen3-Coder calls (Qwen3.5/3.6 do,
    # not staged): the Qwen3 template's thinking block, then a Qwen3-Coder.jinja turn.
    coder_common(b, "qcq", think(r), r)
    tools = CODER_TOOLS
    blk = coder_block("get_weather", [("location", "Paris")])
    paris1 = call("get_weather", {"location": "Paris"})

    b.add(
        "qcq-think-end-adjacent-tool-call-47606",
        "hand-written: '</think><tool_call>' adjacent (vLLM #47606)",
        f"<think>\nCall it.</think>{blk}",
        reasoning="Call it.",
        tool_calls=[paris1],
        tools=tools,
    )
    b.add(
        "qcq-tool-call-ends-unterminated-reasoning",
        "hand-written: '<tool_call>' while thinking ends reasoning (vLLM 0.33 parser/qwen3.py)",
        f"<think>\nI need the weather.\n{blk}",
        reasoning="I need the weather.",
        tool_calls=[paris1],
        tools=tools,
    )
    b.add(
        "qcq-function-prefix-in-reasoning-is-text",
        "hand-written: '<function=' inside reasoning is text (no REASONING+FUNC_PREFIX "
        "entry); reasoning continues to '</think>'",
        f"<think>\nThe call will look like <function=get_weather> with a location.\n</think>\n\n{blk}",
        reasoning="The call will look like <function=get_weather> with a location.",
        tool_calls=[paris1],
        tools=tools,
    )
    b.add(
        "qcq-duplicate-end-marker",
        "hand-written: '</think>' twice before the call" + KEEP_CLOSER,
        think("Weather.") + "</think>\n\n" + blk,
        reasoning="Weather.",
        content="</think>",
        tool_calls=[paris1],
        tools=tools,
    )
    b.add(
        "qcq-bare-function-after-reasoning",
        "hand-written: reasoning, then '<function=' without '<tool_call>'",
        think("Call it.") + "<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</function>",
        reasoning="Call it.",
        tool_calls=[paris1],
        tools=tools,
    )
    out = coder_turn("", [("get_weather", {"location": "Paris"})], tools=tools)
    b.add(
        "qcq-thinking-off-17349",
        f"Qwen3 template prompt with enable_thinking=false + {CODER} call (vLLM #17349)",
        out,
        tool_calls=[paris1],
        tools=tools,
        options={
            "chat_template_kwargs": {"enable_thinking": False},
            "prompt_text": "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        },
    )
    b.add(
        "qcq-prompt-ends-in-think",
        f"a prompt that pre-fills '<think>\\n' (as QwQ / R1 templates do) + {CODER} call",
        f"{r}\n</think>\n\n{out}",
        reasoning=r,
        tool_calls=[paris1],
        tools=tools,
        options={"prompt_text": "<|im_start|>assistant\n<think>\n"},
    )
    b.add(
        "qcq-truncated-in-reasoning",
        "hand-written: cut by max_tokens while thinking",
        "<think>\nWhich tool? get_weather takes a location, and",
        reasoning="Which tool? get_weather takes a location, and",
        tools=tools,
        truncated=True,
    )
    mention = "Each call starts with <tool_call> and then <function=NAME>."
    out = think(mention) + blk
    i = out.index("<tool_call> and")
    b.add(
        "qcq-ids-tool-call-mention-in-reasoning",
        "hand-written: reasoning mentions '<tool_call>' as ordinary tokens (vLLM "
        "#40915/#40861); with ids it stays reasoning",
        out,
        reasoning=mention,
        tool_calls=[paris1],
        tools=tools,
        token_ids=ordinary_ids(
            "qwen3",
            (out[:i], False),
            ("<tool_call>", True),
            (out[i + len("<tool_call>") :], False),
        ),
        ids_only=True,
    )
    return b


# --------------------------------------------------------------------------------------
# Checks and output
# --------------------------------------------------------------------------------------

BOOKS: list[Callable[[], Book]] = [
    qwen3_cases,
    deepseek_r1_cases,
    hermes_qwen3_cases,
    hermes_cases,
    qwen3_coder_cases,
    qwen3_coder_qwen3_cases,
]


def build() -> dict[Path, str]:
    # ids-only cases may carry the natural encoding: the text alone reads otherwise (a second
    # <think> block is reasoning only as the special token, qwen3-ids-second-block-is-reasoning)
    return casefile.build(BOOKS, natural_ids_when_ids_only=True)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
