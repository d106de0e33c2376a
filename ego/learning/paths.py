"""Keeping manifest paths inside their site folder."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from ..errors import UnsafePathError

__all__ = ["check_relative", "resolve_inside"]


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
        os.fsencode(path)
    except UnicodeError:
        # A lone surrogate (from JSON such as "\ud800") has no file-system name.
        raise UnsafePathError(
            f"{what}: path {path!r} holds characters no file name can hold"
        ) from None
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
    root = site_dir.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise UnsafePathError(
            f"{what}: path {path!r} resolves to {target}, outside the site folder {root}"
        )
    return target
