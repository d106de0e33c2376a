"""HAR 1.2: the archive format browsers and Playwright read and write, as pydantic models.

Reading is tolerant of what real tools write: Chrome DevTools (``_resourceType``, bodies as
plain text or ``content.encoding: "base64"``, status 0 with ``_error`` for a failed request),
Playwright (``content._file`` next to the HAR, ``postData.params`` without ``text``), and files
that leave out fields the spec calls required (``cookies``, ``timings``, ``headersSize``...).
Unknown fields, including ``_custom`` ones, are kept (``extra``) and written back unchanged.

Writing produces a spec-complete HAR 1.2 file that Chrome and Playwright can import. Python
names are snake_case; the JSON names are HAR's camelCase (``mimeType``, ``redirectURL``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import (
    BeforeValidator,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_serializer,
    model_validator,
)

from ..errors import HarFormatError, HarTooLargeError
from .har_bounds import (
    LARGE_HAR_BYTES,
    HarBounds,
    HarProgress,
    ProgressCallback,
    current_bounds,
    current_progress,
    scan_har_file,
    too_many_bytes,
    too_many_entries,
)
from .har_fields import (
    DEFAULT_TIMINGS,
    HarModel,
    Header,
    JSONObject,
    Objects,
    OptionalText,
    Pairs,
    Size,
    Text,
    TruthyText,
    charset_of,
    dump,
    har_error,
    header_value,
    lenient_int,
    nested,
    object_or,
    text_or,
    unusable,
)

__all__ = [
    "CREATOR",
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
#: Entries between two progress reports while a large file's entries are checked.
_REPORT_EVERY = 2_000


@dataclass
class _Budget:
    """The bytes a HAR's ``content._file`` bodies may still take (its bound, less the file)."""

    file: Path | None  # the HAR's file, None for text
    bounds: HarBounds
    left: int

    def take(self, body: Path) -> None:
        """Count ``body`` against the budget.

        Raises:
            HarTooLargeError: it does not fit.
            OSError: it cannot be read.
        """
        size = body.stat().st_size
        if size > self.left:
            spent = self.bounds.max_bytes - self.left + size
            raise too_many_bytes(self.file, spent, self.bounds, " with its content._file bodies")
        self.left -= size


class PostData(HarModel):
    """A request body: ``text``, or form ``params`` (Playwright may write only those)."""

    mime_type: Text = ""
    params: Objects = Field(default_factory=list)
    text: OptionalText = None

    def body(self) -> bytes:
        """The body as bytes: ``text`` (UTF-8), else the params URL-encoded."""
        if self.text is not None:
            return self.text.encode("utf-8", "surrogateescape")
        pairs = [(str(p.get("name", "")), str(p.get("value", ""))) for p in self.params]
        return urlencode(pairs).encode("ascii")

    @field_serializer("text")
    def _text_always(self, text: str | None) -> str:
        # The spec requires text: a params-only body is written as its encoded form too.
        return text if text is not None else self.body().decode("latin-1")

    def _absent(self) -> Iterable[str]:
        return () if self.params else ("params",)


class HarRequest(HarModel):
    """``entry.request``."""

    method: Annotated[str, BeforeValidator(lambda v: str(v or "GET").upper())] = "GET"
    url: str
    http_version: Annotated[str, text_or("HTTP/1.1")] = "HTTP/1.1"
    cookies: Objects = Field(default_factory=list)
    headers: Pairs = Field(default_factory=list)
    query_string: Pairs = Field(default_factory=list)
    headers_size: Size = -1
    body_size: Size = -1
    post_data: Annotated[PostData | None, nested(PostData, lambda: None)] = None

    @model_validator(mode="before")
    @classmethod
    def _has_url(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            url = data.get("url")
            if not isinstance(url, str) or not url:
                raise unusable("request.url is missing")
        return data

    @field_serializer("query_string")
    def _query(self, query: list[Header]) -> list[JSONObject]:
        # A hand-built entry gives only the URL: the spec wants its query listed as well.
        if not query:
            query = [
                Header(name, value)
                for name, value in parse_qsl(urlsplit(self.url).query, keep_blank_values=True)
            ]
        return [{"name": pair.name, "value": pair.value} for pair in query]

    @field_serializer("body_size")
    def _body_size(self, size: int) -> int:
        if size >= 0 or self.post_data is None:
            return size
        return len(self.post_data.body())

    def _absent(self) -> Iterable[str]:
        return ("post_data",) if self.post_data is None else ()


class Content(HarModel):
    """``response.content``: the decoded body as ``text``, base64 when ``encoding`` says so."""

    size: Size = -1
    mime_type: Text = ""
    compression: Annotated[
        int | None, BeforeValidator(lambda v: None if v is None else lenient_int(v, 0))
    ] = None
    text: OptionalText = None
    encoding: TruthyText = None

    @model_validator(mode="before")
    @classmethod
    def _attached_body(cls, data: Any, info: ValidationInfo) -> Any:
        # Playwright's "attach" mode keeps bodies in files beside the HAR.
        base_dir = (info.context or {}).get("base_dir")
        if not isinstance(data, Mapping) or base_dir is None or data.get("text") is not None:
            return data
        attached = data.get("_file")
        if not isinstance(attached, str):
            return data
        file = (base_dir / attached).resolve()
        if base_dir.resolve() not in file.parents:
            raise unusable(f"content._file {attached!r} leaves the HAR folder")
        budget = (info.context or {}).get("budget")
        try:
            if isinstance(budget, _Budget):
                budget.take(file)
            raw = file.read_bytes()
        except OSError as exc:
            raise unusable(f"cannot read content._file {attached!r}: {exc}") from None
        read = {key: value for key, value in data.items() if key != "_file"}
        return {**read, "text": base64.b64encode(raw).decode("ascii"), "encoding": "base64"}

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
        if _is_textual(mime_type):
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

    @field_serializer("size")
    def _size(self, size: int) -> int:
        if size >= 0:
            return size
        return len(self.body()) if self.text is not None else 0

    def _absent(self) -> Iterable[str]:
        absent = [name for name in ("compression", "text") if getattr(self, name) is None]
        return [*absent, "encoding"] if not self.encoding else absent


class HarResponse(HarModel):
    """``entry.response``."""

    status: Annotated[int, BeforeValidator(lambda v: lenient_int(v, 0))] = 0
    status_text: Text = ""
    http_version: Annotated[str, text_or("HTTP/1.1")] = "HTTP/1.1"
    cookies: Objects = Field(default_factory=list)
    headers: Pairs = Field(default_factory=list)
    content: Annotated[Content, nested(Content, Content)] = Field(default_factory=Content)
    redirect_url: Text = ""
    headers_size: Size = -1
    body_size: Size = -1

    def body(self) -> bytes:
        """The decoded body (see :meth:`Content.body`)."""
        return self.content.body(header_value(self.headers, "content-type"))


class Entry(HarModel):
    """One request and its response (``log.entries[i]``).

    Attributes:
        resource_type: Chrome's resource type (``_resourceType``: document, script, fetch,
            xhr, ...), if known.
    """

    pageref: OptionalText = None
    started_date_time: Text = ""
    time: Annotated[
        float, BeforeValidator(lambda v: float(v) if isinstance(v, int | float) else 0.0)
    ] = 0.0
    request: HarRequest
    response: Annotated[HarResponse, nested(HarResponse, lambda: HarResponse(status=0))] = Field(
        default_factory=lambda: HarResponse(status=0)
    )
    cache: Annotated[JSONObject, object_or({})] = Field(default_factory=dict)
    timings: Annotated[JSONObject, object_or(DEFAULT_TIMINGS)] = Field(
        default_factory=lambda: dict(DEFAULT_TIMINGS)
    )
    server_ip_address: TruthyText = None
    resource_type: TruthyText = None

    @model_validator(mode="before")
    @classmethod
    def _has_request(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and not isinstance(data.get("request"), Mapping | HarRequest):
            raise unusable("no request object")
        return data

    @property
    def failed(self) -> str | None:
        """Chrome's error text when the recorded request failed (status 0), else None."""
        if self.response.status > 0:
            return None
        error = self.response.extra.get("_error") or self.extra.get("_error")
        return str(error) if error else "failed"

    @field_serializer("started_date_time")
    def _started(self, started: str) -> str:
        return started or _now()

    def _absent(self) -> Iterable[str]:
        return [
            name
            for name in ("pageref", "server_ip_address", "resource_type")
            if getattr(self, name) is None
        ]


class Page(HarModel):
    """``log.pages[i]``: a page that entries may refer to by ``pageref``."""

    started_date_time: Text = ""
    id: Text = ""
    title: Text = ""
    page_timings: Annotated[JSONObject, object_or({})] = Field(default_factory=dict)

    @field_serializer("started_date_time")
    def _started(self, started: str) -> str:
        return started or _now()


class Har(HarModel):
    """A whole HAR file: ``log.entries`` in recorded order, plus pages and metadata.

    The model is the ``log`` object; :meth:`to_dict` wraps it as ``{"log": {...}}``.

    Attributes:
        entries: the requests, in the order they were made.
        pages: the pages entries refer to (optional in practice).
        creator: ``log.creator``; ego writes its own name when it records.
        browser: ``log.browser``, if any.
        comment: ``log.comment``, if any.
        source: the file this HAR was loaded from, if any (for messages; never written).
    """

    version: Annotated[str, text_or("1.2")] = "1.2"
    creator: Annotated[JSONObject, object_or(CREATOR)] = Field(
        default_factory=lambda: dict(CREATOR)
    )
    browser: Annotated[JSONObject | None, object_or(None)] = None
    pages: Annotated[
        list[Page],
        BeforeValidator(
            lambda v: [p for p in v if isinstance(p, Mapping | Page)] if isinstance(v, list) else []
        ),
    ] = Field(default_factory=list)
    entries: list[Entry] = Field(default_factory=list)
    comment: OptionalText = None
    _source: Path | None = PrivateAttr(default=None)

    @property
    def source(self) -> Path | None:
        """The file this HAR was loaded from, if any."""
        return self._source

    @source.setter
    def source(self, path: Path | None) -> None:
        self._source = path

    def _absent(self) -> Iterable[str]:
        return [name for name in ("browser", "comment") if getattr(self, name) is None]

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        bounds: HarBounds | None = None,
        progress: ProgressCallback | None = None,
    ) -> Har:
        """Read a HAR file, within bounds checked before it is parsed whole.

        Args:
            path: the ``.har`` file. Playwright's ``content._file`` bodies are read from its
                folder.
            bounds: the most it may hold (bytes, with its body files; entries); by default
                the bounds :func:`~ego.replay.har_bounds.reading_hars` set, else
                :class:`~ego.replay.har_bounds.HarBounds`' defaults.
            progress: told how the reading goes, for a file over
                :data:`~ego.replay.har_bounds.LARGE_HAR_BYTES`; by default the callback
                :func:`~ego.replay.har_bounds.reading_hars` set, if any.

        Raises:
            HarTooLargeError: the file is over a bound; it was not read whole.
            HarFormatError: the file cannot be read, is not JSON, or is not a HAR.
        """
        file = Path(path)
        bounds = bounds or current_bounds()
        progress = progress or current_progress()
        try:
            size, _ = scan_har_file(file, bounds, progress)
            raw = file.read_bytes()
        except OSError as exc:
            raise HarFormatError(f"cannot read HAR {file}: {exc}", path=str(file)) from None
        report = None
        if progress is not None and size > LARGE_HAR_BYTES:

            def report(done: int, total: int) -> None:
                assert progress is not None
                progress(HarProgress(file, "loading", done, total, size, size))

        budget = _Budget(file, bounds, bounds.max_bytes - size)
        try:
            har = cls._parse(raw, file.parent, bounds, budget, report)
        except HarTooLargeError:
            raise
        except HarFormatError as exc:
            raise HarFormatError(f"{file}: {exc}", path=str(file)) from None
        har.source = file
        return har

    @classmethod
    def loads(
        cls,
        text: str | bytes,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        bounds: HarBounds | None = None,
    ) -> Har:
        """Parse HAR JSON text.

        Args:
            text: the JSON.
            base_dir: where ``content._file`` bodies are; they are not read when None.
            bounds: the most it may hold (as :meth:`load`).

        Raises:
            HarTooLargeError: the text is over a bound.
            HarFormatError: not JSON, or not a HAR.
        """
        bounds = bounds or current_bounds()
        folder = Path(base_dir) if base_dir is not None else None
        if len(text) > bounds.max_bytes:
            raise too_many_bytes(None, len(text), bounds)
        budget = _Budget(None, bounds, bounds.max_bytes - len(text))
        return cls._parse(text, folder, bounds, budget, None)

    @classmethod
    def _parse(
        cls,
        text: str | bytes,
        folder: Path | None,
        bounds: HarBounds,
        budget: _Budget,
        report: Callable[[int, int], None] | None,
    ) -> Har:
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HarFormatError(f"not JSON: {exc}") from None
        return cls._build(data, folder, bounds, budget, report)

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        bounds: HarBounds | None = None,
    ) -> Har:
        """Build from parsed JSON: ``{"log": {...}}``, or a bare log object.

        Args:
            data: the parsed JSON.
            base_dir: where ``content._file`` bodies are; they are not read when None.
            bounds: the most it may hold: entries, and bytes of the body files it names.

        Raises:
            HarTooLargeError: more entries than ``bounds`` allow, or body files larger.
            HarFormatError: there is no ``entries`` list, an entry is not an object or has no
                request URL, or an attached body cannot be read.
        """
        bounds = bounds or current_bounds()
        folder = Path(base_dir) if base_dir is not None else None
        budget = _Budget(None, bounds, bounds.max_bytes)
        return cls._build(data, folder, bounds, budget, None)

    @classmethod
    def _build(
        cls,
        data: Any,
        folder: Path | None,
        bounds: HarBounds,
        budget: _Budget,
        report: Callable[[int, int], None] | None,
    ) -> Har:
        if not isinstance(data, Mapping):
            raise HarFormatError("a HAR is a JSON object with a log")
        log = data.get("log", data)
        if not isinstance(log, Mapping) or not isinstance(log.get("entries"), list):
            raise HarFormatError('not a HAR: no "log.entries" list')
        items = log["entries"]
        if len(items) > bounds.max_entries:
            raise too_many_entries(budget.file, len(items), bounds)
        context = {"base_dir": folder, "budget": budget}
        try:
            har = cls.model_validate({**log, "entries": []}, context=context)
        except ValidationError as exc:
            raise har_error(exc) from None
        # One entry at a time: a large file reports its progress, and a problem names its entry.
        for index, item in enumerate(items):
            try:
                har.entries.append(Entry.model_validate(item, context=context))
            except ValidationError as exc:
                raise har_error(exc, entry=index) from None
            if report is not None and (index + 1) % _REPORT_EVERY == 0:
                report(index + 1, len(items))
        if report is not None:
            report(len(items), len(items))
        return har

    def to_dict(self) -> JSONObject:
        """The HAR as JSON-ready data (``{"log": {...}}``).

        Raises:
            HarFormatError: a body whose size must be computed is not valid base64.
        """
        return {"log": dump(self)}

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
