#!/usr/bin/env bash
# Build the CPU-only SGLang 0.5.23 venv in which trisect's SGLang plugin tests run (MINIMAL:
# only what SGLang's parser modules import; about 1.5 GB).
#
#   .ci/sglang-venv.sh DIR    # DIR outside the repository; wiped and rebuilt (CI: once per run)
#
# sglang is installed from its wheel with --no-deps (its dependency list is the CUDA serving
# stack). What is added is what sglang.srt.function_call.function_call_parser,
# sglang.srt.parser.reasoning_parser and sglang.srt.plugins import, at the versions sglang pins;
# torch is the CPU build (never install torch unpinned here: it resolves to the CUDA build).
# sglang/__init__.py imports the whole runtime (triton, ...), which this venv leaves out: code
# that imports SGLang's parser modules here first seeds a bare `sglang` package
# (tests/integrations/conftest.py does). Plus tiktoken (the test tokenizers), pytest, trisect.
set -euo pipefail
V=${1:?usage: sglang-venv.sh DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$(cd "$(dirname "$V")" 2>/dev/null && pwd)/" in "$ROOT"/*) echo "sglang-venv.sh: $V is inside the repository" >&2; exit 1;; esac
PY=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
DEPS=(
  msgspec "openai==2.8.0" numpy pybase64 requests IPython orjson partial-json-parser regex
  "transformers==5.19.0" "tokenizers==0.23.2" pydantic tiktoken "pytest>=8"
)
CHECK='
import importlib.util, sys, types
spec = importlib.util.find_spec("sglang")
pkg = types.ModuleType("sglang"); pkg.__path__ = list(spec.submodule_search_locations); pkg.__spec__ = spec
sys.modules["sglang"] = pkg
import sglang.srt.function_call.function_call_parser as fcp
import sglang.srt.parser.reasoning_parser as rp
import sglang.srt.plugins
import trisect.integrations.sglang
print("sglang parsers import check ok:", len(fcp.FunctionCallParser.ToolCallParserEnum), "tool parsers")
'
die() { echo "sglang-venv.sh: FAILED: $*" >&2; exit 1; }
rm -rf "$V"
mkdir -p "$(dirname "$V")"
"$PY" -m venv "$V"                                                        || die "python3 -m venv"
"$V/bin/pip" install -q -U pip                                            || die "pip upgrade"
"$V/bin/pip" install -q --no-deps sglang==0.5.23                          || die "sglang"
"$V/bin/pip" install -q "$TORCH_SPEC"                                     || die "torch"
"$V/bin/pip" install -q --no-deps xgrammar==0.2.7 apache-tvm-ffi==0.1.11  || die "xgrammar"
"$V/bin/pip" install -q "${DEPS[@]}"                                      || die "dependencies"
"$V/bin/pip" install -q --no-deps -e "$ROOT"                              || die "trisect"
"$V/bin/python" -c "$CHECK"                                               || die "import check"
echo "sglang-venv.sh: $V ($(du -sh "$V" | cut -f1))"
