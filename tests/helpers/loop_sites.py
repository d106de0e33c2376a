"""A small notes site with a JSON API of another shape than the demo shop's, for the learning
loop's tests: lists as top-level arrays, UUID ids, a write guarded by a CSRF token from a
``meta`` tag, another by a token from a cookie, an endpoint that wants a login, a static
script and stylesheet, and an image from another host (``localhost`` beside ``127.0.0.1``).

Endpoints (the API the page's script calls):

- ``GET /v1/notes?page=N&per_page=2``: ``[{id, title}]``
- ``GET /v1/notes/<uuid>``: ``{id, title, body, tags}``
- ``POST /v1/notes/<uuid>/pin`` ``{"pinned": bool}`` with ``X-CSRF-Token`` (the page's meta)
- ``POST /v1/tags`` ``{"name": str}`` with ``X-CSRFToken`` (the ``csrftoken`` cookie)
- ``GET /v1/private``: 401 without a login
"""

from __future__ import annotations

import json
import secrets
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.helpers.page_server import QuietHandler, serve, stop_serving

__all__ = ["META_TOKEN", "NOTES", "NOTES_ENDPOINTS", "NotesServer"]

META_TOKEN = "meta-token-31337"
NOTES = [
    {"id": "0b6f5c7e-1d2a-4c3b-9e8f-7a6b5c4d3e2f", "title": "Groceries", "body": "eggs, tea"},
    {"id": "1c7e6d8f-2e3b-4d4c-8f9a-8b7c6d5e4f3a", "title": "Ideas", "body": "a kite"},
    {"id": "2d8f7e9a-3f4c-4e5d-9a0b-9c8d7e6f5a4b", "title": "Books", "body": "Dune"},
    {"id": "3e9a8f0b-4a5d-4f6e-8b1c-0d9e8f7a6b5c", "title": "Trips", "body": "Oslo"},
]
#: The API endpoints the site has, as ``METHOD /template``.
NOTES_ENDPOINTS = [
    "GET /v1/notes",
    "GET /v1/notes/{note_id}",
    "POST /v1/notes/{note_id}/pin",
    "POST /v1/tags",
    "GET /v1/private",
]

_SCRIPT = """
const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
const cookie = (name) => (document.cookie.split('; ').find((c) => c.startsWith(name + '=')) || '')
  .split('=')[1];
async function start() {
  const body = document.body;
  if (body.dataset.page === 'list') {
    const page = new URLSearchParams(location.search).get('page') || '1';
    const notes = await (await fetch('/v1/notes?page=' + page + '&per_page=2')).json();
    document.querySelector('#list').textContent = notes.map((n) => n.title).join(', ');
    const who = await fetch('/v1/private');
    document.querySelector('#who').textContent = who.status === 401 ? 'guest' : 'member';
  }
  if (body.dataset.page === 'note') {
    const id = body.dataset.id;
    const note = await (await fetch('/v1/notes/' + id)).json();
    document.querySelector('#note').textContent = note.title;
    document.querySelector('#pin').onclick = async () => {
      const r = await fetch('/v1/notes/' + id + '/pin', {method: 'POST',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf()},
        body: JSON.stringify({pinned: true})});
      await r.json();
      document.querySelector('#pin').dataset.state = String(r.status);
    };
  }
  if (body.dataset.page === 'tags') {
    document.querySelector('#add').onclick = async () => {
      const r = await fetch('/v1/tags', {method: 'POST',
        headers: {'Content-Type': 'application/json', 'X-CSRFToken': cookie('csrftoken')},
        body: JSON.stringify({name: document.querySelector('#tag').value})});
      await r.json();
      document.querySelector('#add').dataset.state = String(r.status);
    };
  }
  body.dataset.ready = 'yes';
}
start();
"""


class NotesServer:
    """The notes site on ``127.0.0.1:<port>`` (``localhost:<port>`` is the other host)."""

    def __init__(self) -> None:
        self.pins: dict[str, bool] = {}
        self.tags: list[str] = []
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        server = self

        class Handler(QuietHandler):
            def _send(
                self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(data).encode(), "application/json", headers)

            def _html(self, page: str, inner: str, headers: dict[str, str] | None = None) -> None:
                html = (
                    "<!doctype html><html><head><title>Notes</title>"
                    f'<meta name="csrf-token" content="{META_TOKEN}">'
                    '<link rel="stylesheet" href="/static/site.css">'
                    f'<script src="/static/notes.js" defer></script></head><body {page}>'
                    f'<img src="http://localhost:{server.port}/pixel.png" alt="">{inner}'
                    "</body></html>"
                )
                self._send(200, html.encode(), "text/html; charset=utf-8", headers)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                path, query = parts.path, parse_qs(parts.query)
                server.requests.append(("GET", self.path, dict(self.headers)))
                if path == "/":
                    self._html('data-page="list"', '<p id="list"></p><p id="who"></p>')
                elif path.startswith("/note/"):
                    note = path.rsplit("/", 1)[-1]
                    self._html(
                        f'data-page="note" data-id="{note}"',
                        '<h1 id="note"></h1><button id="pin">Pin</button>',
                    )
                elif path == "/tags":
                    token = secrets.token_hex(8)
                    self._html(
                        'data-page="tags"',
                        '<input id="tag" value="urgent"><button id="add">Add</button>',
                        {"Set-Cookie": f"csrftoken={token}; Path=/; SameSite=Lax"},
                    )
                elif path == "/static/notes.js":
                    self._send(200, _SCRIPT.encode(), "text/javascript")
                elif path == "/static/site.css":
                    self._send(200, b"body{font-family:sans-serif}", "text/css")
                elif path == "/pixel.png":
                    self._send(200, b"\x89PNG\r\n\x1a\n", "image/png")
                elif path == "/v1/notes":
                    page = int(query.get("page", ["1"])[0])
                    per = int(query.get("per_page", ["2"])[0])
                    chunk = NOTES[(page - 1) * per : page * per]
                    self._json(200, [{"id": n["id"], "title": n["title"]} for n in chunk])
                elif path.startswith("/v1/notes/"):
                    note_id = path.rsplit("/", 1)[-1]
                    found = next((n for n in NOTES if n["id"] == note_id), None)
                    if found is None:
                        self._json(404, {"error": f"no note {note_id}"})
                    else:
                        self._json(200, {**found, "tags": ["home"] if found["id"] < "2" else []})
                elif path == "/v1/private":
                    self._json(401, {"error": "login required"})
                elif path == "/favicon.ico":
                    self._send(204, b"", "image/x-icon")
                else:
                    self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = json.loads(self.rfile.read(length) or b"{}")
                path = urlsplit(self.path).path
                server.requests.append(("POST", self.path, dict(self.headers)))
                jar: SimpleCookie = SimpleCookie(self.headers.get("Cookie") or "")
                if path.startswith("/v1/notes/") and path.endswith("/pin"):
                    if self.headers.get("X-CSRF-Token") != META_TOKEN:
                        self._json(403, {"error": "bad CSRF token"})
                        return
                    note_id = path.split("/")[3]
                    server.pins[note_id] = bool(data.get("pinned"))
                    self._json(200, {"id": note_id, "pinned": server.pins[note_id]})
                elif path == "/v1/tags":
                    cookie = jar.get("csrftoken")
                    sent = self.headers.get("X-CSRFToken")
                    if cookie is None or not sent or sent != cookie.value:
                        self._json(403, {"error": "bad CSRF token"})
                        return
                    server.tags.append(str(data.get("name")))
                    self._json(201, {"tag": {"name": data.get("name"), "count": len(server.tags)}})
                else:
                    self._json(404, {"error": "not found"})

        self.httpd = serve(Handler)
        self.port = int(self.httpd.server_address[1])

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        stop_serving(self.httpd)
