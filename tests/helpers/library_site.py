"""A library-and-loans app of the shape real single-page front ends have, for the learning
loop's tests: its pages' script logs in with a JSON POST and keeps the bearer token it gets
in ``localStorage`` (as JSON, ``{"accessToken": ...}``) or, served with
``token_store="session"``, in ``sessionStorage`` (as it is), or with ``token_store="cookie"``
in a cookie its script reads (``library_token``), and sends it with every call.
Its API answers JSON:API documents with slug ids, pages with a cursor, filters with
repeated query parameters, borrows with a URL-encoded form checked against the page's
``<meta name="csrf-token">``, takes reviews as a multipart form (and a cover as a file), and
has a GraphQL-style endpoint with a query and a mutation.

Endpoints (all but the login want ``Authorization: Bearer <token>``, else 401):

- ``POST /api/session`` ``{"username", "password"}``: ``{"data": {"type": "sessions",
  "attributes": {"token", "user"}}}``
- ``GET /api/me``: the user
- ``GET /api/books?tag=a&tag=b&page[size]=N&page[after]=CURSOR``: books with any of the tags,
  ``links.next`` for the next page
- ``GET /api/books/<slug>``: one book
- ``POST /graphql``: ``query BooksByAuthor($author, $first)``, ``mutation RenewLoan($loan,
  $days)``
- ``POST /api/loans`` (form ``book_id``, ``days``; ``X-CSRF-Token``): a loan
- ``GET /api/loans``: the user's loans
- ``POST /api/reviews`` (multipart ``book_id``, ``rating``, ``text``): a review
- ``POST /api/covers`` (multipart with a file): a cover
- ``GET /api/stats``: held until :attr:`LibraryServer.release` is set (a call the page does
  not see answered before it moves on)
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from ego.replay.bodies import boundary_of, multipart_parts
from tests.helpers.page_server import QuietHandler, serve, stop_serving

__all__ = ["BOOKS", "CSRF_TOKEN", "LIBRARY_ENDPOINTS", "PASSWORD", "LibraryServer"]

CSRF_TOKEN = "csrf-meta-5150"
PASSWORD = "correct horse battery staple"
JSON_API = "application/vnd.api+json"
BOOKS = [
    {"slug": "dune", "title": "Dune", "author": "Frank Herbert", "tags": ["scifi", "classic"]},
    {
        "slug": "the-left-hand-of-darkness",
        "title": "The Left Hand of Darkness",
        "author": "Ursula K. Le Guin",
        "tags": ["scifi", "classic"],
    },
    {
        "slug": "a-wizard-of-earthsea",
        "title": "A Wizard of Earthsea",
        "author": "Ursula K. Le Guin",
        "tags": ["fantasy", "classic"],
    },
    {
        "slug": "the-dispossessed",
        "title": "The Dispossessed",
        "author": "Ursula K. Le Guin",
        "tags": ["scifi"],
    },
    {"slug": "emma", "title": "Emma", "author": "Jane Austen", "tags": ["classic", "romance"]},
    {"slug": "neuromancer", "title": "Neuromancer", "author": "William Gibson", "tags": ["scifi"]},
]
#: The API endpoints the pages call, as ``METHOD /template`` (a GraphQL operation after it).
LIBRARY_ENDPOINTS = [
    "POST /api/session",
    "GET /api/me",
    "GET /api/books",
    "GET /api/books/{book}",
    "POST /graphql query BooksByAuthor",
    "POST /api/loans",
    "POST /api/reviews",
    "GET /api/loans",
    "POST /graphql mutation RenewLoan",
]

_SCRIPT = """
const STORE = document.body.dataset.store;
const keep = (token) => STORE === 'session'
  ? sessionStorage.setItem('token', token)
  : STORE === 'cookie'
  ? (document.cookie = `library_token=${token}; path=/`)
  : localStorage.setItem('library.auth', JSON.stringify({accessToken: token, user: 'ada'}));
const token = () => {
  if (STORE === 'session') return sessionStorage.getItem('token');
  if (STORE === 'cookie') {
    const kept = document.cookie.split('; ').find((c) => c.startsWith('library_token='));
    return kept ? kept.slice('library_token='.length) : null;
  }
  const kept = localStorage.getItem('library.auth');
  return kept ? JSON.parse(kept).accessToken : null;
};
const $ = (selector) => document.querySelector(selector);
async function api(path, init = {}) {
  const headers = Object.assign({Accept: 'application/vnd.api+json'}, init.headers || {},
    {Authorization: 'Bearer ' + token()});
  const r = await fetch(path, Object.assign({}, init, {headers}));
  return [r.status, await r.json()];
}
async function graphql(query, variables, operationName) {
  return api('/graphql', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({query, variables, operationName})});
}
const BY_AUTHOR = 'query BooksByAuthor($author: String!, $first: Int) ' +
  '{ books(author: $author, first: $first) { slug title } }';
const RENEW = 'mutation RenewLoan($loan: ID!, $days: Int!) ' +
  '{ renewLoan(loan: $loan, days: $days) { loan { id due } } }';
let next = null;
async function books(after) {
  const params = new URLSearchParams();
  for (const box of document.querySelectorAll('input[name=tag]:checked')) {
    params.append('tag', box.value);
  }
  params.set('page[size]', '2');
  if (after) params.set('page[after]', after);
  const [, doc] = await api('/api/books?' + params);
  $('#books').textContent = doc.data.map((b) => b.attributes.title).join(', ');
  next = doc.meta.next_cursor;
  $('#books').dataset.state = String((Number($('#books').dataset.state) || 0) + 1);
}
const done = (selector, status) => { $(selector).dataset.state = String(status); };
async function start() {
  const page = document.body.dataset.page;
  if (page === 'login') {
    $('#login').onclick = async () => {
      const r = await fetch('/api/session', {method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({username: $('#user').value, password: $('#password').value})});
      const doc = await r.json();
      if (r.ok) keep(doc.data.attributes.token);
      done('#login', r.status);
    };
  }
  if (page === 'catalog') {
    const [, me] = await api('/api/me');
    $('#me').textContent = me.data.attributes.name;
    $('#apply').onclick = () => books(null);
    $('#next').onclick = () => books(next);
    $('#find').onclick = async () => {
      const [status, answer] = await graphql(BY_AUTHOR, {author: $('#author').value, first: 5},
        'BooksByAuthor');
      $('#found').textContent = answer.data.books.map((b) => b.title).join(', ');
      done('#find', status);
    };
  }
  if (page === 'book') {
    const slug = document.body.dataset.slug;
    const [, doc] = await api('/api/books/' + slug);
    $('#title').textContent = doc.data.attributes.title;
    $('#borrow').onclick = async () => {
      const csrf = $('meta[name="csrf-token"]').content;
      const body = new URLSearchParams({book_id: slug, days: $('#days').value});
      const [status] = await api('/api/loans', {method: 'POST', body,
        headers: {'X-CSRF-Token': csrf}});
      done('#borrow', status);
    };
    $('#review').onclick = async () => {
      const form = new FormData();
      form.append('book_id', slug);
      form.append('rating', $('#rating').value);
      form.append('text', $('#text').value);
      const [status] = await api('/api/reviews', {method: 'POST', body: form});
      done('#review', status);
    };
    $('#upload').onclick = async () => {
      const form = new FormData();
      form.append('book_id', slug);
      form.append('cover', $('#cover').files[0]);
      const [status] = await api('/api/covers', {method: 'POST', body: form});
      done('#upload', status);
    };
  }
  if (page === 'loans') {
    const show = async () => {
      const [, doc] = await api('/api/loans');
      $('#loans').innerHTML = doc.data.map((loan) =>
        `<li>${loan.attributes.book} due ${loan.attributes.due} ` +
        `<button class="renew" data-loan="${loan.id}">Renew</button></li>`).join('');
      for (const button of document.querySelectorAll('.renew')) {
        button.onclick = async () => {
          const [status] = await graphql(RENEW, {loan: button.dataset.loan, days: 7},
            'RenewLoan');
          await show();  // the list again, with the new due date
          done('#loans', status);
        };
      }
    };
    await show();
  }
  if (page === 'stats') {
    const r = await fetch('/api/stats', {headers: {Authorization: 'Bearer ' + token()}});
    $('#stats').dataset.state = String(r.status);
    $('#stats').textContent = JSON.stringify(await r.json());
  }
  document.body.dataset.ready = 'yes';
}
start();
"""

_PAGES = {
    "/login": (
        "login",
        '<input id="user" aria-label="User"><input id="password" type="password" '
        'aria-label="Password"><button id="login">Log in</button>',
    ),
    "/": (
        "catalog",
        '<p id="me"></p><label><input type="checkbox" name="tag" value="scifi" id="scifi">'
        'Science fiction</label><label><input type="checkbox" name="tag" value="classic" '
        'id="classic">Classics</label><button id="apply">Show books</button>'
        '<button id="next">More</button><p id="books"></p>'
        '<input id="author" aria-label="Author"><button id="find">Find</button>'
        '<p id="found"></p>',
    ),
    "/loans": ("loans", '<ul id="loans"></ul>'),
    "/stats": ("stats", '<pre id="stats"></pre>'),
}
_BOOK_PAGE = (
    '<h1 id="title"></h1><select id="days" aria-label="Days"><option>7</option><option>14'
    '</option><option>21</option></select><button id="borrow">Borrow</button>'
    '<select id="rating" aria-label="Rating"><option>3</option><option>4</option><option>5'
    '</option></select><textarea id="text" aria-label="Review"></textarea>'
    '<button id="review">Review</button><input type="file" id="cover" aria-label="Cover">'
    '<button id="upload">Upload cover</button>'
)


def _cursor(slug: str) -> str:
    return base64.urlsafe_b64encode(slug.encode()).decode().rstrip("=")


def _after(cursor: str) -> str:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def _book(book: dict[str, Any]) -> dict[str, Any]:
    attributes = {key: book[key] for key in ("title", "author", "tags")}
    return {"type": "books", "id": book["slug"], "attributes": attributes}


class LibraryServer:
    """The library on ``127.0.0.1:<port>``.

    Attributes:
        loans, reviews, covers: what the API was asked to create.
        requests: ``(method, path, headers, body)`` of each API request.
        tokens: the tokens it issued and still takes.
        release: set it to let ``/api/stats`` answer.
    """

    def __init__(self, token_store: Literal["local", "session", "cookie"] = "local") -> None:
        self.token_store = token_store
        self.loans: list[dict[str, Any]] = []
        self.reviews: list[dict[str, str]] = []
        self.covers: list[str] = []
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.tokens: set[str] = set()
        self.release = threading.Event()
        self.stats_asked = threading.Event()
        server = self

        class Handler(QuietHandler):
            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def _json(self, status: int, data: Any, kind: str = JSON_API) -> None:
                self._send(status, json.dumps(data).encode(), kind)

            def _error(self, status: int, title: str) -> None:
                self._json(status, {"errors": [{"status": str(status), "title": title}]})

            def _authorized(self) -> bool:
                given = self.headers.get("Authorization", "")
                if given.startswith("Bearer ") and given[7:] in server.tokens:
                    return True
                self._error(401, "a valid bearer token is required")
                return False

            def _page(self, name: str, inner: str, slug: str = "") -> None:
                html = (
                    "<!doctype html><html><head><title>Library</title>"
                    f'<meta name="csrf-token" content="{CSRF_TOKEN}">'
                    '<script src="/static/library.js" defer></script></head>'
                    f'<body data-page="{name}" data-slug="{slug}" '
                    f'data-store="{server.token_store}">{inner}</body></html>'
                )
                self._send(200, html.encode(), "text/html; charset=utf-8")

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                path, query = parts.path, parse_qs(parts.query)
                if path.startswith("/api/"):
                    server.requests.append(("GET", self.path, dict(self.headers), b""))
                if path in _PAGES:
                    self._page(*_PAGES[path])
                elif path.startswith("/book/"):
                    self._page("book", _BOOK_PAGE, path.rsplit("/", 1)[-1])
                elif path == "/static/library.js":
                    self._send(200, _SCRIPT.encode(), "text/javascript")
                elif path == "/favicon.ico":
                    self._send(204, b"", "image/x-icon")
                elif path == "/api/stats":
                    server.stats_asked.set()
                    # The headers go out at once; the body only once released.
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    body = b'{"loans": 1}'
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.flush()
                    server.release.wait(30)
                    self.wfile.write(body)
                elif not path.startswith("/api/"):
                    self._send(404, b"not found", "text/plain")
                elif not self._authorized():
                    return
                elif path == "/api/me":
                    user = {"name": "Ada Lovelace", "member_since": 2019}
                    self._json(200, {"data": {"type": "users", "id": "ada", "attributes": user}})
                elif path == "/api/books":
                    self._books(query)
                elif path.startswith("/api/books/"):
                    slug = path.rsplit("/", 1)[-1]
                    found = next((b for b in BOOKS if b["slug"] == slug), None)
                    if found is None:
                        self._error(404, f"no book {slug}")
                    else:
                        self._json(200, {"data": _book(found)})
                elif path == "/api/loans":
                    self._json(200, {"data": [self._loan(loan) for loan in server.loans]})
                else:
                    self._error(404, "not found")

            def _loan(self, loan: dict[str, Any]) -> dict[str, Any]:
                attributes = {"book": loan["book"], "due": loan["due"]}
                return {"type": "loans", "id": loan["id"], "attributes": attributes}

            def _books(self, query: dict[str, list[str]]) -> None:
                tags = query.get("tag", [])
                size = int(query.get("page[size]", ["10"])[0])
                found = [b for b in BOOKS if not tags or set(tags) & set(b["tags"])]
                after = query.get("page[after]", [""])[0]
                if after:
                    slugs = [b["slug"] for b in found]
                    start = slugs.index(_after(after)) + 1 if _after(after) in slugs else 0
                    found = found[start:]
                chunk = found[:size]
                more = len(found) > size
                cursor = _cursor(str(chunk[-1]["slug"])) if chunk and more else None
                doc: dict[str, Any] = {
                    "data": [_book(b) for b in chunk],
                    "meta": {"next_cursor": cursor},
                }
                self._json(200, doc)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = urlsplit(self.path).path
                server.requests.append(("POST", self.path, dict(self.headers), raw))
                if path == "/api/session":
                    data = json.loads(raw or b"{}")
                    if data.get("username") != "ada" or data.get("password") != PASSWORD:
                        self._error(401, "wrong user or password")
                        return
                    token = secrets.token_urlsafe(24)
                    server.tokens.add(token)
                    attributes = {"token": token, "user": "ada", "expires_in": 3600}
                    self._json(201, {"data": {"type": "sessions", "attributes": attributes}})
                    return
                if not self._authorized():
                    return
                if path == "/graphql":
                    self._graphql(json.loads(raw or b"{}"))
                elif path == "/api/loans":
                    if self.headers.get("X-CSRF-Token") != CSRF_TOKEN:
                        self._error(403, "bad CSRF token")
                        return
                    form = parse_qs(raw.decode())
                    loan = {
                        "id": f"loan-{len(server.loans) + 1}",
                        "book": form["book_id"][0],
                        "due": f"+{int(form['days'][0])}d",
                    }
                    server.loans.append(loan)
                    self._json(201, {"data": self._loan(loan)})
                elif path in ("/api/reviews", "/api/covers"):
                    fields = self._multipart(raw)
                    if path == "/api/covers":
                        server.covers.append(fields.get("book_id", ""))
                        self._json(201, {"data": {"type": "covers", "id": "cover-1"}})
                        return
                    review = {k: fields.get(k, "") for k in ("book_id", "rating", "text")}
                    server.reviews.append(review)
                    number = f"review-{len(server.reviews)}"
                    self._json(
                        201, {"data": {"type": "reviews", "id": number, "attributes": review}}
                    )
                else:
                    self._error(404, "not found")

            def _multipart(self, raw: bytes) -> dict[str, str]:
                boundary = boundary_of(self.headers.get("Content-Type")) or "-"
                parts = multipart_parts(raw.decode("utf-8", "replace"), boundary) or []
                return {part.name: part.content for part in parts}

            def _graphql(self, request: dict[str, Any]) -> None:
                variables = request.get("variables") or {}
                name = request.get("operationName")
                if name == "BooksByAuthor":
                    found = [b for b in BOOKS if b["author"] == variables.get("author")]
                    found = found[: int(variables.get("first") or 10)]
                    books = [{"slug": b["slug"], "title": b["title"]} for b in found]
                    self._json(200, {"data": {"books": books}}, "application/json")
                elif name == "RenewLoan":
                    loan = next((x for x in server.loans if x["id"] == variables.get("loan")), None)
                    if loan is None:
                        errors = [{"message": f"no loan {variables.get('loan')}"}]
                        self._json(200, {"data": None, "errors": errors}, "application/json")
                        return
                    loan["due"] = f"{loan['due']}+{int(variables['days'])}d"
                    renewed = {"renewLoan": {"loan": {"id": loan["id"], "due": loan["due"]}}}
                    self._json(200, {"data": renewed}, "application/json")
                else:
                    self._json(
                        400, {"errors": [{"message": "unknown operation"}]}, "application/json"
                    )

        self.httpd = serve(Handler)
        self.port = int(self.httpd.server_address[1])

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.release.set()
        stop_serving(self.httpd)
