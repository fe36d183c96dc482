"""trisect.templates: chat templates found and rendered with transformers' semantics.

Expected strings come from the templates' own text (tests/data/templates), not from trisect.
"""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import pytest

from trisect.errors import FormatError, RequestError, TemplateError
from trisect.templates import ChatTemplate, load_template, read_metadata
from trisect.templates.gguf import write_metadata

DATA = Path(__file__).resolve().parent / "data"
TEMPLATES = DATA / "templates"
QWEN3 = TEMPLATES / "Qwen-Qwen3-0.6B.jinja"
USER = {"role": "user", "content": "What's the weather in Münster?"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city, e.g. Münster <DE> & co",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def test_generation_prompt_and_thinking_switch_as_the_qwen3_template_writes_them() -> None:
    template = load_template(QWEN3)
    prompt = template.render([USER], add_generation_prompt=True)
    assert prompt == "<|im_start|>user\nWhat's the weather in Münster?<|im_end|>\n<|im_start|>assistant\n"
    off = template.render([USER], add_generation_prompt=True, enable_thinking=False)
    assert off == prompt + "<think>\n\n</think>\n\n"


def test_tojson_writes_unicode_raw_and_does_not_html_escape() -> None:
    prompt = load_template(QWEN3).render([USER], tools=TOOLS, add_generation_prompt=True)
    assert json.dumps(TOOLS[0], ensure_ascii=False) in prompt  # Qwen3: {{ tool | tojson }} per line
    assert "\\u00fc" not in prompt and "\\u003c" not in prompt and "&amp;" not in prompt


def test_tojson_takes_indent_separators_and_sort_keys() -> None:
    t = ChatTemplate("{{ x | tojson(indent=2, sort_keys=True) }}|{{ x | tojson(separators=(',', ':')) }}")
    assert t.render([], x={"b": 1, "a": "é"}) == '{\n  "a": "é",\n  "b": 1\n}|{"b":1,"a":"é"}'


def test_tojson_writes_an_iterator_as_the_list_it_yields() -> None:
    t = ChatTemplate("{{ tools | map(attribute='function') | tojson }}|{{ {'on': xs | select | list} | tojson }}")
    want = json.dumps([tool["function"] for tool in TOOLS], ensure_ascii=False)
    assert t.render([], tools=TOOLS, xs=[0, 2, 3]) == want + '|{"on": [2, 3]}'
    nested = ChatTemplate("{{ {'names': tools | map(attribute='function') | map(attribute='name')} | tojson }}")
    assert nested.render([], tools=TOOLS) == '{"names": ["get_weather"]}'
    with pytest.raises(TemplateError, match="not JSON serializable"):
        ChatTemplate("{{ x | tojson }}").render([], x=object())


def test_the_llama_cpp_r1_template_writes_its_tools_as_a_json_list() -> None:
    # its text: "...the user's requests: {{tools | map(attribute='function') | tojson(indent=2)}}"
    prompt = load_template(TEMPLATES / "llama-cpp-deepseek-r1.jinja").render([USER], tools=TOOLS)
    functions = json.dumps([tool["function"] for tool in TOOLS], ensure_ascii=False, indent=2)
    assert f"the following function tools to satisfy the user's requests: {functions}\n" in prompt


# Every real template under tests/data/templates (the 31 llama.cpp copies and vLLM's example tool
# templates, tests/data/README.md) renders three requests: a question, the
# question with tools, and a turn with a tool call and its result. The arguments are an object,
# as transformers' chat template docs pass them.
ALL_TEMPLATES = sorted(TEMPLATES.glob("*.jinja"))
CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "sunny, 21 C"}
# renders a call only for an assistant message whose content is None, concatenating the arguments
# as a string ('+ tool['function']['arguments'] +'): an object there is a TypeError
CALLS_AS_STRINGS = {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"}


@pytest.mark.parametrize("path", ALL_TEMPLATES, ids=[p.name for p in ALL_TEMPLATES])
def test_every_template_renders(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    template = ChatTemplate(source, special_tokens={"bos_token": "<s>", "eos_token": "</s>"})
    if "tool_use" not in path.name:  # a tool_use template is rendered only with tools (it loops over them)
        assert USER["content"] in template.render([USER], add_generation_prompt=True)
    with_tools = template.render([USER], tools=TOOLS, add_generation_prompt=True)
    assert USER["content"] in with_tools
    if "tools" in source:
        assert "get_weather" in with_tools
    if path.name in CALLS_AS_STRINGS:
        call = {
            **CALL,
            "content": None,
            "tool_calls": [
                {
                    **CALL["tool_calls"][0],
                    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
                }
            ],
        }
    else:
        call = CALL
    turn = template.render([USER, call, RESULT], tools=TOOLS, add_generation_prompt=True)
    after_question = turn.split(USER["content"], 1)[1]
    assert "sunny, 21 C" in after_question
    if "tool_calls" in source:
        assert "Paris" in after_question


def test_raise_exception_is_a_template_error() -> None:
    t = ChatTemplate("{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok")
    assert t.render([USER]) == "ok"
    with pytest.raises(TemplateError, match="first must be user"):
        t.render([{"role": "assistant", "content": "x"}])


def test_errors_inside_a_template_are_typed() -> None:
    with pytest.raises(TemplateError, match="does not compile"):
        ChatTemplate("{% for %}").render([])
    with pytest.raises(TemplateError):
        ChatTemplate("{{ messages[5].content }}").render([USER])


def test_strftime_now_uses_the_templates_clock() -> None:
    fixed = datetime.datetime(2026, 11, 30, 12, 0)
    t = load_template(TEMPLATES / "ibm-granite-granite-3.3-2B-Instruct.jinja")
    pinned = ChatTemplate(t.source, now=lambda: fixed)
    assert "November 30, 2026" in pinned.render([USER], add_generation_prompt=True)


def test_loop_controls_generation_blocks_and_list_append() -> None:
    t = ChatTemplate(
        "{% set ids = [] %}{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}"
        "{{ ids.append(m.role) or '' }}{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}"
        "{{ ids | join(',') }}"
    )
    assert t.render([USER, {"role": "assistant", "content": "no"}]) == "[What's the weather in Münster?]user"


def test_continue_final_message_cuts_after_the_final_text() -> None:
    template = load_template(QWEN3)
    messages = [USER, {"role": "assistant", "content": "It is sunny in Mün"}]
    prompt = template.render(messages, continue_final_message=True)
    # the Qwen3 template writes the final assistant turn with an empty think block, then its text
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\nIt is sunny in Mün")
    with pytest.raises(RequestError):
        template.render(messages, continue_final_message=True, add_generation_prompt=True)
    with pytest.raises(TemplateError, match="does not render"):
        ChatTemplate("{{ messages[0].content }}").render(
            [USER, {"role": "assistant", "content": "zz"}], continue_final_message=True
        )


def test_chat_template_kwargs_win_over_special_tokens() -> None:
    t = ChatTemplate("{{ bos_token }}|{{ eos_token }}", special_tokens={"bos_token": "<s>", "eos_token": "</s>"})
    assert t.render([]) == "<s>|</s>"
    assert t.render([], bos_token="[B]") == "[B]|</s>"


def test_a_tokenizer_config_with_named_templates_uses_tool_use_for_tools(tmp_path: Path) -> None:
    config = {
        "chat_template": [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "tools!"}],
        "bos_token": {"__type": "AddedToken", "content": "<|begin|>"},
        "added_tokens_decoder": {
            "7": {"content": "<tool_call>", "special": True},
            "8": {"content": "x", "special": False},
        },
    }
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    t = load_template(path)
    assert t.render([USER]) == "plain" and t.render([USER], tools=TOOLS) == "tools!"
    assert t.bos_token == "<|begin|>" and t.added_tokens == ("<tool_call>",)


def test_a_model_directory(tmp_path: Path) -> None:
    shutil.copy(DATA / "tokenizers" / "deepseek-v3" / "tokenizer_config.json", tmp_path / "tokenizer_config.json")
    t = load_template(tmp_path)
    assert t.bos_token == "<｜begin▁of▁sentence｜>" and t.eos_token == "<｜end▁of▁sentence｜>"
    assert t.render([USER], add_generation_prompt=True).startswith("<｜begin▁of▁sentence｜>")
    (tmp_path / "chat_template.jinja").write_text("J{{ bos_token }}", encoding="utf-8")
    assert load_template(tmp_path).render([]) == "J<｜begin▁of▁sentence｜>"  # the .jinja file wins


def test_a_template_string_and_missing_sources() -> None:
    assert load_template("{{ 'x' }}").render([]) == "x"
    with pytest.raises(TemplateError):
        load_template("/nonexistent/model")


def test_gguf_metadata_and_template(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    tokens = ["<unk>", "<|im_start|>", "<|im_end|>", "hello", "<tool_call>"]
    write_metadata(
        path,
        {
            "general.architecture": "llama",
            "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [3, 3, 3, 1, 4],
            "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2,
            "tokenizer.chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
            "general.flag": True,
            "general.ratio": 0.5,
        },
    )
    meta = read_metadata(path)
    assert meta["general.architecture"] == "llama" and meta["general.gguf_version"] == 3
    assert meta["tokenizer.ggml.tokens"] is None  # arrays are skipped unless asked for
    assert meta["general.flag"] is True and meta["general.ratio"] == 0.5 and meta["tokenizer.ggml.bos_token_id"] == 1
    assert read_metadata(path, arrays=["tokenizer.ggml.tokens"])["tokenizer.ggml.tokens"] == tokens
    t = load_template(path)
    assert t.render([{"role": "user", "content": "hi"}]) == "<|im_start|>hi<|im_end|>"
    assert t.added_tokens == ("<unk>", "<|im_start|>", "<|im_end|>", "<tool_call>")


def test_not_a_gguf_and_a_truncated_gguf(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"nope")
    with pytest.raises(FormatError):
        read_metadata(bad)
    good = tmp_path / "m.gguf"
    write_metadata(good, {"tokenizer.chat_template": "abc"})
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(good.read_bytes()[:-2])
    with pytest.raises(FormatError, match="truncated"):
        read_metadata(cut)
