"""A worker-based PDF viewer renders under ego: pdf.js from npm, decoding in its worker.

pdf.js parses and decodes a PDF in a dedicated worker (``pdf.worker.mjs``) and paints in the
page. Under an auto-attach that holds workers (what ego asked for before it attached and
resumed them), the worker never answered and the viewer hung. This script installs
``pdfjs-dist`` with npm into a folder outside the committed files (``bench/.npm`` by default,
ignored by git), makes a small PDF with Chrome (``tab.pdf()``), serves a viewer page that loads
it with pdf.js and its worker, and checks, under each way ego reaches a browser (a plain
launch, a launch with origin limits on so the guard's sessions are there too, and
``ego.connect`` to a launched port), that:

- the page rendered: one page, the PDF's text in pdf.js's text layer, the canvas painted;
- ``tab.workers()`` lists pdf.js's worker, and evaluating in it finds pdf.js's worker code.

Run from the project root (needs ``npm`` and the npm registry the first time)::

    .venv/bin/python bench/real_pages_workers.py
    .venv/bin/python bench/real_pages_workers.py --npm-dir /tmp/ego-npm --pdfjs 6

Exits 1 when any check fails, 2 when pdf.js cannot be installed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import mimetypes
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import ego

ROOT = Path(__file__).resolve().parent.parent
PHRASE = "Workers decode this page"
#: Bounds every wait: a held worker shows as this running out.
HANG = 60.0

SOURCE = f"""<!doctype html><meta charset=utf-8><title>source</title>
<body style="font: 28px sans-serif; margin: 2cm"><h1>{PHRASE}</h1>
<p>A small PDF made by Chrome for ego's worker check.</p></body>"""

VIEWER = """<!doctype html><meta charset=utf-8><title>viewer</title>
<style>
  #page { position: relative; }
  .textLayer { position: absolute; inset: 0; overflow: hidden; line-height: 1; opacity: 0.2; }
  .textLayer span { position: absolute; white-space: pre; transform-origin: 0 0;
    color: transparent; }
</style>
<div id=page><canvas id=canvas></canvas><div id=text class=textLayer></div></div>
<script type=module>
import * as pdfjs from '/pdfjs/build/pdf.mjs';
pdfjs.GlobalWorkerOptions.workerSrc = '/pdfjs/build/pdf.worker.mjs';
window.rendered = (async () => {
  const doc = await pdfjs.getDocument({ url: '/doc.pdf' }).promise;
  const page = await doc.getPage(1);
  const viewport = page.getViewport({ scale: 1 });
  const canvas = document.getElementById('canvas');
  canvas.width = Math.ceil(viewport.width);
  canvas.height = Math.ceil(viewport.height);
  await page.render({ canvas, viewport }).promise;
  const container = document.getElementById('text');
  container.style.setProperty('--scale-factor', String(viewport.scale));
  await new pdfjs.TextLayer({
    textContentSource: page.streamTextContent(), container, viewport,
  }).render();
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    const dark = pixels[i] < 200 || pixels[i + 1] < 200 || pixels[i + 2] < 200;
    if (pixels[i + 3] > 0 && dark) painted++;
  }
  document.title = 'rendered';
  return { pages: doc.numPages, text: container.textContent, painted };
})();
</script>"""


def install_pdfjs(npm_dir: Path, major: str) -> Path:
    """``pdfjs-dist@major`` under ``npm_dir`` (installed with npm when missing); its folder."""
    package = npm_dir / "node_modules" / "pdfjs-dist"
    manifest = package / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text())["version"].split(".")[0] == major:
        return package
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is not on PATH: install Node.js and npm to run this check")
    npm_dir.mkdir(parents=True, exist_ok=True)
    command = [
        npm, "install", "--prefix", str(npm_dir), "--no-audit", "--no-fund", "--no-save",
        "--omit=optional", f"pdfjs-dist@{major}",
    ]  # fmt: skip
    print("installing:", " ".join(command[1:]), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not manifest.is_file():
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
        sys.exit(2)
    return package


class _Handler(http.server.BaseHTTPRequestHandler):
    package = Path()
    pdf = b""

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/":
            body, kind = VIEWER.encode(), "text/html; charset=utf-8"
        elif path == "/source":
            body, kind = SOURCE.encode(), "text/html; charset=utf-8"
        elif path == "/doc.pdf":
            body, kind = self.pdf, "application/pdf"
        elif path.startswith("/pdfjs/") and ".." not in path:
            file = self.package / path[len("/pdfjs/") :]
            if not file.is_file():
                self.send_error(404)
                return
            body = file.read_bytes()
            kind = (
                "text/javascript" if file.suffix == ".mjs" else mimetypes.guess_type(file.name)[0]
            )
            kind = kind or "application/octet-stream"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve(package: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    _Handler.package = package
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


async def _make_pdf(origin: str) -> bytes:
    async with ego.launch() as browser:
        tab = await browser.new_tab(f"{origin}/source")
        return await tab.pdf()


async def _check(browser: ego.Browser, origin: str) -> list[str]:
    """What failed when the viewer ran in a new tab of ``browser`` (nothing: it rendered)."""
    failed: list[str] = []
    tab = await browser.new_tab(f"{origin}/")
    try:
        result = await asyncio.wait_for(tab.evaluate("window.rendered", timeout=HANG), HANG + 5)
        if result.get("pages") != 1:
            failed.append(f"pages {result.get('pages')!r}, not 1")
        # The text layer holds the PDF's text runs, a wrapped line's words without a space.
        if PHRASE.replace(" ", "") not in "".join(str(result.get("text", "")).split()):
            failed.append(f"the text layer holds {str(result.get('text'))[:80]!r}")
        if int(result.get("painted", 0)) < 500:
            failed.append(f"the canvas has {result.get('painted')} painted pixels")
        workers = [w for w in await tab.workers() if w.url.endswith("/pdf.worker.mjs")]
        if not workers:
            failed.append(f"tab.workers() lists no pdf.js worker: {await tab.workers()}")
        elif await workers[0].evaluate("typeof globalThis.pdfjsWorker") != "object":
            failed.append("the listed worker does not hold pdf.js's worker code")
    except (ego.EgoError, TimeoutError) as exc:
        failed.append(f"{type(exc).__name__}: {exc}")
    finally:
        await tab.close()
    return failed


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--npm-dir", type=Path, default=ROOT / "bench" / ".npm")
    parser.add_argument("--pdfjs", default="6", help="the major version of pdfjs-dist")
    options = parser.parse_args()
    package = install_pdfjs(options.npm_dir, options.pdfjs)
    version = json.loads((package / "package.json").read_text())["version"]
    server, origin = _serve(package)
    try:
        _Handler.pdf = await _make_pdf(origin)
        print(f"pdfjs-dist {version}; a {len(_Handler.pdf):,}-byte PDF made by Chrome")
        results: list[tuple[str, list[str], float]] = []

        async def run(name: str, browser: ego.Browser) -> None:
            started = time.perf_counter()
            failed = await _check(browser, origin)
            results.append((name, failed, time.perf_counter() - started))

        async with ego.launch() as browser:
            await run("ego.launch()", browser)
        async with ego.launch(allowed_origins=[origin]) as browser:
            await run("ego.launch(allowed_origins=...)", browser)
        async with ego.launch(port=0) as owner:
            assert owner.endpoint is not None
            async with ego.connect(owner.endpoint) as browser:
                await run("ego.connect(a launched port)", browser)
    finally:
        server.shutdown()
        server.server_close()
    for name, failed, seconds in results:
        verdict = "rendered" if not failed else "FAILED: " + "; ".join(failed)
        print(f"{name:34} {seconds:6.2f} s  {verdict}")
    passed = sum(1 for _, failed, _ in results if not failed)
    print(f"{passed} of {len(results)} configurations rendered the PDF in pdf.js's worker")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
