"""The fuzzer's harness: ``trisect.testing``'s checks for any output, and the fuzz jobs themselves.

``check_nothing_lost`` counts text inside a call as consumed only where the call carries it;
``check_output`` and ``check_ids_agree`` hold any output (no expected message) to the contract;
the fuzzer's split, mutation and id jobs (``tests/fuzz/``) run on a few cases here, with fixed
seeds, so the CI step (``.ci/run``'s fuzz step) cannot break unseen.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz import corpus, oracle
from fuzz.minimise import shrink
from support import tokenizers as tk
from trisect import Parser
from trisect.engine.trace import Span
from trisect.message.types import Message, ToolCall
from trisect.testing import CaseFailure, check_ids_agree, check_output, losses, structure_words


def test_text_inside_a_call_counts_only_where_the_call_carries_it() -> None:
    """A call span used to cover all of its text: a word in it that no name or argument holds
    (here a block's junk before the invoke) was "inside a call" and passed."""
    output = '<t>junk<i name="f"><p name="q">cats</p></i></t>'
    call = ToolCall(id="call_0", name="f", arguments='{"q": "cats"}')
    spans = [Span("call", 0, len(output))]
    words = structure_words(Parser(None, "deepseek_v4").spec)
    found = losses(
        output, Message(tool_calls=(call,)), spans, markers=["<t>", "</t>", "<i ", "</i>", "<p ", "</p>"], words=words
    )
    assert found and found[0].startswith("call: ['junk']")
    carried = '<t><i name="f"><p name="q">cats</p></i></t>'
    assert (
        losses(
            carried,
            Message(tool_calls=(call,)),
            [Span("call", 0, len(carried))],
            markers=["<t>", "</t>", "<i ", "</i>", "<p ", "</p>"],
            words=words,
        )
        == []
    )


@pytest.mark.parametrize(
    ("fmt", "output", "markup"),
    [
        # an id written after the name (Mistral Nemo's template writes it last): quoted whole
        ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {"q": "cats"}, "id": " a9 Zq"}]', " a9 Zq"),
        # Harmony's content type, any word (gpt-oss template: "commentary " + content_type)
        ("openai", '<|channel|>commentary to=functions.f yaml<|message|>{"q": "cats"}<|call|>', "yaml"),
    ],
)
def test_a_calls_markup_that_no_field_carries_is_consumed_and_nothing_else(fmt: str, output: str, markup: str) -> None:
    """A call's identity attribute with its value (one after the name is not used: a call's id
    is decided when it is announced) and Harmony's content type are markup; a word put next to
    them is still found lost."""
    call = ToolCall(id="call_0", name="f", arguments='{"q": "cats"}')
    spec = Parser(None, fmt).spec
    markers = [s for values in spec.terminals.values() for s in values if s]
    words = structure_words(spec)

    def found(text: str) -> list[str]:
        return losses(text, Message(tool_calls=(call,)), [Span("call", 0, len(text))], markers=markers, words=words)

    assert found(output) == []
    lost = output.replace(markup, markup + " stray", 1) if fmt == "openai" else output.replace("}, ", "}, lostword ", 1)
    assert found(lost)  # two words where the template writes one, a word beside the id: one is lost


def test_check_output_holds_a_real_output_to_the_contract() -> None:
    parser = Parser("qwen3", "hermes", tokenizer=tk.load("qwen3"))
    text = '<think>plan</think>Sure.<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    assert check_output(parser, text, tk.encode("qwen3", text), seed=1, cuts=3) > 20


def test_check_ids_agree_finds_text_that_tells_another_story() -> None:
    parser = Parser("qwen3", None, tokenizer=tk.load("qwen3"))
    ids = tk.encode("qwen3", "<think>a</think>b")
    assert check_ids_agree(parser, None, ids).content == "b"
    with pytest.raises(CaseFailure):  # text alone says "c", its ids say "b"
        check_ids_agree(parser, "<think>a</think>c", ids)


def test_shrink_keeps_what_still_fails() -> None:
    assert shrink(list("xxaxxbxx"), lambda s: "a" in s and "b" in s) == ["a", "b"]


@pytest.mark.parametrize("seed", range(6))
def test_the_fuzz_jobs_run_on_a_few_cases(seed: int) -> None:
    """A handful of the CI step's jobs (split, mutation, ids) on seeded picks of the cases:
    the jobs run, and what they find is a Finding with a replayable line (never a crash)."""
    rng = random.Random(seed)
    items = [i for i in corpus.items() if i.tokenizer]
    item = rng.choice(items)
    for job in (oracle.split_job, oracle.mutation_job):
        try:
            assert sum(job(item, rng).values()) > 0
        except oracle.Finding as finding:
            assert finding.line and finding.kind in ("split", "mutation")
    try:
        assert oracle.ids_job(item.tokenizer or "", rng, item=item)["id_sequences"] == 1
    except oracle.Finding as finding:
        assert finding.line["token_ids"] is not None


def test_text_no_tokenizer_can_write_has_no_ids_and_stops_no_worker() -> None:
    """A mutation may leave a lone surrogate; every tokenizer of the cases must answer ``None``
    for it, never raise (SentencePiece raised RuntimeError and killed a CI fuzz worker)."""
    for name in corpus.tokenizer_names():
        assert corpus.encode(name, "a\ud800b") is None, name


def test_the_fuzz_step_fails_when_it_did_not_run(tmp_path: Path) -> None:
    """The CI step's driver, on one case: it covers the case and its tokenizer, reports its
    volume, and exits 2 (CI fails) because it spent less CPU than it was asked to."""
    run = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "fuzz" / "run.py"), "--workers", "1", "--cpu-minutes", "0.01"]
        + ["--min-cpu-minutes", "5", "--limit", "1", "--seed", "3", "--out", str(tmp_path / "findings.jsonl")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "::: fuzz volume:" in run.stdout and "1/1 cases cut, 1/1 mutated, 1/1 tokenizers" in run.stdout
    assert "did not run as asked" in run.stdout
