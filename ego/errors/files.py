"""Errors of the files and folders a caller names."""

from __future__ import annotations

from .base import EgoError

__all__ = [
    "BatchFileError",
    "FileAccessError",
    "StorageStateError",
    "StorageStateTooLargeError",
    "TraceFileError",
]


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


class StorageStateTooLargeError(StorageStateError):
    """A storage-state file is larger, or holds more items, than the bound allows; it was
    refused before it was read whole (its size from the file system, its items counted in
    its bytes before any is parsed).

    The message words the fix in Python; front ends word it their own way with
    :meth:`worded`, from :attr:`keyword` (Python) or :attr:`flag` (the command line).

    Attributes:
        source: the file, as given.
        bound: ``"bytes"`` or ``"items"`` (cookies, origins and localStorage entries).
        found: how many the file has (bytes, or items counted so far).
        most: the bound.
        keyword: the argument of ``ego.read_storage_state`` that raises it.
        flag: the command-line option that raises it (``ego run``, ``ego batch``,
            ``ego mcp``), with its value's name.
    """

    def __init__(self, source: str, *, bound: str, found: int, most: int) -> None:
        self.source = source
        self.bound = bound
        self.found = found
        self.most = most
        self.keyword = "max_bytes" if bound == "bytes" else "max_items"
        self.flag = "--max-storage-state MB" if bound == "bytes" else "--max-storage-state-items N"
        super().__init__(
            self.worded(
                f"to load it all the same, read it with ego.read_storage_state(path, "
                f"{self.keyword}=...) and pass that as storage_state="
            )
        )

    def worded(self, fix: str) -> str:
        """The message with ``fix`` in the caller's words (``"raise the bound with ..."``)."""
        if self.bound == "bytes":
            what = (
                f"is {_megabytes(self.found)}: a storage state file may be at most "
                f"{_megabytes(self.most)}"
            )
        else:
            what = (
                f"holds more than {self.most:,} items (cookies, origins and localStorage "
                f"entries): a storage state file may hold at most {self.most:,}"
            )
        return f"the storage state {self.source} {what}; nothing of it was loaded: {fix}"


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB ({size:,} bytes)"
