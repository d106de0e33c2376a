"""The verbs every page offers, written once for a tab and a frame alike.

:class:`PageVerbs` is a base of :class:`ego.Tab` and :class:`ego.page.frame.Frame`: each
method is a short wrapper over the module that does the work (snapshot, input, drag,
scrolling, waits, screenshots). Selectors are CSS (piercing open shadow roots), ``role=``,
``text=``, ``label=``, ``placeholder=``, ``alt=``, ``title=`` or ``testid=``, chained with
``>>`` (into an iframe's document, or within the element before; :mod:`.locate`); a
snapshot's ``ref=e12`` names one element.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, cast

from . import drag, durable, predicate, screenshots, scrolling, snapshot, waits
from . import input as actions
from .action_log import observed_verbs
from .keyboard import Keyboard
from .keys import press as press_keys
from .mouse import Mouse

if TYPE_CHECKING:
    from .action_log import Observation
    from .aim import Position
    from .page import Page
    from .predicate import Polling
    from .screenshots import ImageFormat
    from .scrolling import ScrollPosition
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


@observed_verbs
class PageVerbs:
    """Snapshot, click, double-click, type, check, keys, the mouse and keyboard, hover,
    drag, scrolling, select, upload, waits and element screenshots, in the page's own
    document.

    Every public verb reports each call to the observers of its tab
    (:mod:`ego.page.action_log`): a verb added here is observed with no more code."""

    #: How the header of a snapshot names the page.
    _outline_kind = "page"
    #: Who observes the actions of the page's tab (the tab's list, shared by its frames).
    _action_observers: list[Observation]

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

        As a person would name the node: its test id (``testid="save"``), else
        ``role=button[name="Delete account"]`` when the role and name Chrome computes find the
        node alone, else its placeholder, label, alt text, text or title
        (``label="Email"``), else a CSS selector; a node in a frame gets its iframe's
        selector and ``>>`` first. Each is checked in the page to find exactly that node,
        and every verb takes it.

        Args:
            ref: ``"e12"`` or ``"ref=e12"``, as a snapshot printed it.

        Raises:
            ValueError: not a ref.
            StaleRefError: the ref's node is gone: take a new snapshot.
            NoSelectorError: no selector finds the node alone (in a closed shadow root).
            ElementNotFoundError: on a frame, a ref of a node outside it.
        """
        return await durable.selector_for(self, ref)

    async def click(
        self: Page,
        selector: str,
        *,
        button: str = "left",
        click_count: int = 1,
        modifiers: Iterable[str] = (),
        position: Position | None = None,
        delay: float | None = None,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Click the element as a user does: a mouse press and release at its point.

        ego first waits until the element can take the click (docs/architecture.md,
        "Actionability"): attached, visible, enabled, stable (the same box on two animation
        frames) and the one a hit test at its point finds (or something inside it); then it
        scrolls it into view and sends ``Input.dispatchMouseEvent`` at that point, in the
        tab's coordinates. Of several matches, the first that passes is clicked, never a
        hidden one. The page sees the events a person's click makes: ``mousedown``,
        ``mouseup`` and ``click`` (``detail`` the count); a second count adds ``dblclick``,
        the right button ``contextmenu`` and ``auxclick``, the middle ``auxclick``. A click
        that makes its frame navigate returns once the next page came.

        Args:
            selector: a selector (CSS, ``role=``, ``text=``, ``label=``, ... ; ``>>`` to
                chain, ``iframe >> selector`` for an element in a frame) or a snapshot's
                ref (``"ref=e12"``).
            button: ``"left"``, ``"right"`` (a context menu) or ``"middle"``.
            click_count: 2 is a double click (a press and release, then another with
                ``clickCount`` 2, as a person's), 3 a triple click.
            modifiers: keys held during the click: ``["Shift"]``, ``["Control"]``,
                ``["Alt"]``, ``["Meta"]``.
            position: ``{"x": ..., "y": ...}``, CSS pixels from the element's padding
                box's top-left corner, instead of its centre.
            delay: seconds between each press and its release.
            wait: seconds to wait for the element to appear and pass the checks (0: check
                once, over one animation frame).
            force: skip the checks (the element still needs a box to click at).

        Raises:
            ValueError: an unknown button or modifier, a click count below 1, a position
                that is not ``{"x", "y"}``.
            InvalidSelectorError: a malformed selector; nothing was done.
            ElementNotFoundError: nothing matches within ``wait`` (``StaleRefError``: a
                ref whose node is gone).
            ElementNotActionableError: it matches, but stayed hidden, disabled, moving or
                covered (the error names the check and what it saw).
            CommandTimeoutError: the click began a navigation and no page came within the
                tab's ``default_timeout`` (the click itself landed).
        """
        how = actions.Click.of(
            "click", button=button, click_count=click_count, modifiers=modifiers,
            position=position, delay=delay,
        )  # fmt: skip
        await actions.click(self, selector, how=how, wait=wait, force=force)

    async def dblclick(
        self: Page,
        selector: str,
        *,
        button: str = "left",
        modifiers: Iterable[str] = (),
        position: Position | None = None,
        delay: float | None = None,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Double-click the element as a person does: :meth:`click` with ``click_count=2``
        (``click``, ``click``, ``dblclick``; ``detail`` 1 then 2).

        Raises:
            as :meth:`click`.
        """
        how = actions.Click.of(
            "dblclick", button=button, click_count=2, modifiers=modifiers,
            position=position, delay=delay,
        )  # fmt: skip
        await actions.click(self, selector, how=how, wait=wait, force=force, verb="dblclick")

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
        (:meth:`select`); a date, time, colour or range input its value set. The field is
        read back afterwards: one that reformats the text (a mask) has taken it.

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
                covered, or what took the focus takes no text (``check == "editable"``); read
                back, it took none of the text (it holds what it held before: a handler
                refused it; a date, time or colour the browser takes in another form), or an
                editor still shows what it held before after the clear was made twice
                (``check == "typed"``).
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

    async def press(self: Page, *keys: str, delay: float | None = None) -> None:
        """Press keys in the focused element, as the keyboard would.

        A key is one character (``"a"``, ``"A"``, ``"/"``) or a key name (``"Enter"``,
        ``"Tab"``, ``"Escape"``, ``"Backspace"``, ``"ArrowDown"``, ``"PageUp"``, ``"F5"``,
        ...), after modifiers joined by ``+``: ``"Control+A"``, ``"Shift+Tab"``,
        ``"Control+Shift+ArrowLeft"``, ``"ControlOrMeta+Z"`` (Meta on macOS, Control
        elsewhere). Several keys are pressed one after another: ``press("Control+A",
        "Delete")``, or in one string cut at spaces, ``press("Control+A Delete")``
        (``"Space"`` is the space bar). A platform's editing shortcut (select all, copy,
        cut, paste, undo, redo) also runs its editing command, as the platform's key
        binding does. Focus a field first (``click``) to type in it; keys go to the focused
        element of the tab, whichever frame holds it (:attr:`keyboard` holds keys down).

        Args:
            delay: seconds between each key's down and up.

        Raises:
            ValueError: an unknown key or modifier, or no key.
        """
        await press_keys(self, *keys, delay=delay)

    @property
    def mouse(self: Page) -> Mouse:
        """The tab's mouse: ``move(x, y, steps=)``, ``down(button=)``, ``up(button=)``,
        ``click(x, y, ...)``, ``dblclick``, ``wheel(dx, dy)``, at points in the tab's CSS
        pixels (on a frame too). The element verbs leave it where they acted."""
        # One per page, so that ``tab.mouse is tab.mouse``: its state is the tab's anyway.
        mouse = self.__dict__.get("_mouse")
        if mouse is None:
            mouse = self.__dict__["_mouse"] = Mouse(self)
        return cast("Mouse", mouse)

    @property
    def keyboard(self: Page) -> Keyboard:
        """The tab's keyboard, acting on whatever has the focus: ``type(text, delay=)``,
        ``press(chords...)``, ``down(key)``, ``up(key)``, ``insert_text(text)``."""
        keyboard = self.__dict__.get("_keyboard")
        if keyboard is None:
            keyboard = self.__dict__["_keyboard"] = Keyboard(self)
        return cast("Keyboard", keyboard)

    async def hover(
        self: Page,
        selector: str,
        *,
        position: Position | None = None,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Move the mouse over the element's point, once it is visible, still and on top
        (the checks of :meth:`click` but ``enabled``); ``mouseenter`` handlers run and
        ``:hover`` styles apply. With a mouse button held (``mouse.down()``), the move is a
        drag's.

        Args:
            selector: a selector or a snapshot's ref (``"ref=e12"``).
            position: ``{"x": ..., "y": ...}`` from the top-left corner of the element's
                padding box.
            wait: seconds to wait for the element to appear and pass the checks.
            force: skip the checks.

        Raises:
            as :meth:`click`.
        """
        await actions.hover(self, selector, position=position, wait=wait, force=force)

    async def drag_to(
        self: Page,
        source: str,
        target: str,
        *,
        source_position: Position | None = None,
        target_position: Position | None = None,
        steps: int = drag.DRAG_STEPS,
        wait: float = 5.0,
        force: bool = False,
    ) -> None:
        """Drag ``source`` onto ``target`` with the left mouse button, as a person does:
        press at the source's point, move there in ``steps`` moves, release.

        Both ends get the checks of :meth:`hover` (the target's once the button is down).
        An HTML5 drag and drop (a ``draggable`` element, a link, an image) is finished as
        Chrome finishes one: ``dragstart`` with the page's ``dataTransfer``, then
        ``dragenter``, ``dragover`` and ``drop`` at the target and ``dragend`` at the
        source; anything else sees pointer moves with the button down (a sortable list, a
        map that pans).

        Args:
            source, target: selectors or refs, as :meth:`click` takes.
            source_position, target_position: ``{"x", "y"}`` from each element's padding
                box's top-left corner, instead of its centre.
            steps: mouse moves from one point to the other.
            wait: seconds for the whole drag's waits.
            force: skip the checks.

        Raises:
            ValueError: ``steps`` below 1, or a bad position.
            InvalidSelectorError, ElementNotFoundError, ElementNotActionableError: as
                :meth:`hover`, naming the source (``drag``) or the target (``drop on``).
        """
        await drag.drag_to(
            self, source, target, source_position=source_position,
            target_position=target_position, steps=steps, wait=wait, force=force,
        )  # fmt: skip

    async def scroll_into_view(self: Page, selector: str, *, wait: float = 5.0) -> None:
        """Scroll the element to the middle of the view (unless it is wholly in view), its
        frames into the tab's view too, and return once the page handled the scroll.

        Raises:
            InvalidSelectorError, ElementNotFoundError: as :meth:`click`.
            ElementNotActionableError: it stayed hidden.
        """
        await scrolling.scroll_into_view(self, selector, wait=wait)

    async def scroll(
        self: Page,
        selector: str | None = None,
        *,
        dx: float = 0,
        dy: float = 0,
        to: str | None = None,
        until: str | None = None,
        wait: float | None = None,
    ) -> ScrollPosition:
        """Scroll the page, or what a wheel over the element would scroll (itself; else what
        inside it has the most to scroll, a data grid's body; else its nearest scrolling
        ancestor): by ``dx``/``dy`` pixels, to an edge (``to="bottom"``, ``"top"``,
        ``"left"``, ``"right"``; ``"end"``, ``"start"``), or a view at a time toward ``to``
        (the bottom by default) until ``until`` matches a visible element, which is then
        scrolled into view: how to reach a row of a virtualized list, which exists only
        once scrolled near. The page gets its ``scroll`` events and draws what came into
        view before this returns (``mouse.wheel`` sends wheel input instead).

        Args:
            wait: seconds for the element to show (5 by default) and, with ``until``, for
                the whole search (the page's timeout by default: each view takes a frame
                or two to draw).

        Returns:
            where the scroller is: ``scrolled`` (what, in words), ``x``, ``y``, ``max_x``,
            ``max_y`` and, with ``until``, ``found``.

        Raises:
            ValueError: none or several of ``dx``/``dy``, ``to`` and ``until``.
            InvalidSelectorError: a malformed ``selector`` or ``until``.
            ElementNotFoundError: ``selector`` matches nothing within ``wait``, or the
                scroller reached its end with nothing matching ``until``.
            ElementNotActionableError: the element stayed hidden.
            CommandTimeoutError: ``until`` matched nothing within ``wait``.
        """
        return await scrolling.scroll(self, selector, dx=dx, dy=dy, to=to, until=until, wait=wait)

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
        function: str | None = None,
        polling: Polling = "raf",
        timeout: float | None = None,
    ) -> float:
        """Wait until one condition holds: ``text`` shows, ``selector`` matches, the URL
        contains ``url`` (or matches it as a glob with ``*``), the network is idle (no
        request in flight for 0.5 s), or the JavaScript ``function`` returns something
        truthy; return the seconds waited.

        Text and elements are watched by a ``MutationObserver`` in the page, open shadow
        roots included (again in the new document if the page navigates); URLs and the
        network by the tab's events; ``function`` (``"() => window.app.ready"``, or an
        expression) is called in the page on every animation frame, or every ``polling``
        seconds.

        Args:
            polling: ``"raf"`` (every animation frame) or seconds, for ``function``.
            timeout: seconds; the page's default if omitted.

        Raises:
            ValueError: not exactly one condition given, or a bad ``polling``.
            InvalidSelectorError: a malformed ``selector``.
            JavaScriptError: ``function`` threw.
            CommandTimeoutError: it did not hold in time; the message names the condition.
        """
        given = [text, selector, url, function]
        if sum(value is not None for value in given) + bool(network_idle) != 1:
            raise ValueError(
                "wait_for takes exactly one of text=, selector=, url=, function= or "
                "network_idle=True"
            )
        seconds = self.default_timeout if timeout is None else timeout
        if function is not None:
            return await predicate.wait_function(self, function, polling=polling, timeout=seconds)
        return await waits.wait_for(
            self, text=text, selector=selector, url=url, network_idle=network_idle,
            timeout=seconds,
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
