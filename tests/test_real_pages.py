"""Real pages: open shadow roots, same-origin and cross-site iframes, downloads and PDFs.

The page is served on 127.0.0.1; its cross-site iframe comes from ``localhost`` on the same
port, another site, so Chrome runs it in a process of its own (an out-of-process frame that
ego reaches through a child session).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.errors import (
    CommandTimeoutError,
    ContextDestroyedError,
    DialogOpenError,
    DownloadFailedError,
    ElementNotFoundError,
    FrameDetachedError,
    FrameNotFoundError,
)
from ego.learning.catalog.registry import Learnings
from ego.page.downloads import safe_name
from ego.runtime.cache import cache_key
from ego.site import Site
from tests.helpers.browsers import HANG
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer
from tests.helpers.real_page import real_page, ref_of


@pytest.fixture
async def page(tab: ego.Tab, server: PageServer, request: pytest.FixtureRequest) -> ego.Tab:
    await tab.navigate(real_page(server, request.node.name[:40]))
    await tab.frame(name="cross", timeout=10)
    await tab.frame(name="same", timeout=10)
    return tab


# -- one snapshot reads it all; its refs act -------------------------------------------------


async def test_one_snapshot_reads_shadow_roots_and_every_frame(page: ego.Tab) -> None:
    outline = await page.snapshot()
    for expected in (
        'heading "Real page" [level=1]',
        "text: Use demo / demo here",  # inline elements stay in their sentence
        "text: first line ⏎ second line",
        "text: Shadow text",  # inside the open shadow root
        'button "In shadow" [ref=',
        "text: Slotted words",  # slotted content, where its slot is
        'iframe "same" [ref=',
        'button "Same button" [ref=',
        "Cross-site text",
        'button "Cross button" [ref=',
        'link "Download report" [ref=',
    ):
        assert expected in outline, f"{expected!r} not in\n{outline}"
    # A closed shadow root is closed to page script, not to the browser: the snapshot shows
    # what it renders, as a screen reader reads it.
    assert 'button "Secret" [ref=' in outline
    assert "text: Hidden words" in outline
    # A frame's lines sit under its iframe's line, one level deeper.
    lines = outline.splitlines()
    frame_line = next(i for i, line in enumerate(lines) if line.startswith('iframe "cross"'))
    assert lines[frame_line + 1].startswith("  ")
    assert "Cross-site text" in lines[frame_line + 1]
    # The first snapshot of a page numbers its refs in reading order.
    refs = [int(n) for n in re.findall(r"\[ref=e(\d+)\]", outline)]
    assert refs == sorted(refs)


async def test_the_refs_a_snapshot_prints_act_from_the_tab(page: ego.Tab) -> None:
    outline = await page.snapshot()
    for button in ('button "In shadow"', 'button "Same button"', 'button "Cross button"'):
        await page.click(await page.selector_for(ref_of(outline, button)))
    field = ref_of(outline, "textbox", after='iframe "same"')
    await page.type(await page.selector_for(field), "in same")
    after = await page.snapshot()
    assert 'button "inner clicked"' in after
    assert 'button "same clicked"' in after
    assert 'button "cross clicked"' in after
    # The same nodes kept their refs.
    assert ref_of(after, 'button "inner clicked"') == ref_of(outline, 'button "In shadow"')
    assert ref_of(after, 'button "cross clicked"') == ref_of(outline, 'button "Cross button"')
    same = await page.frame(name="same")
    assert await same.evaluate("document.querySelector('#same-field').value") == "in same"


async def test_snapshot_pages_searches_and_takes_a_subtree(page: ego.Tab) -> None:
    whole = (await page.snapshot()).splitlines()
    body = whole[1:]
    first = (await page.snapshot(max_lines=4)).splitlines()
    assert first[1:5] == body[:4]
    assert first[5] == f"… lines 1-4 of {len(body)}: snapshot(offset=4) shows the next"
    second = (await page.snapshot(max_lines=4, offset=4)).splitlines()
    assert second[1:5] == body[4:8]
    last = (await page.snapshot(offset=len(body) - 2)).splitlines()
    assert last[1:] == body[-2:]  # the end: no line says more follow

    found = (await page.snapshot(find="cross button")).splitlines()
    assert any('button "Cross button"' in line for line in found)
    assert any(line.startswith('iframe "cross"') for line in found)  # its ancestor
    assert not any("Same-origin text" in line for line in found)
    nothing = await page.snapshot(find="no such words anywhere")
    assert "(no line holds the text)" in nothing

    subtree = await page.snapshot(selector="#cross >> body")
    assert "Cross-site text" in subtree
    assert "Real page" not in subtree
    assert ref_of(subtree, 'button "Cross button"') == ref_of("\n".join(whole), "Cross button")
    by_ref = await page.snapshot(selector=ref_of("\n".join(whole), 'iframe "cross"'))
    assert by_ref.splitlines()[1].startswith('iframe "cross"')
    assert "  text: Cross-site text" in by_ref
    assert "Same-origin text" not in by_ref
    with pytest.raises(ElementNotFoundError):
        await page.snapshot(selector="#no-such-element")


# -- shadow roots: every verb that takes a selector pierces open ones ------------------------


async def test_every_selector_verb_reaches_into_an_open_shadow_root(
    page: ego.Tab, tmp_path: Path
) -> None:
    await page.click("#inner-btn")
    assert (
        await page.evaluate(
            "document.querySelector('my-card').shadowRoot.getElementById('inner-btn').textContent"
        )
        == "inner clicked"
    )
    await page.type("#inner-field", "typed")
    await page.click("#inner-field")
    await page.press("!")
    assert (
        await page.evaluate(
            "document.querySelector('my-card').shadowRoot.getElementById('inner-field').value"
        )
        == "typed!"
    )
    assert await page.select("#inner-select", "b") == ["b"]
    upload = tmp_path / "up.txt"
    upload.write_text("hello")
    await page.upload("#inner-file", upload)
    assert (
        await page.evaluate(
            "document.querySelector('my-card').shadowRoot.getElementById('inner-file').files[0].name"
        )
        == "up.txt"
    )
    await page.hover("my-card #inner-btn")  # a descendant combinator across the boundary
    await page.wait_for(text="hovering", timeout=5)
    shot = await page.screenshot(selector="#inner-btn")
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"

    # Content added later inside the shadow root is waited for.
    await page.evaluate(
        "setTimeout(() => { const r = document.querySelector('my-card').shadowRoot;"
        " const b = document.createElement('b'); b.id = 'late'; b.textContent = 'Late words';"
        " r.append(b); }, 100); 0"
    )
    await page.wait_for(selector="#late", timeout=5)
    await page.wait_for(text="Late words", timeout=5)
    # A shadow root attached later to an element already there (no DOM change announces it).
    await page.evaluate(
        "setTimeout(() => { const host = document.createElement('div'); document.body.append(host);"
        " setTimeout(() => { host.attachShadow({mode: 'open'}).innerHTML ="
        " '<i id=\"deep\">Deep words</i>'; }, 50); }, 50); 0"
    )
    await page.wait_for(selector="#deep", timeout=5)


async def test_a_closed_shadow_root_stays_closed(page: ego.Tab) -> None:
    with pytest.raises(ElementNotFoundError):
        await page.click("#secret", wait=0)
    with pytest.raises(CommandTimeoutError):
        await page.wait_for(text="Hidden words", timeout=0.5)


# -- frames ----------------------------------------------------------------------------------


async def test_frames_lists_every_frame_with_url_name_and_parent(page: ego.Tab) -> None:
    frames = await page.frames()
    main, *children = frames
    assert main.is_main
    assert main.parent is None
    assert main.url == page.url
    by_name = {frame.name: frame for frame in children}
    assert set(by_name) == {"same", "cross"}
    assert by_name["same"].url.endswith("/same")
    assert by_name["cross"].url.startswith("http://localhost:")
    assert all(frame.parent is main for frame in children)
    # The cross-site frame runs in a session of its own; the same-origin one in the tab's.
    assert by_name["cross"].session not in (None, page.session)
    assert by_name["same"].session is page.session


async def test_each_frame_offers_the_page_verbs(page: ego.Tab, tmp_path: Path) -> None:
    for name, prefix in (("same", "same"), ("cross", "cross")):
        frame = await page.frame(name=name)
        assert await frame.evaluate("location.pathname") == f"/real/{page_tag(page)}/{name}"
        await frame.click(f"#{prefix}-btn")
        assert await frame.evaluate(f"document.querySelector('#{prefix}-btn').textContent") == (
            f"{prefix} clicked"
        )
        await frame.type(f"#{prefix}-field", "abc")
        await frame.click(f"#{prefix}-field")
        await frame.press("d")
        assert await frame.evaluate(f"document.querySelector('#{prefix}-field').value") == "abcd"
        await frame.wait_for(text=f"{prefix} clicked", timeout=5)
        await frame.wait_for(selector=f"#{prefix}-field", timeout=5)
        outline = await frame.snapshot()
        assert outline.startswith("frame ")
        assert await frame.selector_for(ref_of(outline, f'button "{prefix} clicked"')) == (
            f'role=button[name="{prefix} clicked"]'
        )
        shot = await frame.screenshot(selector=f"#{prefix}-btn")
        assert shot[:8] == b"\x89PNG\r\n\x1a\n"
        await frame.hover(f"#{prefix}-btn")
    same = await page.frame(name="same")
    assert await same.select("#same-select", "y") == ["y"]
    upload = tmp_path / "f.txt"
    upload.write_text("x")
    await same.upload("#same-file", upload)
    assert await same.evaluate("document.querySelector('#same-file').files.length") == 1


def page_tag(page: ego.Tab) -> str:
    return page.url.rstrip("/").rsplit("/", 1)[-1]


async def test_frames_follow_attach_navigate_and_detach(page: ego.Tab, server: PageServer) -> None:
    tag = page_tag(page)
    server.route(f"/real/{tag}/later", "<p>Later frame</p>")
    server.route(f"/real/{tag}/next", "<p>Next page</p>")
    await page.evaluate(
        f"const f = document.createElement('iframe'); f.name = 'later';"
        f" f.src = '/real/{tag}/later'; document.body.append(f); 0"
    )
    later = await page.frame(name="later", timeout=10)
    await later.wait_for(text="Later frame", timeout=10)

    # A same-origin frame that navigates cross-site moves to a process of its own, and back.
    cross_url = f"http://localhost:{server.port}/real/{tag}/next"
    await later.evaluate(f"location.href = {cross_url!r}; 0")
    await page.frame(url=cross_url, timeout=10)
    assert later.url == cross_url
    await later.wait_for(text="Next page", timeout=10)
    assert await later.evaluate("location.host") == f"localhost:{server.port}"
    await later.evaluate(f"location.href = 'http://127.0.0.1:{server.port}/real/{tag}/later'; 0")
    await page.frame(url=f"127.0.0.1:{server.port}/real/{tag}/later", timeout=10)
    await later.wait_for(text="Later frame", timeout=10)

    await page.evaluate("document.querySelector('iframe[name=later]').remove(); 0")
    deadline = time.monotonic() + 10
    while not later.detached and time.monotonic() < deadline:
        await page.changed(1)
    assert later.detached
    assert "later" not in {frame.name for frame in await page.frames()}
    with pytest.raises(FrameDetachedError):
        await later.evaluate("1")
    with pytest.raises(FrameNotFoundError, match="no frame with name='later'"):
        await page.frame(name="later", timeout=0.2)


@pytest.mark.parametrize("name", ["same", "cross"])
async def test_a_frame_removed_or_navigating_mid_call_fails_typed_never_hangs(
    page: ego.Tab, name: str
) -> None:
    frame = await page.frame(name=name)
    # The pending calls' own timeout is far beyond HANG: ending within HANG, each was ended by
    # the reload or the removal, never by its timeout.
    never = "new Promise(() => {})"
    pending = asyncio.ensure_future(frame.evaluate(never, timeout=4 * HANG))
    await frame.evaluate("1")  # the pending call has reached the page
    await frame.evaluate("setTimeout(() => location.reload(), 0); 0")
    with pytest.raises(ContextDestroyedError):
        await asyncio.wait_for(pending, HANG)
    await frame.wait_for(selector="button", timeout=10)

    pending = asyncio.ensure_future(frame.evaluate(never, timeout=4 * HANG))
    await frame.evaluate("1")
    await page.evaluate(f"document.querySelector('iframe[name={name}]').remove(); 0")
    with pytest.raises(FrameDetachedError):
        await asyncio.wait_for(pending, HANG)


@pytest.mark.parametrize("name", ["same", "cross"])
async def test_a_dialog_a_frame_opens_blocks_its_process_until_answered(
    page: ego.Tab, name: str
) -> None:
    page.dialog_policy = "manual"
    frame = await page.frame(name=name)
    other = await page.frame(name="cross" if name == "same" else "same")
    # Chrome reports the frame's dialog on the tab's session; the frame's own call, which the
    # dialog holds, fails at once rather than at its timeout (far beyond HANG).
    with pytest.raises(DialogOpenError, match=f"says {name}"):
        await asyncio.wait_for(frame.evaluate(f"alert('says {name}')", timeout=4 * HANG), HANG)
    assert page.dialogs[-1].message == f"says {name}"
    # The dialog holds the renderer process that opened it: the same-origin frame's is the
    # tab's, the cross-site frame's is its own, and the other process runs on.
    blocked, running = ([frame, page], other) if name == "same" else ([frame], other)
    for target in blocked:
        with pytest.raises(DialogOpenError):
            await target.evaluate("1 + 1", timeout=30)
    assert await running.evaluate("1 + 1", timeout=10) == 2
    if name == "cross":
        assert await page.evaluate("1 + 1", timeout=10) == 2
    await page.handle_dialog(accept=True)
    assert await frame.evaluate("1 + 1", timeout=10) == 2
    assert await page.evaluate("1 + 1", timeout=10) == 2


# -- downloads and PDF -----------------------------------------------------------------------


async def test_a_download_is_saved_under_a_safe_name_that_never_overwrites(
    page: ego.Tab, browser: ego.Browser
) -> None:
    async with page.expect_download() as first:
        await page.click("#dl")
    assert first.state == "completed"
    assert first.suggested_filename == "report.csv"
    assert first.url.endswith("/report.csv")
    assert first.size == 8
    assert first.path is not None
    assert first.path.read_text() == "a,b\n1,2\n"
    assert first.path.parent == browser.downloads_folder
    async with page.expect_download() as second:
        await page.click("#dl")
    assert second.path is not None
    assert second.path != first.path
    assert second.path.name.startswith("report (")
    assert second.path.suffix == ".csv"
    assert first.path.read_text() == "a,b\n1,2\n"
    assert {first.path, second.path} <= {d.path for d in browser.downloads()}
    assert first in page.downloads() or any(d.path == first.path for d in page.downloads())


def test_safe_names_keep_files_in_the_folder() -> None:
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("a\\b\\c.txt") == "c.txt"
    assert safe_name('x<y>:"z|?*.pdf') == "x_y_z_.pdf"
    assert safe_name("..") == "download"
    assert safe_name("\x00\x01") == "download"
    long = safe_name("n" * 300 + ".tar.gz")
    assert len(long) <= 120
    assert long.endswith(".gz")


@pytest.fixture
def truncating() -> Iterator[str]:
    """A server whose one answer promises 1,000 bytes of a download, sends 2 and hangs up."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    b"Content-Disposition: attachment; filename=broken.bin\r\n"
                    b"Content-Length: 1000\r\n\r\n12"
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/broken.bin"
    stop.set()
    thread.join(5)
    listener.close()


async def test_a_failed_download_is_a_typed_error(page: ego.Tab, truncating: str) -> None:
    await page.evaluate(
        f"const a = document.createElement('a'); a.id = 'broken'; a.href = {truncating!r};"
        " a.textContent = 'Broken download'; document.body.append(a); 0"
    )
    with pytest.raises(DownloadFailedError, match=r"broken\.bin was canceled"):
        async with page.expect_download(timeout=20):
            await page.click("#broken")


async def test_expect_download_is_bounded(page: ego.Tab) -> None:
    with pytest.raises(CommandTimeoutError, match="no download started"):
        async with page.expect_download(timeout=0.3):
            pass


@pytest.mark.chrome  # launches a Chrome of its own
async def test_downloads_go_to_the_folder_given_on_launch(
    server: PageServer, tmp_path: Path
) -> None:
    folder = tmp_path / "got"
    async with ego.launch(downloads=folder) as own:
        tab = await own.new_tab(real_page(server, "own-folder"))
        download = await asyncio.gather(tab.expect_download(), tab.click("#dl"))
        saved = download[0]
        assert saved.path == folder / "report.csv"
        assert os.listdir(folder) == ["report.csv"]


async def test_pdf_prints_the_page(page: ego.Tab, tmp_path: Path) -> None:
    target = tmp_path / "page.pdf"
    data = await page.pdf(path=target)
    assert data.startswith(b"%PDF-")
    assert target.read_bytes() == data
    with pytest.raises(ValueError, match="scale"):
        await page.pdf(scale=5)


@pytest.mark.chrome  # launches a Chrome of its own
async def test_downloads_work_on_an_attached_browser(server: PageServer, tmp_path: Path) -> None:
    async with (
        ego.launch(port=0) as owner,
        ego.connect(owner.endpoint or "", downloads=tmp_path / "attached") as attached,
    ):
        tab = await attached.new_tab(real_page(server, "attached"))
        async with tab.expect_download() as saved:
            await tab.click("#dl")
        assert saved.path == tmp_path / "attached" / "report.csv"
        assert saved.path.read_text() == "a,b\n1,2\n"


# -- a site's tool runs where its site is ----------------------------------------------------

WHERE_HOST = (
    "async (args) => { window.__ranHere = (window.__ranHere || 0) + 1; return location.host; }\n"
)


def write_embedded_site(root: Path, server: PageServer) -> str:
    """Write a site on the cross-site iframe's origin (localhost:PORT) into ``root``, with a
    tool that says where it ran; answer its id."""
    site_id = f"embedded-{uuid.uuid4().hex[:8]}"
    make_site(
        root,
        site_id,
        domains=[f"localhost:{server.port}"],
        browser_tools={"where": tool(WHERE_HOST)},
    )
    return site_id


def embedded_site(tmp_path: Path, browser: ego.Browser, server: PageServer) -> tuple[Site, str]:
    """:func:`write_embedded_site` in ``tmp_path``, and a facade over it."""
    site_id = write_embedded_site(tmp_path, server)
    return Site(browser, Learnings(roots=[tmp_path])), site_id


async def test_a_tool_runs_in_the_frame_of_its_site_with_its_cache_there(
    page: ego.Tab, browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    site, site_id = embedded_site(tmp_path, browser, server)
    assert await site.run_browser_tool(site_id, "where", {}, tab=page) == f"localhost:{server.port}"
    assert await site.run_browser_tool(site_id, "where", {}, tab=page) == f"localhost:{server.port}"
    cross = await page.frame(name="cross")
    key = cache_key(site_id, "where")
    assert await cross.evaluate(f"localStorage.getItem({key!r}) !== null") is True
    assert await cross.evaluate("window.__ranHere") == 2
    # Nothing entered the embedding page: no run, no cache.
    assert await page.evaluate(f"localStorage.getItem({key!r})") is None
    assert await page.evaluate("window.__ranHere === undefined") is True


async def test_a_tab_of_another_site_is_refused_before_anything_is_sent(
    tab: ego.Tab, browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    site, site_id = embedded_site(tmp_path, browser, server)
    await tab.navigate(server.route("/real/plain", "<title>Plain</title><p>no frames</p>"))
    with pytest.raises(ego.SiteMismatchError) as refused:
        await site.run_browser_tool(site_id, "where", {}, tab=tab)
    assert refused.value.host == f"127.0.0.1:{server.port}"
    assert refused.value.domains == [f"localhost:{server.port}"]
    assert f"127.0.0.1:{server.port}" in str(refused.value)
    assert f"localhost:{server.port}" in str(refused.value)
    key = cache_key(site_id, "where")
    assert await tab.evaluate(f"[localStorage.getItem({key!r}), window.__ranHere]") == [None, None]


async def test_without_a_tab_an_open_tab_embedding_the_site_is_found(
    page: ego.Tab, browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    site, site_id = embedded_site(tmp_path, browser, server)
    before = {tab.target_id for tab in await browser.tabs()}
    assert await site.run_browser_tool(site_id, "where", {}) == f"localhost:{server.port}"
    assert {tab.target_id for tab in await browser.tabs()} == before  # no tab opened
    cross = await page.frame(name="cross")
    assert await cross.evaluate("window.__ranHere") == 1


@pytest.mark.chrome  # each command launches a Chrome of its own
async def test_ego_run_runs_in_the_frame_of_its_site_and_refuses_another_sites_page(
    server: PageServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    site_id = write_embedded_site(workspace / "learnings", server)
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    embedding = real_page(server, "cli-embedded")
    ran = await ego_async(
        "run", site_id, "where", "--url", embedding, "--new-browser", "--json", env=env
    )
    assert ran.returncode == 0, ran
    assert ran.json() == f"localhost:{server.port}"
    plain = server.route("/real/cli-plain", "<title>Plain</title><p>no frames</p>")
    refused = await ego_async(
        "run", site_id, "where", "--url", plain, "--new-browser", "--json", env=env
    )
    assert refused.returncode == 3, refused
    error = json.loads(refused.error_line())
    assert error["type"] == "SiteMismatchError"
    assert f"127.0.0.1:{server.port}" in error["error"]
    assert f"localhost:{server.port}" in error["error"]


async def test_a_new_document_drops_the_old_documents_frames(
    page: ego.Tab, server: PageServer
) -> None:
    old = await page.frame(name="cross")
    await page.navigate(real_page(server, page_tag(page) + "-next"))
    new = await page.frame(name="cross", timeout=10)
    assert new is not old
    assert old.detached
    assert await new.evaluate("location.pathname") == f"/real/{page_tag(page)}/cross"
    assert [frame.name for frame in await page.frames()].count("cross") == 1


async def test_downloads_stay_in_egos_folder_after_another_client_left(
    ported_tab: ego.Tab, ported_browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    await ported_tab.navigate(real_page(server, "left"))
    # Another client sets its own folder; when it leaves, Chrome goes back to its default.
    async with ego.connect(ported_browser.endpoint or "", downloads=tmp_path / "other"):
        pass
    async with ported_tab.expect_download() as saved:
        await ported_tab.click("#dl")
    assert saved.path is not None
    assert saved.path.parent == ported_browser.downloads_folder
