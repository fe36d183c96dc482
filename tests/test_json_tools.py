"""JSON-bodied tool formats: what the case files cannot show.

Call ids in the family's style (the replay harness fixes ids with ``id_factory``), the
``history_tool_calls`` request option, and the tokenizers the case files use, checked against
published test vectors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import tokenizers
from trisect import Parser
from trisect.errors import RequestError

DATA = Path(__file__).resolve().parent / "data" / "tokenizers"


def test_mistral_ids_are_nine_alphanumerics_unless_written() -> None:
    out = '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}[TOOL_CALLS]get_time[CALL_ID]Ab3dE6gH9[ARGS]{}'
    first, second = Parser(None, "mistral").parse(out).tool_calls
    assert re.fullmatch(r"[A-Za-z0-9]{9}", first.id)
    assert second.id == "Ab3dE6gH9"


def test_kimi_ids_continue_the_history_count() -> None:
    out = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time<|tool_call_argument_begin|>{}"
        "<|tool_call_end|><|tool_call_begin|>functions.get_weather:9<|tool_call_argument_begin|>{}"
        "<|tool_call_end|><|tool_call_begin|>get_time<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    )
    msg = Parser(None, "kimi_k2").parse(out, history_tool_calls=5)
    assert [(c.name, c.id) for c in msg.tool_calls] == [
        ("get_time", "functions.get_time:5"),
        ("get_weather", "functions.get_weather:9"),
        ("get_time", "functions.get_time:7"),
    ]
    assert Parser(None, "kimi_k2").parse(out).tool_calls[0].id == "functions.get_time:0"


@pytest.mark.parametrize("bad", [-1, "2", 1.5, True])
def test_history_tool_calls_is_validated(bad: object) -> None:
    with pytest.raises(RequestError):
        Parser(None, "kimi_k2").parse("", history_tool_calls=bad)


def test_default_ids_elsewhere() -> None:
    msg = Parser(None, "llama3_json").parse('{"name": "f", "parameters": {}}')
    assert msg.tool_calls[0].id.startswith("call_")


def _vectors(name: str) -> list[tuple[str, list[int]]]:
    inp = (DATA / "test-vectors" / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8")
    out = (DATA / "test-vectors" / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8")
    texts = inp.split("\n__ggml_vocab_test__\n")[:-1]
    ids = [[int(x) for x in line.split()] for line in out.split("\n")[: len(texts)]]
    return list(zip(texts, ids, strict=True))


def test_llama3_tokenizer_matches_llama_cpp_vectors() -> None:
    tok = tokenizers.load("llama3")
    vectors = _vectors("llama-bpe")
    assert len(vectors) == 46
    for text, ids in vectors:
        assert tok.encode(text, disallowed_special=()) == ids, text


def test_llama_special_ids() -> None:
    assert tokenizers.encode("llama3", "<|python_tag|><|eom_id|><|eot_id|>") == [128010, 128008, 128009]
    assert tokenizers.encode("llama4", "<|python_start|><|python_end|><|eot|>") == [200016, 200017, 200008]


def test_mistral_v3_tokenizer_matches_mistral_common_vector() -> None:
    tok = tokenizers.load("mistral")
    sample = json.loads((DATA / "mistral" / "test-vectors" / "parallel_calls" / "tokens_v3.json").read_text("utf-8"))
    ids = sample["tokens"]
    text = tok.decode(ids)
    assert text.startswith("<s>[INST]")
    assert tok.encode(text[len("<s>") :]).ids == ids[1:]
    assert tokenizers.encode("mistral", "[TOOL_CALLS]")[0] == 5
