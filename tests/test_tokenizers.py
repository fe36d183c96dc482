"""The test tokenizers in tests/support/tokenizers.py reproduce the real vocabularies."""

from __future__ import annotations

import json

import pytest

from support import tokenizers as tk


@pytest.mark.parametrize(
    ("text", "ids"),
    tk.qwen2_test_vectors(),
    ids=[f"v{i:02d}" for i in range(len(tk.qwen2_test_vectors()))],
)
def test_qwen3_matches_llama_cpp_qwen2_vectors(text: str, ids: list[int]) -> None:
    assert tk.encode("qwen3", text) == ids
    assert tk.decode("qwen3", ids) == text


def test_qwen2_vectors_are_all_read() -> None:
    assert len(tk.qwen2_test_vectors()) == 46


def test_qwen3_regex_is_the_one_in_added_tokens_json() -> None:
    spec = json.loads((tk.QWEN_DIR / "added_tokens.json").read_text(encoding="utf-8"))
    assert spec["pat_str"] == tk.QWEN2_PAT_STR
    assert tk.load("qwen3").n_vocab == spec["base_vocab_size"] + len(spec["added_tokens"])


def test_qwen3_markers_are_single_ids() -> None:
    added = tk.qwen_added_tokens()
    # ids as listed in added_tokens.json (Qwen3 tokenizer_config added_tokens_decoder)
    assert added["<think>"] == 151667
    assert added["</think>"] == 151668
    assert added["<tool_call>"] == 151657
    assert added["</tool_call>"] == 151658
    assert added["<|im_end|>"] == 151645
    for marker, marker_id in added.items():
        assert tk.encode("qwen3", marker) == [marker_id]
    assert tk.encode("qwen3", "<think>\nhi</think>") == [151667, 198, 6023, 151668]


def test_qwen3_marker_as_ordinary_tokens() -> None:
    ids = tk.encode_ordinary("qwen3", "<tool_call>")
    assert len(ids) > 1
    assert not set(ids) & set(tk.qwen_added_tokens().values())
    assert tk.decode("qwen3", ids) == "<tool_call>"


def test_deepseek_v3_markers_are_single_ids() -> None:
    added = tk.deepseek_added_tokens()
    # ids as listed in tokenizer.json "added_tokens"
    assert added["<｜tool▁calls▁begin｜>"] == 128806
    assert added["<think>"] == 128798
    assert added["</think>"] == 128799
    assert added["<｜end▁of▁sentence｜>"] == 1
    for marker in (
        "<think>",
        "</think>",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
        "<｜end▁of▁sentence｜>",
    ):
        assert tk.encode("deepseek_v3", marker) == [added[marker]]


def test_deepseek_v3_marker_as_ordinary_tokens() -> None:
    ids = tk.encode_ordinary("deepseek_v3", "a </think> b <｜tool▁calls▁begin｜>")
    assert not set(ids) & set(tk.deepseek_added_tokens().values())
    assert tk.decode("deepseek_v3", ids) == "a </think> b <｜tool▁calls▁begin｜>"


def test_deepseek_v3_config_names_the_same_specials() -> None:
    config = json.loads((tk.DEEPSEEK_DIR / "tokenizer_config.json").read_text(encoding="utf-8"))
    added = tk.deepseek_added_tokens()
    assert added[config["bos_token"]["content"]] == 0
    assert added[config["eos_token"]["content"]] == 1
    assert "<｜tool▁calls▁begin｜>" in config["chat_template"]


@pytest.mark.parametrize("name", tk.NAMES)
@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hello world",
        "<think>\nLet me think.\n</think>\n\nThe answer is 4.",
        'Münster 北京 😀 {"a": [1, 2.5, null]}\n\t  end',
        "<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
    ],
)
def test_round_trip(name: str, text: str) -> None:
    assert tk.decode(name, tk.encode(name, text)) == text


def test_load_is_cached_and_rejects_unknown_names() -> None:
    assert tk.load("qwen3") is tk.load("qwen3")
    with pytest.raises(KeyError):
        tk.load("gpt2")
