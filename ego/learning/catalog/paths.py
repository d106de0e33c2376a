"""Keeping manifest paths inside their site folder."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from ...errors import UnsafePathError

__all__ = ["MAX_NAME_BYTES", "MAX_PATH_BYTES", "check_relative", "resolve_inside"]

#: The longest file name, and manifest path, ego uses (common file systems' limits).
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 1024


def check_relative(path: str, *, what: str) -> None:
    """Refuse a manifest path that is absolute, holds ``..``, a backslash or a character no
    file name can hold (a lone surrogate), or is empty.

    This is the check that needs no disk: it runs before anything is read.

    Raises:
        UnsafePathError: the path is not a plain relative path.
    """
    if not path or not path.strip():
        raise UnsafePathError(f"{what}: the path is empty")
    if "\\" in path:
        raise UnsafePathError(f"{what}: path {path!r} holds a backslash; use / separators")
    if "\x00" in path:
        raise UnsafePathError(f"{what}: path {path!r} holds a NUL byte")
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        # A lone surrogate (from JSON such as "\ud800") has no file-system name.
        raise UnsafePathError(
            f"{what}: path {path!r} holds characters no file name can hold"
        ) from None
    # What file systems refuse (ENAMETOOLONG): a name over 255 bytes, a path far too long.
    if len(encoded) > MAX_PATH_BYTES or any(
        len(part) > MAX_NAME_BYTES for part in encoded.split(b"/")
    ):
        raise UnsafePathError(
            f"{what}: path {path[:60]!r}... is longer than a file system takes (a name of at "
            f"most {MAX_NAME_BYTES} bytes, a path of at most {MAX_PATH_BYTES}); shorten it"
        )
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~") or (len(path) > 1 and path[1] == ":"):
        raise UnsafePathError(f"{what}: path {path!r} is absolute; give it relative to the site")
    if ".." in pure.parts:
        raise UnsafePathError(f"{what}: path {path!r} holds '..'; it must stay in the site folder")


def resolve_inside(site_dir: Path, path: str, *, what: str) -> Path:
    """Resolve ``path`` under ``site_dir``, following links, and refuse anything outside.

    Raises:
        UnsafePathError: the path is not plain (see :func:`check_relative`) or it resolves,
            through a symlink, outside the site folder.
    """
    check_relative(path, what=what)
    try:
        root = site_dir.resolve()
        target = (root / path).resolve()
    except (OSError, RuntimeError) as exc:
        # A link loop, or a link to a name the file system refuses.
        raise UnsafePathError(f"{what}: path {path!r} cannot be resolved ({exc})") from None
    if not target.is_relative_to(root):
        raise UnsafePathError(
            f"{what}: path {path!r} resolves to {target}, outside the site folder {root}"
        )
    return target
