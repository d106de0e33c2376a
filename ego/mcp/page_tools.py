"""The MCP tools that look at or act inside the current page beyond click and type:
screenshot, console, waiting, keys, hover, check boxes, options, file uploads and dialogs.

Each is one call of the :class:`~ego.page.tab.Tab` verb of the same job, on the current tab, named
as agents know it from chrome-devtools-mcp (``take_screenshot``, ``list_console_messages``,
``wait_for``, ``press_key``, ``hover``, ``select_option``, ``upload_file``,
``handle_dialog``), and ``check``/``uncheck`` as Playwright names them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from pydantic import Field

from .browser_tools import Force, Ref, Target, acting, settled, target_of
from .ego_server import EgoServer
from .holder import CHANGES_PAGE, READ_ONLY, BrowserHolder, call, check
from .images import MAX_BYTES, MAX_EDGE, bounded_screenshot
from .results import image_result, tool_result
from .sdk import CallToolResult

__all__ = ["add_page_tools"]

Selector = Annotated[str, Field(description="A CSS selector (take_snapshot gives reusable ones).")]

_MIME = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def add_page_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register the screenshot, console, wait, key, hover, check, option, upload and dialog
    tools."""

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def take_screenshot(
        full_page: Annotated[
            bool, Field(description="The whole scrollable page, not just the viewport.")
        ] = False,
        selector: Annotated[
            str | None, Field(description="Only the element this CSS selector names.")
        ] = None,
        format: Annotated[Literal["png", "jpeg", "webp"], Field(description="Image type.")] = "png",
        quality: Annotated[
            int | None, Field(description="0-100, for jpeg and webp only.", ge=0, le=100)
        ] = None,
        path: Annotated[
            str | None,
            Field(
                description="Save the image to this file (inside the server's folders) "
                "instead of returning it."
            ),
        ] = None,
        full_size: Annotated[
            bool,
            Field(
                description=f"Keep every pixel: without it the image is scaled to at most "
                f"{MAX_EDGE} px on its longer side and about {MAX_BYTES // 1000} kB."
            ),
        ] = False,
    ) -> CallToolResult:
        """See the current page as an image (the viewport, the whole page, or one element).

        Use it when the layout or a visual state matters; take_snapshot is cheaper for
        finding elements. The image is scaled down to fit a context window unless full_size
        is true; "scale" says how (a point x, y of the image is x / scale, y / scale on the
        page). Returns the image (or, with path, the file), and {format, bytes, scale, width,
        height, path}.
        """
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
        ref: Annotated[str, Field(description='A ref take_snapshot printed ("e12").')],
    ) -> CallToolResult:
        """A selector to keep for the element a ref names: role and name
        (role=button[name="Save"]) when they find it alone, else CSS; an element in a
        frame gets its iframe's selector and ">>" first. Checked in the page to find exactly
        that element.

        Use it when saving a learning (a ref lives only as long as its element); to act now,
        the ref itself is enough. Returns {ref, selector}.
        """
        tab = await holder.tab()
        selector = await call(lambda: tab.selector_for(ref))
        return tool_result({"ref": ref, "selector": selector})

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_console_messages(
        level: Annotated[
            str | None,
            Field(description='Only this level ("error", "warning", "log", "info", "debug").'),
        ] = None,
    ) -> CallToolResult:
        """What the current tab's pages wrote to the console since ego attached, and their
        uncaught exceptions (level "error", exception true), oldest first.

        Use it when a page misbehaves or a tool fails without a clear error. Returns a list
        of {level, text, url, line, column, timestamp, exception, stack}.
        """
        tab = await holder.tab()
        messages = await call(tab.console)
        listed = [m.as_dict() for m in messages if level is None or m.level == level]
        return tool_result(listed)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def wait_for(
        text: Annotated[str | None, Field(description="Text to appear on the page.")] = None,
        selector: Annotated[
            str | None, Field(description="A CSS selector to match an element.")
        ] = None,
        url: Annotated[
            str | None, Field(description="The page URL to contain this (e.g. a path).")
        ] = None,
        network_idle: Annotated[
            bool, Field(description="Wait until no request is in flight for a moment.")
        ] = False,
        timeout: Annotated[float, Field(description="Seconds to wait at most.", gt=0)] = 10.0,
    ) -> CallToolResult:
        """Wait until the current page shows a text, has an element, reaches a URL, or its
        network goes idle; give one of them.

        Use it after an action whose effect comes later (a search, a submit). Fails after
        timeout seconds. Returns {waited_for, seconds}.
        """
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
            str,
            Field(description='A key or combination: "Enter", "Escape", "ArrowDown", "Control+A".'),
        ],
    ) -> CallToolResult:
        """Press a key (with modifiers joined by "+") in the current page, on the focused
        element.

        Use it to submit with Enter, close with Escape, or move through a list. Returns
        {pressed: key}.
        """
        tab = await holder.tab()
        started = time.time()
        opened = await acting(tab, lambda: tab.press(key), started)
        if opened is not None:
            return tool_result({"pressed": key, **opened})
        return tool_result({"pressed": key, **await settled(tab, started)})

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def hover(
        selector: Target = None, ref: Ref = None, force: Force = False
    ) -> CallToolResult:
        """Move the mouse over an element of the current page, once it is visible, still and
        on top (waits up to 5 s).

        Use it to open a menu or tooltip that appears on hover. Returns {hovered: selector
        or ref}.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        await call(lambda: tab.hover(target, force=force))
        return tool_result({"hovered": target})

    @server.tool(group="input", name="check", annotations=CHANGES_PAGE)
    async def check_box(
        selector: Target = None, ref: Ref = None, force: Force = False
    ) -> CallToolResult:
        """Check a checkbox, switch or radio of the current page (an input, a role=checkbox,
        switch or radio, its label, or an element holding one) by clicking it, unless it is
        checked already; fails when the click did not check it.

        Returns {checked: selector or ref}.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        opened = await acting(tab, lambda: tab.check(target, force=force), time.time())
        return tool_result({"checked": target, **(opened or {})})

    @server.tool(group="input", name="uncheck", annotations=CHANGES_PAGE)
    async def uncheck_box(
        selector: Target = None, ref: Ref = None, force: Force = False
    ) -> CallToolResult:
        """Uncheck a checkbox or switch of the current page by clicking it, unless it is
        unchecked already; fails when the click did not uncheck it (a radio cannot be
        unchecked: check another of its group).

        Returns {unchecked: selector or ref}.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        opened = await acting(tab, lambda: tab.uncheck(target, force=force), time.time())
        return tool_result({"unchecked": target, **(opened or {})})

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def select_option(
        values: Annotated[list[str], Field(description="The option values (or labels) to select.")],
        selector: Target = None,
        ref: Ref = None,
    ) -> CallToolResult:
        """Select options of a <select> of the current page, once it is visible and enabled.

        Returns {selector, selected}: the values now selected.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        selected = await call(lambda: tab.select(target, values))
        chosen = selected if isinstance(selected, list) else values
        return tool_result({"selector": target, "selected": chosen})

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def upload_file(
        paths: Annotated[
            list[str], Field(description="Files on the server's machine to put in the input.")
        ],
        selector: Target = None,
        ref: Ref = None,
    ) -> CallToolResult:
        """Put files into a file input of the current page (a hidden one too; the page sees
        them as chosen by the user).

        Returns {selector, files}.
        """
        target = target_of(selector, ref)
        tab = await holder.tab()
        checked = check(lambda: [holder.files.for_reading(path) for path in paths])
        # Chrome reads a file when the page does: it gets a private copy, read without
        # following a link put in place of the file since the check.
        staged = await call(
            lambda: asyncio.to_thread(lambda: [holder.files.staged_upload(p) for p in checked])
        )
        await call(lambda: tab.upload(target, staged))
        return tool_result({"selector": target, "files": [str(file) for file in checked]})

    @server.tool(group="input", annotations=CHANGES_PAGE)
    async def handle_dialog(
        accept: Annotated[
            bool, Field(description="true presses OK (or Leave); false presses Cancel.")
        ],
        prompt_text: Annotated[
            str | None, Field(description="The answer to type into a prompt() dialog.")
        ] = None,
    ) -> CallToolResult:
        """Answer the alert, confirm, prompt or beforeunload dialog open in the current tab.

        While a dialog is open the page runs nothing and page tools fail with
        DialogOpenError naming it; answer it here, then go on. Returns the dialog {type,
        message, url, answer, prompt_text, handled_by, open} and the tab's recent dialogs.
        """
        tab = await holder.tab()
        answered = await call(lambda: tab.handle_dialog(accept, prompt_text=prompt_text))
        data = answered.as_dict()
        data["recent"] = [dialog.as_dict() for dialog in tab.dialogs[-10:]]
        return tool_result(data)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def list_downloads() -> CallToolResult:
        """The files pages downloaded since the browser started, oldest first, each saved in
        ego's downloads folder on the server's machine.

        A click or key that starts a download also reports it in its own result. Returns a
        list of {path, suggested_filename, url, size, state, started_at, finished_at}; state
        is "completed", "in_progress" or "canceled".
        """
        browser = await holder.browser()
        return tool_result([download.as_dict() for download in browser.downloads()])

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY)
    async def save_pdf(
        path: Annotated[str, Field(description="Where to save the PDF on the server's machine.")],
        landscape: Annotated[bool, Field(description="Landscape orientation.")] = False,
    ) -> CallToolResult:
        """Print the current page to a PDF file.

        Returns {path, bytes, url}.
        """
        tab = await holder.tab()
        target = check(lambda: holder.files.for_writing(path))
        data = await call(lambda: tab.pdf(landscape=landscape))
        target = await call(lambda: asyncio.to_thread(holder.files.write, target, data))
        return tool_result({"path": str(target), "bytes": len(data), "url": tab.url})
