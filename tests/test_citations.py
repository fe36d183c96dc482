"""Every citation in the source, the tests and the docs points at something a reader can open:
a file of this repository, or a primary source named by project (and version or commit).

Flagged: a path of this repository that does not exist (``docs/…``, ``tests/…``,
``src/trisect/…``, ``bench/…``, ``.ci/…``), and anything that only exists on the machine the
code was written on (a briefing such as ``FORMATS.md``, the shared folder beside the checkout,
this machine's working directories, notes, home directories). A path that belongs to another
project is fine when that project is named right before it (``vLLM
docs/features/tool_calling.md``, ``ggml-org/ggml docs/gguf.md``, ``llama-stack@<sha>:tests/…``).
Third-party files copied verbatim (templates, tokenizers, recorded outputs) are not scanned: they
are quoted, not written here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("src", "tests", "docs", "README.md")
COPIED = ("tests/data/templates/", "tests/data/tokenizers/", "tests/data/outputs/")
TEXT = {".py", ".md", ".json", ".jsonl", ".toml", ".txt", ".jinja", ".cfg", ".sh", ""}

# the places outside the repository a citation may not name: the briefing beside it, this
# machine's working directories, users' homes (each written as a pattern, not as the path itself)
_SHARED, _WORK, _NOTES = r"\.\./shar[e]d\b", r"(?<![\w.])/wor[k]/", r"/note[s]/"
OUTSIDE = re.compile(
    r"(?<![\w-])FORMATS\.md"  # the formats briefing (docs/CONTRIBUTING-FORMATS.md is ours)
    rf"|{_SHARED}|{_WORK}|{_NOTES}|(?<![\w.~])/(?:home|root|Users)/\w"
)
# a path of this repository as a citation writes it
OURS = re.compile(r"(?<![\w/.@:$~-])((?:docs|tests|src/trisect|bench|\.ci)/[\w./*<>{}-]*[\w*>}/])")
# what names another project right before one of its paths
OWNER = re.compile(
    r"(?:[\w.-]+/[\w.-]+|[\w.-]+@[0-9a-f]{7,40}:|vLLM|vllm|SGLang|sglang|llama\.cpp|transformers|"
    r"tiktoken|mistral-common|mistral_common|llama-stack|llama-models|xgrammar|ggml)[\s`'\"(|]*$"
)


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        found += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    rel = [p for p in found if "__pycache__" not in p.parts and not any(part.endswith(".egg-info") for part in p.parts)]
    here = Path(__file__).resolve()  # this file spells each kind out to test the check
    return [p for p in rel if p.suffix in TEXT and p != here and not str(p.relative_to(ROOT)).startswith(COPIED)]


def _exists(path: str) -> bool:
    cut = re.search(r"[*<>{}]", path)
    if cut:  # a pattern (tests/cases/<format>/*.jsonl): the folder before it must exist
        return (ROOT / path[: cut.start()].rpartition("/")[0]).is_dir()
    return (ROOT / path.rstrip("/")).exists()


def bad_citations(text: str) -> list[str]:
    """What in ``text`` points outside the repository, one entry per citation."""
    bad: list[str] = []
    for line in text.splitlines():
        bad += [m.group(0) for m in OUTSIDE.finditer(line)]
        for m in OURS.finditer(line):
            path = m.group(1).rstrip(".")
            if not _exists(path) and not OWNER.search(line[: m.start()]):
                bad.append(path)
    return bad


def test_no_citation_points_outside_the_repository() -> None:
    found = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(ROOT)}: {what}" for what in bad_citations(text)]
    assert not found, f"{len(found)} citations point outside the repository:\n" + "\n".join(found)


def test_the_check_finds_each_kind() -> None:
    assert bad_citations("see FORMATS.md qwen3") == ["FORMATS.md"]
    assert bad_citations("keys: docs/CONTRIBUTING-FORMATS.md") == []
    work, shared, notes = "/".join(("", "work", "")), "/".join(("..", "shared")), "/".join(("", "notes", ""))
    assert bad_citations(f"({work}shared/data, {shared}/bench)") == [work, shared]
    assert bad_citations(f"rules in {notes}vllm033/rules.md") == [notes]
    assert bad_citations("docs/no-such-page.md and docs/detect.md") == ["docs/no-such-page.md"]
    assert bad_citations("tests/cases/<format>/*.jsonl, tests/nowhere/*.py") == ["tests/nowhere/*.py"]
    assert bad_citations("vLLM docs/features/tool_calling.md; ggml-org/ggml ``docs/gguf.md``") == []
    assert bad_citations("llama-stack@d1b6632946ca:tests/integration/x.json") == []
