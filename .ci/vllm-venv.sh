#!/usr/bin/env bash
# Build the CPU-only vLLM 0.33 venv in which trisect's vLLM plugin tests and bench run.
#
#   .ci/vllm-venv.sh DIR      # DIR outside the repository; wiped and rebuilt (CI: once per run)
#
# The recipe (vLLM's own parsers and serving code on CPU, no model, no GPU stack): vLLM installed
# --no-deps, the CPU torch, xgrammar, and the dependencies the parser and serving path import; plus llguidance (vLLM's
# structured-output manager and `vllm serve`'s argument parser import it), pytest, and trisect
# itself (--no-deps -e: the checkout under test). pip prints "vllm 0.33.0 requires ..., which is
# not installed" for the CUDA stack: expected, pip still exits 0. The import check fails loudly.
# TORCH_SPEC (default torch==2.13.0) resolves to the CPU build where the CPU wheel is on disk
# (this machine kind: /opt/wheels); elsewhere pass a CPU index, e.g.
#   PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
set -euo pipefail
V=${1:?usage: vllm-venv.sh DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$(cd "$(dirname "$V")" 2>/dev/null && pwd)/" in "$ROOT"/*) echo "vllm-venv.sh: $V is inside the repository" >&2; exit 1;; esac
PY=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
DEPS=(
  "transformers>=5.16.1,<5.21.0" "tokenizers>=0.23.2" "pydantic>=2.12.0"
  "openai>=2.25.0" regex partial-json-parser msgspec numpy cachetools psutil pyyaml cbor2 pyzmq
  "requests>=2.33.0" "aiohttp>=3.14.4" "oss-harmony>=0.0.11" "fastapi>=0.133.0,<0.137.0" pillow
  pybase64 blake3 prometheus_client cloudpickle uvloop py-cpuinfo ijson "mistral_common>=1.11.6"
  "llguidance>=1.7,<1.8" tiktoken "pytest>=8" httpx
)
CHECK='
import vllm, vllm.parser, vllm.reasoning, vllm.tool_parsers, vllm.plugins
from vllm.parser import ParserManager
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.v1.engine.detokenizer import IncrementalDetokenizer
from vllm.v1.structured_output import StructuredOutputManager
import trisect.integrations.vllm
assert vllm.__version__.startswith("0.33."), vllm.__version__
print("vllm", vllm.__version__, "import check ok")
'
die() { echo "vllm-venv.sh: FAILED: $*" >&2; exit 1; }
rm -rf "$V"
mkdir -p "$(dirname "$V")"
"$PY" -m venv "$V"                                                       || die "python3 -m venv"
"$V/bin/pip" install -q -U pip                                           || die "pip upgrade"
"$V/bin/pip" install -q --no-deps vllm==0.33.0                           || die "vllm"
"$V/bin/pip" install -q "$TORCH_SPEC"                                    || die "torch"
"$V/bin/pip" install -q --no-deps xgrammar==0.2.8 "apache-tvm-ffi>=0.1.11" || die "xgrammar"
"$V/bin/pip" install -q "${DEPS[@]}"                                     || die "dependencies"
"$V/bin/pip" install -q --no-deps -e "$ROOT"                             || die "trisect"
VLLM_LOGGING_LEVEL=ERROR VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 "$V/bin/python" -c "$CHECK" || die "import check"
echo "vllm-venv.sh: $V ($(du -sh "$V" | cut -f1))"
