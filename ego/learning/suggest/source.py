"""The JavaScript of a drafted API tool: one same-origin ``fetch`` of the endpoint, built
from constants a person (or ``ego heal``) can read and change.

Every drafted tool has the same body; what differs is a block of ``const`` lines at its top,
each one JSON on one line, so that a program can read and rewrite them
(:func:`read_constants`, :func:`with_constants`):

- ``METHOD``; ``PATHS``: the path templates, tried in order (a 404, 405 or 410 moves on to
  the next: how a healed tool keeps the old recordings replaying while it reaches an
  endpoint that moved); ``QUERY`` and ``BODY``: each field from an arg (``{"arg": name}``,
  with a ``default``) or a constant (``{"const": value}``); ``CSRF``: where the token is read
  (:mod:`.auth`); ``RENAMED``: fields the site renamed, new name to the one the tool returns.

The page's cookies go with the request (``credentials: "same-origin"``). A 401 or 403, or a
redirect to a login page, is ``NEEDS_LOGIN``; an answer that is not JSON, or a 404, 405 or
410 of a path without args (the endpoint is gone), is ``SKILL_BROKEN``; another error status
throws with the site's own error message (``GET /api/products/9 answered HTTP 404: no
product with id 9``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["CONSTANTS", "api_tool_source", "read_constants", "with_constants"]

#: The constants a drafted tool's source starts with, in order.
CONSTANTS: Final = ("METHOD", "PATHS", "QUERY", "BODY", "CSRF", "RENAMED")

_LINE: Final = re.compile(r"^  const ([A-Z_]+) = (.*);$", re.MULTILINE)

_BODY: Final = r"""
  const LOGIN = /\/(log-?in|sign-?in|auth|session\/new)(\/|$|\?)/i;
  const pick = (spec) => {
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
  async function csrfToken() {
    if (CSRF.from === "meta") {
      const meta = document.querySelector(`meta[name="${CSRF.name}"]`);
      return meta ? meta.getAttribute("content") : null;
    }
    if (CSRF.from === "cookie") {
      for (const part of document.cookie.split(";")) {
        const [name, ...rest] = part.trim().split("=");
        if (name === CSRF.name) return decodeURIComponent(rest.join("="));
      }
      return null;
    }
    const answer = await fetch(CSRF.url, { credentials: "same-origin" });
    return answer.headers.get(CSRF.name);
  }
  const headers = { Accept: "application/json" };
  let body;
  if (BODY) {
    body = {};
    for (const [name, spec] of Object.entries(BODY)) {
      const value = pick(spec);
      if (value !== undefined) body[name] = value;
    }
    headers["Content-Type"] = "application/json";
  }
  if (CSRF) {
    const token = await csrfToken();
    if (!token) {
      throw new Error(`NEEDS_LOGIN: no CSRF token in ${CSRF.from} ${CSRF.name}: log in first`);
    }
    if (CSRF.header) headers[CSRF.header] = token;
    if (CSRF.field && body) body[CSRF.field] = token;
  }
  for (let i = 0; i < PATHS.length; i++) {
    const url = new URL(fill(PATHS[i]), location.origin);
    for (const [name, spec] of Object.entries(QUERY)) {
      const value = pick(spec);
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const init = { method: METHOD, headers, credentials: "same-origin" };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(url, init);
    const where = `${METHOD} ${url.pathname}`;
    if (response.status === 401 || response.status === 403) {
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
) -> str:
    """The source of a drafted API tool.

    Args:
        comment: one line saying where it comes from (a ``//`` comment; newlines dropped).
        method: the request method.
        paths: the path templates (``/api/products/{product_id}``), tried in order.
        query: each query parameter's spec (``{"arg": ...}`` or ``{"const": ...}``).
        body: each JSON body field's spec, or None for a request without a body.
        csrf: the CSRF token's spec (:meth:`.auth.Csrf.spec`), or None.
        renamed: response fields to rename (new name -> the name the tool returns).
    """
    values = {
        "METHOD": method,
        "PATHS": paths,
        "QUERY": query,
        "BODY": body,
        "CSRF": csrf,
        "RENAMED": renamed or {},
    }
    lines = ["async function (args) {", f"  // {' '.join(comment.split())}"]
    lines += [_const(name, values[name]) for name in CONSTANTS]
    return "\n".join(lines) + _BODY


def read_constants(source: str) -> dict[str, Any] | None:
    """The constants of a drafted tool's source, or None when it is not one (a tool written
    by hand, or constants that no longer parse)."""
    found: dict[str, Any] = {}
    for match in _LINE.finditer(source):
        if match.group(1) in CONSTANTS:
            try:
                found[match.group(1)] = json.loads(match.group(2))
            except ValueError:
                return None
    return found if set(found) == set(CONSTANTS) else None


def with_constants(source: str, **changes: Any) -> str:
    """``source`` with the constants named in ``changes`` rewritten (the rest unchanged).

    Raises:
        ValueError: the source is not a drafted tool's, or a name is not one of
            :data:`CONSTANTS`.
    """
    if read_constants(source) is None:
        raise ValueError("not a drafted API tool: its constants are missing")
    unknown = set(changes) - set(CONSTANTS)
    if unknown:
        raise ValueError(f"unknown constant(s): {', '.join(sorted(unknown))}")

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return _const(name, changes[name]) if name in changes else match.group(0)

    return _LINE.sub(replace, source)
