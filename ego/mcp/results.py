"""How every ego MCP tool answers: structured content always, plus exactly one text block.

An object comes back as the structured content itself; anything else (a list, a string, a
number, null) under ``{"result": ...}``, since MCP's structured content is an object. The
one text block is the value as compact JSON (indentation would cost an agent's context a
third more for nothing a model needs), or a tool's own short text (an outline, a summary). A
screenshot adds its image block.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic_core import to_jsonable_python

from ..protocol.jsontext import json_text
from .sdk import CallToolResult, ImageContent, TextContent

__all__ = ["image_result", "structured", "tool_result"]


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


def _json(value: Any) -> str:
    return json_text(value, default=repr)
