"""trisect inside other systems: each module is a shell over the public API, imported only by
whoever uses it. The core never imports this package, and each module imports its host system
only inside itself, when that system loads it.

* ``ray``: Ray Data.
* ``vllm`` / ``sglang``: the engine plugins. ``pip install trisect`` into an engine's environment
  registers every trisect format there under ``trisect_<name>`` (entry points
  ``vllm.general_plugins`` and ``sglang.srt.plugins``)::

    vllm serve M --reasoning-parser trisect_qwen3 --tool-call-parser trisect_qwen3_coder \\
        --enable-auto-tool-choice
    python -m sglang.launch_server --model-path M --reasoning-parser trisect_qwen3 \\
        --tool-call-parser trisect_qwen3_coder

  ``_vllm_parsers`` / ``_sglang_detectors`` hold the engine classes; ``_common`` what both share
  (names, per-request settings, the event fold, the reasoning phase of two-phase pipelines, the
  cached token view). See ``docs/engines.md``.
"""
