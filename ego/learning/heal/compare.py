"""What changed between a recorded exchange and the live one: status, redirects, logins,
JSON fields renamed, added or gone, and which live answer has the recorded one's shape.

Answers are compared as flat paths (``products[].name``), each with its JSON type and the
values seen there. A field is **renamed** when one path went and one came with the same
parent and type, and (when both carry values) the same values: ``products[].name`` holding
``["Desk lamp", "Floor lamp"]`` then ``products[].title`` holding the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from ...replay.har import Entry, header_value
from ..suggest.traffic import is_json_type

__all__ = [
    "Change",
    "ExchangeView",
    "compare_answers",
    "flatten",
    "login_like",
    "shape_score",
    "view_of",
]

_LOGIN: Final = ("/login", "/signin", "/sign-in", "/log-in", "/auth", "/session/new")
#: Values kept per path when answers are compared.
_VALUES: Final = 20


def login_like(url: str) -> bool:
    """Whether ``url`` looks like a login page."""
    path = urlsplit(url).path.lower()
    return any(path == p or path.startswith(p + "/") or path.endswith(p) for p in _LOGIN)


@dataclass(frozen=True)
class ExchangeView:
    """One HAR entry as heal compares it.

    Attributes:
        method, url, path: the request.
        status: the response status.
        json: the answer parsed as JSON, or None.
        content_type: the answer's type.
        redirect: where a redirect pointed, or "".
    """

    method: str
    url: str
    path: str
    status: int
    json: Any
    content_type: str
    redirect: str = ""

    @property
    def label(self) -> str:
        """``METHOD /path``."""
        return f"{self.method} {self.path}"


def view_of(entry: Entry) -> ExchangeView:
    """The :class:`ExchangeView` of a HAR entry."""
    content_type = header_value(entry.response.headers, "content-type") or ""
    content_type = content_type or entry.response.content.mime_type
    data = None
    if is_json_type(content_type):
        try:
            data = json.loads(entry.response.body().decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
    redirect = entry.response.redirect_url or header_value(entry.response.headers, "location")
    return ExchangeView(
        entry.request.method.upper(),
        entry.request.url,
        urlsplit(entry.request.url).path or "/",
        entry.response.status,
        data,
        content_type,
        redirect or "",
    )


@dataclass(frozen=True)
class Change:
    """One thing that changed between the recording and the live site.

    Attributes:
        kind: ``"endpoint gone"`` (404/410), ``"endpoint refused"`` (another error status),
            ``"redirected"``, ``"login asked"``, ``"field renamed"``, ``"field added"``,
            ``"field gone"``, ``"endpoint moved"``, ``"selector gone"``, ``"not reached"``.
        where: the endpoint (``GET /api/products``) or the selector.
        detail: one line saying what was seen.
        old, new: a renamed field's two names; a moved endpoint's two paths; a selector and
            the nearest element that matches now.
        step: for a tool drafted from page actions, the step (``# step N`` of its source)
            whose selector went.
    """

    kind: str
    where: str
    detail: str
    old: str | None = None
    new: str | None = None
    step: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data: dict[str, Any] = {"kind": self.kind, "where": self.where, "detail": self.detail}
        if self.old is not None:
            data["old"] = self.old
        if self.new is not None:
            data["new"] = self.new
        if self.step is not None:
            data["step"] = self.step
        return data


@dataclass
class _Path:
    kind: str
    values: list[str] = field(default_factory=list)


def flatten(value: Any, prefix: str = "", out: dict[str, _Path] | None = None) -> dict[str, Any]:
    """Every path of a JSON value (``a.b``, ``items[].id``) with its type and values seen."""
    found: dict[str, _Path] = {} if out is None else out
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(inner, f"{prefix}.{key}" if prefix else str(key), found)
        return found
    if isinstance(value, list):
        for item in value[:_VALUES]:
            flatten(item, f"{prefix}[]", found)
        return found
    kind = "null" if value is None else type(value).__name__
    slot = found.setdefault(prefix, _Path(kind))
    if len(slot.values) < _VALUES:
        slot.values.append(json.dumps(value))
    return found


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def compare_answers(where: str, old: Any, new: Any) -> list[Change]:
    """The fields renamed, added and gone between a recorded answer and a live one."""
    before, after = flatten(old), flatten(new)
    gone = [p for p in before if p not in after]
    came = [p for p in after if p not in before]
    changes: list[Change] = []
    for path in list(gone):
        candidates = [
            p for p in came if _parent(p) == _parent(path) and after[p].kind == before[path].kind
        ]
        same_values = [p for p in candidates if after[p].values == before[path].values]
        pick = same_values[0] if same_values else (candidates[0] if len(candidates) == 1 else None)
        if pick is None:
            continue
        gone.remove(path)
        came.remove(pick)
        evidence = "the same values" if pick in same_values else "the same type"
        changes.append(
            Change(
                "field renamed",
                where,
                f"{path} is now {pick} ({evidence})",
                old=_leaf(path),
                new=_leaf(pick),
            )
        )
    changes += [Change("field gone", where, f"{p} is gone", old=p) for p in gone]
    changes += [Change("field added", where, f"{p} is new", new=p) for p in came]
    return changes


def shape_score(old: Any, new: Any) -> float:
    """How alike two answers are, 0 to 1: shared paths (a renamed leaf counts when its values
    are the same) over all paths."""
    before, after = flatten(old), flatten(new)
    if not before or not after:
        return 0.0
    shared = len(set(before) & set(after))
    renamed = sum(1 for c in compare_answers("", old, new) if c.kind == "field renamed")
    union = len(set(before) | set(after)) - renamed
    return (shared + renamed) / union if union else 0.0
