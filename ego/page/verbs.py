"""The verbs every page offers, written once for a tab and a frame alike.

:class:`PageVerbs` is a base of :class:`ego.Tab` and :class:`ego.page.frame.Frame`: each
method is a short wrapper over the module that does the work (snapshot, input, waits,
screenshots). Selectors are CSS and pierce open shadow roots; ``iframe-selector >> selector``
reaches into a frame (:mod:`.locate`); a snapshot's ``ref=e12`` names one element.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import durable, keys, screenshots, snapshot, waits
from . import input as actions

if TYPE_CHECKING:
    from .page import Page
    from .screenshots import ImageFormat
    from .snapshot import Outline

__all__ = ["PageVerbs", "render_outline"]


def render_outline(outline: Outline, kind: str, more: Callable[[int], str]) -> str:
    """``outline`` as text: a header line, the lines, and what was cut worded by ``more``
    (given the next offset)."""
    lines = [f"{kind} {_quoted(outline.title)} {outline.url}", *outline.lines]
    if outline.matches is not None and not outline.lines:
        lines.append("(no line holds the text)")
    elif not outline.total:
        lines.append("(nothing shown: it is empty or hidden)")
    following = outline.next_offset
    if following is not None:
        first, last = outline.offset + 1, outline.offset + len(outline.lines)
        total = f"{outline.total:,}" if outline.whole else "more"
        lines.append(f"… lines {first:,}-{last:,} of {total}: {more(following)} shows the next")
    return "\n".join(lines)


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return '"' + (text[:119] + "…" if len(text) > 120 else text).replace('"', '\\"') + '"'


class PageVerbs:
    """Snapshot, click, type, check, keys, hover, select, upload, waits and element
    screenshots, in the page's own document."""

    #: How the header of a snapshot names the page.
    _outline_kind = "page"

    async def snapshot(
        self: Page,
        *,
        selector: str | None = None,
        max_lines: int = 400,
        offset: int = 0,
        find: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """The page as an agent reads it: Chrome's accessibility tree, one element per line,
        every frame included.

        Each line names an element's role, its name in quotes as Chrome computes it (through
        shadow roots, slots and labels), its states (``[checked]``, ``[expanded]``,
        ``[selected]``, ``[disabled]``, ``[required]``, ``[level=2]``, ...), a field's
        ``value="..."`` and a link's target (``-> /path``); the page's text comes between, in
        its order (``text: ...``), indented by nesting. Every element an agent can act on
        (controls, links, options, tabs, iframes, anything the page made clickable or
        tabbable) carries a ref, ``[ref=e12]``: pass ``"ref=e12"`` as a selector, and
        :meth:`selector_for` gives a selector to keep. A node keeps its ref across
        snapshots while it lives. Every frame is read at once, cross-site ones included, and
        nested under its iframe's line.

        Args:
            selector: outline only the element this selector (or ``"ref=e12"``) names.
            max_lines: the most lines to return (the budget spans every frame).
            offset: skip this many lines first; the last line says the next offset when
                lines were cut.
            find: keep only the lines holding this text (any case) and their ancestors.
            timeout: seconds; the page's default if omitted.

        Raises:
            ElementNotFoundError: ``selector`` matches nothing.
            StaleRefError: ``selector`` is a ref whose node is gone: take a new snapshot.
            ValueError: ``max_lines`` below 1 or ``offset`` below 0.
            as :meth:`evaluate`.
        """
        read = await snapshot.outline(
            self, selector=selector, max_lines=max_lines, offset=offset, find=find,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip
        kind: str = getattr(self, "_outline_kind", "page")
        return render_outline(read, kind, lambda following: f"snapshot(offset={following})")

    async def selector_for(self: Page, ref: str) -> str:
        """A selector to keep for the node a snapshot's ref names (a ref lives only as long as
        its node; a learning keeps a selector).

        ``role=button[name="Delete account"]`` when the role and name Chrome computes find the
        node alone, else a CSS selector; a node in a frame gets its iframe's selector and
        ``>>`` first. Each is checked in the page to find exactly that node, and every verb
        takes it.

        Args:
            ref: ``"e12"`` or ``"ref=e12"``, as a snapshot printed it.

        Raises:
            ValueError: not a ref.
            StaleRefError: the ref's node is gone: take a new snapshot.
            NoSelectorError: no selector finds the node alone (in a closed shadow root).
            ElementNotFoundError: on a frame, a ref of a node outside it.
        """
        return await durable.selector_for(self, ref)

    async def click(self: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
        """Click the element as a user does: a mouse press and release at its point.

        ego first waits until the element can take the click (docs/architecture.md,
        "Actionability"): attached, visible, enabled, stable (the same box on two animation
        frames) and the one a hit test at its point finds (or something inside it); then it
        scrolls it into view and sends ``Input.dispatchMouseEvent`` at that point, in the
        tab's coordinates. Of several matches, the first that passes is clicked, never a
        hidden one.

        Args:
            selector: a CSS selector (open shadow roots pierced; ``iframe >> selector`` for
                an element in a frame) or a snapshot's ref (``"ref=e12"``).
            wait: seconds to wait for the element to appear and pass the checks (0: check
                once, over one animation frame).
            force: skip the checks (the element still needs a box to click at).

        Raises:
            InvalidSelectorError: a malformed selector; nothing was done.
            ElementNotFoundError: nothing matches within ``wait`` (``StaleRefError``: a
                ref whose node is gone).
            ElementNotActionableError: it matches, but stayed hidden, disabled, moving or
                covered (the error names the check and what it saw).
        """
        await actions.click(self, selector, wait=wait, force=force)

    async def type(
        self: Page,
        selector: str,
        text: str,
        *,
        clear: bool = True,
        delay: float | None = None,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Type ``text`` into the field ``selector`` names, as a keyboard does.

        The field is clicked as :meth:`click` clicks (or focused, when something covers it),
        then the text goes into whatever took the focus: an input, a textarea, a
        contenteditable, an EditContext editor's surface (``Input.insertText``, what an input
        method's commit does) or a ``role=textbox`` that listens to keys (key events). The
        page sees ``beforeinput`` and ``input`` as from a user, and ``change`` when the
        field loses focus. A ``<select>`` gets the option with that value or label
        (:meth:`select`); a date, time, colour or range input its value set.

        Args:
            selector: a CSS selector or a snapshot's ref (``"ref=e12"``).
            text: what to type.
            clear: first select what the field holds and delete it, as a user would
                (the default: the field ends up holding ``text``); False types at its end.
            delay: type one key at a time, this many seconds apart (key events, as a
                keyboard sends them), instead of inserting the text at once.
            wait: seconds to wait for the field to appear and take input.
            force: skip the checks before the click.

        Raises:
            ElementNotActionableError: the field stayed hidden, disabled, read-only or
                covered, or what took the focus takes no text (``check == "editable"``).
            InvalidSelectorError, ElementNotFoundError: as :meth:`click`.
        """
        await actions.type_text(
            self, selector, text, clear=clear, delay=delay, wait=wait, force=force
        )

    async def check(self: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
        """Check a checkbox, switch or radio (``input`` or ``role=checkbox|switch|radio``,
        its label, or an element holding one) by clicking it, unless it is checked already;
        then make sure it is.

        Raises:
            ElementNotActionableError: it is no checkbox, switch or radio; the click left it
                unchecked; or as :meth:`click`.
            InvalidSelectorError, ElementNotFoundError: as :meth:`click`.
        """
        await actions.check(self, selector, True, wait=wait, force=force)

    async def uncheck(self: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
        """Uncheck a checkbox or switch by clicking it, unless it is unchecked already; then
        make sure it is. A radio cannot be unchecked: check another of its group.

        Raises:
            as :meth:`check`.
        """
        await actions.check(self, selector, False, wait=wait, force=force)

    async def press(self: Page, key: str) -> None:
        """Press a key in the focused element, as the keyboard would.

        ``key`` is one character (``"a"``, ``"A"``, ``"/"``) or a key name (``"Enter"``,
        ``"Tab"``, ``"Escape"``, ``"Backspace"``, ``"ArrowDown"``, ``"PageUp"``, ``"F5"``,
        ...), after modifiers joined by ``+``: ``"Control+A"``, ``"Shift+Tab"``,
        ``"Control+Shift+ArrowLeft"``. Focus a field first (``click``) to type in it; keys
        go to the focused element of the tab, whichever frame holds it.

        Raises:
            ValueError: an unknown key or modifier.
        """
        await keys.press(self, key)

    async def hover(self: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
        """Move the mouse over the element's point, once it is visible, still and on top
        (the checks of :meth:`click` but ``enabled``); ``mouseenter`` handlers run and
        ``:hover`` styles apply.

        Args:
            selector: a CSS selector or a snapshot's ref (``"ref=e12"``).
            wait: seconds to wait for the element to appear and pass the checks.
            force: skip the checks.

        Raises:
            as :meth:`click`.
        """
        await actions.hover(self, selector, wait=wait, force=force)

    async def select(
        self: Page,
        selector: str,
        values: str | Sequence[str],
        *,
        wait: float = 5.0,
        force: bool = False,
    ) -> list[str]:
        """Choose options of a ``<select>`` by value (or else by visible label), firing
        ``input`` and ``change``, once it is visible and enabled; return the values now
        selected.

        Args:
            selector: a CSS selector or a snapshot's ref for the ``<select>``.
            values: one value or several (for a ``multiple`` select); ``[]`` clears it.
            wait: seconds to wait for the element to appear and pass the checks.
            force: skip the checks.

        Raises:
            WrongElementError: it is not a ``<select>`` (for an option, the error names its
                select's ref), at once.
            ElementNotFoundError: nothing matches, or no option has one of ``values`` (the
                message lists the options).
            ElementNotActionableError: it stayed hidden or disabled.
            ValueError: several values for a single select.
            InvalidSelectorError: a malformed selector.
        """
        return await actions.select(self, selector, values, wait=wait, force=force)

    async def upload(
        self: Page,
        selector: str,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Put local files into an ``<input type=file>`` (``DOM.setFileInputFiles``; a
        hidden input too, as pages style them, but not a disabled one); the page gets
        ``input`` and ``change`` as if the user had picked them.

        Raises:
            FileNotFoundError: a path is not an existing file; nothing is set.
            ElementNotFoundError: nothing matches within ``wait``, or not a file input.
            ElementNotActionableError: the input stayed disabled.
            ValueError: several files for an input without ``multiple``.
            InvalidSelectorError: a malformed selector.
        """
        await actions.upload(self, selector, paths, wait=wait, force=force)

    async def wait_for(
        self: Page,
        *,
        text: str | None = None,
        selector: str | None = None,
        url: str | None = None,
        network_idle: bool = False,
        timeout: float | None = None,
    ) -> float:
        """Wait until one condition holds: ``text`` shows, ``selector`` matches, the URL
        contains ``url`` (or matches it as a glob with ``*``), or the network is idle (no
        request in flight for 0.5 s); return the seconds waited.

        Text and elements are watched by a ``MutationObserver`` in the page, open shadow
        roots included (again in the new document if the page navigates); URLs and the
        network by the tab's events.

        Args:
            timeout: seconds; the page's default if omitted.

        Raises:
            ValueError: not exactly one condition given.
            InvalidSelectorError: a malformed ``selector``.
            CommandTimeoutError: it did not hold in time; the message names the condition.
        """
        return await waits.wait_for(
            self, text=text, selector=selector, url=url, network_idle=network_idle,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def screenshot(
        self: Page,
        *,
        full_page: bool = False,
        selector: str | None = None,
        format: ImageFormat = "png",
        quality: int | None = None,
        path: str | os.PathLike[str] | None = None,
        max_size: int | None = None,
    ) -> bytes:
        """Capture the viewport (or the whole page, or one element) and return the image.

        On a frame, the capture is the frame's own box (or the element's); ``full_page`` is
        for a tab.

        Args:
            full_page: the whole scrollable page instead of the viewport.
            selector: a CSS selector: capture only the first matching element's box.
            format: ``"png"``, ``"jpeg"`` or ``"webp"``.
            quality: 0-100, for JPEG and WebP.
            path: also write the image to this file.
            max_size: scale the image down so that its longer side is at most this many
                pixels (None: full size).

        Raises:
            ElementNotFoundError: ``selector`` matches nothing (or only a hidden element).
            ValueError: a bad format, quality or size, or both ``full_page`` and ``selector``.
        """
        shot = await screenshots.capture(
            self, full_page=full_page, selector=selector, format=format, quality=quality,
            path=path, max_size=max_size,
        )  # fmt: skip
        return shot.data
