"""trisect.detect: every template in tests/data/templates names the formats its model card or
vLLM's documentation gives (tests/data/detect/expected.json says which, and where from), each
decided by rendering; thinking on and off; unknown rather than a wrong name; every source kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import trisect
from trisect.detect import CONFIRMED, NONE, UNKNOWN, Detection, detect
from trisect.detect.result import HIGH_CONFIDENCE
from trisect.formats import all_formats, reasoning_format, tool_format
from trisect.templates import load_template
from trisect.templates.gguf import write_metadata

DATA = Path(__file__).parent / "data"
TEMPLATES = DATA / "templates"
EXPECTED: dict[str, Any] = json.loads((DATA / "detect" / "expected.json").read_text(encoding="utf-8"))


def _names(spec: trisect.FormatSpec | None) -> set[str]:
    return {spec.name, *spec.aliases} if spec is not None else set()


_CACHE: dict[str, Detection] = {}


def detected(name: str) -> Detection:
    if name not in _CACHE:
        _CACHE[name] = detect(TEMPLATES / name)
    return _CACHE[name]


HELDOUT_NAMES = set(json.loads((DATA / "detect" / "heldout" / "labels.json").read_text(encoding="utf-8"))["templates"])


def test_every_template_has_an_expectation() -> None:
    """Here, or (a copy of a model detection was not built on) in the held-out labels, where
    tests/test_detect_heldout.py grades it."""
    on_disk = {p.name for p in TEMPLATES.glob("*.jinja")}
    assert set(EXPECTED["templates"]) <= on_disk
    assert on_disk - set(EXPECTED["templates"]) <= HELDOUT_NAMES


@pytest.mark.parametrize("name", sorted(EXPECTED["templates"]))
def test_detect_names_the_documented_formats(name: str) -> None:
    want = EXPECTED["templates"][name]
    d = detected(name)
    for kind, part in (("reasoning", d.reasoning_part), ("tools", d.tools_part)):
        expected = want[kind]
        if kind in want.get("renders_none", ()):
            # the template never renders this part: unknown, never some other name
            assert part.status == UNKNOWN and part.name is None, (kind, part)
            assert expected in part.suggested or kind == "reasoning", (kind, part.suggested)
        elif expected is None:
            assert part.status == NONE and part.name is None, (kind, part)
        else:
            assert part.status == CONFIRMED, (kind, part)
            assert expected in _names(part.spec), (kind, part.name, expected)
            assert part.trials > 0  # decided by parsing what the template rendered


@pytest.mark.parametrize("name", sorted(EXPECTED["published_forms"]))
def test_published_templates_without_llama_cpps_thinking_switch(name: str) -> None:
    form = EXPECTED["published_forms"][name]
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    assert form["remove"] in source
    d = detect(source.replace(form["remove"], ""))
    assert d.reasoning == form["reasoning"] and form["tools"] in _names(d.tools_spec)


def test_vllm_flags() -> None:
    assert detected("deepseek-ai-DeepSeek-V3.1.jinja").vllm_flags() == [
        "--reasoning-parser",
        "deepseek_v3",
        "--tool-call-parser",
        "deepseek_v31",
        "--enable-auto-tool-choice",
    ]
    assert detected("Qwen-Qwen2.5-7B-Instruct.jinja").vllm_flags() == [
        "--tool-call-parser",
        "hermes",
        "--enable-auto-tool-choice",
    ]
    assert detected("ibm-granite-granite-3.3-2B-Instruct.jinja").vllm_flags() == []


def test_markers_built_by_concatenation_are_found_by_rendering() -> None:
    """DeepSeek-V3.2's template spells its DSML markers as dsml_token + 'invoke name=…'."""
    source = (TEMPLATES / "deepseek-ai-DeepSeek-V3.2.jinja").read_text(encoding="utf-8")
    assert "<｜DSML｜invoke" not in source and "'｜DSML｜'" in source
    assert detected("deepseek-ai-DeepSeek-V3.2.jinja").tools == "deepseek_v32"


# ---------------------------------------------------------------------- thinking on and off

# (template, request kwargs that turn thinking on, kwargs that leave it off), per the template
SWITCHED = [
    ("Qwen-Qwen3-0.6B.jinja", {"enable_thinking": True}, {"enable_thinking": False}),
    ("Qwen-Qwen3-0.6B.jinja", {}, {"enable_thinking": False}),
    ("deepseek-ai-DeepSeek-V3.1.jinja", {"thinking": True}, {"thinking": False}),
    ("deepseek-ai-DeepSeek-V3.1.jinja", {"thinking": True}, {}),
    ("deepseek-ai-DeepSeek-V3.2.jinja", {"thinking": True}, {}),
    ("GLM-4.6.jinja", {}, {"enable_thinking": False}),
    ("GLM-4.7-Flash.jinja", {}, {"enable_thinking": False}),
    ("Qwen-QwQ-32B.jinja", {"enable_thinking": True}, {}),
    ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {"enable_thinking": True}, {}),
    ("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", {}, None),  # the prompt always opens the block
    ("MiniMax-M2.jinja", {}, None),
]
USER = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.mark.parametrize(("name", "on", "off"), SWITCHED)
def test_thinking_on_and_off_with_and_without_the_prompt(
    name: str, on: dict[str, Any], off: dict[str, Any] | None
) -> None:
    """The detected parser reads what the model writes after the template's own prompt, whether
    the engine passes that prompt (trisect serve, trisect's vLLM plugin) or not (vLLM's own
    parsers read only the switch) — unless the detection says the format needs the prompt: its
    own initial state contradicts one of the template's (then only with the prompt)."""
    template = load_template(TEMPLATES / name)
    part = detected(name).reasoning_part
    parser = detected(name).parser()
    needs_prompt = "contradicts the prompt" in part.evidence[-1]
    assert needs_prompt == (name == "Qwen-QwQ-32B.jinja")  # llama.cpp's switch, default off
    prompt = template.render(USER, add_generation_prompt=True, **on)
    opened = prompt.rstrip().endswith("<think>")
    output = ("" if opened else "<think>") + "Let me look it up.</think>\n\nIt is sunny."
    for prompt_text in (prompt, None):
        msg = parser.parse(output, prompt_text=prompt_text, chat_template_kwargs=on)
        assert (msg.reasoning, msg.content) == ("Let me look it up.", "It is sunny."), prompt_text
    if off is not None:
        prompt = template.render(USER, add_generation_prompt=True, **off)
        for prompt_text in (prompt,) if needs_prompt else (prompt, None):
            msg = parser.parse("It is sunny.", prompt_text=prompt_text, chat_template_kwargs=off)
            assert (msg.reasoning, msg.content) == (None, "It is sunny."), prompt_text


def test_a_format_that_needs_the_prompt_is_confirmed_with_lower_confidence() -> None:
    """The QwQ copy: deepseek_r1 also parses every render given the prompt, but its own initial
    state (always reasoning) contradicts both prompts that closed the block, so it ranks below
    qwen3, which contradicts only the default one; and qwen3 needs the prompt for that one."""
    part = detected("Qwen-QwQ-32B.jinja").reasoning_part
    assert part.name == "qwen3" and "deepseek_r1" in part.passed and "deepseek_r1" not in part.alternatives
    assert "contradicts the prompt under default" in part.evidence[-1]
    assert part.confidence < HIGH_CONFIDENCE


# ---------------------------------------------------------------------- unknown, never wrong

TOY = """{%- for m in messages -%}
{%- if m.role == 'user' -%}<<user>>{{ m.content }}<<end>>
{%- elif m.role == 'assistant' -%}<<model>>{{ m.content }}
{%- for c in m.tool_calls or [] -%}
CALL {{ c.function.name }} WITH{% for k, v in c.function.arguments.items() %} {{ k }}:{{ v }};{% endfor %}

{%- endfor -%}<<end>>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<<model>>{%- endif -%}"""


def test_an_unsupported_family_is_unknown_with_its_evidence() -> None:
    """A family no format and no builder covers (arguments as `key:value;` after CALL … WITH)."""
    d = detect(TOY)
    assert d.tools_status == UNKNOWN and d.tools is None and d.tools_spec is None
    assert d.reasoning_status == NONE
    assert d.unknown and d.confidence == 0.0 and d.vllm_flags() == []
    assert any("CALL zq_alpha WITH" in e for e in d.tools_part.evidence)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Kimi-K2-Instruct.jinja", "tools"),  # the name region carries the call index: functions.NAME:0
        ("GLM-4.7-Flash.jinja", "tools"),  # keys and values in separate tags: no builder for that
        ("openai-gpt-oss-120b.jinja", "tools"),  # Harmony headers need Python
        ("openai-gpt-oss-120b.jinja", "reasoning"),
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", "tools"),  # a bare envelope: nothing marks a call
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "tools"),  # a JSON list with call ids
        # its final turns drop the reasoning and its prompt always opens the block: no turn of its
        # own to check a format built from the markers against
        ("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "reasoning"),
    ],
)
def test_a_family_removed_from_the_catalogue_that_no_builder_rebuilds_is_unknown(name: str, kind: str) -> None:
    first = detected(name)
    part = first.reasoning_part if kind == "reasoning" else first.tools_part
    formats = [f for f in all_formats() if not (f.kind == kind and f.name in part.passed)]
    d = detect(TEMPLATES / name, formats=formats)
    again = d.reasoning_part if kind == "reasoning" else d.tools_part
    assert again.status == UNKNOWN and again.name is None and again.spec is None


def test_granite_33_is_unknown_and_says_what_its_prompt_asks_for() -> None:
    d = detected("ibm-granite-granite-3.3-2B-Instruct.jinja")
    assert "thinking=true" in d.reasoning_part.evidence[0]
    assert d.tools_part.suggested[0] == "granite"  # its prompt asks for <|tool_call|> and a JSON list


# ---------------------------------------------------------------------- sources


def test_every_source_kind(tmp_path: Path) -> None:
    text = (TEMPLATES / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    config = {"chat_template": text, "eos_token": "<|im_end|>", "added_tokens_decoder": {}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    model = tmp_path / "model"
    model.mkdir()
    (model / "chat_template.jinja").write_text(text, encoding="utf-8")
    gguf = tmp_path / "m.gguf"
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]
    write_metadata(
        gguf,
        {
            "general.architecture": "qwen3",
            "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [3] * 3 + [4] * 4,
            "tokenizer.ggml.eos_token_id": 2,
            "tokenizer.chat_template": text,
        },
    )
    for source in (text, TEMPLATES / "Qwen-Qwen3-0.6B.jinja", tmp_path / "tokenizer_config.json", model, gguf):
        d = detect(source)
        assert (d.reasoning, d.tools) == ("qwen3", "hermes"), source
    assert detect(load_template(gguf)).tools == "hermes"


def test_the_detection_as_json() -> None:
    data = json.loads(detected("Qwen-Qwen3-0.6B.jinja").to_json())
    assert data["reasoning"]["name"] == "qwen3" and data["tools"]["name"] == "hermes"
    assert data["vllm_flags"] == "--reasoning-parser qwen3 --tool-call-parser hermes --enable-auto-tool-choice"
    assert data["reasoning"]["status"] == "confirmed"
    # mimo, olmo3, nemotron_v3 … read Qwen3's renders as well: the documented order chose
    assert data["reasoning"]["decided_by"] == "documented order" and "mimo" in data["reasoning"]["alternatives"]
    assert data["confidence"] == min(data["reasoning"]["confidence"], data["tools"]["confidence"]) < 1.0


def test_trisect_detect_is_public() -> None:
    assert trisect.detect is detect and "detect" in trisect.__all__


# ---------------------------------------------------------------------- the tie-break policy


def test_ties_are_broken_by_family_then_documented_order() -> None:
    granite = detected("ibm-granite-granite-4.0.jinja").tools_part
    assert granite.name == "granite4" and {"hermes", "ernie45"} <= set(granite.alternatives)
    hermes = detected("Qwen-Qwen2.5-7B-Instruct.jinja").tools_part
    assert hermes.name == "hermes" and "granite4" in hermes.alternatives
    kimi = detected("Kimi-K2-Thinking.jinja").reasoning_part  # paired with the kimi_k2 tool format
    assert kimi.name == "kimi_k2" and "qwen3" in kimi.alternatives
    glm = detected("GLM-4.6.jinja").reasoning_part  # glm45 and glm47 are one class in vLLM
    assert glm.name == "glm45" and "glm47" in glm.alternatives
    assert reasoning_format("glm45") is not reasoning_format("glm47") and tool_format("glm45") is tool_format("glm47")


# ---------------------------------------------------------------------- the command


def test_the_detect_command_prints_json_and_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from trisect.cli.main import main

    out = io.StringIO()
    assert main(["detect", str(TEMPLATES / "GLM-4.7-Flash.jinja")], out=out) == 0
    data = json.loads(out.getvalue())
    assert data["reasoning"]["name"] == "glm45" and data["tools"]["name"] == "glm47"
    out = io.StringIO()
    assert main(["detect", str(TEMPLATES / "GLM-4.7-Flash.jinja"), "--flags"], out=out) == 0
    assert out.getvalue() == "--reasoning-parser glm45 --tool-call-parser glm47 --enable-auto-tool-choice\n"
    # glm45 and glm47 read GLM's <think> block alike: said on stderr, kept out of the flags
    assert "reasoning glm45 at confidence 0.5 (chosen by documented order; glm47" in capsys.readouterr().err
    out = io.StringIO()
    assert main(["detect", str(TEMPLATES / "openai-gpt-oss-120b.jinja"), "--flags"], out=out) == 0
    assert "--reasoning-parser openai_gptoss" in out.getvalue() and capsys.readouterr().err == ""


# ---------------------------------------------------------------------- the shells


def test_serve_detects_the_formats_when_none_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    from trisect.serve.model import load_model

    template = str(TEMPLATES / "GLM-4.7-Flash.jinja")
    served = load_model(model=None, chat_template=template)
    assert (served.parser.reasoning, served.parser.tools) == ("glm45", "glm47")
    assert served.reasoning_end == ("</think>",)
    assert "detected from the chat template: reasoning glm45, tools glm47" in capsys.readouterr().err
    named = load_model(model=None, chat_template=template, reasoning_parser="qwen3")
    assert (named.parser.reasoning, named.parser.tools) == ("qwen3", None)  # a named format: no detection


def test_detection_names_what_serve_uses_for_its_own_template() -> None:
    """serve's template for the default model (qwen3 reasoning, hermes calls) is read as those
    two: ChatML's markers, Qwen3's block and switch names, Hermes' calls. Its default (thinking
    off) is the generation prompt's to say, which serve passes: qwen3 needs it."""
    from trisect.serve import default_model

    d = detect(default_model.chat_template())
    assert (d.reasoning, d.tools) == (default_model.REASONING_PARSER, default_model.TOOL_CALL_PARSER)
    assert "contradicts the prompt under default" in d.reasoning_part.evidence[-1]
    parser = d.parser()
    template = default_model.chat_template()
    for kwargs, output, want in (
        ({}, "It is sunny.", (None, "It is sunny.")),
        ({"enable_thinking": True}, "Look it up.\n</think>\n\nIt is sunny.", ("Look it up.", "It is sunny.")),
    ):
        prompt = template.render(USER, add_generation_prompt=True, **kwargs)
        msg = parser.parse(output, prompt_text=prompt, chat_template_kwargs=kwargs)
        assert (msg.reasoning, msg.content) == want


def test_a_tokenizer_object_that_carries_its_template() -> None:
    """What an engine plugin holds: a transformers-style tokenizer (chat_template, bos/eos,
    get_added_vocab)."""

    class Tokenizer:
        chat_template = (TEMPLATES / "Kimi-K2-Thinking.jinja").read_text(encoding="utf-8")
        bos_token, eos_token = "[BOS]", "<|im_end|>"

        def get_added_vocab(self) -> dict[str, int]:
            return {"<|im_end|>": 163586, "<think>": 163606, "</think>": 163607}

    d = detect(Tokenizer())
    assert (d.reasoning, d.tools) == ("kimi_k2", "kimi_k2")
    assert detect(Tokenizer()) is d  # cached per template and catalogue
    with pytest.raises(trisect.TemplateError, match="no chat template"):
        detect(object())
