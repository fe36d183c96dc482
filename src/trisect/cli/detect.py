"""``trisect detect PATH``: the formats a chat template implies, as JSON, and the vLLM flags.

    trisect detect MODEL_DIR|tokenizer_config.json|template.jinja|model.gguf [--flags]
    trisect detect PATH --emit-toml FORMAT.toml [--synthesise]

``--flags`` prints only the ``vllm serve`` flags (``--reasoning-parser X --tool-call-parser Y
--enable-auto-tool-choice``), for ``vllm serve M $(trisect detect M --flags)``, and says on stderr
which of them detection is not sure of (below ``HIGH_CONFIDENCE``). ``--emit-toml``
writes the formats detection synthesised as format files (``FORMAT-reasoning.toml`` and
``FORMAT-tools.toml`` when both were; ``-``: stdout); ``--synthesise`` builds them from the
template even where a registered format fits, as a starting point to edit. A thin shell over
``trisect.detect``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from ..errors import TrisectError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = sub.add_parser("detect", help="the reasoning and tool-call formats a chat template implies")
    d.add_argument("source", help="a model directory, tokenizer_config.json, chat_template.jinja or GGUF file")
    d.add_argument("--flags", action="store_true", help="print only the vllm serve flags the detection implies")
    d.add_argument("--emit-toml", metavar="FILE", help="write the synthesised formats as format files (- : stdout)")
    d.add_argument(
        "--synthesise", action="store_true", help="build the formats from the template, ignoring registered ones"
    )
    d.set_defaults(func=cmd_detect)


def cmd_detect(args: argparse.Namespace, out: TextIO) -> int:
    from ..detect import CONFIRMED, SYNTHESISED, detect
    from ..detect.emit import format_toml
    from ..detect.result import HIGH_CONFIDENCE

    detection = detect(args.source, formats=() if args.synthesise else None)
    if args.emit_toml:
        parts = [p for p in (detection.reasoning_part, detection.tools_part) if p.status == SYNTHESISED]
        if not parts:
            raise TrisectError(
                "nothing was synthesised: the template's formats are registered ones"
                f" ({' '.join(detection.vllm_flags()) or 'or unknown'}); --synthesise builds them anyway"
            )
        for part in parts:
            if part.spec is None:
                continue
            comment = [
                f"{part.spec.kind} format synthesised by `trisect detect` from {detection.source or 'a template'}",
                f"(passed {part.trials} trials). Load it with trisect.load_format(path) or",
                "`trisect parse --format-file`; keys: docs/CONTRIBUTING-FORMATS.md. What the renders showed:",
                *(f"  {line}" for line in part.evidence),
            ]
            text = format_toml(part.spec, comment=comment)
            if args.emit_toml == "-":
                out.write(text + "\n")
                continue
            path = Path(args.emit_toml)
            if len(parts) > 1:
                path = path.with_name(f"{path.stem}-{part.spec.kind}{path.suffix or '.toml'}")
            path.write_text(text, encoding="utf-8")
            sys.stderr.write(f"trisect: wrote {path}\n")
        if args.emit_toml == "-":
            return 0
    if args.flags:
        out.write(" ".join(detection.vllm_flags()) + "\n")
        for label, part in (("reasoning", detection.reasoning_part), ("tools", detection.tools_part)):
            if part.status == CONFIRMED and part.confidence < HIGH_CONFIDENCE:
                others = f"; {', '.join(part.alternatives[:3])} read it alike" if part.alternatives else ""
                sys.stderr.write(
                    f"trisect: {label} {part.name} at confidence {part.confidence:.1f}"
                    f" (chosen by {part.decided_by}{others}): check the model's documentation\n"
                )
    else:
        out.write(detection.to_json() + "\n")
    return 0
