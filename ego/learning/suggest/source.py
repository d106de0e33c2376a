"""The JavaScript of a drafted API tool: one same-origin ``fetch`` of the endpoint, built
from constants a person (or ``ego heal``) can read and change.

Every drafted tool has the same body; what differs is a block of ``const`` lines at its top,
each one JSON on one line, so that a program can read and rewrite them
(:func:`read_constants`, :func:`with_constants`):

- ``METHOD``; ``PATHS``: the path templates, tried in order (a 404, 405 or 410 moves on to
  the next: how a healed tool keeps the old recordings replaying while it reaches an
  endpoint that moved); ``QUERY`` and ``BODY``: each field from an arg (``{"arg": name}``,
  with a ``default``), a constant (``{"const": value}``) or, for a GraphQL request's
  ``variables``, an object of such fields (``{"fields": {...}}``); an array value is sent
  as one query or form field per item; ``ENCODING``: how the body is sent (``"form"``,
  ``"multipart"``, or the JSON media type); ``CSRF``: where the token is read (:mod:`.auth`);
  ``AUTH``: the header tokens the page keeps, each read at run time from where the page
  keeps it (``{"header", "from", "key", "path", "prefix"}``, :mod:`.auth`); ``RENAMED``:
  fields the site renamed, new name to the one the tool returns.

Before anything is sent, each URL the tool built (the endpoint's, and the CSRF token's)
must have the page's origin: any other (a template holding ``/\\host``, say) throws
``CrossOriginRequestError``, which ego raises as :class:`ego.CrossOriginRequestError`. The
page's cookies go with the request (``credentials: "same-origin"``). A 401 or 403 in a tab
that sent the page's token is ``TokenRejectedError`` (:class:`ego.TokenRejectedError`,
naming the header: the tab is logged in, and the site refused what it holds); else a 401 or
403, or a redirect to a login page, is ``NEEDS_LOGIN``, and so is a token missing from where
the page keeps it; an answer that is not JSON, or a 404, 405 or 410 of a path without args
(the endpoint is gone), is ``SKILL_BROKEN``; another error status throws with the site's
own error message (``GET /api/products/9 answered HTTP 404: no product with id 9``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = [
    "CONSTANTS",
    "JSON_ENCODING",
    "api_tool_source",
    "read_constants",
    "with_constants",
]

#: The constants a drafted tool's source starts with, in order.
CONSTANTS: Final = ("METHOD", "PATHS", "QUERY", "BODY", "ENCODING", "CSRF", "AUTH", "RENAMED")
#: How a body is sent unless the recording said otherwise.
JSON_ENCODING: Final = "application/json"
#: What a source drafted before a constant existed means by leaving it out.
_ADDED_LATER: Final[dict[str, Any]] = {"ENCODING": JSON_ENCODING, "AUTH": []}

_LINE: Final = re.compile(r"^  const ([A-Z_]+) = (.*);$", re.MULTILINE)
_COMMENT: Final = re.compile(r"^  // (.*)$", re.MULTILINE)

_BODY: Final = r"""
  class CrossOriginRequestError extends Error {
    constructor(message) { super(message); this.name = "CrossOriginRequestError"; }
  }
  class TokenRejectedError extends Error {
    constructor(message) { super(message); this.name = "TokenRejectedError"; }
  }
  const LOGIN = /\/(log-?in|sign-?in|auth|session\/new)(\/|$|\?)/i;
  const pick = (spec) => {
    if ("fields" in spec) {
      const out = {};
      for (const [name, inner] of Object.entries(spec.fields)) {
        const value = pick(inner);
        if (value !== undefined) out[name] = value;
      }
      return out;
    }
    if (!("arg" in spec)) return spec.const;
    const value = args[spec.arg];
    return value === undefined || value === null ? spec.default : value;
  };
  const fill = (template) =>
    template.replace(/\{(\w+)\}/g, (_, name) => {
      const value = args[name];
      if (value === undefined || value === null || value === "") {
        throw new Error(`missing arg ${name}`);
      }
      return encodeURIComponent(String(value));
    });
  // Nothing leaves the page's origin: a URL built elsewhere is refused before it is sent.
  const onOrigin = (path) => {
    const url = new URL(path, location.origin);
    if (url.origin !== location.origin) {
      throw new CrossOriginRequestError(
        `${METHOD} ${url.href} is not on the page's origin ${location.origin}: nothing was ` +
        "sent (a path of the tool leaves the page: see its PATHS)"
      );
    }
    return url;
  };
  const rename = (value) => {
    if (Array.isArray(value)) return value.map(rename);
    if (!value || typeof value !== "object") return value;
    const out = {};
    for (const [key, inner] of Object.entries(value)) {
      const target = RENAMED[key];
      out[target && !(target in value) ? target : key] = rename(inner);
    }
    return out;
  };
  const cookie = (name) => {
    for (const part of document.cookie.split(";")) {
      const [key, ...rest] = part.trim().split("=");
      if (key === name) return decodeURIComponent(rest.join("="));
    }
    return null;
  };
  const kept = (place) => `${place.from}[${JSON.stringify(place.key)}]`;
  const stored = (place) => {
    try {
      let raw = place.from === "cookie" ? cookie(place.key)
        : (place.from === "sessionStorage" ? sessionStorage : localStorage).getItem(place.key);
      if (raw !== null && place.path) {
        let value = JSON.parse(raw);
        for (const key of place.path) value = value == null ? undefined : value[key];
        raw = typeof value === "string" ? value : null;
      }
      return raw || null;
    } catch (e) {
      return null;
    }
  };
  async function csrfToken() {
    if (CSRF.from === "meta") {
      const meta = document.querySelector(`meta[name="${CSRF.name}"]`);
      return meta ? meta.getAttribute("content") : null;
    }
    if (CSRF.from === "cookie") return cookie(CSRF.name);
    const answer = await fetch(onOrigin(CSRF.url), { credentials: "same-origin" });
    return answer.headers.get(CSRF.name);
  }
  const headers = { Accept: "application/json" };
  for (const place of AUTH) {
    const token = stored(place);
    if (!token) {
      throw new Error(
        `NEEDS_LOGIN: no token in ${kept(place)} for the ${place.header} header: log in first`
      );
    }
    headers[place.header] = (place.prefix || "") + token;
  }
  const fields = BODY ? pick({ fields: BODY }) : undefined;
  if (CSRF) {
    const token = await csrfToken();
    if (!token) {
      throw new Error(`NEEDS_LOGIN: no CSRF token in ${CSRF.from} ${CSRF.name}: log in first`);
    }
    if (CSRF.header) headers[CSRF.header] = token;
    if (CSRF.field && fields) fields[CSRF.field] = token;
  }
  const each = (value, add) => {
    for (const item of Array.isArray(value) ? value : [value]) {
      add(typeof item === "object" && item !== null ? JSON.stringify(item) : String(item));
    }
  };
  let body;
  if (fields && (ENCODING === "form" || ENCODING === "multipart")) {
    body = ENCODING === "form" ? new URLSearchParams() : new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== null) each(value, (text) => body.append(name, text));
    }
  } else if (fields) {
    body = JSON.stringify(fields);
    headers["Content-Type"] = ENCODING;
  }
  for (let i = 0; i < PATHS.length; i++) {
    const url = onOrigin(fill(PATHS[i]));
    for (const [name, spec] of Object.entries(QUERY)) {
      const value = pick(spec);
      if (value === undefined || value === null) continue;
      each(value, (text) => url.searchParams.append(name, text));
    }
    const init = { method: METHOD, headers, credentials: "same-origin" };
    if (body !== undefined) init.body = body;
    const response = await fetch(url, init);
    const where = `${METHOD} ${url.pathname}`;
    if (response.status === 401 || response.status === 403) {
      if (AUTH.length) {
        const sent = AUTH.map((place) => `the ${place.header} header (from ${kept(place)})`);
        throw new TokenRejectedError(
          `${where} answered HTTP ${response.status} to the token in ${sent.join(" and ")}: ` +
          "the tab has a token and the site refused it (expired, revoked, or not allowed)"
        );
      }
      throw new Error(`NEEDS_LOGIN: ${where} answered ${response.status}`);
    }
    if (response.redirected && LOGIN.test(new URL(response.url).pathname)) {
      throw new Error(`NEEDS_LOGIN: ${where} was sent to the login page`);
    }
    if ([404, 405, 410].includes(response.status) && i < PATHS.length - 1) continue;
    const type = response.headers.get("content-type") || "";
    const text = await response.text();
    let data;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = undefined;
    }
    if (!response.ok) {
      const why = data && typeof data === "object" ? data.error || data.message : "";
      // A path without args cannot be "not found" for the data asked: the endpoint is gone.
      const gone = [404, 405, 410].includes(response.status) && !PATHS[i].includes("{");
      const signal = data === undefined || gone ? "SKILL_BROKEN: " : "";
      throw new Error(`${signal}${where} answered HTTP ${response.status}${why ? ": " + why : ""}`);
    }
    if (data === undefined) {
      throw new Error(`SKILL_BROKEN: ${where} answered ${type || "no content type"}, not JSON`);
    }
    return rename(data);
  }
}
"""


def _const(name: str, value: Any) -> str:
    return f"  const {name} = {json.dumps(value, ensure_ascii=False)};"


def api_tool_source(
    *,
    comment: str,
    method: str,
    paths: list[str],
    query: dict[str, Any],
    body: dict[str, Any] | None,
    csrf: dict[str, Any] | None,
    renamed: dict[str, str] | None = None,
    encoding: str = JSON_ENCODING,
    auth: list[dict[str, Any]] | None = None,
) -> str:
    """The source of a drafted API tool.

    Args:
        comment: one line saying where it comes from (a ``//`` comment; newlines dropped).
        method: the request method.
        paths: the path templates (``/api/products/{product_id}``), tried in order.
        query: each query parameter's spec (``{"arg": ...}`` or ``{"const": ...}``).
        body: each body field's spec, or None for a request without a body.
        csrf: the CSRF token's spec (:meth:`.auth.Csrf.spec`), or None.
        renamed: response fields to rename (new name -> the name the tool returns).
        encoding: ``"form"``, ``"multipart"``, or the media type of a JSON body.
        auth: where the page keeps each header token it sends (:meth:`.auth.TokenPlace.spec`).
    """
    values = {
        "METHOD": method,
        "PATHS": paths,
        "QUERY": query,
        "BODY": body,
        "ENCODING": encoding,
        "CSRF": csrf,
        "AUTH": auth or [],
        "RENAMED": renamed or {},
    }
    lines = ["async function (args) {", f"  // {' '.join(comment.split())}"]
    lines += [_const(name, values[name]) for name in CONSTANTS]
    return "\n".join(lines) + _BODY


def read_constants(source: str) -> dict[str, Any] | None:
    """The constants of a drafted tool's source, or None when it is not one (a tool written
    by hand, or constants that no longer parse). A source drafted before ``ENCODING`` and
    ``AUTH`` existed reads as JSON with no header token."""
    found: dict[str, Any] = {}
    for match in _LINE.finditer(source):
        if match.group(1) in CONSTANTS:
            try:
                found[match.group(1)] = json.loads(match.group(2))
            except ValueError:
                return None
    for name, value in _ADDED_LATER.items():
        found.setdefault(name, value)
    return found if set(found) == set(CONSTANTS) else None


def with_constants(source: str, **changes: Any) -> str:
    """``source`` rebuilt from its constants, those named in ``changes`` rewritten.

    The body is always the current one (only the constants and the first comment line are
    carried over), so a tool drafted before a fix of the body (the origin check) gets it
    when it is healed.

    Raises:
        ValueError: the source is not a drafted tool's, or a name is not one of
            :data:`CONSTANTS`.
    """
    constants = read_constants(source)
    if constants is None:
        raise ValueError("not a drafted API tool: its constants are missing")
    unknown = set(changes) - set(CONSTANTS)
    if unknown:
        raise ValueError(f"unknown constant(s): {', '.join(sorted(unknown))}")
    values = {**constants, **changes}
    comment = _COMMENT.search(source)
    return api_tool_source(
        comment=comment.group(1) if comment else "Drafted by ego suggest.",
        method=values["METHOD"],
        paths=values["PATHS"],
        query=values["QUERY"],
        body=values["BODY"],
        csrf=values["CSRF"],
        renamed=values["RENAMED"],
        encoding=values["ENCODING"],
        auth=values["AUTH"],
    )
