"""The pages of ``real_libraries.py``: component libraries from npm, served on 127.0.0.1.

Installs pinned versions of two web-component design systems (Shoelace, Ionic), a code editor
(CodeMirror 6, served as ES modules through an import map that points at the installed
files), an API console (Swagger UI, with an OpenAPI description of a JSON API this server
answers) and a worker-based PDF viewer (pdf.js, the viewer of ``real_pages_workers.py``) into
a folder git ignores, and serves one page per library from a thread of the script. Nothing
of them is committed; the test suite needs no npm.
"""

from __future__ import annotations

import http.server
import json
import mimetypes
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from _real_libs_gesture_pages import GESTURE_PACKAGES, GESTURE_PAGES
from real_pages_workers import PHRASE, SOURCE, VIEWER

#: What is installed, each at one version, so that a run today and a run next year differ only
#: by ego and Chromium. CodeMirror's own packages are pinned beside ``codemirror``, which
#: asks only for ``^6``.
PACKAGES = {
    "@shoelace-style/shoelace": "2.20.1",
    "@ionic/core": "8.8.9",
    "codemirror": "6.0.2",
    "@codemirror/view": "6.43.15",
    "@codemirror/state": "6.7.6",
    "@codemirror/commands": "6.11.1",
    "@codemirror/language": "6.13.1",
    "@codemirror/autocomplete": "6.20.4",
    "@codemirror/lint": "6.9.8",
    "@codemirror/search": "6.7.2",
    "@codemirror/lang-javascript": "6.2.5",
    "swagger-ui-dist": "5.35.0",
    "pdfjs-dist": "6.5.438",
    **GESTURE_PACKAGES,
}

#: The second page of the two-page PDF, which the paging task looks for.
SECOND_PAGE = "The second page says goodbye"

TWO_PAGES = f"""<!doctype html><meta charset=utf-8><title>two pages</title>
<body style="font: 28px sans-serif; margin: 2cm"><h1>{PHRASE}</h1><p>Page one.</p>
<h1 style="break-before: page">{SECOND_PAGE}</h1><p>Page two.</p></body>"""


def install(npm_dir: Path) -> dict[str, str]:
    """Every package of :data:`PACKAGES` under ``npm_dir``, installed with npm when one is
    missing or at another version; the versions found.

    The folder gets a ``package.json`` of its own listing them, so that npm keeps them all
    (a ``--no-save`` install into a bare folder removes what an earlier one put there).
    Install scripts are not run (``swagger-ui-dist`` carries a telemetry one).
    """
    npm_dir.mkdir(parents=True, exist_ok=True)
    found = _versions(npm_dir)
    if found == PACKAGES:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is not on PATH: install Node.js and npm to run this bench")
    manifest = {"name": "ego-real-libraries", "private": True, "dependencies": PACKAGES}
    (npm_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    command = [
        npm, "install", "--prefix", str(npm_dir), "--no-audit", "--no-fund",
        "--omit=optional", "--ignore-scripts",
    ]  # fmt: skip
    print("installing:", ", ".join(f"{name}@{v}" for name, v in PACKAGES.items()), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    found = _versions(npm_dir)
    if done.returncode != 0 or found != PACKAGES:
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
        raise SystemExit(2)
    return found


def _versions(npm_dir: Path) -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        manifest = npm_dir / "node_modules" / name / "package.json"
        if manifest.is_file():
            versions[name] = str(json.loads(manifest.read_text())["version"])
    return versions


def import_map(modules: Path) -> dict[str, dict[str, str]]:
    """An import map for every installed package with an ES module entry (CodeMirror's
    ``@codemirror/*``, ``@lezer/*``, ``style-mod``, ...), each pointing at its file."""
    imports: dict[str, str] = {}
    manifests = [*modules.glob("*/package.json"), *modules.glob("@*/*/package.json")]
    for manifest in manifests:
        name = manifest.parent.relative_to(modules).as_posix()
        entry = _module_entry(json.loads(manifest.read_text()))
        if entry is not None and (manifest.parent / entry).is_file():
            imports[name] = f"/npm/{name}/{entry.removeprefix('./')}"
    return {"imports": dict(sorted(imports.items()))}


def _module_entry(manifest: dict[str, Any]) -> str | None:
    exports = manifest.get("exports")
    if isinstance(exports, dict):
        main = exports.get(".", exports)
        if isinstance(main, dict):
            main = main.get("import", main.get("default"))
        if isinstance(main, dict):
            main = main.get("default")
        if isinstance(main, str):
            return main
    module = manifest.get("module")
    return module if isinstance(module, str) else None


SHOELACE = """<!doctype html><meta charset=utf-8><title>Shoelace</title>
<link rel=stylesheet href="/npm/@shoelace-style/shoelace/cdn/themes/light.css">
<script type=module src="/npm/@shoelace-style/shoelace/cdn/shoelace-autoloader.js"></script>
<style>:not(:defined) { visibility: hidden; } body { font: 16px sans-serif; margin: 1em; }
section { margin: 1em 0; }</style>
<script>window.state = {};</script>
<section>
  <sl-dropdown id=actions>
    <sl-button slot=trigger caret>Actions</sl-button>
    <sl-menu>
      <sl-menu-item value=edit>Edit</sl-menu-item>
      <sl-menu-item value=duplicate>Duplicate</sl-menu-item>
      <sl-menu-item value=archive>Archive</sl-menu-item>
    </sl-menu>
  </sl-dropdown>
</section>
<section><sl-switch id=dark>Dark mode</sl-switch></section>
<section><sl-checkbox id=agree>I agree to the terms</sl-checkbox></section>
<section>
  <sl-tab-group id=tabs>
    <sl-tab slot=nav panel=general>General</sl-tab>
    <sl-tab slot=nav panel=billing>Billing</sl-tab>
    <sl-tab slot=nav panel=security>Security</sl-tab>
    <sl-tab-panel name=general>General settings.</sl-tab-panel>
    <sl-tab-panel name=billing>Billing settings.</sl-tab-panel>
    <sl-tab-panel name=security>Security settings.</sl-tab-panel>
  </sl-tab-group>
</section>
<section>
  <form id=newsletter>
    <sl-input name=email type=email label="Email" required></sl-input>
    <sl-button type=submit variant=primary>Subscribe</sl-button>
  </form>
</section>
<section>
  <sl-button id=delete variant=danger>Delete account</sl-button>
  <sl-button id=signout>Sign out</sl-button>
  <sl-dialog id=delete-dialog label="Delete your account?">
    This cannot be undone.
    <sl-button slot=footer class=cancel>Cancel</sl-button>
    <sl-button slot=footer class=confirm variant=danger>Confirm</sl-button>
  </sl-dialog>
  <sl-dialog id=signout-dialog label="Sign out?">
    You will need to log in again.
    <sl-button slot=footer class=cancel>Cancel</sl-button>
    <sl-button slot=footer class=confirm variant=primary>Confirm</sl-button>
  </sl-dialog>
</section>
<section>
  <sl-radio-group id=size label="Size" name=size value=medium>
    <sl-radio value=small>Small</sl-radio>
    <sl-radio value=medium>Medium</sl-radio>
    <sl-radio value=large>Large</sl-radio>
  </sl-radio-group>
</section>
<section>
  <sl-select id=country label="Country" placeholder="Choose a country">
    <sl-option value=fr>France</sl-option>
    <sl-option value=de>Germany</sl-option>
    <sl-option value=jp>Japan</sl-option>
  </sl-select>
</section>
<script>
document.querySelector('sl-menu').addEventListener('sl-select', (event) => {
  state.menu = event.detail.item.value;
});
document.getElementById('newsletter').addEventListener('submit', (event) => {
  event.preventDefault();
  state.subscribed = new FormData(event.target).get('email');
});
for (const name of ['delete', 'signout']) {
  const dialog = document.getElementById(name + '-dialog');
  // Each component's module loads on its own: the button may work before the dialog does.
  document.getElementById(name).addEventListener('click', async () => {
    await customElements.whenDefined('sl-dialog');
    dialog.show();
  });
  dialog.querySelector('.cancel').addEventListener('click', () => dialog.hide());
  dialog.querySelector('.confirm').addEventListener('click', () => {
    state.confirmed = name;
    dialog.hide();
  });
}
</script>"""

IONIC = """<!doctype html><meta charset=utf-8><title>Ionic</title>
<meta name=viewport content="width=device-width, initial-scale=1">
<link rel=stylesheet href="/npm/@ionic/core/css/ionic.bundle.css">
<script type=module src="/npm/@ionic/core/dist/ionic/ionic.esm.js"></script>
<script>window.state = {};</script>
<ion-app>
  <ion-header><ion-toolbar><ion-title>Settings</ion-title></ion-toolbar></ion-header>
  <ion-content class=ion-padding>
    <ion-segment id=filter value=all>
      <ion-segment-button value=all><ion-label>All</ion-label></ion-segment-button>
      <ion-segment-button value=favorites><ion-label>Favorites</ion-label></ion-segment-button>
      <ion-segment-button value=recent><ion-label>Recent</ion-label></ion-segment-button>
    </ion-segment>
    <ion-list>
      <ion-item><ion-toggle id=notify>Notifications</ion-toggle></ion-item>
      <ion-item><ion-checkbox id=remember>Remember me</ion-checkbox></ion-item>
      <ion-item>
        <ion-input id=name label="Name" label-placement=floating placeholder="Your name">
        </ion-input>
      </ion-item>
    </ion-list>
    <ion-button id=save>Save</ion-button>
    <ion-button id=remove color=danger>Delete item</ion-button>
    <ion-alert trigger=remove header="Delete this item?" message="It cannot be restored.">
    </ion-alert>
    <ion-list>
      <ion-radio-group id=pet value=cat>
        <ion-item><ion-radio value=cat>Cat</ion-radio></ion-item>
        <ion-item><ion-radio value=dog>Dog</ion-radio></ion-item>
        <ion-item><ion-radio value=bird>Bird</ion-radio></ion-item>
      </ion-radio-group>
    </ion-list>
  </ion-content>
</ion-app>
<script>
document.getElementById('save').addEventListener('click', () => {
  state.saved = document.getElementById('name').value;
});
document.querySelector('ion-alert').buttons = [
  { text: 'Cancel', role: 'cancel' },
  { text: 'Delete', role: 'destructive', handler: () => { state.deleted = true; } },
];
</script>"""

CODEMIRROR = """<!doctype html><meta charset=utf-8><title>CodeMirror</title>
<script type=importmap>IMPORT_MAP</script>
<style>body { font: 16px sans-serif; margin: 1em; } #editor { border: 1px solid #999; }</style>
<h1>Script</h1>
<div id=editor></div>
<script type=module>
import { basicSetup, EditorView } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
window.view = new EditorView({
  doc: '', extensions: [basicSetup, javascript()], parent: document.getElementById('editor'),
});
</script>"""

SWAGGER = """<!doctype html><meta charset=utf-8><title>Pet API</title>
<link rel=stylesheet href="/npm/swagger-ui-dist/swagger-ui.css">
<div id=swagger-ui></div>
<script src="/npm/swagger-ui-dist/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });</script>"""

#: pdf.js's own viewer component (``web/pdf_viewer.mjs``: pages in a scrolling container, each
#: with its text layer, rendered as they come into view) on a two-page PDF, with the paging
#: buttons an application puts around it.
PDF_PAGER = """<!doctype html><meta charset=utf-8><title>PDF pager</title>
<link rel=stylesheet href="/pdfjs/web/pdf_viewer.css">
<style>#container { position: absolute; top: 3em; bottom: 0; left: 0; right: 0;
  overflow: auto; } </style>
<nav><button id=prev>Previous page</button> <span id=where>Page 1</span>
  <button id=next>Next page</button></nav>
<div id=container><div id=viewer class=pdfViewer></div></div>
<script type=module>
import * as pdfjs from '/pdfjs/build/pdf.mjs';
pdfjs.GlobalWorkerOptions.workerSrc = '/pdfjs/build/pdf.worker.mjs';
const { EventBus, PDFLinkService, PDFViewer } = await import('/pdfjs/web/pdf_viewer.mjs');
const eventBus = new EventBus();
const linkService = new PDFLinkService({ eventBus });
const viewer = new PDFViewer({
  container: document.getElementById('container'), eventBus, linkService,
});
linkService.setViewer(viewer);
window.pdfViewer = viewer;
eventBus.on('pagechanging', (event) => {
  document.getElementById('where').textContent = 'Page ' + event.pageNumber;
});
document.getElementById('next').onclick = () => { viewer.currentPageNumber += 1; };
document.getElementById('prev').onclick = () => { viewer.currentPageNumber -= 1; };
const doc = await pdfjs.getDocument({ url: '/two-pages.pdf' }).promise;
viewer.setDocument(doc);
linkService.setDocument(doc);
</script>"""

#: The API the console describes; this server answers it.
OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "Pet API", "version": "1.0.0"},
    "paths": {
        "/api/pets/{petId}": {
            "get": {
                "operationId": "getPet",
                "summary": "Find a pet by id",
                "parameters": [
                    {
                        "name": "petId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": {"200": {"description": "The pet"}},
            }
        },
        "/api/pets": {
            "post": {
                "operationId": "addPet",
                "summary": "Add a pet",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "kind": {"type": "string"},
                                },
                            },
                            "example": {"name": "Fido", "kind": "cat"},
                        }
                    },
                },
                "responses": {"201": {"description": "The pet, added"}},
            }
        },
    },
}

PET_NAMES = {7: "Biscuit", 8: "Pickle"}


class _Handler(http.server.BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        page = self.site.pages.get(path)
        if page is not None:
            self._send(200, page.encode(), "text/html; charset=utf-8")
        elif path == "/openapi.json":
            self._send(200, json.dumps(OPENAPI).encode(), "application/json")
        elif path.startswith("/api/pets/"):
            self.site.api_calls.append(("GET", path, ""))
            tail = path.rsplit("/", 1)[1]
            pet = int(tail) if tail.isdigit() else -1
            if pet in PET_NAMES:
                self._json(200, {"id": pet, "name": PET_NAMES[pet]})
            else:
                self._json(404, {"error": f"no pet {tail}"})
        elif path in ("/doc.pdf", "/two-pages.pdf"):
            self._send(200, self.site.pdfs[path], "application/pdf")
        elif path.startswith("/npm/"):
            self._file(self.site.modules, path[len("/npm/") :])
        elif path.startswith("/pdfjs/"):
            self._file(self.site.modules / "pdfjs-dist", path[len("/pdfjs/") :])
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        self.site.api_calls.append(("POST", self.path, body))
        if self.path == "/api/pets":
            try:
                pet = json.loads(body)
            except ValueError:
                self._json(400, {"error": "the body is not JSON"})
                return
            self._json(201, {"id": 100, **pet} if isinstance(pet, dict) else {"id": 100})
        else:
            self.send_error(404)

    def _file(self, base: Path, relative: str) -> None:
        file = (base / relative).resolve()
        if ".." in relative or not file.is_file() or not file.is_relative_to(base.resolve()):
            self.send_error(404)
            return
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if file.suffix in (".js", ".mjs"):
            kind = "text/javascript"
        self._send(200, file.read_bytes(), kind)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Site:
    """The pages on 127.0.0.1, from a daemon thread: ``/shoelace``, ``/ionic``,
    ``/codemirror``, ``/swagger``, ``/pdf`` (pdf.js rendering one page, as
    ``real_pages_workers.py`` does), ``/pdf-pager`` (pdf.js's viewer on two pages) and the
    gesture pages (``/sortable``, ``/grid``, ``/tinymce``, ``/leaflet``); ``api_calls``
    records what reached the Pet API."""

    def __init__(self, npm_dir: Path) -> None:
        self.modules = npm_dir / "node_modules"
        codemirror = CODEMIRROR.replace("IMPORT_MAP", json.dumps(import_map(self.modules)))
        self.pages = {
            "/shoelace": SHOELACE,
            "/ionic": IONIC,
            "/codemirror": codemirror,
            "/swagger": SWAGGER,
            "/pdf": VIEWER,
            "/pdf-pager": PDF_PAGER,
            "/source": SOURCE,
            "/two-pages": TWO_PAGES,
            **GESTURE_PAGES,
        }
        self.pdfs: dict[str, bytes] = {}
        self.api_calls: list[tuple[str, str, str]] = []
        handler = type("Handler", (_Handler,), {"site": self})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Site:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
