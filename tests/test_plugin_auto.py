"""``trisect_auto`` without an engine: the names each plugin registers, and ``_common.detected``
on a tokenizer-like object (what vLLM hands a parser: ``chat_template``, ``bos_token`` /
``eos_token``, ``get_added_vocab()``). The same through vLLM's serving code:
``tests/integrations/test_vllm_auto.py`` (in the vLLM venv)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from trisect.errors import DetectionError
from trisect.integrations import _common
from trisect.integrations.vllm import vllm_names

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "tests" / "data" / "templates"
EXPECTED = json.loads((ROOT / "tests" / "data" / "detect" / "expected.json").read_text())["templates"]


@dataclass
class Tokenizer:
    chat_template: str | None
    name_or_path: str = "org/model"
    eos_token: str = "<|im_end|>"

    def get_added_vocab(self) -> dict[str, int]:
        return {}


def test_trisect_auto_is_an_engine_name_of_both_kinds_and_no_formats() -> None:
    for kind in ("reasoning", "tools"):
        assert vllm_names(kind)["trisect_auto"] == "auto" == _common.engine_names(kind)["trisect_auto"]
        assert "trisect_auto" not in _common.plugin_names(kind)  # not a format: the engines add it


TEMPLATE_NAMES = ["Qwen-Qwen3-0.6B.jinja", "GLM-4.7-Flash.jinja", "deepseek-ai-DeepSeek-V3.1.jinja"]


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_auto_is_the_formats_of_the_tokenizers_template(template: str) -> None:
    tok = Tokenizer((TEMPLATES / template).read_text())
    reasoning, tools = _common.detected("auto", "auto", tok)
    expected = EXPECTED[template]
    assert getattr(reasoning, "name", None) == expected["reasoning"]
    assert tools is not None and expected["tools"] in (tools.name, *tools.aliases)  # type: ignore[union-attr]
    assert _common.detected("auto", "hermes", tok)[1] == "hermes"  # a named part is left alone


def test_auto_that_cannot_be_detected_names_the_flag() -> None:
    granite = Tokenizer((TEMPLATES / "ibm-granite-granite-3.3-2B-Instruct.jinja").read_text())
    with pytest.raises(DetectionError, match=r"of tokenizer org/model .*--tool-call-parser trisect_NAME, its markers"):
        _common.detected(None, "auto", granite)
    with pytest.raises(DetectionError, match=r"trisect_auto reads the chat template of tokenizer org/model"):
        _common.detected("auto", None, Tokenizer(None))
