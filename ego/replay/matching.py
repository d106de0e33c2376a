"""Which HAR entry answers a request: method, URL, query and body, then recorded order.

Rules, in order:

1. The method and the URL without its query must be equal. URLs are compared normalised:
   scheme and host lower-cased, a default port dropped, percent-escapes decoded, the fragment
   ignored.
2. The query must hold the same parameters (order does not matter; names listed in
   ``ignore_params`` are left out on both sides). With ``query="best"`` an entry whose
   query differs may still answer when nothing better does: the one sharing most parameters.
3. When the entry recorded a body (``postData``), the request's body must be equal: JSON
   compared as data (key order and spacing do not matter), forms as sets of fields,
   multipart forms as their fields (the boundary, new at every request, left out), anything
   else byte for byte. An entry with no recorded body matches any body, but an entry whose
   body is equal wins over it.
4. A recorded value ``REDACTED`` (what recording puts in place of a secret, see
   :mod:`ego.replay.secrets`) matches any value: for a query parameter or form field every
   value of that name, for a JSON value the value at that place, for a URL path segment any
   segment there. The names must still be the same, and every other value equal; an entry
   whose path is equal wins over one that matched through a ``REDACTED`` segment.
5. Among equally good entries the first one not yet served answers, so a page that polls
   the same URL gets the responses in recorded order; once all were served, the last one
   keeps answering.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from .bodies import multipart_fields
from .har import Entry
from .secret_names import REDACTED

__all__ = [
    "Matcher",
    "QueryMode",
    "bodies_match",
    "normalize_body",
    "request_content_type",
    "split_url",
]

QueryMode = Literal["exact", "best"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

Query = tuple[tuple[str, str], ...]


def split_url(url: str, ignore_params: Collection[str] = ()) -> tuple[str, Query]:
    """``(base, query)``: the normalised URL without query or fragment, and its sorted params.

    Examples:
        ``HTTPS://X.com:443/a%20b?b=2&a=1#top`` gives ``("https://x.com/a b", (("a", "1"),
        ("b", "2")))``.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if ":" in host:
        host = f"[{host}]"  # IPv6: urlsplit dropped the brackets
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = unquote(parts.path) or "/"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = tuple(sorted((k, v) for k, v in pairs if k not in ignore_params))
    return f"{scheme}://{netloc}{path}", query


def normalize_body(body: bytes, content_type: str | None) -> Any:
    """A comparable form of a request body: JSON as canonical text, a form or a multipart
    form as sorted pairs, anything else as its bytes."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    stripped = body.strip()
    if mime.endswith("json") or stripped[:1] in (b"{", b"["):
        try:
            return ("json", json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")))
        except (ValueError, UnicodeDecodeError):
            pass
    if mime == "application/x-www-form-urlencoded":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return ("raw", body)
        return ("form", tuple(sorted(parse_qsl(text, keep_blank_values=True))))
    fields = multipart_fields(body, content_type)
    if fields is not None:
        return ("multipart", fields)
    return ("raw", body)


def _masked(pairs: Query, recorded: Query) -> Query:
    """``pairs`` with every value of a name that ``recorded`` holds as REDACTED set to it."""
    redacted = {name for name, value in recorded if value == REDACTED}
    if not redacted:
        return pairs
    return tuple(sorted((name, REDACTED if name in redacted else v) for name, v in pairs))


def _json_fits(recorded: Any, wanted: Any) -> bool:
    if recorded == REDACTED:
        return True
    if isinstance(recorded, dict):
        return (
            isinstance(wanted, dict)
            and recorded.keys() == wanted.keys()
            and all(_json_fits(value, wanted[key]) for key, value in recorded.items())
        )
    if isinstance(recorded, list):
        return (
            isinstance(wanted, list)
            and len(recorded) == len(wanted)
            and all(_json_fits(a, b) for a, b in zip(recorded, wanted, strict=True))
        )
    # True == 1 in Python, but not in JSON.
    return bool(recorded == wanted) and isinstance(recorded, bool) == isinstance(wanted, bool)


def bodies_match(recorded: Any, wanted: Any) -> bool:
    """True when a request body answers to a recorded one (both from :func:`normalize_body`),
    a recorded ``REDACTED`` standing for any value (see the module rules)."""
    if recorded == wanted:
        return True
    if wanted is None or recorded[0] != wanted[0]:
        return False
    kind = recorded[0]
    if kind in ("form", "multipart"):
        return bool(recorded[1] == _masked(wanted[1], recorded[1]))
    if kind == "json" and f'"{REDACTED}"' in recorded[1]:
        return _json_fits(json.loads(recorded[1]), json.loads(wanted[1]))
    return False


@dataclass
class _Candidate:
    index: int
    entry: Entry
    query: Query
    body: Any | None
    uses: int = 0


class Matcher:
    """Finds the entry for a request in a list of HAR entries (see the module rules).

    Matching is synchronous and keeps state (which entries were served), so requests are
    matched one at a time in the order the browser reported them.

    Args:
        entries: the HAR's entries in recorded order.
        query: ``"exact"`` (the default) or ``"best"`` (see rule 2).
        ignore_params: query parameter names to leave out of the comparison, such as
            cache-busters (``_``, ``cb``) whose value differs at every load.
    """

    def __init__(
        self,
        entries: Sequence[Entry],
        *,
        query: QueryMode = "exact",
        ignore_params: Collection[str] = (),
    ) -> None:
        if query not in ("exact", "best"):
            raise ValueError(f"query={query!r}: use 'exact' or 'best'")
        self.query_mode = query
        self.ignore_params = frozenset(ignore_params)
        self._by_key: dict[tuple[str, str], list[_Candidate]] = {}
        # Entries whose path holds a REDACTED segment: matched segment by segment.
        self._masked: list[tuple[str, list[str], _Candidate]] = []
        for index, entry in enumerate(entries):
            base, params = split_url(entry.request.url, self.ignore_params)
            post = entry.request.post_data
            body = None
            if post is not None and (post.text or post.params):
                body = normalize_body(post.body(), post.mime_type)
            method = entry.request.method.upper()
            candidate = _Candidate(index, entry, params, body)
            self._by_key.setdefault((method, base), []).append(candidate)
            segments = base.split("/")
            if REDACTED in segments[3:]:
                self._masked.append((method, segments, candidate))

    def match(
        self, method: str, url: str, body: bytes | None = None, content_type: str | None = None
    ) -> tuple[int, Entry] | None:
        """The ``(index, entry)`` that answers this request, or None; marks it served.

        Args:
            method: the request method.
            url: the full request URL.
            body: the request body, if any.
            content_type: the request's Content-Type (tells JSON and forms apart).
        """
        base, params = split_url(url, self.ignore_params)
        candidates = self._by_key.get((method.upper(), base)) or self._masked_candidates(
            method.upper(), base
        )
        if not candidates:
            return None
        wanted_body = normalize_body(body, content_type) if body else None
        best: list[_Candidate] = []
        best_score: tuple[int, int] | None = None
        for candidate in candidates:
            score = self._score(candidate, params, wanted_body)
            if score is None:
                continue
            if best_score is None or score > best_score:
                best, best_score = [candidate], score
            elif score == best_score:
                best.append(candidate)
        if not best:
            return None
        # Recorded order: the first entry not served yet, else the last one again.
        chosen = next((c for c in best if c.uses == 0), best[-1])
        chosen.uses += 1
        return chosen.index, chosen.entry

    def _masked_candidates(self, method: str, base: str) -> list[_Candidate]:
        """Entries whose recorded path matches ``base`` with ``REDACTED`` segments as any."""
        segments = base.split("/")
        return [
            candidate
            for recorded_method, recorded, candidate in self._masked
            if recorded_method == method
            and len(recorded) == len(segments)
            and all(r in (s, REDACTED) for r, s in zip(recorded, segments, strict=True))
            and recorded[:3] == segments[:3]
        ]

    def _score(self, candidate: _Candidate, params: Query, body: Any) -> tuple[int, int] | None:
        params = _masked(params, candidate.query)
        if candidate.query == params:
            query_score = 1_000_000
        elif self.query_mode == "best":
            shared = len(set(candidate.query) & set(params))
            query_score = shared * 2 - len(set(candidate.query) ^ set(params))
        else:
            return None
        if candidate.body is None:
            body_score = 1
        elif body is not None and bodies_match(candidate.body, body):
            body_score = 2
        elif self.query_mode == "best":
            body_score = 0
        else:
            return None
        return query_score, body_score


def request_content_type(headers: dict[str, Any]) -> str | None:
    """The Content-Type of a CDP request's headers object (any case), or None."""
    for name, value in headers.items():
        if name.lower() == "content-type":
            return str(value)
    return None
