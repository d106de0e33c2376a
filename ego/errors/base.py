"""The root of every exception ego raises."""

from __future__ import annotations

__all__ = ["EgoError"]


class EgoError(Exception):
    """Base class of every error ego raises on purpose."""
