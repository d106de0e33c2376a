"""How every ego MCP tool answers: structured content always, plus exactly one text block,
and never more than :data:`MAX_RESULT_CHARS` characters of them.

An object comes back as the structured content itself; anything else (a list, a string, a
number, null) under ``{"result": ...}``, since MCP's structured content is an object. The
one text block is the value as compact JSON (indentation would cost an agent's context a
third more for nothing a model needs), or a tool's own short text (an outline, a summary). A
screenshot adds its image block.

:func:`bounded`, applied to every result in one place, keeps it within the bound. A result
over it carries its value once, in the text block, cut: a long text at a line where it can,
a JSON value by cutting its longest strings and then the end of its longest list. The text
ends with a line that says what was cut and how to get the rest (for each tool in its own
words: ``take_snapshot`` with the next ``offset``, ``get_network_request`` with a ``path``
to save the whole body); the structured content is then only ``{"cut": ...}`` saying the
same, so the value is not sent twice.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ..protocol.jsontext import json_text
from .sdk import CallToolResult, ImageContent, TextContent

__all__ = ["MAX_RESULT_CHARS", "bounded", "image_result", "structured", "tool_result"]

#: The most characters one result gives an agent: its text block and its structured content
#: together (about 25,000 tokens).
MAX_RESULT_CHARS: Final = 100_000

# Room kept for the line that says what was cut.
_NOTE_ROOM: Final = 600

#: How to get the rest of each tool's cut result, given its arguments and, for a text, how
#: many of its lines were shown.
_REST: Final[dict[str, Callable[[dict[str, Any], int], str]]] = {
    "take_snapshot": lambda args, lines: (
        f"take_snapshot with offset: {int(args.get('offset') or 0) + max(lines - 1, 0)} "
        "shows the next lines (find or selector narrows the outline)"
    ),
    "evaluate": lambda args, lines: (
        "evaluate again returning a part of the value (for a long string "
        "value.slice(start, start + 50000)), or only the fields needed"
    ),
    "get_network_request": lambda args, lines: (
        "get_network_request with path saves the whole body to a file"
    ),
    "list_console_messages": lambda args, lines: (
        "list_console_messages with level lists fewer; evaluate can read a message's source"
    ),
    "list_network_requests": lambda args, lines: "get_network_request gives one request in full",
}


def structured(value: Any) -> dict[str, Any]:
    """``value`` as JSON, wrapped in ``{"result": ...}`` unless it is an object already."""
    data = to_jsonable_python(value, fallback=repr)
    return data if isinstance(data, dict) else {"result": data}


def tool_result(value: Any, *, text: str | None = None) -> CallToolResult:
    """A successful tool result: ``value`` as structured content plus one text block.

    Args:
        value: what the tool returns (JSON-like).
        text: the text block; by default a string value itself, else the value as JSON.
    """
    data = structured(value)
    if text is None:
        plain = data.get("result") if set(data) == {"result"} else data
        text = plain if isinstance(plain, str) else _json(plain)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def image_result(image: bytes, mime_type: str, value: dict[str, Any], text: str) -> CallToolResult:
    """A result that carries an image: the image block, one text block, structured content."""
    return CallToolResult(
        content=[
            ImageContent(type="image", data=base64.b64encode(image).decode(), mime_type=mime_type),
            TextContent(type="text", text=text),
        ],
        structured_content=structured(value),
    )


def bounded(name: str, arguments: dict[str, Any], result: CallToolResult) -> CallToolResult:
    """``result`` of tool ``name`` within :data:`MAX_RESULT_CHARS` (see the module docstring);
    a result within it comes back as it is."""
    texts = [part for part in result.content if isinstance(part, TextContent)]
    if len(texts) != 1:
        return result
    text = texts[0].text
    data = result.structured_content or {}
    if len(text) + len(_json(data)) <= MAX_RESULT_CHARS:
        return result
    budget = MAX_RESULT_CHARS - _NOTE_ROOM
    value = data.get("result") if set(data) == {"result"} else data
    if (isinstance(value, str) and value == text) or len(_json(value)) <= budget:
        # The tool's own text, or a value the text carries whole: only its copy goes.
        shown, lines, what = _cut_text(text, budget)
    else:
        cut_value, what = _shrink(value, budget)
        shown, lines = _json(cut_value), 1
    rest = _REST.get(name, _ask_for_less)
    cut = {
        "characters": len(text),
        "shown": len(shown),
        "what": what,
        "rest": rest(arguments, lines),
    }
    note = (
        f"… cut at {MAX_RESULT_CHARS:,} characters: {what}; {cut['rest']}"
        if what
        else f"… the value is in this text only (the structured content says so): {cut['rest']}"
    )
    content = [
        TextContent(type="text", text=f"{shown}\n{note}") if part is texts[0] else part
        for part in result.content
    ]
    return result.model_copy(update={"content": content, "structured_content": {"cut": cut}})


def _ask_for_less(arguments: dict[str, Any], lines: int) -> str:
    return "ask for less (a narrower selector or filter)"


def _cut_text(text: str, budget: int) -> tuple[str, int, str]:
    """``text`` within ``budget`` characters, cut after a whole line where one ends in the
    last fifth; how many lines are shown, and what was cut (``""``: nothing)."""
    if len(text) <= budget:
        return text, text.count("\n") + 1, ""
    end = text.rfind("\n", 0, budget)
    if end < budget * 4 // 5:
        end = budget
    shown = text[:end]
    lines, total = shown.count("\n") + 1, text.count("\n") + 1
    if end < budget or total > lines:
        what = f"{lines:,} of {total:,} lines shown ({len(shown):,} of {len(text):,} characters)"
    else:
        what = f"the first {len(shown):,} of {len(text):,} characters shown"
    return shown, lines, what


def _shrink(value: Any, budget: int) -> tuple[Any, str]:
    """``value`` cut until its JSON fits ``budget``, and what was cut."""
    for cap in (budget, 10_000, 2_000, 500, 100):
        capped, strings = _capped(value, cap)
        if len(_json(capped)) <= budget:
            return capped, f"{strings:,} strings cut to {cap:,} characters" if strings else ""
    capped, strings = _capped(value, 100)
    holder, key, items = _longest_list(capped)
    if items is not None:
        low, high = 0, len(items)
        while low < high:  # the most leading items that fit
            middle = (low + high + 1) // 2
            _put(holder, key, items[:middle])
            if len(_json(capped if holder is not None else items[:middle])) <= budget:
                low = middle
            else:
                high = middle - 1
        kept = items[:low]
        _put(holder, key, kept)
        shown = capped if holder is not None else kept
        if len(_json(shown)) <= budget:
            return shown, (
                f"{strings:,} strings cut to 100 characters and the first {low:,} of "
                f"{len(items):,} items shown"
            )
    return _json(capped)[:budget], f"the value's JSON cut after {budget:,} characters"


def _capped(value: Any, cap: int) -> tuple[Any, int]:
    """``value`` with every string (key or value) longer than ``cap`` cut, and how many."""
    count = 0

    def cut(item: Any) -> Any:
        nonlocal count
        if isinstance(item, str):
            if len(item) <= cap:
                return item
            count += 1
            return f"{item[:cap]}…[{len(item) - cap:,} more characters]"
        if isinstance(item, list):
            return [cut(part) for part in item]
        if isinstance(item, dict):
            return {cut(key): cut(part) for key, part in item.items()}
        return item

    return cut(value), count


def _longest_list(value: Any) -> tuple[dict[str, Any] | None, str, list[Any] | None]:
    """The longest list in ``value`` (itself, or one of its object's values): the object
    that holds it (None for ``value`` itself), its key, the list."""
    if isinstance(value, list):
        return None, "", value
    if isinstance(value, dict):
        lists = [(len(item), key) for key, item in value.items() if isinstance(item, list)]
        if lists:
            _, key = max(lists)
            return value, key, value[key]
    return None, "", None


def _put(holder: dict[str, Any] | None, key: str, items: list[Any]) -> None:
    if holder is not None:
        holder[key] = items


def _json(value: Any) -> str:
    return json_text(value, default=repr)
