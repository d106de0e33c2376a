"""The MCP tools that look at or act inside the current page beyond click and type:
screenshot, console, waiting, keys, hover, drag, scroll, check boxes, options, file uploads
and dialogs.

Each is one call of the :class:`~ego.page.tab.Tab` verb of the same job, on the current tab, named
as agents know it from chrome-devtools-mcp (``take_screenshot``, ``list_console_messages``,
``wait_for``, ``press_key``, ``hover``, ``drag``, ``select_option``, ``upload_file``,
``handle_dialog``), ``check``/``uncheck`` as Playwright names them, and ``scroll``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field

from .acting import Diff, Force, Ref, Target, act, target_of, thing_of
from .changes import forget
from .ego_server import EgoServer
from .holder import CHANGES_PAGE, READ_ONLY, BrowserHolder, call, check
from .images import MAX_BYTES, MAX_EDGE, bounded_screenshot
from .results import image_result, tool_result
from .sdk import CallToolResult, ToolError

__all__ = ["add_page_tools"]

_MIME = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
#: Resolves once the tab drew two frames.
_DRAWN = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(0))))"
_KEYS = '"Enter", "Control+A", "Control+A Delete" (in turn)'


def add_page_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register the screenshot, console, wait, key, hover, check, option, upload and dialog
    tools."""

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY, files=True)
    async def take_screenshot(
        full_page: Annotated[bool, Field(description="The whole page, not the viewport.")] = False,
        selector: Annotated[str | None, Field(description="Only this element.")] = None,
        format: Literal["png", "jpeg", "webp"] = "png",
        quality: Annotated[int | None, Field(description="jpeg/webp only.", ge=0, le=100)] = None,
        path: Annotated[str | None, Field(description="Save to this file.")] = None,
        full_size: Annotated[
            bool, Field(description=f"Unscaled (else {MAX_EDGE} px, {MAX_BYTES // 1000} kB).")
        ] = False,
    ) -> CallToolResult:
        """An image of the page, when layout matters (take_snapshot finds elements for
        less); x, y on it is x / scale, y / scale on the page."""
        tab = await holder.tab()
        target = check(lambda: holder.files.for_writing(path)) if path is not None else None
        shot = await call(
            lambda: bounded_screenshot(
                tab, full_page=full_page, selector=selector, format=format, quality=quality,
                full_size=full_size,
            )
        )  # fmt: skip
        if path is not None:
            target = await call(lambda: asyncio.to_thread(holder.files.write, path, shot.data))
        what = f"element {selector}" if selector else "full page" if full_page else "viewport"
        info = {
            "format": shot.format,
            "bytes": len(shot.data),
            "scale": round(shot.scale, 4),
            "width": round(shot.width * shot.scale),
            "height": round(shot.height * shot.scale),
            "path": str(target) if target is not None else None,
        }
        scaled = f", scaled {shot.scale:.2f}" if shot.scale < 1 else ""
        text = (
            f"Screenshot of the {what} of {tab.url} ({shot.format}, {len(shot.data)} bytes{scaled})"
        )
        if target is not None:
            return tool_result(info, text=f"{text}, saved to {target}")
        return image_result(shot.data, _MIME[shot.format], info, text)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def selector_for(
        ref: Annotated[str, Field(description="A ref (e12).")],
    ) -> CallToolResult:
        """A lasting selector for a ref's element, to keep in a learning (role=button[name=
        "Save"], else CSS). Returns {ref, selector}."""
        tab = await holder.tab()
        selector = await call(lambda: tab.selector_for(ref))
        return tool_result({"ref": ref, "selector": selector})

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_console_messages(
        level: Annotated[
            str | None, Field(description="error, warning, log, info or debug.")
        ] = None,
    ) -> CallToolResult:
        """The tab's console messages and uncaught exceptions, oldest first."""
        tab = await holder.tab()
        messages = await call(tab.console)
        listed = [m.as_dict() for m in messages if level is None or m.level == level]
        return tool_result(listed)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def wait_for(
        text: str | None = None,
        selector: str | None = None,
        url: Annotated[str | None, Field(description="A part of the page's URL.")] = None,
        network_idle: bool = False,
        timeout: Annotated[float, Field(gt=0)] = 10.0,
    ) -> CallToolResult:
        """Wait until the page shows a text, has an element (selector), reaches a URL or its
        network is idle. Returns {waited_for, seconds}."""
        tab = await holder.tab()
        given: dict[str, Any] = {
            key: value
            for key, value in (("text", text), ("selector", selector), ("url", url))
            if value is not None
        }
        if network_idle:
            given["network_idle"] = True
        result = await call(
            lambda: tab.wait_for(
                text=text, selector=selector, url=url, network_idle=network_idle, timeout=timeout
            )
        )
        data: dict[str, Any] = {"waited_for": given}
        if isinstance(result, dict):
            data.update(result)
        elif isinstance(result, int | float) and not isinstance(result, bool):
            data["seconds"] = result
        return tool_result(data)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def press_key(
        key: Annotated[
            str, Field(description='"Enter", "Control+A", "Control+A Delete" (in turn)')
        ],
        diff: Diff = True,
    ) -> CallToolResult:
        """Press keys on the focused element. Returns {pressed} and what changed."""
        tab = await holder.tab()
        return await act(tab, lambda: tab.press(key), lambda _: {"pressed": key}, diff=diff)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def hover(
        selector: Target = None, ref: Ref = None, force: Force = False, diff: Diff = True
    ) -> CallToolResult:
        """Move the mouse over an element (a menu, a tooltip). Returns {hovered} and what
        changed."""
        target = target_of(selector, ref)
        tab = await holder.tab()
        hovered = lambda: tab.hover(target, force=force)  # noqa: E731
        return await act(tab, hovered, lambda _: {"hovered": target}, diff=diff)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def drag(
        source: Annotated[str, Field(description="Selector or ref (e12) to drag.")],
        target: Annotated[str, Field(description="Selector or ref to drop on.")],
        diff: Diff = True,
    ) -> CallToolResult:
        """Drag an element onto another with the mouse (drag and drop, a sortable list, a
        map). Returns {dragged, onto} and what changed."""
        start, end = thing_of(source), thing_of(target)
        tab = await holder.tab()
        dragged = lambda: tab.drag_to(start, end)  # noqa: E731
        return await act(tab, dragged, lambda _: {"dragged": start, "onto": end}, diff=diff)

    # Scrolling reads further down a page: a read-only server keeps it, as it keeps navigate.
    @server.tool(group="input", in_read_only=True, annotations=CHANGES_PAGE)
    async def scroll(
        target: Annotated[str | None, Field(description="Selector or ref; none: the page.")] = None,
        dy: float = 0,
        dx: float = 0,
        to: Literal["top", "bottom", "left", "right"] | None = None,
        until: str | None = None,
        wheel: bool = False,
        diff: Diff = True,
    ) -> CallToolResult:
        """Scroll the page or an element by dy/dx pixels, to an edge, or until the selector
        until shows (a virtualized list's row); wheel: by the mouse wheel. Returns where it
        is and what changed."""
        where_to = thing_of(target) if target is not None else None
        tab = await holder.tab()
        if wheel:
            if to is not None or until is not None:
                raise ToolError("scroll: wheel turns the wheel by dy/dx; leave to and until out")

            async def turned() -> dict[str, Any]:
                if where_to is not None:
                    await tab.hover(where_to)
                await tab.mouse.wheel(dx, dy)
                await tab.evaluate(_DRAWN, describe=False)  # the scroll shows, for the note
                return {"wheel": [dx, dy], "at": list(tab.mouse.position)}

            return await act(tab, turned, lambda moved: moved or {}, diff=diff)

        async def scrolled() -> dict[str, Any]:
            where = await tab.scroll(where_to, dx=dx, dy=dy, to=to, until=until)
            return where.as_dict()

        return await act(tab, scrolled, lambda where: where or {}, diff=diff)

    @server.tool(group="input", name="check", annotations=CHANGES_PAGE)
    async def check_box(
        selector: Target = None, ref: Ref = None, force: Force = False, diff: Diff = True
    ) -> CallToolResult:
        """Check a checkbox, switch or radio unless checked. Returns {checked} and what
        changed."""
        target = target_of(selector, ref)
        tab = await holder.tab()
        checking = lambda: tab.check(target, force=force)  # noqa: E731
        return await act(tab, checking, lambda _: {"checked": target}, diff=diff)

    @server.tool(group="input", name="uncheck", annotations=CHANGES_PAGE)
    async def uncheck_box(
        selector: Target = None, ref: Ref = None, force: Force = False, diff: Diff = True
    ) -> CallToolResult:
        """Uncheck a checkbox or switch. Returns {unchecked} and what changed."""
        target = target_of(selector, ref)
        tab = await holder.tab()
        unchecking = lambda: tab.uncheck(target, force=force)  # noqa: E731
        return await act(tab, unchecking, lambda _: {"unchecked": target}, diff=diff)

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def select_option(
        values: Annotated[list[str], Field(description="Values or labels.")],
        selector: Target = None,
        ref: Ref = None,
        diff: Diff = True,
    ) -> CallToolResult:
        """Select options of a <select>. Returns {selector, selected} and what changed."""
        target = target_of(selector, ref)
        tab = await holder.tab()

        def answer(selected: object) -> dict[str, Any]:
            chosen = selected if isinstance(selected, list) else values
            return {"selector": target, "selected": chosen}

        return await act(tab, lambda: tab.select(target, values), answer, diff=diff)

    @server.tool(group="input", annotations=CHANGES_PAGE, files=True)
    async def upload_file(
        paths: Annotated[list[str], Field(description="Files on the server's machine.")],
        selector: Target = None,
        ref: Ref = None,
    ) -> CallToolResult:
        """Put files into a file input. Returns {selector, files}."""
        target = target_of(selector, ref)
        tab = await holder.tab()
        checked = check(lambda: [holder.files.for_reading(path) for path in paths])
        # Chrome reads a file when the page does: it gets a private copy, read without
        # following a link put in place of the file since the check.
        staged = await call(
            lambda: asyncio.to_thread(lambda: [holder.files.staged_upload(p) for p in checked])
        )
        await call(lambda: tab.upload(target, staged))
        forget(tab)  # the page changed with no note: the next one reads it before its action
        return tool_result({"selector": target, "files": [str(file) for file in checked]})

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def handle_dialog(
        accept: Annotated[bool, Field(description="true: OK; false: Cancel.")],
        prompt_text: str | None = None,
    ) -> CallToolResult:
        """Answer the dialog open in the current tab. Returns it and the tab's recent
        ones."""
        tab = await holder.tab()
        answered = await call(lambda: tab.handle_dialog(accept, prompt_text=prompt_text))
        forget(tab)  # what the answer did comes with no note
        data = answered.as_dict()
        data["recent"] = [dialog.as_dict() for dialog in tab.dialogs[-10:]]
        return tool_result(data)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_downloads() -> CallToolResult:
        """The files pages downloaded, oldest first: [{path, url, size, state, ...}]."""
        browser = await holder.browser()
        return tool_result([download.as_dict() for download in browser.downloads()])

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY, files=True)
    async def save_pdf(path: str, landscape: bool = False) -> CallToolResult:
        """Print the current page to a PDF file. Returns {path, bytes, url}."""
        tab = await holder.tab()
        target = check(lambda: holder.files.for_writing(path))
        data = await call(lambda: tab.pdf(landscape=landscape))
        target = await call(lambda: asyncio.to_thread(holder.files.write, target, data))
        return tool_result({"path": str(target), "bytes": len(data), "url": tab.url})
