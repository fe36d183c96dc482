"""``trisect_auto`` inside SGLang 0.5.23: the formats ``trisect.detect`` finds in the chat template
of the tokenizer SGLang hands each detector (the tokenizer manager's: SGLang's serving code
passes it to ``ReasoningParser`` and ``FunctionCallParser``), through SGLang's serving code.

SGLang's template manager puts the template it renders with on that tokenizer (the model's, or
the file ``--chat-template`` names); checked here against the installed ``template_manager.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sglang_serving as sg
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

import trisect
from trisect.errors import DetectionError

load_plugins()

TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "templates"
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ROWS = [
    # (tokenizer, template, output)
    (
        "qwen3",
        "Qwen-Qwen3-0.6B.jinja",
        "<think>\nplan\n</think>\n\nSure.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    ),
    (
        "deepseek_v3",
        "deepseek-ai-DeepSeek-V3.1.jinja",
        "plan</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[1])
def test_auto_parses_with_the_formats_of_the_tokenizers_template(row: tuple[str, str, str]) -> None:
    name, template, text = row
    source = (TEMPLATES / template).read_text(encoding="utf-8")
    detection = trisect.detect(source)
    body = {"chat_template_kwargs": {"thinking": True, "enable_thinking": True}}
    message = trisect.Parser(detection.reasoning_spec, detection.tools_spec).parse(text, tools=WEATHER, **body)
    want = {
        "reasoning": message.reasoning or None,
        "content": message.content or None,
        "tool_calls": [(c.name, c.arguments) for c in message.tool_calls],
        "finish_reason": "tool_calls",
    }
    assert want["reasoning"] == "plan" and want["tool_calls"]
    srv = sg.Server("trisect_auto", "trisect_auto", tok=sg.tokenizer(name, source))
    assert srv.whole(sg.request(WEATHER, **body), text).view() == want
    pieces = [text[k : k + 3] for k in range(0, len(text), 3)]
    assert srv.stream(sg.request(WEATHER, stream=True, **body), pieces).view() == want


def test_auto_with_a_named_partner() -> None:
    name, template, text = ROWS[0]
    srv = sg.Server("trisect_auto", "trisect_hermes", tok=sg.tokenizer(name, (TEMPLATES / template).read_text()))
    reply = srv.whole(sg.request(WEATHER), text)
    assert (reply.reasoning, reply.content, [c[1] for c in reply.tool_calls]) == ("plan", "Sure.", ["get_weather"])


def test_a_tokenizer_without_a_template_stops_sglang_at_start_up() -> None:
    """SGLang's scheduler builds the reasoning parser with the tokenizer when it starts
    (``scheduler.py``: ``ReasoningParser(model_type, stream_reasoning=False, tokenizer=...)``)."""
    with pytest.raises(DetectionError, match="--reasoning-parser trisect_NAME"):
        ReasoningParser(model_type="trisect_auto", stream_reasoning=False, tokenizer=sg.tokenizer("qwen3"))


def test_sglang_puts_the_template_it_renders_with_on_the_tokenizer() -> None:
    path = sg._installed("sglang.srt.parser.template_manager")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    manager = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TemplateManager")
    setters = set()
    for method in manager.body:
        if isinstance(method, ast.FunctionDef):
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and any(
                    ast.unparse(t) == "tokenizer_manager.tokenizer.chat_template" for t in node.targets
                ):
                    setters.add(method.name)
    assert setters == {"load_chat_template", "_load_jinja_template"}  # the model's / --chat-template FILE
