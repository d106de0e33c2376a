"""Errors of the files and folders a caller names."""

from __future__ import annotations

from .base import EgoError

__all__ = ["BatchFileError", "FileAccessError", "StorageStateError", "TraceFileError"]


class FileAccessError(EgoError, PermissionError):
    """A path lies outside the folders a server may use, or names a file it may not replace.

    Attributes:
        path: the path, resolved.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class BatchFileError(EgoError, ValueError):
    """A batch's input or output file cannot be used (a line in the middle is corrupt, or the
    output was written for another input)."""


class StorageStateError(EgoError, ValueError):
    """A saved storage state (cookies and localStorage) cannot be read, used or written
    where it was asked: not JSON, not the format, or a path inside a learnings folder. The
    message never quotes the file's content (it holds session secrets)."""


class TraceFileError(EgoError, ValueError):
    """A trace file cannot be written where it was asked, or read as a trace (not one, or
    unreadable). The message names the file and what to do.

    Attributes:
        path: the file.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path
