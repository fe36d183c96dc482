"""``trisect serve``: an OpenAI-compatible server over any engine that returns raw completions.

A shell over the public API (``Parser``, ``trisect.chat``, ``trisect.grammar``,
``trisect.templates``), in the ``serve`` extra: starlette, uvicorn, httpx, jinja2, and
xllamacpp for the embedded default model. Nothing here is imported by the core.
"""
