"""Cases for minicpm5 and minimax_m3, written in the wire formats their module docstrings quote
(vLLM's minicpm5 parser regexes; vLLM 0.33's vllm/parser/minimax_m3.py). No template or
tokenizer exists here for either family, so every case is hand-written; the expected message
follows from the format rules stated in each module, never from running trisect.

Run ``python tests/support/render_more_xml.py`` to rewrite the files; ``--check`` fails when
they are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

if __name__ == "__main__":  # run as a script: import `support` as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import casefile  # noqa: E402

CASES = Path(__file__).resolve().parent.parent / "cases"


def tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


WEATHER = tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})
SEARCH = tool("search", {"query": {"type": "string"}, "limit": {"type": "integer"}})
TYPED = tool(
    "configure",
    {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "enabled": {"type": "boolean"},
        "options": {"type": "object"},
        "tags": {"type": "array"},
        "note": {"type": ["string", "null"]},
        "mode": {"type": "string", "enum": ["fast", "safe"]},
        "label": {"type": "string"},
    },
)
TOOLS = [WEATHER, SEARCH, TYPED]
TYPED_ARGS = {
    "count": 3,
    "ratio": 0.5,
    "enabled": True,
    "options": {"a": [1, 2]},
    "tags": ["x", "y"],
    "note": None,
    "mode": "safe",
    "label": "42",
}


def case(fmt: str, cid: str, source: str, output: str, *, content=None, calls=(), malformed=False) -> dict[str, Any]:
    out = {
        "id": cid,
        "source": source,
        "reasoning": None,
        "tools_format": fmt,
        "tokenizer": None,
        "token_ids": None,
        "output": output,
        "tools": TOOLS,
        "options": {},
        "truncated": False,
        "expected": {
            "reasoning": None,
            "content": content,
            "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
        },
    }
    if malformed:
        out["malformed"] = True
    return out


def minicpm5() -> list[dict[str, Any]]:
    src = "hand-written in the wire format of vLLM's minicpm5 parser"
    f = "minicpm5"

    def fn(name: str, params: list[tuple[str, str]], q: str = '"') -> str:
        body = "".join(f"<param name={q}{k}{q}>{v}</param>\n" for k, v in params)
        return f"<function name={q}{name}{q}>\n{body}</function>"

    paris = fn("get_weather", [("city", "Paris"), ("days", "3")])
    typed = fn(
        "configure",
        [
            ("count", "3"),
            ("ratio", "0.5"),
            ("enabled", "true"),
            ("options", '{"a": [1, 2]}'),
            ("tags", '["x", "y"]'),
            ("note", "null"),
            ("mode", " safe "),
            ("label", "42"),
        ],
    )
    return [
        case(
            f,
            "cpm-one-call",
            src,
            "Let me check.\n" + paris,
            content="Let me check.",
            calls=[("get_weather", {"city": "Paris", "days": 3})],
        ),
        case(
            f,
            "cpm-parallel",
            src,
            paris + "\n" + fn("search", [("query", "北京 天气 🚀"), ("limit", "5")]),
            calls=[("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "北京 天气 🚀", "limit": 5})],
        ),
        case(
            f,
            "cpm-wrapper-tokens",
            src,
            "<|tool_call_start|>\n" + paris + "\n<|tool_call_end|>",
            calls=[("get_weather", {"city": "Paris", "days": 3})],
        ),
        case(f, "cpm-every-schema-type", src, typed, calls=[("configure", TYPED_ARGS)]),
        case(
            f,
            "cpm-single-quotes-and-extra-attribute",
            src,
            "<function name='search' id='1'>\n<param name='query'>  spaced query  </param>\n</function>",
            calls=[("search", {"query": "spaced query"})],
        ),
        case(
            f,
            "cpm-marker-text-inside-value",
            src,
            fn("search", [("query", "close with </param> then </function> inside"), ("limit", "1")]),
            calls=[("search", {"query": "close with </param> then </function> inside", "limit": 1})],
        ),
        case(
            f,
            "cpm-content-after-call",
            src,
            paris + "\nDone.",
            content="Done.",
            calls=[("get_weather", {"city": "Paris", "days": 3})],
        ),
        case(
            f,
            "cpm-empty-arguments-then-call",
            src,
            fn("search", []) + "\n" + paris,
            calls=[("search", {}), ("get_weather", {"city": "Paris", "days": 3})],
        ),
        case(
            f,
            "cpm-undeclared-parameter-stays-string",
            src,
            fn("search", [("query", "a"), ("extra", "7")]),
            calls=[("search", {"query": "a", "extra": "7"})],
        ),
        case(
            f,
            "cpm-recovery-missing-function-end",
            src,
            '<function name="search">\n<param name="query">a</param>\n' + paris,
            calls=[("search", {"query": "a"}), ("get_weather", {"city": "Paris", "days": 3})],
        ),
        case(
            f,
            "cpm-malformed-unknown-tool",
            src,
            "Try.\n" + fn("launch", [("target", "moon")]),
            content="Try.\n" + fn("launch", [("target", "moon")]),
            malformed=True,
        ),
    ]


NS = "]<]minimax[>["


def minimax_m3() -> list[dict[str, Any]]:
    src = (
        "hand-written in the MiniMax-M3 wire format "
        "(vLLM 0.33 vllm/parser/minimax_m3.py: values are the raw element text)"
    )
    f = "minimax_m3"

    def invoke(name: str, params: list[tuple[str, str]], q: str = '"') -> str:
        body = "".join(f"{NS}<{k}>{v}{NS}</{k}>\n" for k, v in params)
        return f"{NS}<invoke name={q}{name}{q}>\n{body}{NS}</invoke>\n"

    def block(*invokes: str) -> str:
        return f"{NS}<tool_call>\n" + "".join(invokes) + f"{NS}</tool_call>"

    paris = invoke("get_weather", [("city", "Paris"), ("days", "3")])
    typed = invoke(
        "configure",
        [
            ("count", "3"),
            ("ratio", "0.5"),
            ("enabled", "true"),
            ("options", '{"a": [1, 2]}'),
            ("tags", '["x", "y"]'),
            ("note", "null"),
            ("mode", "safe"),
            ("label", "42"),
        ],
    )
    return [
        case(
            f,
            "m3-one-call",
            src,
            "我再查几条。" + block(invoke("search", [("query", "字节 AI 新闻"), ("limit", "6")])),
            content="我再查几条。",
            calls=[("search", {"query": "字节 AI 新闻", "limit": 6})],
        ),
        case(
            f,
            "m3-two-invokes-one-block",
            src,
            block(paris, invoke("search", [("query", "Paris museums")])),
            calls=[("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "Paris museums"})],
        ),
        case(f, "m3-every-schema-type", src, block(typed), calls=[("configure", TYPED_ARGS)]),
        case(
            f,
            "m3-quote-styles",
            src,
            block(invoke("search", [("query", "a")], q="'"), invoke("search", [("query", "b")], q="")),
            calls=[("search", {"query": "a"}), ("search", {"query": "b"})],
        ),
        case(
            f,
            "m3-angle-brackets-in-value",
            src,
            block(invoke("search", [("query", "if a < b and c > d: print('<tag>')")])),
            calls=[("search", {"query": "if a < b and c > d: print('<tag>')"})],
        ),
        case(
            f,
            "m3-multiline-value",
            src,
            block(invoke("search", [("query", "\nline one\n  line two\n")])),
            calls=[("search", {"query": "\nline one\n  line two\n"})],
        ),
        case(
            f,
            "m3-two-blocks-and-content",
            src,
            "First.\n" + block(paris) + "\nThen.\n" + block(invoke("search", [])),
            content="First.\n\nThen.",
            calls=[("get_weather", {"city": "Paris", "days": 3}), ("search", {})],
        ),
        case(
            f,
            "m3-malformed-unknown-tool",
            src,
            "Go.\n" + block(invoke("launch", [("target", "moon")])),
            # the block yields no call: all of its text is content, its markers included
            content="Go.\n" + block(invoke("launch", [("target", "moon")])),
            malformed=True,
        ),
    ]


FILES = {"minicpm5/minicpm5.jsonl": minicpm5, "minimax_m3/minimax_m3.jsonl": minimax_m3}


def build() -> dict[Path, str]:
    books = [lambda rel=rel, make=make: SimpleNamespace(path=rel, cases=make()) for rel, make in FILES.items()]
    return casefile.build(books)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
