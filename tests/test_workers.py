"""Workers run in ego's tabs as they do without ego, and ``tab.workers()`` reaches them.

An auto-attach that waits for the debugger (the tab's, each cross-site frame's, the origin
guard's) holds every dedicated worker of its documents until someone resumes it: before ego
attached and resumed workers, a page's worker never sent its first message. Each page here
keeps a promise of the worker's first answer (``window.done``) and sets its title from it, so
a test waits on that event, bounded, and a held worker fails it by the timeout.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

import ego
from ego.errors import WorkerEndedError
from ego.page.workers import Worker
from tests.helpers.browsers import fresh_tab
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

#: Bounds every wait of a test: a held worker shows as this running out.
HANG = 20.0

BLOB_PAGE = """<title>start</title><p>blob worker</p><script>
window.w = new Worker(URL.createObjectURL(new Blob(['self.kind = "blob"; postMessage(42)'])));
window.done = new Promise(r => w.onmessage = e => { document.title = 'got ' + e.data; r(e.data); });
done.then(v => window.opener && opener.postMessage(v, '*'));
</script>"""


def _serve(server: PageServer) -> str:
    """Serve the worker pages under a fresh prefix (a service worker's scope is its own)."""
    tag = uuid.uuid4().hex[:8]
    base = f"/w/{tag}"
    server.route(f"{base}/blob", BLOB_PAGE)
    server.route(
        f"{base}/script",
        f"""<title>start</title><script>
        window.w = new Worker('{base}/outer.js');
        window.done = new Promise(r => w.onmessage = e => {{
          document.title = 'got ' + e.data; r(e.data); }});
        </script>""",
    )
    server.route(
        f"{base}/outer.js",
        f"self.seen = 'outer'; const inner = new Worker('{base}/inner.js');"
        "inner.onmessage = e => postMessage(e.data + 1);",
        content_type="text/javascript",
    )
    server.route(f"{base}/inner.js", "postMessage(99)", content_type="text/javascript")
    server.route(
        f"{base}/shared",
        f"""<title>start</title><script>
        const s = new SharedWorker('{base}/shared.js');
        window.done = new Promise(r => s.port.onmessage = e => {{
          document.title = 'got ' + e.data; r(e.data); }});
        s.port.start();
        </script>""",
    )
    server.route(
        f"{base}/shared.js",
        "self.connections = 0;onconnect = e => { self.connections++; e.ports[0].postMessage(7); };",
        content_type="text/javascript",
    )
    server.route(
        f"{base}/service",
        f"""<title>start</title><script>
        window.done = navigator.serviceWorker.register('{base}/sw.js')
          .then(() => navigator.serviceWorker.ready)
          .then(reg => {{ document.title = 'ready'; return reg.active.scriptURL; }});
        </script>""",
    )
    server.route(
        f"{base}/sw.js",
        "self.addEventListener('install', () => self.skipWaiting());"
        "self.addEventListener('activate', e => e.waitUntil(clients.claim()));",
        content_type="text/javascript",
    )
    cross = f"http://localhost:{server.port}{base}/blob"
    server.route(
        f"{base}/framed", f"<title>framed</title><iframe name=cross src='{cross}'></iframe>"
    )
    return server.url(base)


async def _done(page: ego.Tab | object) -> object:
    """The page's first answer from its worker, awaited (bounded) in the page."""
    return await asyncio.wait_for(page.evaluate("window.done", timeout=HANG), HANG)  # type: ignore[attr-defined]


async def _workers_of(tab: ego.Tab, kind: str) -> list[Worker]:
    return [worker for worker in await tab.workers() if worker.type == kind]


async def _ended(worker: Worker) -> None:
    """Wait (bounded) until Chrome says the worker's session is gone."""
    gone = asyncio.get_running_loop().create_future()
    worker.session.on_detach(lambda: gone.done() or gone.set_result(None))
    await asyncio.wait_for(gone, HANG)


async def test_a_blob_worker_runs_is_listed_and_evaluates(server: PageServer, tab: ego.Tab) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/blob")
    assert await _done(tab) == 42
    assert await tab.evaluate("document.title") == "got 42"
    [worker] = await tab.workers()
    assert worker.type == "worker"
    assert worker.url.startswith(f"blob:{server.origin}/")
    assert not worker.ended
    assert await worker.evaluate("self.kind") == "blob"
    assert await worker.evaluate("self.constructor.name") == "DedicatedWorkerGlobalScope"
    # Tab.evaluate's value rules hold in a worker: a Map of Dates comes back described.
    assert await worker.evaluate("new Map([[1, new Date(0)]])") == [[1, "1970-01-01T00:00:00.000Z"]]
    assert await worker.evaluate("await Promise.resolve(5)") == 5
    with pytest.raises(ego.JavaScriptError, match="boom"):
        await worker.evaluate("throw new Error('boom')")


async def test_a_script_worker_and_the_worker_it_starts_run_and_are_listed(
    server: PageServer, tab: ego.Tab
) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/script")
    assert await _done(tab) == 100  # the inner worker's 99, passed on by the outer one
    by_url = {worker.url: worker for worker in await _workers_of(tab, "worker")}
    assert set(by_url) == {f"{base}/outer.js", f"{base}/inner.js"}
    assert await by_url[f"{base}/outer.js"].evaluate("self.seen") == "outer"


async def test_a_terminated_worker_fails_its_calls_with_a_typed_error(
    server: PageServer, tab: ego.Tab
) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/blob")
    await _done(tab)
    [worker] = await tab.workers()
    # A call in flight when the worker ends fails then, not at its own timeout.
    pending = asyncio.ensure_future(worker.evaluate("new Promise(() => {})", timeout=300))
    await tab.evaluate("w.terminate()")
    with pytest.raises(WorkerEndedError, match=r"tab\.workers\(\)"):
        await asyncio.wait_for(pending, HANG)
    await _ended(worker)
    assert worker.ended
    with pytest.raises(WorkerEndedError):
        await worker.evaluate("1")
    assert await tab.workers() == []


async def test_a_worker_of_a_page_that_navigated_away_has_ended(
    server: PageServer, tab: ego.Tab
) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/blob")
    await _done(tab)
    [worker] = await tab.workers()
    await tab.navigate(f"{base}/shared.js")
    await _ended(worker)
    with pytest.raises(WorkerEndedError):
        await worker.evaluate("1")


async def test_a_worker_in_a_cross_site_frame_runs_and_is_the_tabs(
    server: PageServer, tab: ego.Tab
) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/framed")
    frame = await tab.frame(name="cross", timeout=HANG)
    assert await _done(frame) == 42
    assert await frame.evaluate("document.title") == "got 42"
    [worker] = await tab.workers()
    assert worker.url.startswith(f"blob:http://localhost:{server.port}/")
    assert await worker.evaluate("self.location.origin") == f"http://localhost:{server.port}"


async def test_a_shared_worker_runs_and_is_listed_for_its_origin(
    server: PageServer, tab: ego.Tab
) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/shared")
    assert await _done(tab) == 7
    assert await tab.evaluate("document.title") == "got 7"
    [worker] = await _workers_of(tab, "shared_worker")
    assert worker.url == f"{base}/shared.js"
    assert await worker.evaluate("self.constructor.name") == "SharedWorkerGlobalScope"
    assert await worker.evaluate("self.connections") == 1
    # Listed again, it is the same worker (one session of ego's, not one per call).
    [again] = await _workers_of(tab, "shared_worker")
    assert again is worker
    # Closed (from inside; a page that leaves may keep it alive in its back/forward cache),
    # it has ended: its calls fail typed, and the tab lists none. Chrome says so as a crash.
    crashed = worker.session.expect("Inspector.targetCrashed")
    await worker.evaluate("close()")
    await asyncio.wait_for(crashed, HANG)
    with pytest.raises(WorkerEndedError):
        await worker.evaluate("1")
    assert await _workers_of(tab, "shared_worker") == []


async def test_a_shared_worker_is_left_when_the_tab_closes(
    server: PageServer, browser: ego.Browser
) -> None:
    base = _serve(server)
    async with fresh_tab(browser) as tab:
        await tab.navigate(f"{base}/shared")
        await _done(tab)
        [worker] = await _workers_of(tab, "shared_worker")
        left = asyncio.get_running_loop().create_future()
        worker.session.on_detach(lambda: left.done() or left.set_result(None))
    # ego detaches its session: Chrome would keep it past the worker's end otherwise.
    await asyncio.wait_for(left, HANG)
    assert worker.session not in browser.connection.sessions


async def test_a_service_worker_registers_and_is_listed(server: PageServer, tab: ego.Tab) -> None:
    base = _serve(server)
    await tab.navigate(f"{base}/service")
    assert await _done(tab) == f"{base}/sw.js"
    assert await tab.evaluate("document.title") == "ready"
    [worker] = await _workers_of(tab, "service_worker")
    assert worker.url == f"{base}/sw.js"
    assert await worker.evaluate("self.constructor.name") == "ServiceWorkerGlobalScope"


async def test_workers_run_with_origin_limits_on(server: PageServer) -> None:
    """The origin guard's own auto-attach (on every page and frame) holds workers too."""
    base = _serve(server)
    allowed = [server.origin, f"http://localhost:{server.port}"]
    async with await ego.launch(allowed_origins=allowed) as browser:
        tab = await browser.new_tab(f"{base}/blob")
        assert await _done(tab) == 42
        assert [worker.url[:5] for worker in await tab.workers()] == ["blob:"]
        await tab.navigate(f"{base}/framed")
        frame = await tab.frame(name="cross", timeout=HANG)
        assert await _done(frame) == 42
        await tab.navigate(f"{base}/script")
        assert await _done(tab) == 100
        await tab.navigate(f"{base}/shared")
        assert await _done(tab) == 7
        await tab.navigate(f"{base}/service")
        assert await _done(tab) == f"{base}/sw.js"
        # A page the page opens, which no Tab of ego's has attached: only the guard is there.
        heard = "new Promise(r => addEventListener('message', e => r(e.data), {once: true}))"
        await tab.evaluate(
            f"window.heard = {heard}; window.open('{base}/blob'); 0", user_gesture=True
        )
        assert await tab.evaluate("window.heard", timeout=HANG) == 42


async def test_workers_run_for_a_client_attached_to_a_launched_port(
    server: PageServer, ported_browser: ego.Browser
) -> None:
    """Two clients, each with its own auto-attach on the tab: each resumes what it holds."""
    base = _serve(server)
    assert ported_browser.endpoint is not None
    async with ego.connect(ported_browser.endpoint) as attached, fresh_tab(attached) as tab:
        await tab.navigate(f"{base}/blob")
        assert await _done(tab) == 42
        # The launching client attaches the same tab too; a reload starts a new worker.
        [same] = [t for t in await ported_browser.tabs() if t.target_id == tab.target_id]
        assert await same.evaluate("document.title") == "got 42"
        await tab.reload()
        assert await _done(tab) == 42
        [worker] = await tab.workers()
        [theirs] = await same.workers()
        assert worker.target_id == theirs.target_id
        assert await theirs.evaluate("self.kind") == "blob"
