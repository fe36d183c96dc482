"""Bundled example outputs for ``trisect demo`` (real wire formats, rendered as the models'
chat templates render them)."""

from __future__ import annotations

from typing import Any

WEATHER_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]

EXAMPLES: list[dict[str, Any]] = [
    {
        "title": "Qwen3 thinking, then a Qwen3-Coder XML tool call",
        "reasoning": "qwen3",
        "tools": "qwen3_coder",
        "output": (
            "<think>\nThe user wants the weather in Paris for three days. I should call get_weather "
            "with city=Paris and days=3.\n</think>\n\nLet me look that up.\n\n<tool_call>\n"
            "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
            "</parameter>\n</function>\n</tool_call>"
        ),
    },
    {
        "title": "DeepSeek-R1 (the template pre-fills <think>), then Hermes JSON calls",
        "reasoning": "deepseek_r1",
        "tools": "hermes",
        "output": (
            "Two files are needed: a README and a tiny script. The script must print 北京 and "
            "an emoji 🚀 to test unicode.\n</think>\n\nWriting both files now.\n<tool_call>\n"
            '{"name": "write_file", "arguments": {"path": "README.md", "content": "# Demo\\n"}}\n'
            "</tool_call>\n<tool_call>\n"
            '{"name": "write_file", "arguments": {"path": "hello.py", "content": '
            '"print(\\"北京 🚀\\")  # ends with </tool_call> in a string, still an argument\\n"}}\n'
            "</tool_call>"
        ),
    },
    {
        "title": "Qwen3 with enable_thinking=false: everything is content",
        "reasoning": "qwen3",
        "tools": "hermes",
        "options": {"chat_template_kwargs": {"enable_thinking": False}},
        "output": "Paris is sunny today, 24 °C.",
    },
]
