"""The lines of a trace: what each record holds, built from what the trace heard, redacted.

Every record is a JSON object with ``type`` and ``t`` (seconds since the epoch); those of a
tab carry its ``tab`` id. A step (``type: "step"``) is something done: an action (``kind:
"action"``, a verb of the page or a navigation), a tool run (``"tool"``) or a page a person
or the page itself loaded (``"page"``); steps are numbered in the order they ended. The
others (``request``, ``console``, ``dialog``, ``download``, ``page``) carry their own time: the
viewer shows each with the step of its tab that started last before it. docs/tracing.md lists
every field.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from ..protocol.jsontext import json_bytes
from ..replay.har import Entry, header_value
from .secrets import TYPING_VERBS, TraceSecrets

if TYPE_CHECKING:
    from ..learning.health.watch import ToolRun
    from ..page.action_log import Action
    from ..page.console import ConsoleMessage
    from ..page.dialogs import Dialog
    from ..page.downloads import Download

__all__ = [
    "action_step",
    "console_record",
    "dialog_record",
    "download_record",
    "error_of",
    "jsonable",
    "request_record",
    "tool_step",
]

#: The most characters of one string of an action's args or result kept.
MAX_TEXT: Final = 2_000
#: The most items of one list, or keys of one mapping, of args or a result kept.
MAX_ITEMS: Final = 200


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data, bounded: long strings cut (``…``), bytes as their size, paths
    as text, anything else as its ``repr``."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if isinstance(value, bytes | bytearray):
        return f"<{len(value):,} bytes>"
    if isinstance(value, PurePath):
        return str(value)
    if depth > 20:
        return "…"
    if isinstance(value, Mapping):
        items = list(value.items())
        kept = {str(key): jsonable(item, depth + 1) for key, item in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            kept["…"] = f"{len(items) - MAX_ITEMS} more"
        return kept
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        kept_list = [jsonable(item, depth + 1) for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            kept_list.append(f"… {len(items) - MAX_ITEMS} more")
        return kept_list
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(mode="json"), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), depth + 1)
    return jsonable(repr(value), depth + 1)


def bounded(value: Any, most: int) -> Any:
    """``value`` when its JSON takes at most ``most`` bytes, else its JSON's start, cut."""
    data = json_bytes(value)
    if len(data) <= most:
        return value
    return {"cut": f"{len(data):,} bytes of JSON", "start": data[:most].decode("utf-8", "ignore")}


def error_of(error: BaseException | None, secrets: TraceSecrets) -> dict[str, str] | None:
    """An error as a record holds it: its type and its message, redacted."""
    if error is None:
        return None
    return {"type": type(error).__name__, "message": secrets.text(str(error))}


def action_step(action: Action, secrets: TraceSecrets, max_body: int) -> dict[str, Any]:
    """The step record of a page verb or navigation (without its screenshot and snapshot)."""
    page = action.page
    element = action.element
    args = jsonable(action.args)
    if action.verb in TYPING_VERBS and isinstance(args.get("text"), str):
        args["text"] = secrets.typed(
            args["text"],
            action.target,
            element.name if element is not None else "",
            element.input_type if element is not None else None,
        )
    target = action.target
    if target is not None:
        target = secrets.url(target) if action.navigation else secrets.text(target)
    return {
        "type": "step",
        "kind": "action",
        "verb": action.verb,
        "target": target,
        "element": secrets.cut(element.as_dict()) if element is not None else None,
        "args": secrets.cut(args),
        "result": secrets.cut(bounded(jsonable(action.result), max_body)),
        "error": error_of(action.error, secrets),
        "ok": action.ok,
        "reads": action.reads,
        "t": action.started,
        "seconds": round(action.seconds, 4),
        "frame": None if getattr(page, "is_main", True) else secrets.url(str(page.url)),
        "url": secrets.url(action.url),
        "url_after": secrets.url(str(getattr(page, "url", ""))),
    }


def tool_step(run: ToolRun, secrets: TraceSecrets, max_body: int) -> dict[str, Any]:
    """The step record of a tool run (without its screenshot and snapshot)."""
    page = run.page
    return {
        "type": "step",
        "kind": "tool",
        "verb": "run_tool",
        "target": f"{run.site_id}/{run.tool}",
        "site": run.site_id,
        "tool": run.tool,
        "version": run.version,
        "args": secrets.data(jsonable(run.args)),
        "result": bounded(secrets.data(jsonable(run.result), request=False), max_body),
        "error": error_of(run.error, secrets),
        "outcome": run.outcome,
        "message": secrets.text(run.message),
        "ok": run.ok,
        "front_end": run.front_end,
        "t": run.started,
        "seconds": round(run.seconds, 4),
        "url": secrets.url(str(page.url)) if page is not None else None,
    }


def _headers(pairs: list[Any]) -> list[list[str]]:
    return [[pair.name, pair.value] for pair in pairs]


def _body(text: str | None, size: int, max_body: int) -> dict[str, Any] | None:
    if text is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_body:
        return {"text": text, "size": size}
    return {
        "text": data[:max_body].decode("utf-8", "ignore"),
        "size": size,
        "note": f"cut to {max_body:,} of {len(data):,} bytes",
    }


def request_record(
    entry: Entry, secrets: TraceSecrets, max_body: int, body_note: str | None = None
) -> dict[str, Any]:
    """A request as a trace keeps it: the entry stripped as a recording's is, bodies cut to
    ``max_body`` bytes after the redaction; ``body_note`` says why the answer's body is not
    there, when it is not."""
    secrets.request(entry)
    request, response = entry.request, entry.response
    content = response.content
    text = content.text if (content.encoding or "").lower() != "base64" else None
    if body_note is not None:
        response_body: dict[str, Any] | None = {"text": None, "note": body_note}
    else:
        response_body = _body(text, max(content.size, 0), max_body)
        if response_body is None and content.text is not None:
            response_body = {"text": None, "size": max(content.size, 0), "note": "binary"}
    post = request.post_data
    request_body = _body(post.text if post else None, request.body_size, max_body)
    started = entry.started_date_time
    try:
        at = datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()
    except ValueError:
        at = time.time()
    return {
        "type": "request",
        "t": at,
        "method": request.method,
        "url": request.url,
        "status": response.status,
        "status_text": response.status_text,
        "resource": entry.resource_type,
        "mime": header_value(response.headers, "content-type") or content.mime_type,
        "ms": entry.time,
        "failed": entry.failed,
        "request_headers": _headers(request.headers),
        "response_headers": _headers(response.headers),
        "request_body": request_body,
        "response_body": response_body,
        "redacted": entry.extra.get("_redacted"),
    }


def console_record(message: ConsoleMessage, secrets: TraceSecrets) -> dict[str, Any]:
    """A console message or uncaught exception."""
    return {
        "type": "console",
        "t": message.timestamp / 1000 if message.timestamp else time.time(),
        "level": message.level,
        "text": secrets.text(message.text),
        "url": secrets.url(message.url),
        "line": message.line,
        "exception": message.exception,
        "stack": secrets.text(message.stack),
    }


def dialog_record(dialog: Dialog, secrets: TraceSecrets) -> dict[str, Any]:
    """A page dialog and how it was answered."""
    return {
        "type": "dialog",
        "t": dialog.opened_at,
        "dialog_type": dialog.type,
        "message": secrets.text(dialog.message),
        "url": secrets.url(dialog.url),
        "answer": dialog.answer,
        "prompt_text": None if dialog.prompt_text is None else secrets.text(dialog.prompt_text),
        "handled_by": dialog.handled_by,
        "closed_at": dialog.closed_at,
    }


def download_record(download: Download, secrets: TraceSecrets) -> dict[str, Any]:
    """A download the page started."""
    return {
        "type": "download",
        "t": download.started_at,
        "url": secrets.url(download.url),
        "filename": download.suggested_filename,
        "state": download.state,
        "size": download.size,
        "path": str(download.path) if download.path else None,
    }
