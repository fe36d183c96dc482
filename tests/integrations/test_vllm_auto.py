"""``trisect_auto``: the formats from the tokenizer's chat template, through vLLM 0.33's serving code.

vLLM hands every parser its tokenizer; a Hugging Face tokenizer carries the model's chat template
(``tokenizer_config.json``'s ``chat_template``), so ``--reasoning-parser trisect_auto
--tool-call-parser trisect_auto`` parses with what ``trisect.detect`` names for that template.
Each tokenizer here is a test tokenizer (``hf_tokenizers``) given a real template from
``tests/data/templates``; expected names come from ``tests/data/detect/expected.json`` (vLLM's
documentation, the model cards), expected messages are written from the template's own render.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import hf_tokenizers
import pytest
import vllm_serving as vs
from test_vllm_registration import run
from vllm.plugins import load_general_plugins

from support import tokenizers
from trisect.errors import DetectionError

load_general_plugins()

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "tests" / "data" / "templates"
EXPECTED = json.loads((ROOT / "tests" / "data" / "detect" / "expected.json").read_text())["templates"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
PATHS = ("unified", "two_phase")
WAYS = ((False, 1), (True, 1), (True, 4))

# (template, tokenizer, the output after the template's generation prompt, expected reply)
QWEN3 = (
    "Qwen-Qwen3-0.6B.jinja",
    "qwen3",
    "<think>\nThe user wants the forecast.\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    ("The user wants the forecast.", "Let me check."),
)
HERMES = (  # no reasoning in the template: the reasoning part is none, everything before the call content
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
    "qwen3",
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    (None, "Let me check."),
)
DEEPSEEK_V31 = (  # thinking off by default: the prompt ends "<｜Assistant｜><think></think>"
    "deepseek-ai-DeepSeek-V3.1.jinja",
    "deepseek_v3",
    "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{"city": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    (None, "Checking."),
)


def tokenizer_with(template: str, name: str, tmp: Path) -> Any:
    """vLLM's tokenizer for test tokenizer ``name``, its ``tokenizer_config.json`` given ``template``."""
    from vllm.tokenizers.hf import CachedHfTokenizer

    folder = tmp / f"{name}-{template}"
    shutil.copytree(hf_tokenizers.hf_dir(name), folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config["chat_template"] = (TEMPLATES / template).read_text()
    config_path.write_text(json.dumps(config))
    tok = CachedHfTokenizer.from_pretrained(str(folder))
    assert tok.chat_template == config["chat_template"]
    return tok


def calls(reply: vs.Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(name, json.loads(arguments)) for _, name, arguments in reply.tool_calls]


@pytest.mark.parametrize("case", [QWEN3, HERMES, DEEPSEEK_V31], ids=["qwen3", "hermes", "deepseek_v31"])
@pytest.mark.parametrize("path", PATHS)
def test_trisect_auto_parses_with_the_formats_of_the_tokenizers_template(
    case: tuple[str, str, str, tuple[str | None, str]], path: str, tmp_path: Path
) -> None:
    template, name, output, (reasoning, content) = case
    tok = tokenizer_with(template, name, tmp_path)
    unified = path == "unified"
    auto = vs.Server(tok, "trisect_auto", "trisect_auto", unified=unified)
    expected = EXPECTED[template]
    names = [f"trisect_{expected[part]}" if expected[part] else None for part in ("reasoning", "tools")]
    named = vs.Server(tok, *names, unified=unified)
    ids = tokenizers.encode(name, output)
    for stream, chunk in WAYS:
        reply = auto.serve(auto.request(stream=stream, tools=TOOLS), ids, chunk=chunk)
        assert (reply.reasoning, reply.content) == (reasoning, content), (stream, chunk)
        assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]
        assert reply.finish_reason == "tool_calls"
        same = named.serve(named.request(stream=stream, tools=TOOLS), ids, chunk=chunk)
        assert reply.view() == same.view()  # what the documented names give


def test_the_engine_cores_reasoning_parser_detects_too(tmp_path: Path) -> None:
    """The engine core builds the reasoning parser by its name with its own tokenizer (structured
    outputs wait for the end of reasoning): the same detection there."""
    from vllm.reasoning import ReasoningParserManager

    tok = tokenizer_with(QWEN3[0], "qwen3", tmp_path)
    parser = ReasoningParserManager.get_reasoning_parser("trisect_auto")(tok)
    assert parser.trisect.reasoning_spec is not None
    assert parser.trisect.reasoning_spec.name == EXPECTED[QWEN3[0]]["reasoning"]
    thinking = tokenizers.encode("qwen3", "<think>\nhm")
    assert not parser.is_reasoning_end(thinking)
    assert parser.is_reasoning_end(thinking + tokenizers.encode("qwen3", "\n</think>\n\n"))
    # a template without reasoning: the reasoning parser has none, so reasoning has always ended
    tok = tokenizer_with(HERMES[0], "qwen3", tmp_path)
    parser = ReasoningParserManager.get_reasoning_parser("trisect_auto")(tok)
    assert parser.trisect.reasoning_spec is None and EXPECTED[HERMES[0]]["reasoning"] is None
    assert parser.is_reasoning_end(tokenizers.encode("qwen3", "Let me"))


def test_an_unknown_part_stops_vllm_at_start_naming_the_flag(tmp_path: Path) -> None:
    """vLLM builds the parser with the tokenizer at start-up (``validate_parser_tokenizer``) and
    stops on its error: detection's, naming the flags to pass instead."""
    tok = tokenizer_with("ibm-granite-granite-3.3-2B-Instruct.jinja", "qwen3", tmp_path)  # renders neither part
    # vLLM's Parser builds its reasoning parser first: that part's error is the one reported
    flags = r"the chat template of tokenizer .* shows a reasoning format .*pass --reasoning-parser trisect_NAME"
    with pytest.raises(TypeError, match=r"cannot be used with the tokenizer of .*: " + flags) as caught:
        vs.parser_class("trisect_auto", "trisect_auto", tok)
    assert isinstance(caught.value.__cause__, DetectionError)
    from vllm.tool_parsers import ToolParserManager

    tools = r"^the chat template of tokenizer .*pass --tool-call-parser trisect_NAME, its markers suggest granite"
    with pytest.raises(DetectionError, match=tools):
        ToolParserManager.get_tool_parser("trisect_auto")(tok)


def test_a_tokenizer_without_a_chat_template_is_an_error(tmp_path: Path) -> None:
    from vllm.tokenizers.hf import CachedHfTokenizer

    folder = tmp_path / "plain"
    shutil.copytree(hf_tokenizers.hf_dir("qwen3"), folder)
    tok = CachedHfTokenizer.from_pretrained(str(folder))
    assert not getattr(tok, "chat_template", None)
    from vllm.tool_parsers import ToolParserManager

    with pytest.raises(DetectionError, match=r"trisect_auto reads the chat template.*--tool-call-parser trisect_NAME"):
        ToolParserManager.get_tool_parser("trisect_auto")(tok)


def test_vllm_serve_accepts_the_name() -> None:
    got = run(
        """
        import json
        from vllm.entrypoints.common.cli_args import init_parser_plugin, make_arg_parser, validate_api_server_args
        from vllm.parser import ParserManager
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        parser = make_arg_parser(FlexibleArgumentParser())
        args = parser.parse_args(["m", "--enable-auto-tool-choice", "--tool-call-parser", "trisect_auto",
                                  "--reasoning-parser", "trisect_auto"])
        init_parser_plugin(args)
        validate_api_server_args(args)
        composed = ParserManager.get_parser(
            tool_parser_name=args.tool_call_parser, reasoning_parser_name=args.reasoning_parser,
            enable_auto_tools=args.enable_auto_tool_choice, model_name="m")
        print(json.dumps({"composed": composed.__name__}))
        """,
        VLLM_TARGET_DEVICE="cpu",
    )
    assert got["composed"] == "TrisectParser[auto+auto]"
