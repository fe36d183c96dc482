"""The entry point registers the plugin's names in a fresh vLLM process, as each of vLLM's
processes loads it (one subprocess per situation; importing vLLM takes a few seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import hf_tokenizers

from trisect.integrations._common import plugin_names

MODEL_ARGS = [
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    "trisect_qwen3_coder",
    "--reasoning-parser",
    "trisect_qwen3",
]


def run(code: str, **env: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter of this venv; it prints one JSON object last."""
    environ = {**os.environ, "VLLM_LOGGING_LEVEL": "ERROR", **env}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_api_server_gets_every_name_and_the_serve_command_line_validates() -> None:
    got = run(
        f"""
        import json, sys
        from vllm.entrypoints.common.cli_args import init_parser_plugin, make_arg_parser, validate_api_server_args
        from vllm.reasoning import ReasoningParserManager
        from vllm.tool_parsers import ToolParserManager
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        before = "trisect_qwen3" in ReasoningParserManager.list_registered()
        parser = make_arg_parser(FlexibleArgumentParser())  # loads the general plugins, as vllm serve does
        args = parser.parse_args(["m"] + {MODEL_ARGS!r})
        init_parser_plugin(args)
        validate_api_server_args(args)
        from vllm.parser import ParserManager
        composed = ParserManager.get_parser(
            tool_parser_name=args.tool_call_parser, reasoning_parser_name=args.reasoning_parser,
            enable_auto_tools=args.enable_auto_tool_choice, model_name="m")
        print(json.dumps({{"before": before, "reasoning": ReasoningParserManager.list_registered(),
                          "tools": ToolParserManager.list_registered(), "composed": composed.__name__}}))
        """,
        VLLM_TARGET_DEVICE="cpu",
    )
    assert got["before"] is False
    assert set(plugin_names("reasoning")) <= set(got["reasoning"])
    assert set(plugin_names("tools")) <= set(got["tools"])
    assert len(plugin_names("reasoning")) > 20 and len(plugin_names("tools")) > 20
    assert got["composed"] == "TrisectParser[qwen3+qwen3_coder]"


def test_the_engine_core_gets_the_reasoning_names_without_importing_the_tool_parsers() -> None:
    got = run(
        f"""
        import json, sys
        from vllm.plugins import load_general_plugins
        load_general_plugins()  # EngineCore.__init__ does this first
        from vllm.reasoning import ReasoningParserManager  # what StructuredOutputManager imports
        from transformers import PreTrainedTokenizerFast
        tok = PreTrainedTokenizerFast(tokenizer_file={str(hf_tokenizers.hf_dir("qwen3") / "tokenizer.json")!r})
        cls = ReasoningParserManager.get_reasoning_parser("trisect_qwen3")
        reasoner = cls(tokenizer=tok, chat_template_kwargs={{"enable_thinking": True}})  # the engine core's call
        think, end = tok.convert_tokens_to_ids(["<think>", "</think>"])
        ids = [think, 40, 41, end, 42]
        print(json.dumps({{"class": cls.__name__, "ended": [reasoner.is_reasoning_end(ids[:i]) for i in range(6)],
                          "tool_parsers_loaded": "vllm.tool_parsers" in sys.modules,
                          "protocol_loaded": "vllm.entrypoints.openai.chat_completion.protocol" in sys.modules}}))
        """
    )
    assert got["class"] == "TrisectReasoning[qwen3]"
    assert got["ended"] == [False, False, False, False, True, True]
    assert got["tool_parsers_loaded"] is False and got["protocol_loaded"] is False


def test_the_module_works_as_a_tool_parser_plugin_without_the_entry_point() -> None:
    got = run(
        """
        import json
        from vllm.plugins import load_general_plugins
        from vllm.tool_parsers import ToolParserManager
        from vllm.reasoning import ReasoningParserManager
        load_general_plugins()  # VLLM_PLUGINS="" loads none
        before = "trisect_hermes" in ToolParserManager.list_registered()
        ToolParserManager.import_tool_parser("trisect.integrations.vllm")  # --tool-parser-plugin
        print(json.dumps({"before": before, "tools": "trisect_hermes" in ToolParserManager.list_registered(),
                          "reasoning": "trisect_qwen3" in ReasoningParserManager.list_registered()}))
        """,
        VLLM_PLUGINS="",
    )
    assert got == {"before": False, "tools": True, "reasoning": True}
