"""The generic MCP tools for tabs, navigation and reading a page, on the current tab.

The current tab is the one last navigated or chosen with ``select_tab`` (else the first open
tab, else a new one): see :class:`~ego.mcp.holder.BrowserHolder`. Names follow what agents
know from chrome-devtools-mcp where one fits (``take_snapshot``, ``list_network_requests``,
``get_network_request``).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import ContextDestroyedError, EgoError
from ..learning.catalog.matching import as_url
from ..page import snapshot
from ..page.frame import Frame
from ..page.network import Request
from ..page.refs import parse_ref
from ..page.tab import Tab
from ..page.verbs import render_outline
from .acting import Diff, Force, Modifiers, Ref, Target, act, target_of
from .changes import Watch, remember, reply
from .ego_server import EgoServer
from .holder import CHANGES_PAGE, DESTRUCTIVE, READ_ONLY, BrowserHolder, call, check
from .results import tool_result
from .sdk import CallToolResult, ToolError
from .wording import mcp_message

__all__ = ["add_browser_tools", "page_info", "went"]

TabId = Annotated[str, Field(description="A tab id from list_tabs.")]


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


async def went(
    tab: Tab, move: Callable[[], Awaitable[object]] | None, *, diff: bool
) -> CallToolResult:
    """Run a navigation of ``tab`` (load, back, forward, reload; None: a tab just opened on
    its page) and answer the page it shows: {id, url, title} and what it holds, against the
    page before (:mod:`.changes`).

    Raises:
        ToolError: the navigation failed.
    """
    watch = Watch(tab, diff=diff)
    if move is not None:
        await watch.start(read=False)
        await call(move)
    # The page is read for the note while its address is asked: nothing else comes between
    # the navigation's end and the read.
    noting = asyncio.ensure_future(watch.note())
    try:
        info = await page_info(tab)
    except BaseException:
        noting.cancel()
        await asyncio.gather(noting, return_exceptions=True)
        raise
    note = await noting
    if note is not None:
        for known in ("url", "title"):  # the answer says them
            note.pop(known, None)
    return reply(info, note)


def _request(request: Request) -> dict[str, Any]:
    fields = {key: value for key, value in request.as_dict().items() if key != "request_id"}
    return {"id": request.request_id, **fields}


def add_browser_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register the tab, navigation and page-reading tools on ``server``."""

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_tabs() -> CallToolResult:
        """The open tabs: [{id, url, title, current}]; page tools act on the current one."""
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
        """Make a tab current (and bring it to the front). Returns {id, url, title}."""
        tab = await holder.tab_by_id(id)
        await call(tab.activate)
        holder.use(tab)
        return tool_result(await page_info(tab))

    @server.tool(group="pages", in_read_only=True, annotations=DESTRUCTIVE)
    async def close_tab(
        id: Annotated[str | None, Field(description="A tab id; default: the current tab.")] = None,
    ) -> CallToolResult:
        """Close a tab. Returns {closed, open: tabs left}."""
        tab = await holder.tab_by_id(id) if id else await holder.tab()
        holder.forget(tab)
        await call(tab.close)
        browser = await holder.browser()
        left = await call(browser.tabs)
        return tool_result({"closed": tab.target_id, "open": len(left)})

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate(
        url: str,
        new_tab: Annotated[bool, Field(description="In a new tab, made current.")] = False,
        diff: Diff = True,
    ) -> CallToolResult:
        """Open a URL in the current tab and wait for it to load. Returns {id, url, title}
        and the page's first lines with refs."""
        url = as_url(url)  # a bare host, as a person types it, is a URL
        browser = await holder.browser()
        if new_tab:
            opened = await call(lambda: browser.new_tab(url))
            holder.use(opened)
            return await went(opened, None, diff=diff)
        tab = await holder.tab()
        holder.use(tab)
        return await went(tab, lambda: tab.navigate(url), diff=diff)

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate_back(diff: Diff = True) -> CallToolResult:
        """Go back in the current tab's history; answers as navigate."""
        tab = await holder.tab()
        return await went(tab, tab.back, diff=diff)

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def navigate_forward(diff: Diff = True) -> CallToolResult:
        """Go forward in the current tab's history; answers as navigate."""
        tab = await holder.tab()
        return await went(tab, tab.forward, diff=diff)

    @server.tool(group="pages", in_read_only=True, annotations=CHANGES_PAGE)
    async def reload(
        resend: Annotated[
            bool, Field(description="Send again the form (POST) the page answers.")
        ] = False,
        diff: Diff = True,
    ) -> CallToolResult:
        """Reload the current page (a crashed tab too); answers as navigate."""
        if resend and holder.limits.read_only:
            raise ToolError(
                "reload with resend: true sends a form again, and this server is read-only "
                "(ego mcp --read-only): navigate to the page's URL for a fresh copy instead"
            )
        tab = await holder.tab()
        return await went(tab, lambda: tab.reload(resend=resend), diff=diff)

    @server.tool(group="input", annotations=DESTRUCTIVE)
    async def evaluate(
        expression: Annotated[str, Field(description="JavaScript; await works.")],
        frame: Annotated[
            str | None, Field(description="A frame id (list_frames) or iframe selector.")
        ] = None,
        timeout: Annotated[float | None, Field(description="Seconds (default 30).", gt=0)] = None,
    ) -> CallToolResult:
        """Run JavaScript in the current page (or a frame) and return its JSON value."""
        tab = await holder.tab()
        page = await _frame(tab, frame)
        return tool_result(await call(lambda: page.evaluate(expression, timeout=timeout)))

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_frames() -> CallToolResult:
        """The current page's frames, the page first: [{id, name, url, parent}]."""
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
        find: Annotated[
            str | None, Field(description="Only lines with this text, and their parents.")
        ] = None,
        selector: Annotated[str | None, Field(description="Only this element.")] = None,
        ref: Ref = None,
        max_lines: Annotated[int, Field(ge=1, le=5000)] = 400,
        offset: Annotated[int, Field(description="Lines to skip (paging).", ge=0)] = 0,
    ) -> CallToolResult:
        """The current page (all frames) as its accessibility tree: a line per element (role,
        "name", states, value, link) with [ref=e12] on what you can act on. Actions reply
        with what changed (diff: false skips it): one snapshot per page is enough."""
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
        if root is None:
            remember(tab, outline)
        text = render_outline(outline, "page", lambda following: f"offset: {following}")
        return tool_result(text)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def click(
        selector: Target = None,
        ref: Ref = None,
        button: Literal["left", "right", "middle"] = "left",
        double: bool = False,
        modifiers: Modifiers = None,
        force: Force = False,
        diff: Diff = True,
    ) -> CallToolResult:
        """Click as a user does, once the element can be clicked (up to 5 s). Selectors: CSS,
        text=, label=, placeholder=, role=, ref=e12. Returns {clicked}, what changed, any
        download or dialog."""
        target = target_of(selector, ref)
        tab = await holder.tab()
        count = 2 if double else 1
        clicked = lambda: tab.click(  # noqa: E731
            target, button=button, click_count=count, modifiers=modifiers or (), force=force
        )
        return await act(tab, clicked, lambda _: {"clicked": target}, diff=diff)

    @server.tool(group="input", name="type", annotations=CHANGES_PAGE)
    async def type_text(
        text: str,
        selector: Target = None,
        ref: Ref = None,
        clear: Annotated[bool, Field(description="false: append.")] = True,
        force: Force = False,
        diff: Diff = True,
    ) -> CallToolResult:
        """Type into a field as a keyboard does, after clicking it; with no field, at the
        focus. Returns {typed} and what changed."""
        tab = await holder.tab()
        if selector is None and ref is None:
            typing: Callable[[], Awaitable[None]] = lambda: tab.keyboard.type(text)  # noqa: E731
            return await act(tab, typing, lambda _: {"typed": "the focus"}, diff=diff)
        target = target_of(selector, ref)
        typing = lambda: tab.type(target, text, clear=clear, force=force)  # noqa: E731
        return await act(tab, typing, lambda _: {"typed": target}, diff=diff)

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY)
    async def list_network_requests() -> CallToolResult:
        """The current page's requests since it loaded (a site's own API among them): [{id,
        method, url, type, status, ...}]."""
        tab = await holder.tab()
        requests = await call(tab.network)
        return tool_result([_request(r) for r in requests])

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY, files=True)
    async def get_network_request(
        id: Annotated[str, Field(description="An id from list_network_requests.")],
        path: Annotated[str | None, Field(description="Save the body to this file.")] = None,
    ) -> CallToolResult:
        """One request with its response body (base64_encoded says if binary; with path,
        {path, bytes} instead)."""
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
