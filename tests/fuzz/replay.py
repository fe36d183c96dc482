"""A finding as a self-contained JSON line, replayed and shrunk.

A line carries the formats, the tokenizer's name, the request (tools, options), the job
(``kind``) and its input: the mutated ``output`` (with ``seed``, which fixes the cuts) or the
``token_ids``; split findings name their ``case`` and ``seed`` (a case file's case, with its
expected message). ``replay(line)`` runs that job again and raises ``Finding`` as it did;
``shrunk(finding)`` is the finding's line with the smallest input ``minimise.shrink`` found
that still fails the same way (``same_class``).
"""

from __future__ import annotations

import random
from typing import Any

from . import corpus, oracle
from .minimise import shrink

# what a failure is about, from its message: two failures with the same word are one class
_CLASSES = (
    "nothing-lost",
    "json.loads",
    "strict=True",
    "took ids",
    "reasoning_tracker",
    "consumed",
    "call index",
    "sent twice",
    "lacks name",
    "unfinished call",
    "not a non-empty",
    "!= parse(text, ids)",
    "!= parse()",
)


def same_class(a: oracle.Finding, b: oracle.Finding) -> bool:
    return a.kind == b.kind and a.check == b.check and _class(a.detail) == _class(b.detail)


def _class(detail: str) -> str:
    return next((c for c in _CLASSES if c in detail), detail[:40])


def _item(line: dict[str, Any]) -> corpus.Item:
    if line.get("kind") == "split":
        found = [i for i in corpus.items() if i.key == line["case"]]
        if found:
            return found[0]
    data = {k: line.get(k) for k in ("reasoning", "tools_format", "tokenizer", "tools", "options")}
    data["output"] = line.get("base_output") or line.get("output") or ""
    return corpus.Item(line.get("case", "regression"), data)


def replay(line: dict[str, Any]) -> oracle.Volume:
    """Run the line's job on its input; raises ``Finding`` if it still fails."""
    item = _item(line)
    kind = line.get("kind")
    rng = random.Random(line.get("seed", 0))
    if kind == "split":
        return oracle.split_job(item, rng)
    if kind == "ids":
        return oracle.ids_job(item.tokenizer or "", rng, ids=list(line["token_ids"]), item=item)
    return oracle.mutation_job(
        item, rng, text=line["output"], seed=line.get("seed", 0), token_ids=line.get("token_ids")
    )


def shrunk(finding: oracle.Finding) -> dict[str, Any]:
    """The finding's line, its input shrunk."""
    line = {**finding.line, "kind": finding.kind}

    def fails(candidate: dict[str, Any]) -> bool:
        try:
            replay(candidate)
        except oracle.Finding as again:
            return same_class(again, finding)
        return False

    if finding.kind == "mutation" and line.get("output") is not None:
        paired = line.get("token_ids") is not None and line.get("allow") is None  # ids of the text itself

        def text_fails(chars: Any) -> bool:
            text = "".join(chars)
            ids = corpus.encode(line["tokenizer"], text) if paired else line.get("token_ids")
            if paired and ids is None:
                return False
            return fails({**line, "output": text, "token_ids": ids})

        text = "".join(shrink(list(line["output"]), text_fails, budget=300))
        line["output"] = text
        if paired:
            line["token_ids"] = corpus.encode(line["tokenizer"], text)
    elif finding.kind == "ids":
        line["token_ids"] = shrink(list(line["token_ids"]), lambda ids: fails({**line, "token_ids": list(ids)}), 300)
    return line
