"""HAR 1.2: the archive format browsers and Playwright read and write, as Python objects.

Reading is tolerant of what real tools write: Chrome DevTools (``_resourceType``, bodies as
plain text or ``content.encoding: "base64"``, status 0 with ``_error`` for a failed request),
Playwright (``content._file`` next to the HAR, ``postData.params`` without ``text``), and files
that leave out fields the spec calls required (``cookies``, ``timings``, ``headersSize``...).
Unknown fields, including ``_custom`` ones, are kept and written back unchanged.

Writing produces a spec-complete HAR 1.2 file that Chrome and Playwright can import.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..errors import HarFormatError

__all__ = [
    "Content",
    "Entry",
    "Har",
    "HarRequest",
    "HarResponse",
    "Header",
    "Page",
    "PostData",
    "build_entry",
    "charset_of",
    "header_value",
]

#: Written as ``log.creator``.
CREATOR: dict[str, Any] = {"name": "ego", "version": "0.1.0"}

JSONObject = dict[str, Any]


@dataclass
class Header:
    """A ``{name, value}`` pair: a header, a query parameter or a form field."""

    name: str
    value: str

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        return {"name": self.name, "value": self.value}


def header_value(headers: Iterable[Header], name: str) -> str | None:
    """The value of the first header called ``name`` (case-insensitive), or None."""
    wanted = name.lower()
    for header in headers:
        if header.name.lower() == wanted:
            return header.value
    return None


def charset_of(content_type: str | None) -> str | None:
    """The ``charset=`` of a Content-Type, if Python knows that codec; else None."""
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.strip().lower() == "charset":
            name = value.strip().strip("\"'")
            try:
                return codecs.lookup(name).name
            except LookupError:
                return None
    return None


@dataclass
class PostData:
    """A request body: ``text``, or form ``params`` (Playwright may write only those)."""

    mime_type: str = ""
    text: str | None = None
    params: list[JSONObject] = field(default_factory=list)
    extra: JSONObject = field(default_factory=dict)

    def body(self) -> bytes:
        """The body as bytes: ``text`` (UTF-8), else the params URL-encoded."""
        if self.text is not None:
            return self.text.encode("utf-8", "surrogateescape")
        pairs = [(str(p.get("name", "")), str(p.get("value", ""))) for p in self.params]
        return urlencode(pairs).encode("ascii")

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        data: JSONObject = {**self.extra, "mimeType": self.mime_type}
        if self.params:
            data["params"] = self.params
        data["text"] = self.text if self.text is not None else self.body().decode("latin-1")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PostData:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept."""
        known = {"mimeType", "text", "params"}
        params = data.get("params")
        text = data.get("text")
        return cls(
            mime_type=str(data.get("mimeType") or ""),
            text=str(text) if text is not None else None,
            params=[dict(p) for p in params if isinstance(p, Mapping)]
            if isinstance(params, list)
            else [],
            extra={k: v for k, v in data.items() if k not in known},
        )


@dataclass
class HarRequest:
    """``entry.request``."""

    method: str
    url: str
    http_version: str = "HTTP/1.1"
    headers: list[Header] = field(default_factory=list)
    query_string: list[Header] = field(default_factory=list)
    cookies: list[JSONObject] = field(default_factory=list)
    post_data: PostData | None = None
    headers_size: int = -1
    body_size: int = -1
    extra: JSONObject = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        query = self.query_string or [
            Header(name, value)
            for name, value in parse_qsl(urlsplit(self.url).query, keep_blank_values=True)
        ]
        data: JSONObject = {
            **self.extra,
            "method": self.method,
            "url": self.url,
            "httpVersion": self.http_version,
            "cookies": self.cookies,
            "headers": [h.to_dict() for h in self.headers],
            "queryString": [q.to_dict() for q in query],
            "headersSize": self.headers_size,
            "bodySize": self.body_size
            if self.body_size >= 0 or self.post_data is None
            else len(self.post_data.body()),
        }
        if self.post_data is not None:
            data["postData"] = self.post_data.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> HarRequest:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept in ``extra``.

        Raises:
            HarFormatError: what is there cannot be used (no URL, bad ``_file``).
        """
        url = data.get("url")
        if not isinstance(url, str) or not url:
            raise HarFormatError(f"{where}: request.url is missing")
        known = {
            "method",
            "url",
            "httpVersion",
            "headers",
            "queryString",
            "cookies",
            "postData",
            "headersSize",
            "bodySize",
        }
        post = data.get("postData")
        return cls(
            method=str(data.get("method") or "GET").upper(),
            url=url,
            http_version=str(data.get("httpVersion") or "HTTP/1.1"),
            headers=_pairs(data.get("headers")),
            query_string=_pairs(data.get("queryString")),
            cookies=_objects(data.get("cookies")),
            post_data=PostData.from_dict(post) if isinstance(post, Mapping) else None,
            headers_size=_int(data.get("headersSize"), -1),
            body_size=_int(data.get("bodySize"), -1),
            extra={k: v for k, v in data.items() if k not in known},
        )


@dataclass
class Content:
    """``response.content``: the decoded body as ``text``, base64 when ``encoding`` says so."""

    mime_type: str = ""
    text: str | None = None
    encoding: str | None = None
    size: int = -1
    compression: int | None = None
    extra: JSONObject = field(default_factory=dict)

    def body(self, content_type: str | None = None) -> bytes:
        """The body bytes.

        Args:
            content_type: the response's Content-Type header; its charset is used to encode
                a plain ``text`` body (HAR keeps text decoded), UTF-8 when it has none.

        Raises:
            HarFormatError: ``encoding`` is base64 but ``text`` is not valid base64.
        """
        if self.text is None:
            return b""
        if (self.encoding or "").lower() == "base64":
            try:
                return base64.b64decode(self.text, validate=False)
            except (binascii.Error, ValueError) as exc:
                raise HarFormatError(f"content.text is not valid base64: {exc}") from None
        charset = charset_of(content_type) or charset_of(self.mime_type) or "utf-8"
        try:
            return self.text.encode(charset)
        except (UnicodeEncodeError, LookupError):
            # A page whose declared charset cannot hold the recorded text: UTF-8 keeps it whole.
            return self.text.encode("utf-8", "surrogateescape")

    @classmethod
    def from_body(cls, body: bytes, mime_type: str = "") -> Content:
        """Content holding ``body``: as text when it is UTF-8 text, else base64."""
        textual = _is_textual(mime_type)
        if textual:
            try:
                return cls(mime_type=mime_type, text=body.decode("utf-8"), size=len(body))
            except UnicodeDecodeError:
                pass
        return cls(
            mime_type=mime_type,
            text=base64.b64encode(body).decode("ascii"),
            encoding="base64",
            size=len(body),
        )

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        data: JSONObject = {**self.extra, "size": self.size, "mimeType": self.mime_type}
        if self.size < 0:
            data["size"] = len(self.body()) if self.text is not None else 0
        if self.compression is not None:
            data["compression"] = self.compression
        if self.text is not None:
            data["text"] = self.text
        if self.encoding:
            data["encoding"] = self.encoding
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str, base_dir: Path | None) -> Content:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept in ``extra``.

        Raises:
            HarFormatError: what is there cannot be used (no URL, bad ``_file``).
        """
        known = {"size", "mimeType", "text", "encoding", "compression"}
        text = data.get("text")
        encoding = data.get("encoding")
        extra = {k: v for k, v in data.items() if k not in known}
        attached = data.get("_file")
        if text is None and isinstance(attached, str) and base_dir is not None:
            # Playwright's "attach" mode keeps bodies in files beside the HAR.
            file = (base_dir / attached).resolve()
            if base_dir.resolve() not in file.parents:
                raise HarFormatError(f"{where}: content._file {attached!r} leaves the HAR folder")
            try:
                raw = file.read_bytes()
            except OSError as exc:
                raise HarFormatError(
                    f"{where}: cannot read content._file {attached!r}: {exc}"
                ) from None
            text, encoding = base64.b64encode(raw).decode("ascii"), "base64"
            extra.pop("_file")
        compression = data.get("compression")
        return cls(
            mime_type=str(data.get("mimeType") or ""),
            text=str(text) if text is not None else None,
            encoding=str(encoding) if encoding else None,
            size=_int(data.get("size"), -1),
            compression=_int(compression, 0) if compression is not None else None,
            extra=extra,
        )


@dataclass
class HarResponse:
    """``entry.response``."""

    status: int
    status_text: str = ""
    http_version: str = "HTTP/1.1"
    headers: list[Header] = field(default_factory=list)
    cookies: list[JSONObject] = field(default_factory=list)
    content: Content = field(default_factory=Content)
    redirect_url: str = ""
    headers_size: int = -1
    body_size: int = -1
    extra: JSONObject = field(default_factory=dict)

    def body(self) -> bytes:
        """The decoded body (see :meth:`Content.body`)."""
        return self.content.body(header_value(self.headers, "content-type"))

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        return {
            **self.extra,
            "status": self.status,
            "statusText": self.status_text,
            "httpVersion": self.http_version,
            "cookies": self.cookies,
            "headers": [h.to_dict() for h in self.headers],
            "content": self.content.to_dict(),
            "redirectURL": self.redirect_url,
            "headersSize": self.headers_size,
            "bodySize": self.body_size,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str, base_dir: Path | None) -> HarResponse:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept in ``extra``.

        Raises:
            HarFormatError: what is there cannot be used (no URL, bad ``_file``).
        """
        known = {
            "status",
            "statusText",
            "httpVersion",
            "headers",
            "cookies",
            "content",
            "redirectURL",
            "headersSize",
            "bodySize",
        }
        content = data.get("content")
        return cls(
            status=_int(data.get("status"), 0),
            status_text=str(data.get("statusText") or ""),
            http_version=str(data.get("httpVersion") or "HTTP/1.1"),
            headers=_pairs(data.get("headers")),
            cookies=_objects(data.get("cookies")),
            content=Content.from_dict(content, where, base_dir)
            if isinstance(content, Mapping)
            else Content(),
            redirect_url=str(data.get("redirectURL") or ""),
            headers_size=_int(data.get("headersSize"), -1),
            body_size=_int(data.get("bodySize"), -1),
            extra={k: v for k, v in data.items() if k not in known},
        )


_DEFAULT_TIMINGS: JSONObject = {"send": 0, "wait": 0, "receive": 0}


@dataclass
class Entry:
    """One request and its response (``log.entries[i]``)."""

    request: HarRequest
    response: HarResponse
    started_date_time: str = ""
    time: float = 0.0
    timings: JSONObject = field(default_factory=lambda: dict(_DEFAULT_TIMINGS))
    cache: JSONObject = field(default_factory=dict)
    pageref: str | None = None
    server_ip_address: str | None = None
    #: Chrome's resource type (``_resourceType``: document, script, fetch, xhr, ...), if known.
    resource_type: str | None = None
    extra: JSONObject = field(default_factory=dict)

    @property
    def failed(self) -> str | None:
        """Chrome's error text when the recorded request failed (status 0), else None."""
        if self.response.status > 0:
            return None
        error = self.response.extra.get("_error") or self.extra.get("_error")
        return str(error) if error else "failed"

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        data: JSONObject = {**self.extra}
        if self.pageref is not None:
            data["pageref"] = self.pageref
        data.update(
            {
                "startedDateTime": self.started_date_time or _now(),
                "time": self.time,
                "request": self.request.to_dict(),
                "response": self.response.to_dict(),
                "cache": self.cache,
                "timings": self.timings,
            }
        )
        if self.server_ip_address is not None:
            data["serverIPAddress"] = self.server_ip_address
        if self.resource_type is not None:
            data["_resourceType"] = self.resource_type
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str, base_dir: Path | None) -> Entry:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept in ``extra``.

        Raises:
            HarFormatError: what is there cannot be used (no URL, bad ``_file``).
        """
        request = data.get("request")
        response = data.get("response")
        if not isinstance(request, Mapping):
            raise HarFormatError(f"{where}: no request object")
        known = {
            "pageref",
            "startedDateTime",
            "time",
            "request",
            "response",
            "cache",
            "timings",
            "serverIPAddress",
            "_resourceType",
        }
        timings = data.get("timings")
        cache = data.get("cache")
        resource_type = data.get("_resourceType")
        time = data.get("time")
        return cls(
            request=HarRequest.from_dict(request, where),
            response=HarResponse.from_dict(response, where, base_dir)
            if isinstance(response, Mapping)
            else HarResponse(status=0),
            started_date_time=str(data.get("startedDateTime") or ""),
            time=float(time) if isinstance(time, int | float) else 0.0,
            timings=dict(timings) if isinstance(timings, Mapping) else dict(_DEFAULT_TIMINGS),
            cache=dict(cache) if isinstance(cache, Mapping) else {},
            pageref=str(data["pageref"]) if data.get("pageref") is not None else None,
            server_ip_address=str(data["serverIPAddress"]) if data.get("serverIPAddress") else None,
            resource_type=str(resource_type) if resource_type else None,
            extra={k: v for k, v in data.items() if k not in known},
        )


@dataclass
class Page:
    """``log.pages[i]``: a page that entries may refer to by ``pageref``."""

    id: str
    title: str = ""
    started_date_time: str = ""
    page_timings: JSONObject = field(default_factory=dict)
    extra: JSONObject = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included)."""
        return {
            **self.extra,
            "startedDateTime": self.started_date_time or _now(),
            "id": self.id,
            "title": self.title,
            "pageTimings": self.page_timings,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Page:
        """Read from HAR JSON, defaulting whatever is missing; unknown fields kept."""
        known = {"startedDateTime", "id", "title", "pageTimings"}
        timings = data.get("pageTimings")
        return cls(
            id=str(data.get("id") or ""),
            title=str(data.get("title") or ""),
            started_date_time=str(data.get("startedDateTime") or ""),
            page_timings=dict(timings) if isinstance(timings, Mapping) else {},
            extra={k: v for k, v in data.items() if k not in known},
        )


@dataclass
class Har:
    """A whole HAR file: ``log.entries`` in recorded order, plus pages and metadata.

    Attributes:
        entries: the requests, in the order they were made.
        pages: the pages entries refer to (optional in practice).
        creator: ``log.creator``; ego writes its own name when it records.
        browser: ``log.browser``, if any.
        comment: ``log.comment``, if any.
        source: the file this HAR was loaded from, if any (for messages).
    """

    entries: list[Entry] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    creator: JSONObject = field(default_factory=lambda: dict(CREATOR))
    browser: JSONObject | None = None
    comment: str | None = None
    version: str = "1.2"
    extra: JSONObject = field(default_factory=dict)
    source: Path | None = None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Har:
        """Read a HAR file.

        Args:
            path: the ``.har`` file. Playwright's ``content._file`` bodies are read from its
                folder.

        Raises:
            HarFormatError: the file cannot be read, is not JSON, or is not a HAR.
        """
        file = Path(path)
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise HarFormatError(f"cannot read HAR {file}: {exc}", path=str(file)) from None
        try:
            har = cls.loads(raw, base_dir=file.parent)
        except HarFormatError as exc:
            raise HarFormatError(f"{file}: {exc}", path=str(file)) from None
        har.source = file
        return har

    @classmethod
    def loads(cls, text: str | bytes, *, base_dir: str | os.PathLike[str] | None = None) -> Har:
        """Parse HAR JSON text.

        Raises:
            HarFormatError: not JSON, or not a HAR.
        """
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HarFormatError(f"not JSON: {exc}") from None
        return cls.from_dict(data, base_dir=base_dir)

    @classmethod
    def from_dict(cls, data: Any, *, base_dir: str | os.PathLike[str] | None = None) -> Har:
        """Build from parsed JSON: ``{"log": {...}}``, or a bare log object.

        Raises:
            HarFormatError: there is no ``entries`` list, or an entry has no request URL.
        """
        if not isinstance(data, Mapping):
            raise HarFormatError("a HAR is a JSON object with a log")
        log = data.get("log", data)
        if not isinstance(log, Mapping) or not isinstance(log.get("entries"), list):
            raise HarFormatError('not a HAR: no "log.entries" list')
        folder = Path(base_dir) if base_dir is not None else None
        entries = []
        for index, raw in enumerate(log["entries"]):
            if not isinstance(raw, Mapping):
                raise HarFormatError(f"log.entries[{index}] is not an object")
            entries.append(Entry.from_dict(raw, f"log.entries[{index}]", folder))
        known = {"version", "creator", "browser", "pages", "entries", "comment"}
        pages = log.get("pages")
        creator = log.get("creator")
        browser = log.get("browser")
        return cls(
            entries=entries,
            pages=[Page.from_dict(p) for p in pages if isinstance(p, Mapping)]
            if isinstance(pages, list)
            else [],
            creator=dict(creator) if isinstance(creator, Mapping) else dict(CREATOR),
            browser=dict(browser) if isinstance(browser, Mapping) else None,
            comment=str(log["comment"]) if log.get("comment") is not None else None,
            version=str(log.get("version") or "1.2"),
            extra={k: v for k, v in log.items() if k not in known},
        )

    def to_dict(self) -> JSONObject:
        """The HAR as JSON-ready data (``{"log": {...}}``)."""
        log: JSONObject = {**self.extra, "version": self.version, "creator": self.creator}
        if self.browser is not None:
            log["browser"] = self.browser
        log["pages"] = [page.to_dict() for page in self.pages]
        log["entries"] = [entry.to_dict() for entry in self.entries]
        if self.comment is not None:
            log["comment"] = self.comment
        return {"log": log}

    def dumps(self, *, indent: int | None = 2) -> str:
        """The HAR as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + "\n"

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the HAR to ``path`` (UTF-8 JSON, parents created) and return the path.

        The file is written next to its final name and then renamed, so a reader never sees
        half a HAR.
        """
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        temporary = file.with_name(file.name + ".part")
        temporary.write_text(self.dumps(), encoding="utf-8")
        os.replace(temporary, file)
        return file

    def add(self, entry: Entry) -> Entry:
        """Append ``entry`` and return it."""
        self.entries.append(entry)
        return entry


def build_entry(
    url: str,
    body: str | bytes = b"",
    *,
    method: str = "GET",
    status: int = 200,
    status_text: str = "",
    headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
    mime_type: str | None = None,
    post_data: str | bytes | None = None,
    post_mime_type: str = "application/json",
    request_headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
    resource_type: str | None = None,
    started: str | None = None,
) -> Entry:
    """An entry made by hand, for HAR generator scripts and tests.

    Args:
        url: the request URL.
        body: the response body; text is stored as text, bytes as text when they are UTF-8
            text of a textual type, else base64.
        method: the request method.
        status: the response status.
        status_text: the reason phrase (HTTP/2 responses have none).
        headers: response headers (a mapping, or pairs when a name repeats, as Set-Cookie).
        mime_type: the body's type; defaults to the Content-Type header, else text/html.
        post_data: the request body, when the request has one.
        post_mime_type: its type.
        request_headers: request headers.
        resource_type: Chrome's resource type (document, script, fetch, ...).
        started: ``startedDateTime``; now by default.
    """
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
    content_type = next((v for k, v in pairs if k.lower() == "content-type"), None)
    mime = mime_type or content_type or "text/html; charset=utf-8"
    if content_type is None:
        pairs.insert(0, ("content-type", mime))
    raw = body.encode("utf-8") if isinstance(body, str) else body
    request_pairs = (
        list(request_headers.items())
        if isinstance(request_headers, Mapping)
        else list(request_headers or [])
    )
    post = None
    if post_data is not None:
        text = post_data if isinstance(post_data, str) else post_data.decode("utf-8")
        post = PostData(mime_type=post_mime_type, text=text)
    return Entry(
        request=HarRequest(
            method=method.upper(),
            url=url,
            headers=[Header(k, v) for k, v in request_pairs],
            post_data=post,
            body_size=len(post.body()) if post is not None else 0,
        ),
        response=HarResponse(
            status=status,
            status_text=status_text,
            headers=[Header(k, v) for k, v in pairs],
            content=Content.from_body(raw, mime),
            redirect_url=next((v for k, v in pairs if k.lower() == "location"), ""),
            body_size=len(raw),
        ),
        started_date_time=started or _now(),
        resource_type=resource_type,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _is_textual(mime_type: str) -> bool:
    mime = mime_type.split(";", 1)[0].strip().lower()
    return (
        mime.startswith("text/")
        or mime.endswith(("+json", "+xml", "/json", "/xml", "/javascript", "/ecmascript"))
        or mime in ("application/x-www-form-urlencoded", "image/svg+xml", "application/manifest")
    )


def _pairs(value: Any) -> list[Header]:
    # The spec says a list of {name, value}; a plain {name: value} object is accepted too.
    if isinstance(value, Mapping):
        return [Header(str(k), str(v)) for k, v in value.items()]
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        if isinstance(item, Mapping) and "name" in item:
            found.append(Header(str(item["name"]), str(item.get("value", ""))))
    return found


def _objects(value: Any) -> list[JSONObject]:
    return (
        [dict(item) for item in value if isinstance(item, Mapping)]
        if isinstance(value, list)
        else []
    )


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    return default
