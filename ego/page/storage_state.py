"""Saved logins: a browser context's cookies and every origin's localStorage as JSON, read back
into a fresh context before its first page.

The format is Playwright's ``storageState`` (a file made by either loads in the other)::

    {"cookies": [{"name", "value", "domain", "path", "expires", "httpOnly", "secure",
                  "sameSite", ...}],
     "origins": [{"origin": "https://shop.example",
                  "localStorage": [{"name": "token", "value": "..."}],
                  "indexedDBNames": ["cart"]}]}

Cookies come from ``Storage.getCookies {browserContextId}`` and go back with
``Storage.setCookies``. localStorage lives in the renderer, per origin: an origin shown by an
open page (or one of its frames) is read there with ``DOMStorage.getDOMStorageItems``; any
other is read, and every one is written, through a scratch tab of the same context whose
document request for the origin is answered by ego itself (``Fetch.fulfillRequest`` with an
empty page), so the site is never contacted and no page script runs. IndexedDB is listed by
name only (``IndexedDB.requestDatabaseNames``), for information: its content is neither saved
nor restored.

The file holds session secrets: it is written ``0600`` (replacing any file atomically), and
nothing here puts a cookie or a stored value into a message or the log.

A file is bounded before it is read whole: its size from the file system (at most
:data:`MAX_STATE_BYTES`), then its items (cookies, origins and localStorage entries: at most
:data:`MAX_STATE_ITEMS`) counted in its bytes before any is parsed, so a hostile or runaway
file costs neither the memory of its parse nor one CDP command per item
(:class:`~ego.errors.StorageStateTooLargeError` names the bound and what raises it).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import stat
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import orjson

from ..errors import EgoError, StorageStateError, StorageStateTooLargeError

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection
    from .tab import Tab

__all__ = [
    "MAX_STATE_BYTES",
    "MAX_STATE_ITEMS",
    "StateSource",
    "StorageState",
    "apply_state",
    "collect_state",
    "describe_state",
    "origin_of",
    "read_storage_state",
    "write_state",
]

#: The largest storage-state file read, in bytes (64 MB: a login is a few kB; Chrome keeps
#: at most 10 MB of localStorage an origin).
MAX_STATE_BYTES: Final = 64 << 20
#: The most items (cookies, origins and localStorage entries) a storage-state file may hold;
#: each localStorage entry is one CDP command when it is loaded.
MAX_STATE_ITEMS: Final = 20_000

#: One JSON string, from its opening quote to its closing one, or to the end of the data when
#: it never closes: it always matches where it starts, so the scan is linear on any bytes.
_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)

logger = logging.getLogger("ego.page.storage_state")

#: A storage state: ``{"cookies": [...], "origins": [...]}``.
StorageState = dict[str, Any]
#: A saved login as a caller gives it: a file's path, or a state mapping.
StateSource = str | os.PathLike[str] | Mapping[str, Any]

#: Opens a scratch tab of the context (in the background, unlisted) for the block.
Scratch = Callable[[], contextlib.AbstractAsyncContextManager["Tab"]]

#: The cookie fields ``Storage.setCookies`` takes (``CookieParam``).
_COOKIE_PARAMS: Final = frozenset(
    {
        "name",
        "value",
        "url",
        "domain",
        "path",
        "secure",
        "httpOnly",
        "sameSite",
        "expires",
        "priority",
        "sameParty",
        "sourceScheme",
        "sourcePort",
        "partitionKey",
    }
)
_SAME_SITE: Final = frozenset({"Strict", "Lax", "None"})
_BLANK: Final = base64.b64encode(b"<!doctype html><title></title>").decode()
_DOCUMENTS: Final = {"patterns": [{"urlPattern": "*", "resourceType": "Document"}]}


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, else None (no storage a state keeps)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


def read_storage_state(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    max_bytes: int = MAX_STATE_BYTES,
    max_items: int = MAX_STATE_ITEMS,
) -> StorageState:
    """A storage state from a file or a mapping, checked; a file is bounded before it is
    read whole (a mapping, already in memory, is not).

    Args:
        source: the file, or the mapping ``storage_state()`` gave.
        max_bytes: the largest file read.
        max_items: the most cookies, origins and localStorage entries a file may hold.

    Raises:
        StorageStateTooLargeError: the file is over ``max_bytes`` or ``max_items``; nothing
            of it was parsed.
        StorageStateError: the file cannot be read, is not JSON, or is not a storage state;
            the message names the file and what is wrong, never its content.
    """
    if isinstance(source, Mapping):
        return _checked(dict(source), "the storage state given")
    path = Path(source).expanduser()
    try:
        data = _bounded_bytes(path, max_bytes)
    except OSError as exc:
        raise StorageStateError(
            f"cannot read the storage state {path}: {exc.strerror or exc}; save one first "
            "(context.storage_state(path=...), or ego login SITE --save-state FILE)"
        ) from None
    # Every object of a storage state is an item (the document's own aside): counted with
    # the strings blanked out, so a brace inside a value does not count.
    items = _JSON_STRING.sub(b'""', data).count(b"{") - 1
    if items > max_items:
        raise StorageStateTooLargeError(str(path), bound="items", found=items, most=max_items)
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise StorageStateError(
            f"{path} is not JSON: a storage state is the file context.storage_state() or "
            "ego login --save-state wrote"
        ) from None
    return _checked(parsed, str(path))


def _bounded_bytes(path: Path, most: int) -> bytes:
    """The bytes of the regular file at ``path``, refused before they are read when there
    are more than ``most`` (by its size, and by reading one byte more than ``most``, for a
    file that grows meanwhile).

    Raises:
        StorageStateTooLargeError: too large.
        StorageStateError: not a regular file.
        OSError: it cannot be opened or read.
    """
    # Non-blocking: a FIFO put in a file's place must not hold the caller.
    handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise StorageStateError(
                f"the storage state {path} is not a regular file: give the file "
                "context.storage_state() or ego login --save-state wrote"
            )
        if info.st_size > most:
            raise StorageStateTooLargeError(str(path), bound="bytes", found=info.st_size, most=most)
        with open(handle, "rb", closefd=False) as file:
            data = file.read(most + 1)
    finally:
        os.close(handle)
    if len(data) > most:
        raise StorageStateTooLargeError(str(path), bound="bytes", found=len(data), most=most)
    return data


def _checked(data: Any, what: str) -> StorageState:
    if not isinstance(data, dict):
        raise StorageStateError(f"{what} is not a storage state: expected an object")
    cookies = data.get("cookies", [])
    origins = data.get("origins", [])
    if not isinstance(cookies, list) or not isinstance(origins, list):
        raise StorageStateError(f"{what}: 'cookies' and 'origins' must be lists")
    for number, cookie in enumerate(cookies):
        if not isinstance(cookie, dict) or not all(
            isinstance(cookie.get(key), str) for key in ("name", "value")
        ):
            raise StorageStateError(f"{what}: cookie {number} has no string name and value")
        if not isinstance(cookie.get("domain"), str) and not isinstance(cookie.get("url"), str):
            raise StorageStateError(f"{what}: cookie {number} has neither a domain nor a url")
    for number, entry in enumerate(origins):
        items = entry.get("localStorage", []) if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or origin_of(str(entry.get("origin", ""))) is None:
            raise StorageStateError(f"{what}: origin {number} is not an http(s) origin")
        if not isinstance(items, list) or not all(
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("value"), str)
            for item in items
        ):
            raise StorageStateError(
                f"{what}: the localStorage of origin {number} must be a list of "
                "{name, value} strings"
            )
    return {"cookies": cookies, "origins": origins}


def state_bytes(state: StorageState) -> bytes:
    """``state`` as the file :func:`write_state` writes (indented JSON)."""
    return orjson.dumps(state, option=orjson.OPT_INDENT_2)


def write_state(path: str | os.PathLike[str], state: StorageState) -> Path:
    """Write ``state`` to ``path`` readable by its owner only (``0600``), replacing any file
    atomically (a reader never sees half of it); the folder is made when missing.

    Raises:
        OSError: the file cannot be written.
    """
    target = Path(path).expanduser().absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    # mkstemp makes the file 0600 before a byte of the state is in it.
    handle, temporary = tempfile.mkstemp(prefix=".storage-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(state_bytes(state))
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def describe_state(state: StorageState) -> dict[str, Any]:
    """What a state holds, without a secret: how many cookies, on which domains, and which
    origins with how many localStorage items (what a command or an MCP tool may print)."""
    domains = sorted({str(c.get("domain") or c.get("url") or "") for c in state["cookies"]})
    return {
        "cookies": len(state["cookies"]),
        "cookie_domains": domains,
        "origins": [
            {"origin": entry["origin"], "local_storage_items": len(entry.get("localStorage", []))}
            for entry in state["origins"]
        ],
    }


async def collect_state(
    connection: Connection,
    *,
    context_id: str | None,
    pages: Sequence[Tab],
    origins: Iterable[str],
    scratch: Scratch,
    timeout: float,
) -> StorageState:
    """The cookies of a browser context and the localStorage of every origin it showed.

    Args:
        connection: the browser's connection.
        context_id: Chrome's ``browserContextId``; None for the browser's default context.
        pages: the context's open tabs: the origins their frames show are read there.
        origins: other origins the context showed (read through ``scratch``).
        scratch: opens a scratch tab of the context.
        timeout: seconds each step may take.

    Raises:
        BrowserClosedError, ProtocolError, CommandTimeoutError: the browser failed.
    """
    params = {} if context_id is None else {"browserContextId": context_id}
    cookies = (await connection.send("Storage.getCookies", params, timeout=timeout))["cookies"]
    found: dict[str, dict[str, Any]] = {}
    wanted = {origin for origin in map(origin_of, origins) if origin is not None}
    for tab in pages:
        for origin, session in await _page_origins(tab):
            wanted.add(origin)
            if origin not in found:
                entry = await _read_origin(session, origin, timeout)
                if entry is not None:
                    found[origin] = entry
    missing = sorted(wanted - set(found))
    if missing:
        async with _origin_pages(scratch, timeout) as visit:
            for origin in missing:
                shown = await visit(origin)
                if shown is not None:
                    entry = await _read_origin(shown, origin, timeout)
                    if entry is not None:
                        found[origin] = entry
    kept = [
        found[origin]
        for origin in sorted(found)
        if found[origin]["localStorage"] or found[origin].get("indexedDBNames")
    ]
    return {"cookies": [_saved_cookie(cookie) for cookie in cookies], "origins": kept}


async def apply_state(
    connection: Connection,
    state: StorageState,
    *,
    context_id: str | None,
    scratch: Scratch,
    timeout: float,
) -> list[str]:
    """Put ``state``'s cookies and localStorage into a browser context.

    Returns:
        The origins whose localStorage could not be written, each with why (an origin the
        context's limits refuse, say); the rest were.

    Raises:
        ProtocolError: Chrome refused the cookies (the message names no value).
        BrowserClosedError, CommandTimeoutError: the browser failed.
    """
    cookies = [_cookie_param(cookie) for cookie in state["cookies"]]
    if cookies:
        params: dict[str, Any] = {"cookies": cookies}
        if context_id is not None:
            params["browserContextId"] = context_id
        await connection.send("Storage.setCookies", params, timeout=timeout)
    entries = [entry for entry in state["origins"] if entry.get("localStorage")]
    skipped: list[str] = []
    if not entries:
        return skipped
    async with _origin_pages(scratch, timeout) as visit:
        for entry in entries:
            origin = str(origin_of(entry["origin"]))
            session = await visit(origin, skipped)
            if session is None:
                continue
            for item in entry["localStorage"]:
                await session.send(
                    "DOMStorage.setDOMStorageItem",
                    {
                        "storageId": {"securityOrigin": origin, "isLocalStorage": True},
                        "key": item["name"],
                        "value": item["value"],
                    },
                    timeout=timeout,
                )
    return skipped


async def _page_origins(tab: Tab) -> list[tuple[str, Session]]:
    """The origins ``tab``'s frames show, each with the session that holds the frame."""
    if tab.closed or tab.session is None:
        return []
    shown: list[tuple[str, Session]] = []
    try:
        frames = await tab.frames()
    except EgoError:
        return []
    for frame in frames:
        origin = origin_of(frame.url)
        session = frame.session or tab.session
        if origin is not None and session is not None:
            shown.append((origin, session))
    return shown


async def _read_origin(session: Session, origin: str, timeout: float) -> dict[str, Any] | None:
    """``origin``'s localStorage (and IndexedDB names) as a document of it in ``session``
    sees them; None when no frame of the session shows the origin any more."""
    storage = {"securityOrigin": origin, "isLocalStorage": True}
    try:
        items = await session.send(
            "DOMStorage.getDOMStorageItems", {"storageId": storage}, timeout=timeout
        )
    except EgoError as exc:
        logger.debug("localStorage of %s not read there: %s", origin, exc)
        return None
    entry: dict[str, Any] = {
        "origin": origin,
        "localStorage": [{"name": str(k), "value": str(v)} for k, v in items.get("entries", [])],
    }
    try:
        names = await session.send(
            "IndexedDB.requestDatabaseNames", {"securityOrigin": origin}, timeout=timeout
        )
    except EgoError as exc:
        logger.debug("IndexedDB names of %s not read: %s", origin, exc)
    else:
        if names.get("databaseNames"):
            entry["indexedDBNames"] = sorted(str(name) for name in names["databaseNames"])
    return entry


Visit = Callable[..., Awaitable["Session | None"]]


@contextlib.asynccontextmanager
async def _origin_pages(scratch: Scratch, timeout: float) -> AsyncIterator[Visit]:
    """``visit(origin)``: the scratch tab shown at ``origin`` with an empty page ego serves
    itself; its session, or None (and the reason in ``skipped``, when given) when the origin
    cannot be shown."""
    async with scratch() as tab:
        session = await tab.attach()

        async def fulfil(params: dict[str, Any]) -> None:
            with contextlib.suppress(EgoError):
                await session.send(
                    "Fetch.fulfillRequest",
                    {
                        "requestId": params["requestId"],
                        "responseCode": 200,
                        "responseHeaders": [{"name": "Content-Type", "value": "text/html"}],
                        "body": _BLANK,
                    },
                )

        subscription = session.subscribe("Fetch.requestPaused", fulfil)
        try:
            await session.send("Fetch.enable", _DOCUMENTS, timeout=timeout)

            async def visit(origin: str, skipped: list[str] | None = None) -> Session | None:
                try:
                    await tab.navigate(origin + "/", timeout=timeout)
                except EgoError as exc:
                    logger.warning("storage of %s skipped: %s", origin, exc)
                    if skipped is not None:
                        skipped.append(f"{origin}: {exc}")
                    return None
                return tab.session

            yield visit
        finally:
            subscription.close()


def _saved_cookie(cookie: Mapping[str, Any]) -> dict[str, Any]:
    """A cookie as ``Storage.getCookies`` gives it, in the saved form: Chrome's own fields
    less the ones it computes (``size``, ``session``), ``expires`` -1 for a session cookie."""
    saved = {key: value for key, value in cookie.items() if key in _COOKIE_PARAMS}
    if cookie.get("session") or not isinstance(saved.get("expires"), int | float):
        saved["expires"] = -1
    return saved


def _cookie_param(cookie: Mapping[str, Any]) -> dict[str, Any]:
    """A saved cookie (ego's or Playwright's) as ``Storage.setCookies`` takes it."""
    param = {key: value for key, value in cookie.items() if key in _COOKIE_PARAMS}
    expires = param.get("expires")
    if not isinstance(expires, int | float) or expires <= 0:
        param.pop("expires", None)  # a session cookie
    if param.get("sameSite") not in _SAME_SITE:
        param.pop("sameSite", None)
    return param
