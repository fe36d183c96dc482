"""The XML invoke builder (``formats/_xml_invoke.py``): one grammar, the same recovered shapes
in every family built by it.

For each such format an output is written from the spec's own markers (so a new family is
tested as soon as it is built): two well-formed calls, then the same calls with one marker
left out — the ``>`` after the name, a parameter's closer, an invoke's closer. Each variant
must parse to the same two calls, whole and under every two-way split (the replay harness).
"""

from __future__ import annotations

import pytest

from support.cuts import marker_strings, text_cuts
from trisect.codecs import XmlParams
from trisect.engine.spec import FormatSpec
from trisect.formats import all_formats
from trisect.testing import Case, check_case

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
    for name in ("get_weather", "get_time")
]
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
    {"name": "get_time", "arguments": {"city": "Tokyo", "days": 1}},
]
INVOKE_FORMATS = sorted(
    # channel formats (Muse) frame their calls in messages: their own cases test them
    (s for s in all_formats() if isinstance(s.codec, XmlParams) and "INVOKE" in s.terminals and s.header is None),
    key=lambda s: s.name,
)


def _write(spec: FormatSpec, drop: str = "") -> str:
    """The two calls in the family's spelling; ``drop`` leaves one marker out of the first."""
    m = {t: strings[0] for t, strings in spec.terminals.items()}
    assert isinstance(spec.codec, XmlParams)
    quoted_keys = spec.codec.parse_key is not None

    def call(c: dict[str, object], first: bool) -> str:
        name = c["name"] if spec.parse_name is None else f'"{c["name"]}"'
        params = []
        for k, (key, value) in enumerate(c["arguments"].items()):  # type: ignore[attr-defined]
            closer = m["PARAM_END"] + (f"{key}>" if m["PARAM_END"].endswith("</") else "")
            if first and k == 0 and drop == "param_end":
                closer = ""
            spelled = f'"{key}"' if quoted_keys else key
            params.append(f"{m['PARAM_START']}{spelled}>{value}{closer}")  # verbatim values: no newline
        name_end = "" if first and drop == "name_end" else ">"
        invoke_end = "" if first and drop == "invoke_end" else m["INVOKE_END"]
        text = f"{m['INVOKE']}{name}{name_end}{''.join(params)}{invoke_end}\n"
        if "TOOL_START" in m:
            sep = "function" + m["TOOL_SEP"] if "TOOL_SEP" in m else ""
            text = f"{m['TOOL_START']}{sep}{text}{m['TOOL_END']}\n"
        return text

    body = "".join(call(c, k == 0) for k, c in enumerate(CALLS))
    if "BLOCK_START" in m:
        body = f"{m['BLOCK_START']}\n{body}{m['BLOCK_END']}"
    return "Let me check.\n" + body


def test_the_builder_serves_every_xml_invoke_family() -> None:
    names = {s.name for s in INVOKE_FORMATS}
    assert {
        "qwen3_coder",
        "seed_oss",
        "step3p5",
        "minimax_m2",
        "minimax_m3",
        "minicpm5",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_v41",
        "step3",
        "dots",
        "mimo",
        "step5",
    } <= names


@pytest.mark.parametrize("everywhere", [False, pytest.param(True, marks=pytest.mark.exhaustive)], ids=["cuts", "all"])
@pytest.mark.parametrize("drop", ["", "name_end", "param_end", "invoke_end"])
@pytest.mark.parametrize("spec", INVOKE_FORMATS, ids=lambda s: s.name)
def test_every_family_recovers_the_same_shapes(spec: FormatSpec, drop: str, everywhere: bool) -> None:
    """Replayed split in two at the markers and seeded positions (tests/support/cuts.py); every
    split in the exhaustive suite."""
    if spec.name == "minimax_m3" and drop == "name_end":
        # the namespace marker holds a ">": fed per character, the engine takes the name's ">"
        # inside "]<]minimax[>[" before the longer parameter marker that began earlier completes
        # (an engine rule: a marker found inside a pending longer candidate); parse() is right
        pytest.xfail("engine: a shorter marker inside a pending longer one is taken early")
    case = Case(
        id=f"{spec.name}-{drop or 'whole'}",
        output=_write(spec, drop),
        tools_format=spec.name,
        tools=TOOLS,
        expected={"reasoning": None, "content": "Let me check.", "tool_calls": CALLS},
        truncated=bool(drop),  # malformed: an incremental stream may show a call that then aborts
    )
    check_case(case, splits=True if everywhere else text_cuts(case.output, marker_strings(None, spec.name)))


NO_ARGS = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}}}}]


@pytest.mark.parametrize("fmt", ["deepseek_v32", "deepseek_v4", "deepseek_v41", "minicpm5"])
def test_text_after_an_invokes_quoted_name_makes_no_call(fmt: str) -> None:
    """After the quoted name only attributes and a self-closing ``/`` may come: any other text
    would be dropped with the call (no name or argument carries it), so the call is malformed and
    all of its text is content, whole and under every split (the replay harness)."""
    spec = next(s for s in all_formats() if s.name == fmt and s.kind == "tools")
    (opener,), (closer,) = spec.terminals["INVOKE"], spec.terminals["INVOKE_END"]
    (block,), (block_end,) = spec.terminals["BLOCK_START"], spec.terminals["BLOCK_END"]
    for tail, reads in [('"t"r>', False), ('"t" extra>', False), ('"t" id="1">', True), ('"t">', True)]:
        output = f"{block}{opener}{tail}{closer}{block_end}"
        calls = [{"name": "t", "arguments": {}}] if reads else []
        expected = {"reasoning": None, "content": None if reads else output, "tool_calls": calls}
        case = Case(id=f"{fmt}-{tail}", output=output, expected=expected, tools_format=fmt, tools=NO_ARGS)
        assert check_case(case) > 0
