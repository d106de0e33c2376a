"""One document's accessibility tree, as Chrome computes it, turned into outline lines.

Input: the nodes of ``Accessibility.getFullAXTree`` for one frame's document (names, roles,
values and states as Chrome computes them, shadow roots and slots already composed), and the
:class:`~ego.page.layout_facts.LayoutFacts` of that document. Output: :class:`AxLine` s, one
per element an agent cares about, indented by nesting, in the page's order:

- a line names the role, the name in quotes, the states (``[checked]``, ``[expanded]``,
  ``[selected]``, ``[disabled]``, ``[required]``, ``[level=2]``, ...), the ref
  (``[ref=e12]``) of an element an agent can act on, a field's value (``value="..."``) and a
  link's target (``-> /path``);
- the text between elements is ``text: ...``, a sentence's inline elements kept in it; an
  element with no name whose content starts with text takes it after a colon
  (``listitem: Chair``); text an element's name already says, and a label's text next to
  the field it names, are not repeated;
- wrappers with nothing to say (``generic``, ``paragraph``, a ``<label>``, layout tables)
  print nothing, their content moving up a level;
- an iframe's line carries its element's backend node id, so that the frame's own lines can
  be nested under it.

Refs go to elements an agent can act on: interactive roles (buttons, links, fields, options,
tabs, menu items, ...), iframes, and anything else the page made clickable, tabbable,
draggable (``draggable="true"``: a kanban card, dragged by its ref) or editable. A native
``<select>``'s options take none: they are chosen through the select's ref, and listed on
one line under it (``options: "High", "Low"``). A line holds :data:`REF` where its ref goes
and names the node in ``ref``: the snapshot gives the refs once every frame's lines are in
order, so that a page's first snapshot numbers them as they read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from .layout_facts import LayoutFacts

__all__ = [
    "REF",
    "AxLine",
    "PartialLines",
    "ax_lines",
    "is_modal",
    "partial_lines",
    "role_name",
    "root_of",
]

#: Where a line's ref goes in its text.
REF: Final = "\x00"

#: The longest name and text shown on a line; past it they are cut with "…" (``find``
#: still searches the whole, and shows a matching line whole).
NAME_MAX: Final = 100
TEXT_MAX: Final = 300
#: Nesting past this depth is not walked (a line says so): Python's recursion stays bounded.
DEPTH_MAX: Final = 400

#: Roles that take a ref: what an agent acts on.
INTERACTIVE: Final = frozenset(
    {
        "button", "checkbox", "combobox", "link", "listbox", "menuitem", "menuitemcheckbox",
        "menuitemradio", "option", "radio", "scrollbar", "searchbox", "slider", "spinbutton",
        "switch", "tab", "textbox", "treeitem", "DisclosureTriangle", "Iframe",
        "IframePresentational", "MenuListOption", "PopUpButton", "ToggleButton", "ColorWell",
        "date", "DateTime", "InputTime",
    }
)  # fmt: skip
#: Roles that print no line of their own: their content moves up a level.
TRANSPARENT: Final = frozenset(
    {
        "generic", "none", "presentation", "paragraph", "LabelText", "MenuListPopup",
        "Section", "SectionWithoutName", "HeaderAsNonLandmark", "FooterAsNonLandmark",
        "sectionheader", "sectionfooter", "Legend", "code", "emphasis", "strong", "mark",
        "subscript", "superscript", "time", "Abbr", "insertion", "deletion", "Ruby",
        "RubyAnnotation", "blockquote", "caption", "Figcaption", "DescriptionList",
        "DescriptionListTerm", "DescriptionListDetail", "term", "definition", "Pre",
        "LayoutTable", "LayoutTableRow", "LayoutTableCell", "rowgroup", "Unknown", "Canvas",
        "RootWebArea", "WebArea", "Details", "Summary",
    }
)  # fmt: skip
#: Roles whose content is their line (nothing inside is walked; a native select lists its
#: options on one line under it).
LEAF: Final = frozenset(
    {
        "textbox", "searchbox", "spinbutton", "slider", "checkbox", "radio", "switch", "image",
        "progressbar", "meter", "separator", "scrollbar", "combobox", "ColorWell", "date",
        "DateTime", "InputTime", "Video", "Audio",
    }
)  # fmt: skip
#: Roles whose value is shown.
VALUED: Final = frozenset(
    {
        "textbox", "searchbox", "combobox", "spinbutton", "slider", "progressbar", "meter",
        "scrollbar", "ColorWell", "date", "DateTime", "InputTime",
    }
)  # fmt: skip
#: Chrome's internal role names, as an agent knows them (others are lowercased).
ROLE_NAMES: Final = {
    "image": "img",
    "Iframe": "iframe",
    "IframePresentational": "iframe",
    "DisclosureTriangle": "button",
    "MenuListOption": "option",
    "PopUpButton": "combobox",
    "ToggleButton": "button",
    "ColorWell": "colorwell",
    "EmbeddedObject": "embed",
    "PluginObject": "embed",
}
#: Why an ignored node is out of sight: nothing under it is shown.
_HIDDEN: Final = frozenset(
    {
        "ariaHiddenElement", "ariaHiddenSubtree", "inertElement", "inertSubtree",
        "notRendered", "notVisible",
    }
)  # fmt: skip
#: Why an ignored node is a label: a click on it goes to its field, which has its own line.
_LABELS: Final = frozenset({"labelContainer", "labelFor"})
#: Roles whose name, when it is taken from their content, would only repeat the lines under
#: them (a name the page gave them, by ``aria-label`` or a ``<caption>``, is shown).
_UNNAMED: Final = frozenset({"row", "rowgroup", "listitem", "list", "table", "grid", "treegrid"})
#: A native select's entries, chosen through the select.
_OPTIONS: Final = frozenset({"option", "MenuListOption"})
#: Why Chrome left the rest of a document out of its tree: a modal dialog is open.
_MODAL: Final = "activeModalDialog"
#: What stands for the content nested deeper than :data:`DEPTH_MAX`.
_DEEP: Final = "(nested deeper than a snapshot walks: take one of an element inside)"
#: What stands for content not read yet (a tree read in part): no page text holds it.
_UNREAD: Final = "\x01"
#: Node kinds that are neither lines nor text.
_SKIPPED: Final = frozenset({"InlineTextBox", "ListMarker"})

Node = Mapping[str, Any]


@dataclass(slots=True)
class AxLine:
    """One line of a document's outline.

    Attributes:
        depth: the nesting level (0: the top of the document, or of the subtree).
        text: the line as shown (long names and text cut).
        full: the line with nothing cut (what ``find`` searches).
        ref: the backend node id of the element whose ref the line shows at :data:`REF`.
        frame: for an iframe's line, the iframe element's backend node id.
    """

    depth: int
    text: str
    full: str
    ref: int | None = None
    frame: int | None = None


@dataclass(slots=True)
class _Item:
    """A line before it is laid out: an element (``role`` set) or a run of text."""

    role: str = ""
    name: str = ""
    text: str = ""
    marks: list[str] = field(default_factory=list)
    ref: int | None = None
    tail: str = ""
    children: list[_Item] = field(default_factory=list)
    frame: int | None = None


def role_name(role: str) -> str | None:
    """The role a ``role=`` selector names for Chrome's ``role`` (``image`` is ``img``, a
    ``<summary>``'s ``DisclosureTriangle`` a ``button``), or None for a role no such selector
    names (``generic``, text, Chrome's internal roles)."""
    if role in ROLE_NAMES:
        return (
            ROLE_NAMES[role]
            if role not in ("EmbeddedObject", "PluginObject", "ColorWell")
            else None
        )
    if not role[:1].islower() or role in ("generic", "none", "presentation"):
        return None
    return role


def is_modal(nodes: Sequence[Node]) -> bool:
    """Whether a modal dialog holds the document: Chrome then keeps only the dialog in the
    tree (the rest of the page is inert)."""
    return any(
        reason.get("name") == _MODAL
        for node in nodes
        if node.get("ignored")
        for reason in node.get("ignoredReasons", ())
    )


def root_of(nodes: Sequence[Node], backend_node_id: int | None) -> Node | None:
    """The node to outline from: the document's root, or the node of that element (None when
    the element is not in the tree: it shows nothing)."""
    if backend_node_id is None:
        return nodes[0] if nodes else None
    for node in nodes:
        if node.get("backendDOMNodeId") == backend_node_id:
            return node
    return None


def ax_lines(nodes: Sequence[Node], root: Node, facts: LayoutFacts, *, url: str) -> list[AxLine]:
    """The outline lines of ``root`` and what it holds.

    Args:
        nodes: every node of the document's tree (``getFullAXTree``).
        root: where to start (its own line first, when it has one).
        facts: what the DOM snapshot says of the document's elements.
        url: the document's URL: links to its own origin are shown by their path.
    """
    walk = _Walk({node["nodeId"]: node for node in nodes}, facts, url, partial=False)
    return walk.lines(root)


@dataclass(frozen=True, slots=True)
class PartialLines:
    """The lines of a tree read in part (:func:`partial_lines`).

    Attributes:
        lines: the lines that what was read fixes, in order: those before the first node
            whose content was not read (and the line before it, which the content after it
            may still change).
        unread: the ids of the nodes whose content is needed and not read, in reading order
            (empty: the tree was whole, and ``lines`` are all of its lines).
    """

    lines: list[AxLine]
    unread: list[str]


def partial_lines(
    nodes: Mapping[str, Node],
    root: Node,
    facts: LayoutFacts,
    *,
    url: str,
    most_unread: int | None = None,
) -> PartialLines:
    """The lines of ``root`` as far as ``nodes`` (a part of a document's tree: nodes whose
    children are not all among them are read no further) fix them.

    Args:
        nodes: the nodes read, by id (each node's ``childIds`` name its children, read or
            not).
        root: where to start.
        facts: what the DOM snapshot says of the document's elements.
        url: the document's URL.
        most_unread: stop once this many unread nodes are noted (None: walk all of
            ``nodes``). The lines after the first unread node are not kept anyway, so only
            the unread list is shorter.
    """
    walk = _Walk(nodes, facts, url, partial=True, most_unread=most_unread)
    lines = walk.lines(root)
    if not walk.unread:
        return PartialLines(lines, [])
    first = next(index for index, line in enumerate(lines) if _UNREAD in line.full)
    return PartialLines(lines[: max(0, first - 1)], walk.unread)


class _Walk:
    def __init__(
        self,
        by_id: Mapping[str, Node],
        facts: LayoutFacts,
        url: str,
        *,
        partial: bool,
        most_unread: int | None = None,
    ) -> None:
        self.by_id = by_id
        self.facts = facts
        self.origin = _origin(url)
        #: Whether ``by_id`` is a part of the tree (else a child it lacks is not shown:
        #: Chrome left it out of the whole tree, as it does one that went meanwhile).
        self.partial = partial
        #: Nodes whose content is needed and was not read, in reading order.
        self.unread: list[str] = []
        #: How many unread nodes end the walk (a large page's first round reads thousands of
        #: rows, of which the next round asks for a few hundred).
        self.most_unread = most_unread
        self.stopped = False
        #: Whether the element the walk is under has a pointer cursor.
        self.pointer_above = False

    def children(self, node: Node) -> list[Node]:
        by_id = self.by_id
        return [by_id[child] for child in node.get("childIds", ()) if child in by_id]

    def lines(self, root: Node) -> list[AxLine]:
        """The lines of ``root`` and what it holds."""
        items: list[_Item] = []
        run: list[str] = []
        self.visit(root, items, run, 0)
        self.flush(items, run)
        lines: list[AxLine] = []
        _lay_out(_tidy(items), 0, lines)
        return lines

    def read(self, node: Node) -> bool:
        """Whether ``node``'s children were read (else, in a part of a tree, it is noted as
        unread)."""
        by_id = self.by_id
        if not self.partial or all(child in by_id for child in node.get("childIds", ())):
            return True
        self.unread.append(node["nodeId"])
        self.stopped = len(self.unread) == self.most_unread
        return False

    @staticmethod
    def flush(items: list[_Item], run: list[str]) -> None:
        if not run:
            return
        text = _text(run[0] if len(run) == 1 else "".join(run))
        run.clear()
        if text:
            items.append(_Item(text=text))

    def visit(self, node: Node, items: list[_Item], run: list[str], depth: int) -> None:
        role = str(node.get("role", {}).get("value", ""))
        if role in _SKIPPED or self.stopped:
            return
        if depth > DEPTH_MAX:
            self.flush(items, run)
            if not items or items[-1].text != _DEEP:
                items.append(_Item(text=_DEEP))
            return
        backend = node.get("backendDOMNodeId")
        ignored = bool(node.get("ignored"))
        if ignored:
            reasons = {reason.get("name") for reason in node.get("ignoredReasons", ())}
            if reasons & _HIDDEN:
                return
            if self.takes_input(backend) and not reasons & _LABELS:
                self.element(node, "generic", items, run, depth)
                return
            self.through(node, items, run, depth)
            return
        if role == "StaticText":
            run.append(str(node.get("name", {}).get("value", "")))
            return
        if role == "LineBreak":
            run.append(" ")
            return
        if role in TRANSPARENT and not self.wants_ref(node, role, None):
            self.through(node, items, run, depth)
            return
        self.element(node, role, items, run, depth)

    def through(self, node: Node, items: list[_Item], run: list[str], depth: int) -> None:
        """A node without a line: its content joins the lines around it (a block's content
        starts and ends a run of text)."""
        backend = node.get("backendDOMNodeId")
        block = backend in self.facts.blocks
        if block:
            self.flush(items, run)
        if not self.read(node):
            run.append(_UNREAD)
        above = self.enter(backend)
        for child in self.children(node):
            self.visit(child, items, run, depth + 1)
        self.pointer_above = above
        if block:
            self.flush(items, run)

    def enter(self, backend: object) -> bool:
        """Note that the walk goes under the element ``backend`` (None: a node of no
        element, which changes nothing); what was noted before, to restore after."""
        above = self.pointer_above
        if isinstance(backend, int):
            self.pointer_above = backend in self.facts.pointer
        return above

    def takes_clicks(self, backend: object) -> bool:
        """Whether the element takes clicks: a listener of its own, or the top of a pointer
        cursor region (under no element with a pointer cursor)."""
        facts = self.facts
        return backend in facts.clickable or (backend in facts.pointer and not self.pointer_above)

    def takes_input(self, backend: object) -> bool:
        """Whether the element takes clicks or is dragged (``draggable="true"``): a node
        Chrome leaves out of the tree keeps its line for it."""
        return self.takes_clicks(backend) or backend in self.facts.draggable

    def wants_ref(self, node: Node, role: str, properties: Mapping[str, Any] | None) -> bool:
        """Whether ``node`` takes a ref (``properties``: its own, when already read)."""
        backend = node.get("backendDOMNodeId")
        if not isinstance(backend, int):
            return False
        if role in INTERACTIVE:
            return True
        if role == "LabelText":
            return False  # a click on a label goes to its field, which has its own ref
        if self.takes_input(backend) or backend in self.facts.tabbable:
            return True
        if not node.get("properties"):
            return False
        if properties is None:
            properties = _properties(node)
        return bool(properties.get("focusable")) and properties.get("editable") == "richtext"

    def element(
        self, node: Node, role: str, items: list[_Item], run: list[str], depth: int
    ) -> None:
        self.flush(items, run)
        properties = _properties(node)
        backend = node.get("backendDOMNodeId")
        item = _Item(role=ROLE_NAMES.get(role, role if role[:1].islower() else role.lower()))
        name = _text(str(node.get("name", {}).get("value", "") or ""))
        if role in ("Iframe", "IframePresentational") and isinstance(backend, int):
            item.frame = backend
            name = name or self.facts.frames.get(backend, "")
        item.name = "" if role in _UNNAMED and _named_by_content(node) else name
        item.marks = _states(role, properties)
        if self.wants_ref(node, role, properties) and isinstance(backend, int):
            item.marks.append(REF)
            item.ref = backend
        value = node.get("value", {}).get("value")
        if role in VALUED and value not in (None, ""):
            item.tail = f" value={_quoted(str(value))}"
        url = properties.get("url")
        if role == "link" and isinstance(url, str) and url:
            item.tail += f" -> {self.relative(url)}"
        items.append(item)
        if item.frame is not None:
            return
        if backend in self.facts.selects:
            listed = self.options(node, multiple=role == "listbox")
            if listed is None:
                item.children.append(_Item(text=_UNREAD))
            elif listed:
                item.children.append(_Item(role="options", text=", ".join(listed)))
            return
        children = self.children(node)
        if role in LEAF:
            children = [child for child in children if _is_popup(child)]
        elif not self.read(node):
            item.children.append(_Item(text=_UNREAD))
            return
        inner: list[str] = []
        above = self.enter(backend)
        for child in children:
            self.visit(child, item.children, inner, depth + 1)
        self.pointer_above = above
        self.flush(item.children, inner)

    def options(self, node: Node, *, multiple: bool) -> list[str] | None:
        """A native select's options in order (inside its groups too), each its name in
        quotes and its states: ``[disabled]``, and ``[selected]`` where several can be (the
        select's value says which one a single choice holds); None when not all were read."""
        listed: list[str] = []
        if not self.read(node):
            return None
        stack = list(reversed(self.children(node)))
        while stack:
            child = stack.pop()
            reasons = {reason.get("name") for reason in child.get("ignoredReasons", ())}
            if child.get("ignored") and reasons & _HIDDEN:
                continue
            if str(child.get("role", {}).get("value", "")) not in _OPTIONS:
                if not self.read(child):
                    return None
                stack += reversed(self.children(child))
                continue
            properties = _properties(child)
            marks = [
                f" [{state}]"
                for state in (("selected", "disabled") if multiple else ("disabled",))
                if properties.get(state) is True
            ]
            name = _text(str(child.get("name", {}).get("value", "") or ""))
            listed.append(_quoted(name) + "".join(marks))
        return listed

    def relative(self, url: str) -> str:
        parts = urlsplit(url)
        if self.origin and _origin(url) == self.origin:
            path = parts.path or "/"
            return (
                path
                + (f"?{parts.query}" if parts.query else "")
                + (f"#{parts.fragment}" if parts.fragment else "")
            )
        return url


def _is_popup(node: Node) -> bool:
    return bool(node.get("role", {}).get("value") == "MenuListPopup")


def _named_by_content(node: Node) -> bool:
    """Whether Chrome took the node's name from its content (or says nothing of where from):
    the source it used is the first with a value that is not superseded."""
    for source in node.get("name", {}).get("sources", ()):
        if "value" in source and not source.get("superseded"):
            return bool(source.get("type") == "contents")
    return True


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def _properties(node: Node) -> dict[str, Any]:
    return {
        str(prop.get("name")): prop.get("value", {}).get("value")
        for prop in node.get("properties", ())
    }


def _states(role: str, properties: Mapping[str, Any]) -> list[str]:
    marks: list[str] = []
    for state in ("checked", "pressed"):
        value = properties.get(state)
        if value in ("true", True):
            marks.append(f"[{state}]")
        elif value == "mixed":
            marks.append(f"[{state}=mixed]")
    for state in ("selected", "expanded", "disabled", "required", "modal", "focused"):
        if properties.get(state) is True:
            marks.append(f"[{state}]")
    if properties.get("readonly") is True and role in VALUED:
        marks.append("[readonly]")
    if properties.get("invalid") not in (None, "false", False):
        marks.append("[invalid]")
    level = properties.get("level")
    if role == "heading" and level:
        marks.append(f"[level={level}]")
    return marks


def _text(raw: str) -> str:
    """Whitespace collapsed; the line breaks of preformatted text shown as ⏎."""
    if "\n" not in raw:
        return " ".join(raw.split())
    parts = [" ".join(part.split()) for part in raw.split("\n")]
    return " ⏎ ".join([part for part in parts if part])


_quoted: Final = json.JSONEncoder(ensure_ascii=False).encode


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tidy(items: list[_Item]) -> list[_Item]:
    """Drop text that a neighbour already says (a label beside its field, an element's own
    text under it), and fold a nameless element's leading text into its line."""
    kept: list[_Item] = []
    for index, item in enumerate(items):
        if not item.role:
            before = items[index - 1] if index > 0 else None
            after = items[index + 1] if index + 1 < len(items) else None
            if any(n is not None and n.role and n.name == item.text for n in (before, after)):
                continue
        kept.append(item)
    for item in kept:
        if not item.role:
            continue
        children = _tidy(item.children)
        if item.name:
            children = [c for c in children if c.role or c.text not in item.name]
        if not item.name and children and not children[0].role and children[0].text != _DEEP:
            item.text = children.pop(0).text
        item.children = children
    return kept


def _lay_out(items: list[_Item], depth: int, out: list[AxLine]) -> None:
    for item in items:
        if not item.role:
            out.append(AxLine(depth, f"text: {_cut(item.text, TEXT_MAX)}", f"text: {item.text}"))
            continue
        head = item.role
        marks = " " + " ".join(item.marks) if item.marks else ""
        shown = f" {_quoted(_cut(item.name, NAME_MAX))}" if item.name else ""
        full = f" {_quoted(item.name)}" if item.name else ""
        text = f": {_cut(item.text, TEXT_MAX)}" if item.text else ""
        whole = f": {item.text}" if item.text else ""
        out.append(
            AxLine(
                depth,
                f"{head}{shown}{marks}{item.tail}{text}",
                f"{head}{full}{marks}{item.tail}{whole}",
                item.ref,
                item.frame,
            )
        )
        _lay_out(item.children, depth + 1, out)
