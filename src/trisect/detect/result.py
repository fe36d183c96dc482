"""``Detection``: the formats a chat template implies, how sure detection is, and why.

Each of the two parts (reasoning, tools) has a status:

* ``confirmed``: a registered format parsed every trial back to the sentinels;
* ``synthesised``: no registered format did, but the renders isolated the structure and a format
  built from it passed every trial and parses the template's own turns back exactly (``spec``
  holds it; ``--emit-toml`` writes it);
* ``none``: the template shows no reasoning / renders no tool calls and reads no tools;
* ``unknown``: the template shows there is something (a thinking switch, a tool prompt, markers)
  but no format confirmed: detection says so rather than guess.

``Detection.confidence`` is the lower of the two parts' (``confidence``: 1.0 only for a format the
template rendered exactly and no other registered format matched; below that, the level measured
on held-out templates for parts decided the same way).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.spec import FormatSpec
from ..errors import DetectionError

CONFIRMED = "confirmed"
SYNTHESISED = "synthesised"
NONE = "none"
UNKNOWN = "unknown"

# a part at or above this confidence is one detection stands behind (tests/test_detect_heldout.py)
HIGH_CONFIDENCE = 0.8


@dataclass(frozen=True)
class Part:
    """The detection of one of the two formats."""

    status: str
    name: str | None = None
    spec: FormatSpec | None = None
    confidence: float = 0.0
    # other formats that passed every trial and rank level with this one until sniffing or the
    # documented order (``priority``) broke the tie, best first
    alternatives: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()  # every registered format that passed every trial, best first
    trials: int = 0
    evidence: tuple[str, ...] = ()
    suggested: tuple[str, ...] = ()  # unknown: registered formats whose markers the template mentions
    regions: tuple[Any, ...] = ()  # tools: the call regions the format was confirmed on
    decided_by: str = ""  # confirmed: the ranking step that chose it over the next (``priority``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "confidence": self.confidence,
            "alternatives": list(self.alternatives),
            "passed": list(self.passed),
            "trials": self.trials,
            "decided_by": self.decided_by,
            "suggested": list(self.suggested),
            "evidence": list(self.evidence),
        }


_FLAGS = {"reasoning": "--reasoning-parser NAME", "tools": "--tool-call-parser NAME"}  # vLLM's (serve's) options


@dataclass(frozen=True)
class Detection:
    """What ``trisect.detect(source)`` found. ``reasoning`` / ``tools``: format names (``None``:
    none, or unknown: see ``reasoning_status`` / ``tools_status``); ``parser()`` builds the
    ``Parser`` (synthesised formats included)."""

    reasoning_part: Part
    tools_part: Part
    source: str = ""
    evidence: tuple[str, ...] = field(default=())

    @property
    def reasoning(self) -> str | None:
        return self.reasoning_part.name

    @property
    def tools(self) -> str | None:
        return self.tools_part.name

    @property
    def reasoning_status(self) -> str:
        return self.reasoning_part.status

    @property
    def tools_status(self) -> str:
        return self.tools_part.status

    @property
    def reasoning_spec(self) -> FormatSpec | None:
        return self.reasoning_part.spec

    @property
    def tools_spec(self) -> FormatSpec | None:
        return self.tools_part.spec

    @property
    def confidence(self) -> float:
        return min(self.reasoning_part.confidence, self.tools_part.confidence)

    @property
    def unknown(self) -> bool:
        return UNKNOWN in (self.reasoning_status, self.tools_status)

    def parser(self, **kwargs: Any) -> Any:
        """``Parser(reasoning=…, tools=…)`` for the detected formats (an unknown part is left out)."""
        from ..parser import Parser

        return Parser(reasoning=self.reasoning_spec, tools=self.tools_spec, **kwargs)

    def summary(self) -> str:
        """One line for a shell to log: each part's name (or its status), and the status where a
        name was not confirmed (``reasoning qwen3, tools synth-tools (synthesised)``)."""
        shown = []
        for label, part in (("reasoning", self.reasoning_part), ("tools", self.tools_part)):
            text = f"{label} {part.name or part.status}"
            shown.append(f"{text} ({part.status})" if part.name and part.status != CONFIRMED else text)
        return ", ".join(shown)

    def require(self, parts: Iterable[str] = ("reasoning", "tools"), *, flags: Mapping[str, str] = _FLAGS) -> None:
        """``DetectionError`` if one of ``parts`` (``"reasoning"``, ``"tools"``) is unknown: for a
        shell that must not run without it. The message names the option that names the part
        (``flags``: part -> the option as the user writes it, ``--tools NAME``) and the formats
        the template's markers suggest."""
        unknown = []
        for name in parts:
            part = self.reasoning_part if name == "reasoning" else self.tools_part
            if part.status == UNKNOWN:
                what = "reasoning format" if name == "reasoning" else "tool-call format"
                hint = f", its markers suggest {' or '.join(part.suggested)}" if part.suggested else ""
                unknown.append(f"a {what} detection cannot confirm (pass {flags.get(name, name)}{hint})")
        if unknown:
            raise DetectionError(
                f"the chat template of {self.source or 'the model'} shows {' and '.join(unknown)}; "
                "`trisect detect` shows the evidence"
            )

    def vllm_flags(self) -> list[str]:
        """The ``vllm serve`` flags the detection implies (registered formats only)."""
        flags: list[str] = []
        if self.reasoning_status == CONFIRMED and self.reasoning:
            flags += ["--reasoning-parser", self.reasoning]
        if self.tools_status == CONFIRMED and self.tools:
            flags += ["--tool-call-parser", self.tools, "--enable-auto-tool-choice"]
        return flags

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "reasoning": self.reasoning_part.to_dict(),
            "tools": self.tools_part.to_dict(),
            "confidence": self.confidence,
            "vllm_flags": " ".join(self.vllm_flags()),
            "evidence": list(self.evidence),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
