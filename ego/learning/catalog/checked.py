"""The manifests that passed their schema checks, remembered by content from one process to
the next.

Checking a manifest against its JSON Schema, and each tool's ``args`` and ``returns`` against
the meta-schema of their draft, is most of what reading a manifest costs (about a millisecond
a tool): listing 10,000 sites would check 10,000 manifests at every ``ego sites``. What the
checks find depends only on the manifest's bytes and on the checks themselves (the manifest
schema, the code that checks, the libraries it runs on), so a manifest that passed is known by
a digest of both and is not checked again, by this process or another, until one of them
changes. The checks are known by the stat of their files (path, modification time, size,
inode and change time: what an edit or an upgrade moves), so naming them reads nothing. The
digests are kept one a line in ``checked-manifests`` in ego's state folder
(:func:`ego.places.state_dir`); a line is 33 bytes, and the file starts over once it holds
:data:`MAX_REMEMBERED` of them.

Only passes are kept: a manifest with a problem is checked in full each time it is read. Which
folder a manifest is in (its ``id`` must be the folder's name) and where its links lead are
not the content's, and are checked every time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["CHECKED_NAME", "MAX_REMEMBERED", "CheckedManifests"]

logger = logging.getLogger("ego.learning")

#: The file in ego's state folder that holds the digests.
CHECKED_NAME: Final = "checked-manifests"
#: The most digests kept; a file that holds more starts over (every manifest is checked again).
MAX_REMEMBERED: Final = 200_000
#: The libraries the checks run on (their modules): a new version of one may judge a schema
#: otherwise.
_LIBRARIES: Final = ("jsonschema", "jsonschema_specifications", "referencing", "re2")
_DIGEST_BYTES: Final = 16


class CheckedManifests:
    """The digests of manifests that passed, read from ``path`` when first asked.

    Args:
        path: the file that keeps them (it and its folder are made on the first pass).
        checks: the files that make the checks (the manifest schema and the modules that
            check): a change to any of them makes every manifest be checked again.
    """

    def __init__(self, path: Path, checks: Sequence[Path]) -> None:
        self.path = path
        self._checks = tuple(checks)
        self._identity: bytes | None = None
        self._passed: set[str] | None = None
        self._warned = False

    def digest(self, data: bytes) -> str | None:
        """What identifies the checks' verdict on a manifest whose bytes are ``data``; None
        when the checks cannot be identified (a file of theirs missing): nothing is kept."""
        if self._identity is None:
            self._identity = _identity(self._checks) or b""
        if not self._identity:
            return None
        return hashlib.blake2b(self._identity + data, digest_size=_DIGEST_BYTES).hexdigest()

    def passed(self, digest: str) -> bool:
        """Whether the manifest with this digest passed the checks before."""
        if self._passed is None:
            self._passed = self._read()
        return digest in self._passed

    def remember(self, digest: str) -> None:
        """Keep that the manifest with this digest passed. A file that cannot be written costs
        only speed: the next process checks that manifest again (a warning says so, once)."""
        if self._passed is None:
            self._passed = self._read()
        if digest in self._passed:
            return
        self._passed.add(digest)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One short append: lines that processes write at once never interleave.
            handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(handle, digest.encode() + b"\n")
            finally:
                os.close(handle)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                logger.warning(
                    "ego: cannot remember checked manifests in %s (%s); each process checks "
                    "them again",
                    self.path,
                    exc,
                )

    def _read(self) -> set[str]:
        try:
            data = self.path.read_bytes()
        except OSError:
            return set()
        # A line cut short by a process that died mid-write, or anything else, is no digest.
        size = _DIGEST_BYTES * 2
        lines = [line for line in data.split(b"\n") if len(line) == size]
        if len(lines) > MAX_REMEMBERED:
            try:
                self.path.unlink()
            except OSError:
                pass
            return set()
        return {line.decode("ascii", "replace") for line in lines}


def _identity(checks: Sequence[Path]) -> bytes | None:
    """A digest of the checks: their files and their libraries' modules, each by its path and
    stat; None when one cannot be found."""
    files = [str(path) for path in checks]
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            return None
        files.append(file)
    hasher = hashlib.blake2b(digest_size=_DIGEST_BYTES)
    for file in files:
        try:
            stat = os.stat(file)
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns)
        hasher.update(f"{file}\0{stamp}\0".encode())
    return hasher.digest()
