"""The generic MCP tools for tabs, navigation and reading a page, on the current tab.

The current tab is the one last navigated or chosen with ``select_tab`` (else the first open
tab, else a new one): see :class:`~ego.mcp.holder.BrowserHolder`. Names follow what agents
know from chrome-devtools-mcp where one fits (``take_snapshot``, ``list_network_requests``,
``get_network_request``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from pydantic import Field

from ..errors import ContextDestroyedError, DialogOpenError, EgoError
from ..page import snapshot
from ..page.frame import Frame
from ..page.network import Request
from ..page.refs import parse_ref
from ..page.tab import Tab
from ..page.verbs import render_outline
from .ego_server import EgoServer
from .holder import CHANGES_PAGE, DESTRUCTIVE, READ_ONLY, BrowserHolder, call, check
from .results import tool_result
from .sdk import CallToolResult, ToolError
from .wording import mcp_message

__all__ = ["Force", "Ref", "Target", "add_browser_tools", "page_info", "settled", "target_of"]

TabId = Annotated[str, Field(description='A tab\'s "id" from list_tabs.')]
Selector = Annotated[str, Field(description="A CSS selector (take_snapshot gives reusable ones).")]
Target = Annotated[
    str | None,
    Field(
        description="A CSS selector (open shadow roots pierced; 'iframe >> selector' for an "
        "element in a frame), or a snapshot's ref as 'ref=e12'. Give this or ref."
    ),
]
Ref = Annotated[
    str | None,
    Field(description="A ref take_snapshot printed ('e12' or 'ref=e12'). Give this or selector."),
]
Force = Annotated[
    bool,
    Field(
        description="Skip the checks made before acting (visible, enabled, still, not "
        "covered): for an element the checks wrongly refuse."
    ),
]


def target_of(selector: str | None, ref: str | None) -> str:
    """What an action tool acts on: its ``selector``, or its ``ref`` as ``ref=e12``.

    Raises:
        ToolError: neither or both given.
    """
    if (selector is None) == (ref is None):
        raise ToolError(
            "InvalidSelectorError: give selector (CSS) or ref (from take_snapshot), one of them"
        )
    if ref is not None:
        ref = ref.strip()
        return ref if ref.startswith(("ref=", "[")) else f"ref={ref}"
    assert selector is not None
    return selector


async def page_info(tab: Tab) -> dict[str, Any]:
    """The tab's id, URL and title, read from the page itself (as Chrome last reported them
    when the page is already on its way to another document, a form its script sends)."""
    try:
        where = await tab.evaluate("({url: location.href, title: document.title})")
    except ContextDestroyedError:
        where = None
    except EgoError as exc:
        raise ToolError(mcp_message(exc)) from None
    url = where.get("url", tab.url) if isinstance(where, dict) else tab.url
    title = where.get("title", "") if isinstance(where, dict) else ""
    return {"id": tab.target_id, "url": str(url), "title": str(title)}


async def _frame(tab: Tab, frame: str | None) -> Tab | Frame:
    """The page a tool with a ``frame`` argument acts on: the tab, or the frame with that
    id, or the one the iframe selector names."""
    if frame is None:
        return tab
    for known in await call(tab.frames):
        if known.id == frame:
            return known
    return await call(lambda: tab.frame(selector=frame, timeout=5.0))


#: Seconds with no request in flight after an action before it counts as settled, and the
#: most an action waits for that.
_SETTLE_QUIET = 0.1
_SETTLE_AT_MOST = 2.0


async def settled(tab: Tab, started: float) -> dict[str, Any]:
    """Let what an action started settle: wait (briefly, bounded) for the page's requests to
    finish, then for the downloads that began since ``started`` to be saved. Answers
    ``{"downloads": [...]}`` when any began, else ``{}``."""
    with contextlib.suppress(EgoError):
        await tab.network_log.wait_idle(quiet=_SETTLE_QUIET, timeout=_SETTLE_AT_MOST)
    begun = [download for download in tab.downloads() if download.started_at >= started]
    for download in begun:
        with contextlib.suppress(EgoError):
            await download.finished(tab.default_timeout)
    return {"downloads": [download.as_dict() for download in begun]} if begun else {}


async def acting(
    tab: Tab, action: Callable[[], Awaitable[object]], started: float
) -> dict[str, Any] | None:
    """Run an input ``action``; when it opened a page dialog (which then blocks the page),
    answer what happened instead of an error: the action ran, and how to answer the dialog.

    Raises:
        ToolError: the action failed (a dialog that was open before it included).
    """
    try:
        # A download the action starts must land in ego's folder, whoever set it last.
        await tab.keep_downloads()
        await action()
    except DialogOpenError as exc:
        dialog = tab.dialog
        if dialog is None or dialog.opened_at < started:
            raise ToolError(mcp_message(exc)) from None
        shown = f" {dialog.message!r}" if dialog.message else ""
        return {
            "dialog": dialog.as_dict(),
            "next": f"this opened a {dialog.type} dialog{shown}; the page waits until it is "
            "answered: call handle_dialog with accept: true or false (prompt_text for a "
            "prompt)",
        }
    except EgoError as exc:
        raise ToolError(mcp_message(exc)) from None
    return None


def _request(request: Request) -> dict[str, Any]:
    fields = {key: value for key, value in request.as_dict().items() if key != "request_id"}
    return {"id": request.request_id, **fields}


def add_browser_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register the tab, navigation and page-reading tools on ``server``."""

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_tabs() -> CallToolResult:
        """List the open tabs.

        Use it to find a tab's id for select_tab or close_tab. Returns a list of
        {id, url, title, current}; current marks the tab the page tools act on.
        """
        browser = await holder.browser()
        tabs = await call(browser.tabs)
        current = await holder.tab() if tabs else None
        listed = [
            {"id": t.target_id, "url": t.url, "title": t.title, "current": t is current}
            for t in tabs
        ]
        return tool_result(listed)

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def select_tab(id: TabId) -> CallToolResult:
        """Make a tab the current one (and bring it to the front).

        Every page tool (take_snapshot, click, evaluate, ...) then acts on it. Returns
        {id, url, title}.
        """
        tab = await holder.tab_by_id(id)
        await call(tab.activate)
        holder.use(tab)
        return tool_result(await page_info(tab))

    @server.tool(group="pages", in_read_only=True, annotations=DESTRUCTIVE)
    async def close_tab(
        id: Annotated[
            str | None, Field(description='A tab\'s "id" from list_tabs; default: current.')
        ] = None,
    ) -> CallToolResult:
        """Close a tab: the one with this id, else the current one.

        When the current tab closes, the next page tool uses the first open tab. Returns
        {closed: id, open: number of tabs left}.
        """
        tab = await holder.tab_by_id(id) if id else await holder.tab()
        holder.forget(tab)
        await call(tab.close)
        browser = await holder.browser()
        left = await call(browser.tabs)
        return tool_result({"closed": tab.target_id, "open": len(left)})

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate(
        url: Annotated[str, Field(description="The URL to open.")],
        new_tab: Annotated[bool, Field(description="Open it in a new tab.")] = False,
    ) -> CallToolResult:
        """Open a URL in the current tab (or a new one, which becomes current) and wait for
        it to load.

        Returns {id, url, title} of the loaded page.
        """
        browser = await holder.browser()
        if new_tab:
            tab = await call(lambda: browser.new_tab(url))
        else:
            tab = await holder.tab()
            await call(lambda: tab.navigate(url))
        holder.use(tab)
        return tool_result(await page_info(tab))

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate_back() -> CallToolResult:
        """Go back one page in the current tab's history and wait for it to load.

        Returns {id, url, title} of the page now shown.
        """
        tab = await holder.tab()
        await call(tab.back)
        return tool_result(await page_info(tab))

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate_forward() -> CallToolResult:
        """Go forward one page in the current tab's history and wait for it to load.

        Returns {id, url, title} of the page now shown.
        """
        tab = await holder.tab()
        await call(tab.forward)
        return tool_result(await page_info(tab))

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def reload(
        resend: Annotated[
            bool,
            Field(
                description="Reload a page that is the answer to a form (a POST), sending the "
                "form again (refused on a read-only server)."
            ),
        ] = False,
    ) -> CallToolResult:
        """Reload the current page and wait for it to load.

        Also brings back a tab whose renderer crashed. A page that came from a form (a POST)
        is reloaded only with resend: true, since that sends the form again. Returns {id,
        url, title}.
        """
        if resend and holder.limits.read_only:
            raise ToolError(
                "reload with resend: true sends a form again, and this server is read-only "
                "(ego mcp --read-only): navigate to the page's URL for a fresh copy instead"
            )
        tab = await holder.tab()
        await call(lambda: tab.reload(resend=resend))
        return tool_result(await page_info(tab))

    @server.tool(group="input", annotations=DESTRUCTIVE)
    async def evaluate(
        expression: Annotated[
            str,
            Field(description="A JavaScript expression; top-level await works."),
        ],
        frame: Annotated[
            str | None,
            Field(
                description="Run in this frame: an iframe's selector as take_snapshot prints "
                'it before ">>", or a frame "id" from list_frames. Default: the page.'
            ),
        ] = None,
        timeout: Annotated[
            float | None,
            Field(
                description="Seconds the code may run (default 30); a script still "
                "running then is stopped.",
                gt=0,
            ),
        ] = None,
    ) -> CallToolResult:
        """Evaluate JavaScript in the current page (or one of its frames) and return its
        value.

        Use it to read what the snapshot does not show or to try code before saving it with
        save_browser_tool. Returns the JSON value (an object as is, anything else under
        "result").
        """
        tab = await holder.tab()
        page = await _frame(tab, frame)
        return tool_result(await call(lambda: page.evaluate(expression, timeout=timeout)))

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_frames() -> CallToolResult:
        """The frames of the current page: the page itself first, then each iframe (cross-site
        ones included), each before the frames inside it.

        Use it to find a frame for evaluate's frame argument. Returns a list of {id, name,
        url, parent} (parent: the id of the frame that holds it, null for the page).
        """
        tab = await holder.tab()
        frames = await call(tab.frames)
        return tool_result(
            [
                {
                    "id": frame.id,
                    "name": frame.name,
                    "url": frame.url,
                    "parent": frame.parent.id if frame.parent else None,
                }
                for frame in frames
            ]
        )

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def take_snapshot(
        selector: Annotated[
            str | None,
            Field(description='Outline only the element this selector (or "ref=e12") names.'),
        ] = None,
        ref: Annotated[
            str | None,
            Field(description='Outline only the element with this ref ("e12"), as printed.'),
        ] = None,
        max_lines: Annotated[
            int, Field(description="The most lines to return.", ge=1, le=5000)
        ] = 400,
        offset: Annotated[
            int,
            Field(description="Skip this many lines first (the next page of a cut outline).", ge=0),
        ] = 0,
        find: Annotated[
            str | None,
            Field(
                description="Keep only the lines holding this text (any case), with the "
                "lines they sit under."
            ),
        ] = None,
    ) -> CallToolResult:
        """The current page as the browser's accessibility tree, every frame included
        (cross-site ones too): one element per line with its role, "name", states
        ([checked], [expanded], [disabled], ...), value and link target, the page's text
        between, and [ref=e12] on each element you can act on.

        Use it to find what to click or type into: pass the ref to click, type and the
        other tools (ref: "e12", or selector: "ref=e12"); a ref stays good while its element
        lives. selector_for turns a ref into a selector to keep in a learning. A long page
        is cut at max_lines: the last line says the offset to pass for the rest. Returns the
        outline as text (and under "result").
        """
        tab = await holder.tab()
        root = selector
        if ref is not None:
            if selector is not None:
                raise ToolError("take_snapshot: give selector or ref, not both")
            name = parse_ref(ref) or parse_ref(f"ref={ref}")
            if name is None:
                raise ToolError(f"take_snapshot: {ref!r} is not a ref; pass one it printed (e12)")
            root = f"ref={name}"
        outline = await call(
            lambda: snapshot.outline(
                tab, selector=root, max_lines=max_lines, offset=offset, find=find,
                timeout=tab.default_timeout,
            )
        )  # fmt: skip
        text = render_outline(outline, "page", lambda following: f"offset: {following}")
        return tool_result(text)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def click(
        selector: Target = None, ref: Ref = None, force: Force = False
    ) -> CallToolResult:
        """Click an element of the current page as a user does: once it is visible, enabled,
        still and on top at its point (waits up to 5 s), a real mouse click there.

        A click that starts a download waits for the file and reports where it was saved.
        Returns {clicked: selector or ref} (and downloads: [{path, suggested_filename, url,
        size, state}] when any started).
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        started = time.time()
        opened = await acting(tab, lambda: tab.click(target, force=force), started)
        if opened is not None:
            return tool_result({"clicked": target, **opened})
        return tool_result({"clicked": target, **await settled(tab, started)})

    @server.tool(group="input", name="type", annotations=CHANGES_PAGE)
    async def type_text(
        text: Annotated[str, Field(description="The text to type.")],
        selector: Target = None,
        ref: Ref = None,
        clear: Annotated[
            bool,
            Field(description="Replace what the field holds (true) or type at its end."),
        ] = True,
        force: Force = False,
    ) -> CallToolResult:
        """Type text into a field of the current page as a keyboard does: the field is
        clicked (or focused), then the text goes where the focus went: an input, a textarea,
        a contenteditable, a code editor's surface or a role=textbox. A read-only or disabled
        field is refused.

        Returns {typed: selector or ref}.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        typing = lambda: tab.type(target, text, clear=clear, force=force)  # noqa: E731
        opened = await acting(tab, typing, time.time())
        return tool_result({"typed": target, **(opened or {})})

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY)
    async def list_network_requests() -> CallToolResult:
        """The requests the current page made since it loaded, in order.

        Use it to find the site's own API (then call it with fetch in a saved tool). Returns
        a list of {id, method, url, type, status, mime_type, failed, from_cache}; pass an id
        to get_network_request for the response body.
        """
        tab = await holder.tab()
        requests = await call(tab.network)
        return tool_result([_request(r) for r in requests])

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY)
    async def get_network_request(
        id: Annotated[str, Field(description='A request\'s "id" from list_network_requests.')],
        path: Annotated[
            str | None,
            Field(
                description="Save the whole body to this file (inside the server's folders) "
                "instead of returning it."
            ),
        ] = None,
    ) -> CallToolResult:
        """One request of the current page with its response body.

        Returns {id, method, url, type, status, mime_type, failed, from_cache, body}; body
        is the text, or base64 for binary data (base64_encoded says which). With path, the
        body is saved there and {path, bytes} replace it.
        """
        tab = await holder.tab()
        target = check(lambda: holder.files.for_writing(path)) if path is not None else None
        requests = await call(tab.network)
        found = [r for r in requests if r.request_id == id]
        data: dict[str, Any] = _request(found[0]) if found else {"id": id}
        body = await call(lambda: tab.response_body(id))
        if target is not None:
            raw = body if isinstance(body, bytes) else body.encode()
            saved = await call(lambda: asyncio.to_thread(holder.files.write, target, raw))
            return tool_result({**data, "path": str(saved), "bytes": len(raw)})
        if isinstance(body, bytes):  # Chrome sends a binary body base64-encoded
            data.update(body=base64.b64encode(body).decode(), base64_encoded=True)
        else:
            data.update(body=body, base64_encoded=False)
        return tool_result(data)
