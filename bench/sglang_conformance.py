#!/usr/bin/env python
"""Family by family on ``tests/cases``: trisect alone, trisect inside SGLang 0.5.23 and SGLang's
own detectors, each driven by SGLang's own chat serving code (``tests/integrations/sglang_serving``).

Run with the SGLang venv's interpreter (``.ci/sglang-venv.sh`` builds one), trisect from the
checkout you measure (the harness and the cases are always this one's):

    PYTHONPATH=src $SGLANG_VENV/bin/python bench/sglang_conformance.py
    PYTHONPATH=/tmp/old/src $SGLANG_VENV/bin/python bench/sglang_conformance.py --plugin-only

Every case that holds from text (``ids_only`` cases need token ids, which SGLang's detectors
never get), by its ``tests/cases`` directory. Two measures:

* **expected** (the case as its request gives it, against its ``expected``, which comes from
  the format's primary source): reasoning, content and each call's name and JSON arguments must
  be equal; a case passes when it does with SGLang's template manager knowing no template and
  each staged template of the family, whole and streamed at 1 and 4 tokens a chunk. ``alone``
  is ``trisect.Parser(R, T).parse()`` with the options SGLang's request carries (no prompt
  text: SGLang hands a detector none); ``plugin`` is ``--reasoning-parser trisect_R
  --tool-call-parser trisect_T``; ``sglang`` is SGLang's own parsers for the family
  (``SGLANG_NAMES``, from SGLang's registries), ``-`` where it has none for a part.
* **matrix** (what ``tests/integrations/test_sglang_cases.py`` asserts): the case as given and
  with thinking on and off, each template (unknown, staged, one SGLang reads as always
  reasoning, one with no switch SGLang reads), each delivery; a case passes when every run gives
  trisect alone.

Prints a Markdown table (``--json-out FILE`` also writes the counts and the failing cases).
Nothing is timed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import logging
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path[:0] = [str(TESTS / "integrations"), str(TESTS)]
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
importlib.import_module("conftest")  # tests/integrations': a bare ``sglang`` package (its __init__ needs the runtime)

import sglang_serving as sg  # noqa: E402
import test_sglang_cases as tc  # noqa: E402  (the same bodies, templates and chunks as the test)
from pydantic import ValidationError  # noqa: E402

# SGLang's own parser for each trisect format of a family (the keys of SGLang 0.5.23's
# ReasoningParser.DetectorMap / FunctionCallParser.ToolCallParserEnum); a format missing here
# has no SGLang parser of its own.
SGLANG_NAMES = {
    "reasoning": {
        "qwen3": "qwen3",
        "deepseek_r1": "deepseek-r1",
        "deepseek_v3": "deepseek-v3",
        "deepseek_v4": "deepseek-v4",
        "deepseek_v41": "deepseek-v41",
        "cohere_command4": "cohere_command4",
        "gemma4": "gemma4",
        "glm45": "glm45",
        "glm47": "glm45",
        "granite_thinking_parser": "granite_thinking_parser",
        "hunyuan_a13b": "hunyuan",
        "hy_v3": "hunyuan",
        "inkling": "inkling",
        "k2_horizon": "k2_horizon",
        "kimi_k2": "kimi_k2",
        "kimi_k3": "kimi_k3",
        "ling3": "ling3",
        "mimo": "mimo",
        "minimax_m2": "minimax",
        "minimax_m2_append_think": "minimax-append-think",
        "minimax_m3": "minimax-m3",
        "mistral": "mistral",
        "muse": "muse",
        "nemotron_v3": "nemotron_3",
        "openai_gptoss": "gpt-oss",
        "poolside_v1": "poolside_v1",
        "step3": "step3",
        "step3p5": "step3p5",
    },
    "tools": {
        "apertus": "apertus2509",
        "cohere_command4": "cohere_command4",
        "deepseek_v3": "deepseekv3",
        "deepseek_v31": "deepseekv31",
        "deepseek_v32": "deepseekv32",
        "deepseek_v4": "deepseekv4",
        "deepseek_v41": "deepseekv41",
        "dots": "dots",
        "gemma4": "gemma4",
        "gigachat3": "gigachat3",
        "glm45": "glm45",
        "glm47": "glm47",
        "hermes": "hermes",
        "hunyuan_a13b": "hunyuan",
        "inkling": "inkling",
        "k2_horizon": "k2_horizon",
        "kimi_k2": "kimi_k2",
        "kimi_k3": "kimi_k3",
        "lfm2": "lfm2",
        "ling3": "ling3",
        "llama3_json": "llama3",
        "llama4_pythonic": "pythonic",
        "mimo": "mimo",
        "minicpm5": "minicpm5",
        "minimax_m2": "minimax-m2",
        "minimax_m3": "minimax-m3",
        "mistral": "mistral",
        "muse": "muse",
        "openai": "gpt-oss",
        "poolside_v1": "poolside_v1",
        "pythonic": "pythonic",
        "qwen3_coder": "qwen3_coder",
        "qwen3_json": "qwen25",
        "step3": "step3",
        "step3p5": "step3p5",
    },
}


def family(case: dict[str, Any]) -> str:
    return str(case["file"]).split("/")[0]


def expected_view(case: dict[str, Any]) -> dict[str, Any]:
    exp = case["expected"]
    calls = [(c["name"], c.get("arguments", {})) for c in exp.get("tool_calls") or []]
    return {"reasoning": exp.get("reasoning") or None, "content": exp.get("content") or None, "tool_calls": calls}


def strict(view: dict[str, Any]) -> dict[str, Any]:
    """A client's fields as ``expected_view`` holds them (the arguments parsed; not JSON: kept)."""
    calls = []
    for name, arguments in view["tool_calls"]:
        try:
            calls.append((name, json.loads(arguments)))
        except (TypeError, ValueError):
            calls.append((name, arguments))
    return {"reasoning": view["reasoning"], "content": view["content"], "tool_calls": calls}


def alone_view(message: Any) -> dict[str, Any]:
    calls = [(c.name, c.arguments) for c in message.tool_calls]
    return {"reasoning": message.reasoning or None, "content": message.content or None, "tool_calls": calls}


_SERVERS: dict[tuple[Any, ...], Any] = {}


def server(reasoning: str | None, tools: str | None, template: Any) -> Any:
    key = (reasoning, tools, template)
    if key not in _SERVERS:
        _SERVERS[key] = sg.Server(reasoning, tools, template)
    return _SERVERS[key]


def deliveries(srv: Any, case: dict[str, Any], body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The client's view whole and streamed at 1 and 4 tokens a chunk; None if SGLang failed."""
    finish = "length" if case.get("truncated") else "stop"
    tools = case["tools"] or None
    try:
        views = [srv.whole(sg.request(tools, **body), case["output"], finish).view()]
        for per in (1, 4):
            views.append(srv.stream(sg.request(tools, stream=True, **body), tc.pieces(case, per), finish).view())
    except Exception:  # SGLang's own detectors raise on some outputs: a failure of that run
        return None
    return views


def measure(case: dict[str, Any], plugin_only: bool) -> dict[str, bool | None]:
    r, t = case["reasoning"], case["tools_format"]
    plugin = (f"trisect_{r}" if r else None, f"trisect_{t}" if t else None)
    own: tuple[str | None, str | None] | None = (
        SGLANG_NAMES["reasoning"].get(r) if r else None,
        SGLANG_NAMES["tools"].get(t) if t else None,
    )
    if own is not None and (bool(own[0]) != bool(r) or bool(own[1]) != bool(t)):
        own = None  # SGLang has no parser for one of the family's parts
    realistic = [sg.UNKNOWN, *tc.staged_templates().get(r, [])] if r else [sg.UNKNOWN]
    given = tc.bodies(case)["as given"]
    want = expected_view(case)
    out: dict[str, bool | None] = {}
    try:
        out["alone"] = strict(alone_view(tc.alone(case, sg.request(case["tools"] or None, **given)))) == want
    except ValidationError:  # a request SGLang's protocol rejects
        out["alone"] = False
    for label, names in (("plugin", plugin), ("sglang", None if plugin_only else own)):
        if names is None:
            out[label] = None
            continue
        views = [deliveries(server(*names, template), case, given) for template in realistic]
        out[label] = all(v is not None and all(strict(x) == want for x in v) for v in views)
    matrix = True
    for body in tc.bodies(case).values():
        try:
            reference = alone_view(tc.alone(case, sg.request(case["tools"] or None, **body)))
        except ValidationError:
            continue
        if not r:
            reference["reasoning"] = None  # SGLang's tool path has no reasoning field
        for template in tc.templates(case):
            views = deliveries(server(*plugin, template), case, body)
            if views is None or any({k: v[k] for k in reference} != reference for v in views):
                matrix = False
                break
        if not matrix:
            break
    out["matrix"] = matrix
    return out


def cell(row: dict[str, int], key: str) -> str:
    na = row.get(f"{key} n/a", 0)
    if na == row["cases"]:
        return "-"
    return f"{row.get(key, 0)}" + (f" (+{na} n/a)" if na else "")


def row_line(name: str, row: dict[str, int]) -> str:
    cells = [cell(row, key) for key in ("alone", "plugin", "sglang", "matrix")]
    return f"| {name} | {row['cases']} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", help="comma-separated tests/cases directories (default: all)")
    ap.add_argument("--plugin-only", action="store_true", help="leave SGLang's own parsers out")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # SGLang's own detectors log each output they cannot parse
    wanted = set(args.families.split(",")) if args.families else None
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    failures: dict[str, list[str]] = defaultdict(list)
    for case in tc.CASES:
        fam = family(case)
        if wanted is not None and fam not in wanted:
            continue
        with contextlib.redirect_stderr(io.StringIO()):
            result = measure(case, args.plugin_only)
        row = counts[fam]
        row["cases"] += 1
        for key, ok in result.items():
            if ok is None:
                row[f"{key} n/a"] += 1
            elif ok:
                row[key] += 1
            else:
                failures[key].append(case["key"])
    header = (
        "| family | cases | alone = expected | plugin = expected | SGLang's own = expected | plugin = alone (matrix) |"
    )
    print(header, "|---|---:|---:|---:|---:|---:|", sep="\n")
    total: dict[str, int] = defaultdict(int)
    for fam in sorted(counts):
        for key, value in counts[fam].items():
            total[key] += value
        print(row_line(fam, counts[fam]))
    print(row_line("**all**", total))
    if args.json_out:
        report = {"counts": {k: dict(v) for k, v in counts.items()}, "failures": failures}
        args.json_out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
