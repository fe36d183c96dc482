"""``trisect detect PATH``: the formats a chat template implies, as JSON, and the vLLM flags.

    trisect detect MODEL_DIR|tokenizer_config.json|template.jinja|model.gguf [--flags]

``--flags`` prints only the ``vllm serve`` flags (``--reasoning-parser X --tool-call-parser Y
--enable-auto-tool-choice``), for ``vllm serve M $(trisect detect M --flags)``. A thin shell over
``trisect.detect``.
"""

from __future__ import annotations

import argparse
from typing import TextIO


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = sub.add_parser("detect", help="the reasoning and tool-call formats a chat template implies")
    d.add_argument("source", help="a model directory, tokenizer_config.json, chat_template.jinja or GGUF file")
    d.add_argument("--flags", action="store_true", help="print only the vllm serve flags the detection implies")
    d.set_defaults(func=cmd_detect)


def cmd_detect(args: argparse.Namespace, out: TextIO) -> int:
    from ..detect import detect

    detection = detect(args.source)
    if args.flags:
        out.write(" ".join(detection.vllm_flags()) + "\n")
    else:
        out.write(detection.to_json() + "\n")
    return 0
