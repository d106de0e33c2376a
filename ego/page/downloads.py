"""Downloads: every file a page downloads is saved into one folder ego owns, under a safe name
that never replaces another file, and reported as a :class:`Download`.

``Browser.setDownloadBehavior`` with ``allowAndName`` makes Chrome save each download under
its guid in that folder (never the user's Downloads) and report it:
``Browser.downloadWillBegin`` (frame, URL, suggested name) then ``Browser.downloadProgress``
until ``completed`` or ``canceled``. A completed file is then renamed to its suggested name,
made safe, and made readable by its owner only (0600).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import unicodedata
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import CommandTimeoutError, DownloadFailedError, ProtocolError

if TYPE_CHECKING:
    from ..protocol.transport import Connection

__all__ = ["MAX_DOWNLOADS", "Download", "DownloadExpectation", "Downloads", "safe_name"]

logger = logging.getLogger("ego.page.downloads")

#: How many downloads a browser remembers (the oldest are forgotten first; files stay).
MAX_DOWNLOADS: Final = 200

_UNSAFE: Final = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]+')
_MAX_NAME: Final = 120

State = Literal["in_progress", "completed", "canceled"]


def safe_name(suggested: str) -> str:
    """A file name made of ``suggested`` that is safe on any system: no folder parts, no
    control or reserved characters, no leading dot, at most 120 characters (the extension
    kept); ``"download"`` when nothing is left."""
    name = unicodedata.normalize("NFC", suggested).replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("_", name).strip(" .")
    if len(name) > _MAX_NAME:
        stem, dot, ext = name.rpartition(".")
        if dot and 0 < len(ext) <= 16:
            name = stem[: _MAX_NAME - len(ext) - 1] + "." + ext
        else:
            name = name[:_MAX_NAME]
    return name if name.strip("_") else "download"


@dataclass
class Download:
    """One download, filled in as it goes.

    Attributes:
        url: what was downloaded.
        suggested_filename: the name the server or page suggested.
        path: where the file is, once completed (None before, or when it failed).
        size: bytes received.
        state: ``"in_progress"``, ``"completed"`` or ``"canceled"``.
        frame_id: the frame that started it.
        guid: Chrome's id for it.
        started_at, finished_at: ``time.time()`` of its start and end.
    """

    url: str = ""
    suggested_filename: str = ""
    path: Path | None = None
    size: int = 0
    state: State = "in_progress"
    frame_id: str = ""
    guid: str = ""
    started_at: float = 0.0
    finished_at: float | None = None
    _done: asyncio.Future[None] | None = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """The download as JSON data."""
        return {
            "url": self.url,
            "suggested_filename": self.suggested_filename,
            "path": str(self.path) if self.path else None,
            "size": self.size,
            "state": self.state,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }

    async def finished(self, timeout: float) -> Download:
        """Wait until the download ends (saved or cancelled); return it.

        Raises:
            CommandTimeoutError: it did not end within ``timeout``.
            DownloadFailedError: it was cancelled or failed.
        """
        if self._done is not None and not self._done.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._done), timeout)
            except TimeoutError:
                raise CommandTimeoutError(
                    f"the download of {self.url} did not finish within {timeout:g} s "
                    f"({self.size} bytes so far); pass a larger timeout"
                ) from None
        if self.state != "completed":
            raise DownloadFailedError(
                f"the download of {self.url} was {self.state.replace('_', ' ')}: the page or "
                "the server stopped it; start it again"
            )
        return self

    def _fill(self, other: Download) -> None:
        for name in ("url", "suggested_filename", "path", "size", "state", "frame_id", "guid"):
            setattr(self, name, getattr(other, name))
        self.started_at, self.finished_at = other.started_at, other.finished_at


class Downloads:
    """A browser's (or one browser context's) downloads, saved into ``folder``.

    Args:
        connection: the browser's connection.
        folder: where files are saved (made when missing).
        context_id: the browser context whose downloads these are (Chrome's
            ``browserContextId``); None for the browser's default one.
        owns: whether a download started by a frame (its id) is one of these; Chrome
            reports every context's downloads on the one connection. By default all are.
    """

    def __init__(
        self,
        connection: Connection,
        folder: Path,
        *,
        context_id: str | None = None,
        owns: Callable[[str], bool] | None = None,
    ) -> None:
        self.folder = folder
        self.context_id = context_id
        self._owns = owns
        self._connection = connection
        self._all: dict[str, Download] = {}
        self._waiters: list[tuple[Callable[[Download], bool], asyncio.Future[Download]]] = []
        self._subscription = connection.subscribe_all(
            ("Browser.downloadWillBegin", "Browser.downloadProgress"), self._on_event
        )

    async def enable(self) -> None:
        """Have Chrome save downloads (of this browser context, or the default one) into the
        folder and report them.

        Raises:
            ProtocolError: the browser refuses (some remote endpoints do).
        """
        await asyncio.to_thread(self.folder.mkdir, parents=True, exist_ok=True)
        params: dict[str, Any] = {
            "behavior": "allowAndName",
            "downloadPath": str(self.folder),
            "eventsEnabled": True,
        }
        if self.context_id is not None:
            params["browserContextId"] = self.context_id
        await self._connection.send("Browser.setDownloadBehavior", params)

    async def renew(self) -> None:
        """Set the folder again, before a download is expected: another client of the same
        browser that set its own, or that disconnected (Chrome then goes back to its own
        default, the user's Downloads), may have changed it since. A browser that refuses is
        left as it is (said in the log when :meth:`enable` first failed)."""
        with contextlib.suppress(ProtocolError):
            await self.enable()

    def list(self) -> list[Download]:
        """Every download seen, oldest first (at most :data:`MAX_DOWNLOADS`)."""
        return list(self._all.values())

    def close(self) -> None:
        """Stop listening; downloads waited for fail."""
        self._subscription.close()
        for _, waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(DownloadFailedError("the browser closed before the download"))
        self._waiters.clear()

    def expect(self, belongs: Callable[[Download], bool], timeout: float) -> DownloadExpectation:
        """The next download for which ``belongs`` is true, saved and complete."""
        return DownloadExpectation(self, belongs, timeout)

    def _next(self, belongs: Callable[[Download], bool]) -> asyncio.Future[Download]:
        waiter: asyncio.Future[Download] = asyncio.get_running_loop().create_future()
        self._waiters.append((belongs, waiter))
        return waiter

    def _forget(self, waiter: asyncio.Future[Download]) -> None:
        self._waiters = [(test, other) for test, other in self._waiters if other is not waiter]

    async def _on_event(self, method: str, params: dict[str, Any]) -> None:
        guid = str(params.get("guid", ""))
        if method == "Browser.downloadWillBegin":
            if self._owns is not None and not self._owns(str(params.get("frameId", ""))):
                return  # another browser context's
            download = Download(
                url=str(params.get("url", "")),
                suggested_filename=str(params.get("suggestedFilename", "")),
                frame_id=str(params.get("frameId", "")),
                guid=guid,
                started_at=time.time(),
            )
            download._done = asyncio.get_running_loop().create_future()
            self._all[guid] = download
            while len(self._all) > MAX_DOWNLOADS:
                self._all.pop(next(iter(self._all)))
            for belongs, waiter in list(self._waiters):
                if not waiter.done() and belongs(download):
                    waiter.set_result(download)
                    self._forget(waiter)
            return
        download_or_none = self._all.get(guid)
        if download_or_none is None:
            return
        download = download_or_none
        download.size = int(params.get("receivedBytes") or download.size)
        state = params.get("state")
        if state == "completed":
            saved = Path(str(params.get("filePath") or self.folder / guid))
            download.path = saved
            # Another client of the same browser may have set another folder since: only
            # files in this folder are this client's to name.
            if saved.parent == self.folder:
                try:
                    download.path = await asyncio.to_thread(_settle, saved, self.folder, download)
                except OSError as exc:
                    logger.warning("could not name download %s: %s", saved, exc)
            download.state = "completed"
            download.finished_at = time.time()
            self._finish(download)
        elif state == "canceled":
            download.state = "canceled"
            download.finished_at = time.time()
            self._finish(download)

    def _finish(self, download: Download) -> None:
        if download._done is not None and not download._done.done():
            download._done.set_result(None)


def _settle(saved: Path, folder: Path, download: Download) -> Path:
    """Rename the file Chrome saved under its guid to its safe name, never over another, and
    make it private (Chrome leaves it readable by everyone)."""
    with contextlib.suppress(OSError):
        os.chmod(saved, 0o600)
    name = safe_name(download.suggested_filename or download.url.rsplit("/", 1)[-1])
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    for n in range(10_000):
        candidate = folder / (name if n == 0 else f"{stem} ({n}){'.' + ext if ext else ''}")
        try:
            # A hard link fails when the name exists: no check-then-rename race.
            os.link(saved, candidate)
        except FileExistsError:
            continue
        saved.unlink()
        return candidate
    return saved


class DownloadExpectation:
    """Waits for a download: ``async with tab.expect_download() as download:`` around the
    call that starts it (``download`` is filled in when the block ends, the file saved), or
    ``download = await tab.expect_download()`` for the next one."""

    def __init__(
        self, downloads: Downloads, belongs: Callable[[Download], bool], timeout: float
    ) -> None:
        self._downloads = downloads
        self._belongs = belongs
        self._timeout = timeout
        self._waiter: asyncio.Future[Download] | None = None
        self.download = Download()

    def __repr__(self) -> str:
        return f"<DownloadExpectation {self.download.state} {self.download.url or '(none yet)'}>"

    def __await__(self) -> Generator[Any, None, Download]:
        return self._renewed_wait().__await__()

    async def __aenter__(self) -> Download:
        # Listening first: a download may begin while the folder is being renewed.
        self._waiter = self._downloads._next(self._belongs)
        await self._downloads.renew()
        return self.download

    async def _renewed_wait(self) -> Download:
        self._waiter = self._downloads._next(self._belongs)
        await self._downloads.renew()
        return await self._wait()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            if self._waiter is not None:
                self._waiter.cancel()
                self._downloads._forget(self._waiter)
            return
        await self._wait()

    async def _wait(self) -> Download:
        waiter = self._waiter or self._downloads._next(self._belongs)
        deadline = time.monotonic() + self._timeout
        try:
            try:
                started = await asyncio.wait_for(asyncio.shield(waiter), self._timeout)
            except TimeoutError:
                raise CommandTimeoutError(
                    f"no download started within {self._timeout:g} s: check that the click "
                    "or navigation starts one, or pass a larger timeout"
                ) from None
        finally:
            self._downloads._forget(waiter)
            waiter.cancel()
        try:
            await started.finished(max(0.001, deadline - time.monotonic()))
        finally:
            self.download._fill(started)
        return self.download
