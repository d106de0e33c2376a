"""Secrets by value: every value a recording redacts by name is redacted wherever else it
appears in the same recording.

A session token is dropped from the ``Cookie`` header by name, but a page may also put it in
a URL path (``/api/session/<token>/items``), echo it in a JSON answer under a harmless key, or
write it into its markup. So, after the by-name pass (:mod:`ego.replay.secrets`), the values it
removed are looked for in every entry and replaced with ``REDACTED``:

- where a request is matched on replay (URL path segments, query values, form and multipart
  fields, JSON values of a request body) the whole value becomes ``REDACTED``, which the
  matcher takes as any value (a path segment too);
- everywhere else (the other headers, response bodies of any text type, redirect URLs, page
  titles) the secret is cut out of the text, the rest kept.

Which values are looked for (:class:`SecretValues`): the values of secret-named fields (query
parameters, form, multipart and JSON fields, of requests and responses), of secret headers
(``Authorization`` also without its scheme word, ``Bearer``) and of every cookie. A value is
looked for only when it is long enough to mean something: :data:`MIN_FIELD_VALUE` characters
for a secret-named field (a 4-digit ``pin``), :data:`MIN_COOKIE_VALUE` for cookie and header
values (a ``theme=dark`` cookie is no secret). Values of :data:`MIN_SUBSTRING` characters or
more are found inside longer text too; shorter ones only as a whole value or a word of their
own (``pin 8413 accepted``). ``true``,
``false``, ``null`` and ``REDACTED`` itself are never looked for.

What was redacted where is named in the entry's ``_redacted`` record under ``"values"``
(``{"url": ["sid"], "responseBody": ["Authorization"]}``: the place, and the names the values
had where they were redacted by name), never the value.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, Final
from urllib.parse import parse_qsl, quote, unquote, unquote_plus

import re2

from .bodies import (
    boundary_of,
    is_form,
    is_json,
    multipart_parts,
    parse_json,
    rewrite_multipart,
)
from .har import Entry, Har, Header, header_value
from .secret_names import REDACTED, is_secret_header, is_secret_name

__all__ = ["MIN_COOKIE_VALUE", "MIN_FIELD_VALUE", "MIN_SUBSTRING", "SecretValues", "strip_values"]

#: The shortest value of a secret-named field that is looked for elsewhere (a 4-digit PIN).
MIN_FIELD_VALUE: Final = 4
#: The shortest cookie or secret header value that is looked for elsewhere.
MIN_COOKIE_VALUE: Final = 8
#: Values at least this long are found inside longer text too, not only as a whole value.
MIN_SUBSTRING: Final = 8

_NEVER: Final = frozenset({"true", "false", "null", "undefined", "none", REDACTED.lower()})
_SCHEMES: Final = ("bearer ", "basic ", "token ", "digest ", "negotiate ")
_RE2_OPTIONS: Final = re2.Options()
_RE2_OPTIONS.max_mem = 256 << 20  # thousands of values in one alternation
_RE2_OPTIONS.log_errors = False


class SecretValues:
    """The values one recording redacts by name, each with the name it had.

    ::

        values = SecretValues()
        for entry in har.entries:
            values.collect(entry)        # before the by-name pass drops them
        ...                              # the by-name pass
        for entry in har.entries:
            values.redact(entry)
    """

    def __init__(self) -> None:
        self._names: dict[str, set[str]] = {}
        self._compiled: tuple[Any, Any] | None = None
        self._forms: dict[str, str] = {}  # each way a value is written -> the value

    def __bool__(self) -> bool:
        return bool(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def add(self, value: Any, name: str, *, least: int = MIN_FIELD_VALUE) -> None:
        """Look for ``value`` (a string or a number) elsewhere, as the value of ``name``.

        Args:
            value: the secret.
            name: the field, header or cookie it was the value of.
            least: the shortest such value worth looking for.
        """
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return
        text = str(value).strip()
        if len(text) < least or text.lower() in _NEVER:
            return
        self._names.setdefault(text, set()).add(name)
        self._compiled = None
        decoded = unquote_plus(text)
        if decoded != text and len(decoded) >= least:
            self._names.setdefault(decoded, set()).add(name)

    # -- collecting (before the by-name pass) -------------------------------------------------

    def collect(self, entry: Entry) -> None:
        """Note every value ``entry`` holds under a secret name (call before stripping it)."""
        request, response = entry.request, entry.response
        for header in request.headers:
            self._header(header)
        for header in response.headers:
            self._header(header)
        for cookie in [*request.cookies, *response.cookies]:
            if isinstance(cookie, dict):
                name = str(cookie.get("name", "cookie"))
                self.add(cookie.get("value"), name, least=MIN_COOKIE_VALUE)
        self._url(request.url)
        self._url(response.redirect_url)
        for pair in request.query_string:
            if is_secret_name(pair.name):
                self.add(pair.value, pair.name)
        post = request.post_data
        if post is not None:
            for param in post.params:
                if is_secret_name(str(param.get("name", ""))):
                    self.add(param.get("value"), str(param.get("name")))
            if post.text is not None:
                self._body(post.text, post.mime_type, request=True)
        content = response.content
        if content.text is not None and (content.encoding or "").lower() != "base64":
            declared = header_value(response.headers, "content-type") or content.mime_type
            self._body(content.text, declared, request=False)

    def _header(self, header: Header) -> None:
        lower = header.name.lower()
        if lower in ("referer", "location", "content-location", ":path"):
            self._url(header.value)
        if not is_secret_header(header.name):
            return
        if lower == "cookie":
            for part in header.value.split(";"):
                name, equals, value = part.partition("=")
                if equals:
                    self.add(value, name.strip(), least=MIN_COOKIE_VALUE)
            return
        if lower in ("set-cookie", "set-cookie2"):
            for line in header.value.splitlines():
                name, equals, value = line.split(";", 1)[0].partition("=")
                if equals:
                    self.add(value, name.strip(), least=MIN_COOKIE_VALUE)
            return
        self.add(header.value, header.name, least=MIN_COOKIE_VALUE)
        scheme = next((s for s in _SCHEMES if header.value.lower().startswith(s)), None)
        if scheme is not None:
            credential = header.value[len(scheme) :].strip()
            self.add(credential, header.name, least=MIN_COOKIE_VALUE)
            if scheme == "basic ":
                self._basic(credential, header.name)

    def _basic(self, credential: str, name: str) -> None:
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return
        _, colon, password = decoded.partition(":")
        if colon:
            self.add(password, name)

    def _url(self, url: str) -> None:
        if not url:
            return
        base, _, fragment = url.partition("#")
        _, _, query = base.partition("?")
        params = fragment.partition("?")[2] if "?" in fragment else fragment
        for text in (query, params):
            for name, value in parse_qsl(text, keep_blank_values=True):
                if is_secret_name(name):
                    self.add(value, name)

    def _body(self, text: str, content_type: str | None, *, request: bool) -> None:
        if is_form(content_type):
            for name, value in parse_qsl(text, keep_blank_values=True):
                if is_secret_name(name, request=request):
                    self.add(value, name)
            return
        boundary = boundary_of(content_type)
        if boundary is not None:
            for part in multipart_parts(text, boundary) or []:
                if not part.is_file and is_secret_name(part.name, request=request):
                    self.add(part.content, part.name)
            return
        parsed = parse_json(text) if text.lstrip()[:1] in ("{", "[") else None
        if parsed is not None:
            self._json(parsed[1], request, None)

    def _json(self, value: Any, request: bool, secret: str | None) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                named = secret or (str(key) if is_secret_name(str(key), request=request) else None)
                self._json(item, request, named)
        elif isinstance(value, list):
            for item in value:
                self._json(item, request, secret)
        elif secret is not None and (request or isinstance(value, str)):
            self.add(value, secret)

    # -- redacting (after the by-name pass) ---------------------------------------------------

    def redact(self, entry: Entry) -> dict[str, list[str]]:
        """Redact every noted value wherever it is in ``entry``, in place.

        Returns:
            Where values were redacted (``url``, ``requestHeaders``, ``requestBody``,
            ``responseHeaders``, ``responseBody``, ``redirectURL``), each with the names the
            values had; also recorded in the entry's ``_redacted`` under ``"values"``.
        """
        if not self._names:
            return {}
        found: dict[str, set[str]] = {}
        request, response = entry.request, entry.response

        def note(where: str, names: Iterable[str]) -> None:
            names = set(names)
            if names:
                found.setdefault(where, set()).update(names)

        request.url, names = self._in_url(request.url)
        note("url", names)
        for pair in request.query_string:
            pair.value, names = self._whole(pair.value)
            note("url", names)
        note("requestHeaders", self._in_headers(request.headers))
        post = request.post_data
        if post is not None:
            for param in post.params:
                param["value"], names = self._whole(param.get("value"))
                note("requestBody", names)
            if post.text is not None:
                post.text, names = self._in_request_body(post.text, post.mime_type)
                if names:
                    request.body_size = len(post.body())
                note("requestBody", names)
        note("responseHeaders", self._in_headers(response.headers))
        response.redirect_url, names = self._in_url(response.redirect_url)
        note("redirectURL", names)
        content = response.content
        if content.text is not None and (content.encoding or "").lower() != "base64":
            declared = header_value(response.headers, "content-type") or content.mime_type
            content.text, names = self._in_response_body(content.text, declared)
            if names:
                content.size = len(content.text.encode("utf-8"))
                if response.body_size >= 0:
                    response.body_size = content.size
            note("responseBody", names)
        record = {where: sorted(names) for where, names in sorted(found.items())}
        if record:
            dropped = entry.extra.get("_redacted")
            dropped = dict(dropped) if isinstance(dropped, dict) else {}
            dropped["values"] = record
            entry.extra["_redacted"] = dropped
        return record

    def redact_title(self, title: str) -> str:
        """A page title with the noted values cut out."""
        return self._in_text(title)[0]

    def redact_text(self, text: str) -> str:
        """Any text (a console line, a snapshot's line) with the noted values cut out."""
        return self._in_text(text)[0] if self._names else text

    def collect_json(self, data: Any, *, request: bool = True) -> None:
        """Note every value parsed JSON ``data`` holds under a secret name, as a request body
        (``request``) or an answer's are noted (a tool's args and result)."""
        self._json(data, request, None)

    def _patterns(self) -> tuple[Any, Any]:
        """Two RE2 expressions for every noted value: the long ones anywhere (also
        percent-encoded), the short ones as a word of their own (group 1). RE2 matches an
        alternation of thousands of values in one linear pass over a text, where Python's
        ``re`` tries each at every position."""
        if self._compiled is None:
            self._forms = {}
            for value in self._names:
                self._forms[value] = value
                if len(value) >= MIN_SUBSTRING:
                    self._forms.setdefault(quote(value, safe=""), value)
            ordered = sorted(self._forms, key=len, reverse=True)
            longs = "|".join(re.escape(f) for f in ordered if len(self._forms[f]) >= MIN_SUBSTRING)
            shorts = "|".join(re.escape(f) for f in ordered if len(self._forms[f]) < MIN_SUBSTRING)
            self._compiled = (
                re2.compile(longs, options=_RE2_OPTIONS) if longs else None,
                re2.compile(
                    rf"(?:^|[^0-9A-Za-z])({shorts})(?:[^0-9A-Za-z]|$)", options=_RE2_OPTIONS
                )
                if shorts
                else None,
            )
        return self._compiled

    def _hits(self, text: str) -> list[str]:
        """The noted values ``text`` is or holds: a long one anywhere, a short one as a word
        of its own (``pin 8413 accepted``, not ``184130``)."""
        if text in self._names:
            return [text]
        longs, shorts = self._patterns()
        found = longs.findall(text) if longs is not None else []
        found += shorts.findall(text) if shorts is not None else []
        return list(dict.fromkeys(self._forms[form] for form in found))

    def _whole(self, value: Any) -> tuple[Any, set[str]]:
        """A value the matcher compares: REDACTED whole when it is or holds a noted value."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return value, set()
        text = str(value)
        hits = self._hits(text) or self._hits(unquote_plus(text))
        if not hits:
            return value, set()
        return REDACTED, {name for hit in hits for name in self._names[hit]}

    def _in_text(self, text: str) -> tuple[str, set[str]]:
        """Free text: each noted value cut out (long ones inside words too)."""
        if text in self._names:
            return REDACTED, set(self._names[text])
        names: set[str] = set()
        longs, shorts = self._patterns()

        def cut(match: Any) -> str:
            names.update(self._names[self._forms[match.group(0)]])
            return REDACTED

        def cut_word(match: Any) -> str:
            whole: str = match.group(0)
            word: str = match.group(1)
            names.update(self._names[self._forms[word]])
            start = match.start(1) - match.start(0)
            return whole[:start] + REDACTED + whole[start + len(word) :]

        if longs is not None:
            text = longs.sub(cut, text)
        if shorts is not None:
            # Twice: a match takes the character before the next word with it ("8413 8413").
            text = shorts.sub(cut_word, shorts.sub(cut_word, text))
        return text, names

    def _in_response_body(self, text: str, content_type: str | None) -> tuple[str, set[str]]:
        """A JSON answer as data (a string that is or holds a noted value becomes REDACTED;
        numbers stay, as a page may check them); any other text with the values cut out."""
        parsed = parse_json(text) if is_json(content_type) else None
        if parsed is None:
            return self._in_text(text)
        names: set[str] = set()

        def string(value: Any) -> tuple[Any, set[str]]:
            return self._whole(value) if isinstance(value, str) else (value, set())

        prefix, data = parsed
        walked = _walk(data, string, names)
        if not names:
            return text, names
        return prefix + json.dumps(walked, ensure_ascii=False, separators=(",", ":")), names

    def _in_headers(self, headers: list[Header]) -> set[str]:
        names: set[str] = set()
        for header in headers:
            header.value, found = self._in_text(header.value)
            names |= found
        return names

    def _in_url(self, url: str) -> tuple[str, set[str]]:
        """A URL: path segments and query values that are or hold a noted value become
        REDACTED whole; the fragment has them cut out."""
        if not url:
            return url, set()
        base, hashed, fragment = url.partition("#")
        head, question, query = base.partition("?")
        scheme, separator, rest = head.partition("://")
        names: set[str] = set()
        if separator:
            host, slash, path = rest.partition("/")
            segments = path.split("/")
            for index, segment in enumerate(segments):
                hits = self._hits(segment) or self._hits(unquote(segment))
                if hits:
                    segments[index] = REDACTED
                    names |= {name for hit in hits for name in self._names[hit]}
            head = f"{scheme}://{host}{slash}{'/'.join(segments)}"
        if question:
            pieces = query.split("&")
            for index, piece in enumerate(pieces):
                name, equals, value = piece.partition("=")
                if not equals:
                    continue
                redacted, found = self._whole(value)
                if found:
                    pieces[index] = f"{name}={redacted}"
                    names |= found
            head = f"{head}?{'&'.join(pieces)}"
        if hashed:
            fragment, found = self._in_text(fragment)
            names |= found
            head = f"{head}#{fragment}"
        return head, names

    def _in_request_body(self, text: str, content_type: str | None) -> tuple[str, set[str]]:
        names: set[str] = set()
        if is_form(content_type):

            def field(value: str) -> str | None:
                redacted, found = self._whole(value)
                names.update(found)
                return redacted if found else None

            pieces = text.split("&")
            for index, piece in enumerate(pieces):
                name, equals, value = piece.partition("=")
                if equals and (replaced := field(value)) is not None:
                    pieces[index] = f"{name}={replaced}"
            return "&".join(pieces), names
        boundary = boundary_of(content_type)
        if boundary is not None:

            def part_value(part: Any) -> str | None:
                if part.is_file:
                    return None
                redacted, found = self._whole(part.content)
                names.update(found)
                return str(redacted) if found else None

            rewritten = rewrite_multipart(text, boundary, part_value)
            return (rewritten if rewritten is not None else text), names
        parsed = parse_json(text) if text.lstrip()[:1] in ("{", "[") else None
        if parsed is None:
            return self._in_text(text)
        prefix, data = parsed
        walked = _walk(data, self._whole, names)
        if not names:
            return text, names
        return prefix + json.dumps(walked, ensure_ascii=False, separators=(",", ":")), names


def _walk(value: Any, whole: Callable[[Any], tuple[Any, set[str]]], names: set[str]) -> Any:
    """A copy of JSON ``value`` with each scalar that is or holds a noted value REDACTED."""
    if isinstance(value, dict):
        return {key: _walk(item, whole, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, whole, names) for item in value]
    redacted, found = whole(value)
    names.update(found)
    return redacted


def strip_values(har: Har, values: SecretValues) -> None:
    """Redact ``values`` everywhere in ``har`` (entries and page titles), in place."""
    for entry in har.entries:
        values.redact(entry)
    for page in har.pages:
        page.title = values.redact_title(page.title)
