"""The ``trisect`` command line (a shell over the public API)."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
