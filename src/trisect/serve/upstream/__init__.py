"""Upstreams: where the server sends a rendered prompt (see ``base.Upstream``)."""

from __future__ import annotations

from .base import CompletionPiece, CompletionRequest, Constraint, Upstream, UpstreamError

__all__ = ["CompletionPiece", "CompletionRequest", "Constraint", "Upstream", "UpstreamError"]
