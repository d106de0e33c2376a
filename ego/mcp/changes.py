"""What an action did to the page, said in its reply, so that an agent needs no fresh
snapshot after each one.

Each tab's last snapshot is kept (its lines, document, URL and title): the one
``take_snapshot`` returned whole, or the one read after the last action. After an action the
page is read again and compared with it:

- in the same document, the lines that appeared (``+ ``) and then those that disappeared
  (``- ``), each in page order; a ref names the same element across snapshots, so a changed
  element is its new line and its old one;
- when a modal dialog opens (or anything else makes the rest of the page inert), its lines,
  and how many of the page's went out of reach behind it; when it closes, the dialog's lines
  that went and what changed against the page as it was before the dialog opened;
- in a new document (a link followed, a form sent), the new page's lines, less the lines at
  its top and bottom that read as on the page before (a site's header and footer): those
  are counted, and their refs are new; the same URL again (a reload) is listed from its top;
- the focused element when it moved, the URL and the title when they changed.

The note is bounded (:data:`MAX_LINES`, :data:`MAX_CHARS`) and says how much it left out. A
page that cannot be read in :data:`READ_TIMEOUT` seconds, or an action that opened a dialog
(the page then runs nothing), gets no lines. ``diff=false`` on a tool skips the reading and
says only what the page's address and title tell; the tab's last snapshot is then forgotten,
so that the next note is against the page as it was just before its own action.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from dataclasses import dataclass, replace
from typing import Any, Final
from weakref import WeakKeyDictionary

from ..errors import EgoError
from ..page import snapshot, unchanged
from ..page.tab import Tab
from ..page.unchanged import DocumentWatch
from ..protocol.jsontext import json_text
from .results import tool_result
from .sdk import CallToolResult

__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "MAX_NEW_CHARS",
    "MAX_NEW_LINES",
    "READ_TIMEOUT",
    "Seen",
    "Watch",
    "changes",
    "forget",
    "note_lines",
    "remember",
    "reply",
]

#: The most lines a note shows of what changed in a page, and the characters they may hold.
MAX_LINES: Final = 30
MAX_CHARS: Final = 1200
#: The most lines (and characters) a note shows of a new page: its first ones, which are
#: enough to act on the usual page (take_snapshot reads the rest).
MAX_NEW_LINES: Final = 20
MAX_NEW_CHARS: Final = 800
#: Seconds the reading after an action may take before the note goes without lines.
READ_TIMEOUT: Final = 5.0
#: The most lines of a page compared; past it a note says the page is too long to compare.
MAX_COMPARED: Final = 5000

_FOCUSED: Final = " [focused]"
#: What a line of a new page may differ in from the same line of the page before and still
#: read as the same: its ref (every ref of a new document is new) and a field's value.
_PER_DOCUMENT: Final = re.compile(r' \[ref=e[0-9]+\]| value="(?:[^"\\]|\\.)*"')
_READ_PAGE: Final = "({url: location.href, title: document.title})"


@dataclass(frozen=True, slots=True)
class Seen:
    """A tab's page as last read.

    Attributes:
        documents: which of the tab's documents it was (``Tab.documents``).
        url, title: the page's.
    """

    documents: int
    url: str
    title: str
    #: The snapshot's lines with their focus marks taken out (None when not read).
    lines: tuple[str, ...] | None
    #: The focused element's line, if one was marked.
    focused: str | None
    #: Whether the snapshot held every line of the page.
    whole: bool = True
    #: How many parts of the page were inert (a modal dialog's document, an ``inert``
    #: element: ``Outline.inert``).
    inert: int = 0
    #: While something is inert, the lines of the page as they were before it went inert.
    behind: tuple[str, ...] | None = None


#: Each tab's last snapshot; a tab that goes is forgotten with it.
_SEEN: WeakKeyDictionary[Tab, Seen] = WeakKeyDictionary()
#: Tabs whose page changed while it settled after an action, with the document it was
#: (``Tab.documents``): their notes read the page once it settled.
_RESTLESS: WeakKeyDictionary[Tab, int] = WeakKeyDictionary()


def remember(tab: Tab, outline: snapshot.Outline) -> None:
    """Keep ``outline`` as ``tab``'s last snapshot when it holds the whole page (no selector,
    no ``find``, not cut)."""
    if outline.offset == 0 and outline.next_offset is None and outline.matches is None:
        _keep(tab, _seen(tab.documents, outline))


def forget(tab: Tab) -> None:
    """Drop ``tab``'s last snapshot: the page changed in a way no note saw, so the next note
    reads the page before its action instead of comparing with a page that is gone."""
    _SEEN.pop(tab, None)


def _keep(tab: Tab, seen: Seen) -> Seen:
    """Keep ``seen`` as ``tab``'s last snapshot, with the page as it was before something
    went inert (carried from the snapshot before, while anything is)."""
    before = _SEEN.get(tab)
    behind = None
    if seen.inert and before is not None and before.documents == seen.documents:
        if seen.inert > before.inert:
            behind = before.behind if before.behind is not None else before.lines
        else:
            behind = before.behind
    kept = replace(seen, behind=behind)
    _SEEN[tab] = kept
    return kept


def _seen(documents: int, outline: snapshot.Outline) -> Seen:
    lines: list[str] = []
    focused = None
    for line in outline.lines:
        if _FOCUSED in line:
            line = line.replace(_FOCUSED, "", 1)
            focused = line.strip()
        lines.append(line)
    whole = outline.next_offset is None
    return Seen(documents, outline.url, outline.title, tuple(lines), focused, whole, outline.inert)


async def _read(tab: Tab, *, keep: bool = True) -> Seen | None:
    """``tab``'s page now, with its lines (kept as its last snapshot unless ``keep`` is
    False); None when it cannot be read (a dialog, a page that does not answer in time)."""
    documents = tab.documents
    try:
        outline = await snapshot.outline(tab, max_lines=MAX_COMPARED, timeout=READ_TIMEOUT)
    except EgoError:
        return None
    seen = _seen(documents, outline)
    return _keep(tab, seen) if keep else seen


async def _read_while_settling(tab: Tab) -> tuple[Seen | None, DocumentWatch | None]:
    """``tab``'s page read at once, and a watch of its documents from before the read (the
    note keeps the read only if nothing changed since)."""
    try:
        frames = await tab.frames()
    except EgoError:
        return None, None
    watched = await unchanged.watch(frames, READ_TIMEOUT)
    return await _read(tab, keep=False), watched


async def _address(tab: Tab) -> Seen | None:
    """``tab``'s URL and title only (``diff=false``)."""
    try:
        where = await tab.evaluate(_READ_PAGE, timeout=READ_TIMEOUT)
    except EgoError:
        return None
    if not isinstance(where, dict):
        return None
    url, title = str(where.get("url", tab.url)), str(where.get("title", ""))
    return Seen(tab.documents, url, title, None, None)


class Watch:
    """What the page was before an action, to say after it what changed.

    The page after the action is read while the caller waits for it to settle
    (:meth:`acted`), with a watch of each frame's document from just before that read: when
    nothing changed the document by the time the note is asked for, that read is the note's,
    else the page is read again then. A tab whose page changed meanwhile is read after the
    settling from then on, until it shows another document (a page that keeps changing
    would be read twice each time).

    Args:
        tab: the tab acted on.
        diff: compare the page's lines (else only its URL and title).
    """

    def __init__(self, tab: Tab, *, diff: bool) -> None:
        self.tab = tab
        self.diff = diff
        self.before: Seen | None = None
        #: Which of the tab's documents :meth:`start` saw (None: not started).
        self.documents: int | None = None
        self._early: asyncio.Future[tuple[Seen | None, DocumentWatch | None]] | None = None

    async def start(self, *, read: bool = True) -> Watch:
        """Note the page as it is now: its last snapshot when that is of this document,
        else a fresh read (none with ``read`` False: a navigation, whose note lists the new
        page, needs the page before only to leave out the lines both share).
        """
        self.documents = self.tab.documents
        if not self.diff:
            forget(self.tab)
            self.before = await _address(self.tab)
            return self
        known = _SEEN.get(self.tab)
        if known is not None and known.documents == self.tab.documents:
            self.before = known
        elif read:
            self.before = await _read(self.tab)
        return self

    def acted(self) -> None:
        """The action is done: start reading the page while the caller lets it settle."""
        if self.diff and _RESTLESS.get(self.tab) != self.tab.documents:
            self._early = asyncio.ensure_future(_read_while_settling(self.tab))

    async def note(self) -> dict[str, Any] | None:
        """What changed since :meth:`start`: empty when nothing did; None with ``diff``
        off and neither the address nor the title changed (nothing was looked at)."""
        after = await self._settled_read() if self._early is not None else None
        if after is None:
            after = await (_read(self.tab) if self.diff else _address(self.tab))
        if after is None:
            return {"unread": "the page could not be read after the action"}
        note = changes(self.before, after, same_document=after.documents == self.documents)
        return note if note or self.diff else None

    async def _settled_read(self) -> Seen | None:
        """The page read while it settled, if nothing changed it since (else None, and the
        tab is read after its settling from now on)."""
        assert self._early is not None
        early, watched = await self._early
        if watched is None:
            return None
        still = await watched.unchanged(READ_TIMEOUT)  # ends the watch either way
        if early is None or early.documents != self.tab.documents:
            return None  # not read, or read from a document the tab no longer shows
        if still:
            return _keep(self.tab, early)
        _RESTLESS[self.tab] = self.tab.documents
        return None


def changes(before: Seen | None, after: Seen, *, same_document: bool = False) -> dict[str, Any]:
    """The note of what differs from ``before`` (None: nothing was known; ``same_document``
    then says the tab shows the document it showed) to ``after``."""
    note: dict[str, Any] = {}
    new_page = not same_document if before is None else before.documents != after.documents
    if new_page:
        note["new_page"] = True
    if before is None or before.url != after.url:
        note["url"] = after.url
    if before is None or before.title != after.title:
        note["title"] = after.title
    if after.lines is None:
        return note
    if after.focused and (before is None or new_page or before.focused != after.focused):
        note["focused"] = after.focused
    if not after.whole:
        note["unread"] = f"the page has more than {MAX_COMPARED:,} lines: take_snapshot reads it"
        return note
    comparable = before is not None and before.lines is not None and before.whole
    if new_page or not comparable:
        # Lines of another document never compare (its refs are all new): the page is listed,
        # less the top and bottom it shares with another page before it (a site's header and
        # footer). The same URL again (a reload) is listed from its top.
        another = before is not None and before.url != after.url
        old = before.lines if before is not None and comparable and another else None
        shown, same = _new_lines(old or (), after.lines)
        note["listed"] = True
        if same:
            note["same_as_before"] = same
        kept, cut = _bounded(shown, MAX_NEW_LINES, MAX_NEW_CHARS)
    else:
        assert before is not None
        assert before.lines is not None
        shown = _compared(before, after.lines, after.inert, note)
        kept, cut = _bounded(shown, MAX_LINES, MAX_CHARS)
        focused = note.get("focused")
        if focused and any(line[2:].strip() == focused for line in kept if line[0] == "+"):
            del note["focused"]  # its own line says it already
    if kept:
        note["lines"] = kept
    if cut:
        note["more"] = cut
    return note


def _compared(before: Seen, lines: tuple[str, ...], inert: int, note: dict[str, Any]) -> list[str]:
    """The changed lines of a page against ``before`` (its lines now: ``lines``, with
    ``inert`` parts out of reach): what came, then what went. When more went inert (a modal
    dialog opened), what came is what holds the page, and the lines that went behind it are
    counted (``note["behind"]``); when less is (it closed), the page is compared with itself
    as it was before it went inert, and the dialog's lines went."""
    assert before.lines is not None
    came, went = _diff(before.lines, lines)
    if inert > before.inert:
        if went:
            note["behind"] = len(went)
        return came
    if inert < before.inert and before.behind is not None:
        closed = went
        came, went = _diff(before.behind, lines)
        return came + closed + [line for line in went if line not in closed]
    return came + went


def _plain(line: str) -> str:
    return _PER_DOCUMENT.sub("", line)


def _new_lines(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[list[str], int]:
    """The lines of a new document that are not the top and bottom it shares (refs aside)
    with the page before, and how many were left out for that."""
    top = 0
    while top < min(len(old), len(new)) and _plain(old[top]) == _plain(new[top]):
        top += 1
    bottom = 0
    while bottom < min(len(old), len(new)) - top and _plain(old[-1 - bottom]) == _plain(
        new[-1 - bottom]
    ):
        bottom += 1
    if top + bottom >= len(new):
        # The same page again (a reload): nothing is new but its refs, so it is listed whole.
        return _dedent(list(new)), 0
    middle = list(new[top : len(new) - bottom])
    return _dedent(middle), top + bottom


def _diff(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The lines that came (``+ ``) and went (``- ``), each in page order, a run of them
    keeping its own indentation."""
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    # Past the lines both share at the top and bottom, the rest is matched line by line.
    first, second = old[start : len(old) - end], new[start : len(new) - end]
    came: list[str] = []
    went: list[str] = []
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            went += [f"- {line}" for line in _dedent(list(first[i1:i2]))]
            came += [f"+ {line}" for line in _dedent(list(second[j1:j2]))]
    return came, went


def _dedent(lines: list[str]) -> list[str]:
    indent = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    return [line[indent:] for line in lines]


def _bounded(lines: list[str], most: int, chars: int) -> tuple[list[str], int]:
    """The first lines, at most ``most`` holding at most ``chars`` characters, and how many
    are left out."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) == most or size + len(line) + 1 > chars:
            break
        kept.append(line)
        size += len(line) + 1
    return kept, len(lines) - len(kept)


def reply(answer: dict[str, Any], note: dict[str, Any] | None) -> CallToolResult:
    """An action's result: ``answer`` (what it answers anyway) with the note under
    ``changes``; its text is ``answer`` as JSON, then the note as lines of plain text."""
    if note is None:
        return tool_result(answer)
    text = "\n".join([json_text(answer, default=repr), *note_lines(note)])
    return tool_result({**answer, "changes": note}, text=text)


def note_lines(note: dict[str, Any]) -> list[str]:
    """A note as an agent reads it."""
    lines: list[str] = []
    if note.get("listed"):
        head = "new page" if note.get("new_page") else "page"
        if "url" in note:
            head += f" {note['url']}"
        if "title" in note:
            head += f" {json_text(note['title'])}"
        lines.append(head + ":")
    else:
        if note.get("new_page"):
            lines.append("new page")
        if "url" in note:
            lines.append(f"url: {note['url']}")
        if "title" in note:
            lines.append(f"title: {json_text(note['title'])}")
    if "focused" in note:
        lines.append(f"focused: {note['focused']}")
    lines += note.get("lines", [])
    if note.get("behind"):
        lines.append(f"({note['behind']:,} lines of the page behind it are inert)")
    left = [
        f"{count:,} {what}"
        for count, what in (
            (note.get("more", 0), "more lines"),
            (note.get("same_as_before", 0), "lines as on the page before, with new refs"),
        )
        if count
    ]
    if left:
        lines.append(f"(left out: {'; '.join(left)}: take_snapshot shows them)")
    if "unread" in note:
        lines.append(f"({note['unread']})")
    if not lines:
        lines.append("(no change seen on the page)")
    return lines
