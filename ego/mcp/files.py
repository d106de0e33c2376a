"""The files ``ego mcp``'s tools write and read, held to the folders the server may use.

Every path a tool is given (a screenshot's or PDF's ``path``, ``upload_file``'s ``paths``, a
SKILL.md to import, a HAR, a storage state) must lie inside the allowed folders: the output
folder (a session's own folder over HTTP), the folders the operator names (``--file-root``),
and the client's MCP roots where they are the server's paths. Which roots those are is decided
here, by transport (:class:`FileAccess`): over stdio the client started the server on its own
machine, so the roots it declares are folders of that machine; over HTTP a client's roots
name folders of the client's machine, which may be another, so they are never taken as the
server's paths unless the operator says so (``--client-roots-are-server-paths``). A relative
path lands in the output folder. Before anything touches the file system a path is
bounded: no NUL, at most :data:`MAX_PATH_CHARS` characters, :data:`MAX_DEPTH` folders and
:data:`MAX_NAME_BYTES` bytes a name. Every problem with a path (outside the folders, too long,
too deep, a NUL, not a folder, no permission, an existing file) is a
:class:`~ego.errors.FileAccessError` whose one line says what to do.

A check and the write it allows are apart in time (a screenshot takes a while), and another
process that can write in the folder could put a link in between. So a write never follows
the path by name: :meth:`FileAccess.write` opens each folder from the allowed root down
relative to the one before, refusing links (``O_NOFOLLOW``), and creates the file inside the
last with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a file that appeared meanwhile, or a link, makes
it fail); the file it opened is checked again (``/proc/self/fd``) before a byte is written. A
file this server wrote before is replaced through a temporary file renamed over it, which
replaces a link rather than following it. An upload is read the same way and copied into a
private folder of the server's own, which is what Chrome is given: Chrome reads its files
when the page does, long after any check.

The server's own output folder (the default) is made private (0700, files 0600) and removed
when the server ends, unless it holds files the agent was told about: then
:meth:`FileAccess.close` says where they are.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from ..errors import FileAccessError

__all__ = ["MAX_DEPTH", "MAX_NAME_BYTES", "MAX_PATH_CHARS", "FileAccess", "Transport"]

#: How a server speaks to its client: a child process's stdio, or HTTP (``ego mcp --http``).
Transport = Literal["stdio", "http"]

#: The longest path a tool may give, in characters (Linux's PATH_MAX).
MAX_PATH_CHARS: Final = 4096
#: The most folders a path may go down.
MAX_DEPTH: Final = 64
#: The longest name of one file or folder, in bytes (Linux's NAME_MAX).
MAX_NAME_BYTES: Final = 255

_FOLDER_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_PROC_FD: Final = Path("/proc/self/fd")

#: What an OSError's errno means for a path, in the words of a refusal.
_REASONS: Final = {
    errno.ENAMETOOLONG: "a name in it is longer than the system allows",
    errno.ENOTDIR: "a part of it that should be a folder is a file",
    errno.ELOOP: "a link stands where a folder or the file should be (links are not followed)",
    errno.EACCES: "the server has no permission there",
    errno.EPERM: "the server has no permission there",
    errno.EROFS: "the folder is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOENT: "no such file or folder",
}


def bounded(path: str | os.PathLike[str], what: str) -> str:
    """``path`` as text, refused before any system call when it holds a NUL or is too long,
    too deep or has a name too long.

    Raises:
        FileAccessError: one of those; the message says which and the bound.
    """
    try:
        text = os.fspath(path)
    except TypeError:
        raise FileAccessError(f"{what} {path!r} is not a path", path=repr(path)) from None
    if not isinstance(text, str):
        raise FileAccessError(f"{what} {text!r} is not a text path", path=repr(text))
    shown = _shown(text)
    if "\x00" in text:
        raise FileAccessError(f"{what} {shown} holds a NUL character: no path can", path=shown)
    if len(text) > MAX_PATH_CHARS:
        raise FileAccessError(
            f"{what} {shown} is {len(text):,} characters long: a path may have at most "
            f"{MAX_PATH_CHARS:,}",
            path=shown,
        )
    names = [name for name in text.split("/") if name not in ("", ".")]
    if len(names) > MAX_DEPTH:
        raise FileAccessError(
            f"{what} {shown} goes {len(names):,} folders deep: a path may go at most "
            f"{MAX_DEPTH} deep",
            path=shown,
        )
    for name in names:
        if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise FileAccessError(
                f"{what} {shown} has a name of more than {MAX_NAME_BYTES} bytes "
                f"({_shown(name, 40)}): the file system allows no longer one",
                path=shown,
            )
    return text


def _shown(text: str, most: int = 120) -> str:
    """``text`` quoted for a one-line message, cut to ``most`` characters."""
    return repr(text if len(text) <= most else text[: most - 1] + "…")


class FileAccess:
    """Resolves the paths MCP tools are given against the allowed folders, and writes and
    reads those files without following a link put there after the check.

    Args:
        output_dir: the server's output folder (a session's own folder over HTTP), made
            private when first needed.
        transport: how the server speaks to its client: it decides whether the roots the
            client declares are folders of this machine (see the module docstring).
        file_roots: more folders the operator allows (``--file-root``), each existing.
        client_roots_are_server_paths: over HTTP, take the client's roots as this machine's
            folders all the same (``--client-roots-are-server-paths``); over stdio they are.
        unrestricted: allow any path, and replacing any file.
        own: ``output_dir`` is a folder of the server's own, removed by :meth:`close`
            unless it holds files.

    Attributes:
        takes_client_roots: whether the client's roots are allowed folders here; the server
            asks the client for them (before a tool that reads or writes a file) only then.
        on_checked: called with each resolved path after its check and before the file is
            opened: where a test puts a link, to show that the write does not follow it.
    """

    def __init__(
        self,
        output_dir: Path,
        *,
        transport: Transport = "stdio",
        file_roots: Sequence[Path] = (),
        client_roots_are_server_paths: bool = False,
        unrestricted: bool = False,
        own: bool = False,
    ) -> None:
        self.output_dir = output_dir
        self.takes_client_roots = transport == "stdio" or client_roots_are_server_paths
        self.unrestricted = unrestricted
        self.own = own
        self.on_checked: Callable[[Path], None] | None = None
        self._file_roots = [Path(root).expanduser().resolve() for root in file_roots]
        self._roots: list[Path] = []
        #: The files this server wrote, and what each was: (device, inode, change time);
        #: an inode number alone can come back to a link made after the file went.
        self._written: dict[Path, tuple[int, int, int]] = {}
        self._uploads: Path | None = None
        self._closed = False

    def set_client_roots(self, uris: Sequence[str]) -> None:
        """The ``file://`` roots the client declared (other schemes are ignored); the server
        asks for them (:func:`.sdk.client_roots`) before a tool that reads or writes a file.
        Where they are not this machine's folders (:attr:`takes_client_roots` False) they are
        not kept: no root a client declares over HTTP opens a folder of the server."""
        if not self.takes_client_roots:
            return
        roots = []
        for uri in uris:
            parts = urlsplit(uri)
            if parts.scheme != "file" or not parts.path:
                continue
            with contextlib.suppress(FileAccessError, OSError, ValueError, RuntimeError):
                roots.append(Path(bounded(unquote(parts.path), "the root")).resolve())
        self._roots = roots

    @property
    def roots(self) -> list[Path]:
        """Where files may be: the client's roots (where they count), the operator's
        folders, then the output folder."""
        return [*self._roots, *self._file_roots, self.output_dir.resolve()]

    def ensure_output(self) -> Path:
        """The output folder, made private (0700) when it does not exist yet.

        Raises:
            FileAccessError: it cannot be made.
        """
        folder = self.output_dir
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o700)
        except OSError as exc:
            raise _refusal(exc, "the output folder", folder) from None
        return folder

    def downloads_dir(self) -> Path:
        """``downloads/`` in the output folder, made private, where Chrome saves downloads.

        Raises:
            FileAccessError: it cannot be made.
        """
        folder = self.ensure_output() / "downloads"
        try:
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o700)
        except OSError as exc:
            raise _refusal(exc, "the downloads folder", folder) from None
        return folder

    def for_writing(self, path: str | os.PathLike[str]) -> Path:
        """Where ``path`` would be written: inside the allowed folders, and not over a file
        this server did not write. Nothing is made; :meth:`write` checks again.

        Raises:
            FileAccessError: outside the folders, a file that is not this server's, or a path
                that no file can have.
        """
        resolved = self._resolve(path, "the path")
        if not self.unrestricted and resolved not in self._written and _exists(resolved):
            raise _not_ours(path, resolved)
        return resolved

    def write(self, path: str | os.PathLike[str], data: bytes) -> Path:
        """Write ``data`` to ``path`` (see the module docstring); returns where.

        Raises:
            FileAccessError: as :meth:`for_writing`, or a link or a file appeared on the way
                since the check, or the system refused (the message says why).
        """
        resolved = self.for_writing(path)
        root = self._root_of(resolved)
        if root == self.output_dir.resolve():
            self.ensure_output()
        if self.on_checked is not None:
            self.on_checked(resolved)
        try:
            folder = self._open_folders(root, resolved.parent, create=True)
        except OSError as exc:
            raise _refusal(exc, "the path", path) from None
        try:
            self._written[resolved] = self._write_in(folder, resolved, data, path)
        finally:
            os.close(folder)
        return resolved

    def for_reading(self, path: str | os.PathLike[str]) -> Path:
        """``path`` resolved, when it lies inside the allowed folders.

        Raises:
            FileAccessError: it does not, or no file can have that path.
        """
        return self._resolve(path, "the file")

    def staged_upload(self, path: str | os.PathLike[str]) -> Path:
        """A private copy of the file at ``path`` (inside the allowed folders), read without
        following a link put there after the check, to hand to Chrome.

        Raises:
            FileAccessError: outside the folders, not a regular file, a link on the way, or
                the system refused.
        """
        resolved = self.for_reading(path)
        if self.unrestricted:
            return resolved
        if self.on_checked is not None:
            self.on_checked(resolved)
        root = self._root_of(resolved)
        try:
            folder = self._open_folders(root, resolved.parent, create=False)
            try:
                source = os.open(resolved.name, _READ_FLAGS, dir_fd=folder)
            finally:
                os.close(folder)
        except OSError as exc:
            raise _refusal(exc, "the file", path) from None
        try:
            info = os.fstat(source)
            if not stat.S_ISREG(info.st_mode):
                raise FileAccessError(
                    f"the file {_shown(os.fspath(path))} is not a regular file: give a file",
                    path=str(resolved),
                )
            self._check_opened(source, resolved, path)
            staged = self._uploads_dir() / uuid.uuid4().hex
            staged.mkdir(mode=0o700)
            copy = staged / resolved.name
            with open(source, "rb", closefd=False) as reader, copy.open("xb") as writer:
                shutil.copyfileobj(reader, writer)
        except OSError as exc:
            raise _refusal(exc, "the file", path) from None
        finally:
            os.close(source)
        return copy

    def close(self) -> str | None:
        """Remove what the server made for itself: its uploads' copies, and its own output
        folder unless that holds files (written or downloaded, each told to the agent).

        Returns:
            a line saying where the files kept are, when the server's own folder was kept
            (the first call only).
        """
        if self._closed:
            return None
        self._closed = True
        if self._uploads is not None:
            shutil.rmtree(self._uploads, ignore_errors=True)
            self._uploads = None
        folder = self.output_dir
        if not self.own or not folder.is_dir():
            return None
        kept = [path for path in folder.rglob("*") if path.is_file()]
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        return (
            f"ego mcp kept {len(kept)} file{'s' if len(kept) != 1 else ''} its tools saved "
            f"(screenshots, PDFs, downloads) in {folder}"
        )

    # -- resolving --------------------------------------------------------------------------

    def _resolve(self, path: str | os.PathLike[str], what: str) -> Path:
        text = bounded(path, what)
        try:
            given = Path(text).expanduser()
            if not given.is_absolute():
                given = self.output_dir / given
            # resolve() follows every link that exists, so a link cannot lead out unseen.
            resolved = given.resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise FileAccessError(
                f"{what} {_shown(text)} cannot be resolved ({_reason(exc)})", path=text
            ) from None
        bounded(resolved, what)
        if self.unrestricted:
            return resolved
        if not any(resolved.is_relative_to(root) for root in self.roots):
            allowed = ", ".join(str(root) for root in self.roots)
            raise FileAccessError(
                f"{what} {_shown(text)} is outside the folders this server may use "
                f"({allowed}): give a path inside one (a relative path lands in "
                f"{self.output_dir}){self._not_roots()}",
                path=str(resolved),
            )
        return resolved

    def _not_roots(self) -> str:
        """What a refusal adds where the client's roots do not count."""
        if self.takes_client_roots:
            return ""
        return (
            "; over HTTP the client's MCP roots are folders of its own machine, not this "
            "server's (the operator allows more folders with ego mcp --file-root DIR)"
        )

    def _root_of(self, resolved: Path) -> Path:
        """The allowed folder that holds ``resolved`` (the deepest), or ``/``."""
        holding = [root for root in self.roots if resolved.is_relative_to(root)]
        if not holding or self.unrestricted:
            return Path(resolved.anchor)
        return max(holding, key=lambda root: len(root.parts))

    def _open_folders(self, root: Path, folder: Path, *, create: bool) -> int:
        """A descriptor of ``folder``, opened one name at a time from ``root`` without
        following a link (made, private, where missing when ``create``).

        Raises:
            OSError: a link or a file on the way, a missing folder, no permission.
        """
        current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in folder.relative_to(root).parts:
                try:
                    following = os.open(name, _FOLDER_FLAGS, dir_fd=current)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o700, dir_fd=current)
                    following = os.open(name, _FOLDER_FLAGS, dir_fd=current)
                os.close(current)
                current = following
        except BaseException:
            os.close(current)
            raise
        return current

    def _write_in(
        self, folder: int, resolved: Path, data: bytes, given: str | os.PathLike[str]
    ) -> tuple[int, int, int]:
        """Write ``data`` as ``resolved.name`` in the open ``folder``; what the file is
        (device, inode, change time), to know it again."""
        name = resolved.name
        replacing = (self.unrestricted or resolved in self._written) and _exists(resolved)
        target = f".{name[:200]}.{uuid.uuid4().hex[:8]}.part" if replacing else name
        try:
            handle = os.open(target, _NEW_FILE_FLAGS, 0o600, dir_fd=folder)
        except FileExistsError:
            # Nothing was here at the check: another process made a file or a link since.
            raise _not_ours(given, resolved) from None
        except OSError as exc:
            raise _refusal(exc, "the path", given) from None
        try:
            self._check_opened(handle, resolved.parent / target, given)
            with open(handle, "wb", closefd=False) as file:
                file.write(data)
            if replacing:
                here = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if not self.unrestricted and _identity(here) != self._written.get(resolved):
                    raise _not_ours(given, resolved)
                os.replace(target, name, src_dir_fd=folder, dst_dir_fd=folder)
            info = os.fstat(handle)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(target, dir_fd=folder)
            if isinstance(exc, OSError) and not isinstance(exc, FileAccessError):
                raise _refusal(exc, "the path", given) from None
            raise
        finally:
            os.close(handle)
        return _identity(info)

    def _check_opened(self, handle: int, expected: Path, given: str | os.PathLike[str]) -> None:
        """After opening: the file is one regular file, where the check said it would be.

        Raises:
            FileAccessError: it is not.
        """
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise FileAccessError(
                f"{_shown(os.fspath(given))} is not a plain file of its own (a link or a "
                "special file): give another name",
                path=str(expected),
            )
        with contextlib.suppress(OSError):  # no /proc: the opening itself was the check
            where = Path(os.readlink(_PROC_FD / str(handle)))
            if where != expected and not self.unrestricted:
                raise FileAccessError(
                    f"{_shown(os.fspath(given))} was opened at {where}, not where it was "
                    "checked (the folders changed meanwhile): nothing was written",
                    path=str(where),
                )

    def _uploads_dir(self) -> Path:
        if self._uploads is None:
            self._uploads = Path(tempfile.mkdtemp(prefix="ego-mcp-uploads-"))
        return self._uploads


def _exists(path: Path) -> bool:
    """Whether something (a link included) is at ``path``; False where nothing can be."""
    try:
        path.lstat()
    except (OSError, ValueError):
        return False
    return True


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    """What tells a file from another one at the same place: device, inode and change time
    (a link or file made later gets a later change time, even on a reused inode)."""
    if not stat.S_ISREG(info.st_mode):
        return (-1, -1, -1)
    return info.st_dev, info.st_ino, info.st_ctime_ns


def _not_ours(given: str | os.PathLike[str], resolved: Path) -> FileAccessError:
    return FileAccessError(
        f"{_shown(os.fspath(given))} exists and this server did not write it: give a new name "
        "(an existing file is never overwritten, nor a link followed)",
        path=str(resolved),
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno in _REASONS:
        return _REASONS[exc.errno]
    if isinstance(exc, RuntimeError):
        return "its links go round in a loop"
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join(text.split())[:200] or type(exc).__name__


def _refusal(exc: OSError, what: str, given: str | os.PathLike[str]) -> FileAccessError:
    """An OSError met while using a path, as a FileAccessError of one line."""
    if isinstance(exc, FileAccessError):
        return exc
    shown = _shown(os.fspath(given))
    return FileAccessError(f"{what} {shown} cannot be used: {_reason(exc)}", path=shown)
