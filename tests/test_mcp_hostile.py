"""``ego mcp`` against a hostile page and a careless agent, as a red team tries it: through the
MCP SDK's client, with a second served origin that logs every request it gets.

Each check of the red-team run that got through is here: speculation rules (prefetch and
prerender) bringing in a refused origin's document, origin patterns that never matched
(IPv6, IPv4 spellings, wildcards in an address), ``javascript:`` URLs and form posts sent
again under ``--read-only``, a link planted between a path's check and its write, paths that
froze the server or failed without a reason, an alert loop holding the agent, results with no
bound, files that were not private, and a renderer without a memory limit.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from mcp.client.client import Client
from mcp.types import CallToolResult

import ego
from ego.errors import FileAccessError
from ego.learning.catalog.registry import Learnings
from ego.mcp.files import MAX_DEPTH, MAX_NAME_BYTES, MAX_PATH_CHARS
from ego.mcp.files import bounded as bounded_path
from ego.mcp.holder import BrowserHolder
from ego.mcp.limits import ServerLimits
from ego.mcp.results import MAX_RESULT_CHARS, bounded, tool_result
from ego.mcp.server import build_server
from ego.mcp.wording import MAX_ERROR_CHARS
from ego.page.browser import Browser
from ego.protocol.chrome import LaunchOptions
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.mcp_client import McpClient, refused, start, text_of, value_of
from tests.helpers.page_server import PageServer, Site
from tests.helpers.processes import is_chrome, process_tree

# Tests whose MCP server launches Chrome are marked one by one; the servers that refuse
# their options before anything starts need none.
chrome = pytest.mark.chrome


@pytest.fixture(scope="module")
def hostile() -> Iterator[Site]:
    site = Site()
    yield site
    site.close()


async def _server(
    tmp_path_factory: pytest.TempPathFactory, name: str, *args: str
) -> AsyncIterator[tuple[McpClient, Path]]:
    client, output = await start(tmp_path_factory, name, *args)
    try:
        yield client, output
    finally:
        if client.running:
            await client.close()


@pytest.fixture(scope="module")
async def allowing(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> AsyncIterator[tuple[McpClient, Path]]:
    """A server that allows only the test page server's origin."""
    async for served in _server(
        tmp_path_factory, "hostile-allow", "--allowed-origins", f"127.0.0.1:{server.port}"
    ):
        yield served


@pytest.fixture(scope="module")
async def blocking(
    tmp_path_factory: pytest.TempPathFactory, hostile: Site
) -> AsyncIterator[tuple[McpClient, Path]]:
    """A server that blocks the hostile origin, spelled both ways it can be reached."""
    async for served in _server(
        tmp_path_factory,
        "hostile-block",
        "--blocked-origins",
        f"localhost:{hostile.port},127.0.0.1:{hostile.port}",
    ):
        yield served


def _note(result: CallToolResult) -> str:
    return str((result.structured_content or {}).get("notice", ""))


# -- speculation rules ---------------------------------------------------------------------


def _speculating_page(server: PageServer, tag: str, kind: str, target: str) -> str:
    if kind == "link":
        asks = f'<link rel="prerender" href="{target}"><link rel="prefetch" href="{target}">'
    else:
        rules = json.dumps({kind: [{"source": "list", "urls": [target]}]})
        asks = f"<script type=speculationrules>{rules}</script>"
    return server.route(
        f"/hostile/{tag}",
        f'<title>Speculating</title>{asks}<a id="go" href="{target}">go</a>',
    )


@chrome
@pytest.mark.parametrize("kind", ["prerender", "prefetch", "link"])
@pytest.mark.parametrize("site", ["cross-site", "same-site"])
@pytest.mark.parametrize("limit", ["allowed", "blocked"])
async def test_speculation_rules_bring_in_no_document_of_a_refused_origin(
    allowing: tuple[McpClient, Path],
    blocking: tuple[McpClient, Path],
    server: PageServer,
    hostile: Site,
    kind: str,
    site: str,
    limit: str,
) -> None:
    client, _ = allowing if limit == "allowed" else blocking
    host = "localhost" if site == "cross-site" else "127.0.0.1"
    target = f"http://{host}:{hostile.port}/{kind}-{site}-{limit}.html"
    before = len(hostile.requests)
    page = _speculating_page(server, f"{kind}-{site}-{limit}", kind, target)
    value_of(await client.call("navigate", {"url": page}))
    # Any preloading started when the rules were read; the navigation to the URL would now
    # use what it fetched. The agent follows the link (a click), or the page's script does.
    if kind != "prefetch":
        value_of(await client.call("click", {"selector": "#go"}))
    else:
        value_of(await client.call("evaluate", {"expression": f"location.href = {target!r}; 0"}))
    value_of(await client.call("wait_for", {"text": "blocked"}))  # Chrome's page, not B's
    body = value_of(await client.call("evaluate", {"expression": "document.body.innerText"}))
    assert "evil document" not in body
    title = value_of(await client.call("evaluate", {"expression": "document.title"}))
    assert title != "EVIL"
    # No request at all: neither a document nor the subresource <link rel=prefetch> asks for.
    assert hostile.requests[before:] == []


@chrome
async def test_a_browser_that_preloads_is_said_to_when_attached(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    # A Chrome ego did not set up: preloading on, as in a person's own browser.
    owner = await Browser.launch_with(LaunchOptions(port=0, preload_pages=True))
    try:
        assert owner.endpoint is not None
        async with ego.connect(owner.endpoint, allowed_origins=[f"127.0.0.1:{server.port}"]) as b:
            await b.new_tab(server.route("/hostile/preloads", "<p>a page</p>"))
            assert b.preloads_pages
        client, _ = await start(
            tmp_path_factory,
            "hostile-preloads",
            "--endpoint",
            owner.endpoint,
            "--allowed-origins",
            f"127.0.0.1:{server.port}",
        )
        try:
            first = await client.call("navigate", {"url": server.url("/hostile/preloads")})
            second = await client.call("list_tabs")
            notes = _note(first) + _note(second)
            assert "preloads pages" in notes
            assert notes.count("preloads pages") == 1  # said once
        finally:
            await client.close()
    finally:
        await owner.close()
    # A Chrome ego starts does not preload: the limits hold there.
    async with ego.launch(allowed_origins=[f"127.0.0.1:{server.port}"]) as own:
        await own.new_tab(server.url("/hostile/preloads"))
        assert not own.preloads_pages


# -- origin patterns -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("127.0.0.*", "stands alone"),
        ("*127.0.0.2", "stands alone"),
        ("*.127.0.0.1", "no subdomains"),
        ("[::1", "never closes"),
        ("http://[::1]:99999", "not a port"),
        ("user@127.0.0.1", "user info"),
        (",", "names no origin pattern"),
    ],
)
async def test_a_pattern_that_would_never_match_stops_the_server_at_start(
    tmp_path: Path, pattern: str, why: str
) -> None:
    result = await ego_async(
        "mcp", "--blocked-origins", pattern, env=ego_env(tmp_path / "profiles"), cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert why in result.stderr, result.stderr
    if pattern != ",":
        assert repr(pattern) in result.stderr  # named as the operator wrote it
    assert "Traceback" not in result.stderr


@chrome
async def test_ipv6_and_ipv4_patterns_hold_in_the_browser(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    six, two = Site("::1"), Site("127.0.0.2")
    try:
        client, _ = await start(
            tmp_path_factory, "hostile-addresses", "--blocked-origins", "::1,127.0.0.2"
        )
        try:
            refused(await client.call("navigate", {"url": six.url()}), "blocked (::1)")
            refused(await client.call("navigate", {"url": two.url()}), "blocked (127.0.0.2)")
            decimal = f"http://2130706434:{two.port}/evil.html"  # 127.0.0.2 as one number
            refused(await client.call("navigate", {"url": decimal}), "blocked (127.0.0.2)")
            framing = server.route(
                "/hostile/framing",
                f'<iframe name="six" src="{six.url("/six")}"></iframe>'
                f'<iframe name="two" src="{two.url("/two")}"></iframe>',
            )
            value_of(await client.call("navigate", {"url": framing}))
            outline = text_of(await client.call("take_snapshot"))
            assert "evil document" not in outline
            assert six.documents() == []
            assert two.documents() == []
        finally:
            await client.close()
        allowed = f"http://[::1]:{six.port}"
        client, _ = await start(tmp_path_factory, "hostile-six", "--allowed-origins", allowed)
        try:
            six.pages["/ok"] = b"<title>Six</title><p>six</p>"
            assert (
                value_of(await client.call("navigate", {"url": six.url("/ok")}))["title"] == "Six"
            )
            other = Site("::1")
            try:
                text = refused(await client.call("navigate", {"url": other.url()}))
                assert f"not among the allowed origins ({allowed})" in text
                assert other.documents() == []
            finally:
                other.close()
        finally:
            await client.close()
    finally:
        six.close()
        two.close()


# -- read-only -----------------------------------------------------------------------------


def _post_count(server: PageServer, path: str) -> int:
    return sum(1 for method, where, _, _ in server.requests if method == "POST" and where == path)


def _posting_page(server: PageServer, tag: str) -> tuple[str, str]:
    """A page whose own script sends a form (a POST), and the path the form goes to."""
    done = f"/hostile/{tag}/done"
    server.route(done, f"<title>Posted {tag}</title><p>the answer to a form</p>")
    page = server.route(
        f"/hostile/{tag}/form",
        f'<form method="post" action="{done}"><input name="q" value="1"></form>'
        "<script>onload = () => document.forms[0].submit()</script>",
    )
    return page, done


@chrome
async def test_read_only_runs_no_script_url_and_sends_no_form_again(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    client, _ = await start(tmp_path_factory, "hostile-read-only", "--read-only")
    try:
        page = server.route("/hostile/ro", "<title>Before</title><p>text</p>")
        value_of(await client.call("navigate", {"url": page}))
        refused(
            await client.call("navigate", {"url": "javascript:document.title='JS-RAN';void 0"}),
            "OriginBlockedError",
            "javascript: URLs run script",
        )
        refused(
            await client.call("navigate", {"url": "data:text/html,<script>alert(1)</script>"}),
            "data: URLs run script",
        )
        tabs = value_of(await client.call("list_tabs"))
        assert [tab["title"] for tab in tabs] == ["Before"]  # nothing ran

        form, done = _posting_page(server, "ro")
        value_of(await client.call("navigate", {"url": form}))
        value_of(await client.call("wait_for", {"text": "the answer to a form"}))
        assert _post_count(server, done) == 1
        refused(await client.call("reload"), "ResendRefusedError", "POST", "send it again")
        refused(await client.call("reload", {"resend": True}), "read-only")
        # Away and back: Chrome shows the page again (or says it would need to send the form),
        # and still no reload sends it.
        value_of(await client.call("navigate", {"url": page}))
        value_of(await client.call("navigate_back"))
        refused(await client.call("reload"), "ResendRefusedError")
        assert _post_count(server, done) == 1
    finally:
        await client.close()


@chrome
async def test_a_form_is_sent_again_only_when_the_agent_says_so(
    allowing: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = allowing
    form, done = _posting_page(server, "rw")
    value_of(await client.call("navigate", {"url": form}))
    value_of(await client.call("wait_for", {"text": "the answer to a form"}))
    refused(await client.call("reload"), "resend")
    assert _post_count(server, done) == 1
    value_of(await client.call("reload", {"resend": True}))
    assert _post_count(server, done) == 2


# -- files -----------------------------------------------------------------------------------


@chrome
async def test_every_path_problem_is_one_line_the_client_gets(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    sysfs = Path("/sys")  # writing there is refused even to root (EACCES)
    client, output = await start(tmp_path_factory, "hostile-paths", roots=[sysfs])
    try:
        value_of(await client.call("navigate", {"url": server.route("/hostile/p", "<p>p</p>")}))
        output.mkdir(parents=True, exist_ok=True)
        (output / "plain.txt").write_text("a file, not a folder")
        cases = [
            ("take_screenshot", {"path": "d/" * 2000 + "x.png"}, "folders deep"),
            ("take_screenshot", {"path": "x" * 5000}, "characters long"),
            ("take_screenshot", {"path": "a" * 300 + ".png"}, "bytes"),
            ("take_screenshot", {"path": "x\x00.png"}, "NUL"),
            ("save_pdf", {"path": "x\x00.pdf"}, "NUL"),
            ("upload_file", {"selector": "input", "paths": ["x\x00.txt"]}, "NUL"),
            ("take_screenshot", {"path": "plain.txt/x.png"}, "is a file"),
            ("save_pdf", {"path": "/sys/ego-x.pdf"}, "no permission"),
        ]
        for tool, arguments, why in cases:
            text = refused(await client.call(tool, arguments), "FileAccessError", why)
            assert len(text) < 1000, text
        # The server answers at once after each, and said little on stderr.
        assert isinstance(value_of(await client.call("list_tabs")), list)
        log = client.errlog.read_text(errors="replace")
        assert "Traceback" not in log
        assert len(log.splitlines()) < 20, log[:2000]
    finally:
        await client.close()


@pytest.fixture
async def in_process(tmp_path: Path) -> AsyncIterator[tuple[Client, BrowserHolder, Path]]:
    """An ``ego mcp`` server in this process (so that a test reaches its FileAccess) and the
    SDK's client connected to it in memory. A task of its own owns the client, whose cancel
    scopes must open and close in one task."""
    output = tmp_path / "out"
    holder = BrowserHolder(
        endpoint=None,
        profile=None,
        headless=True,
        learnings=Learnings(),
        limits=ServerLimits(output_dir=output),
    )
    server = build_server(holder)
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def own() -> None:
        async with Client(server._sdk) as client:
            ready.set_result(client)
            await stop.wait()

    owner = asyncio.create_task(own())
    try:
        done, _ = await asyncio.wait({ready, owner}, timeout=30, return_when="FIRST_COMPLETED")
        if owner in done:
            owner.result()  # raises what went wrong
        yield await asyncio.wait_for(ready, 1), holder, output
    finally:
        stop.set()
        await asyncio.wait_for(owner, 30)
        await holder.close()


@chrome
async def test_a_link_planted_after_the_check_never_redirects_a_write(
    in_process: tuple[Client, BrowserHolder, Path], server: PageServer, tmp_path: Path
) -> None:
    client, holder, output = in_process
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me")
    page = server.route("/hostile/links", '<p>links</p><input id="f" type="file">')
    assert not (await client.call_tool("navigate", {"url": page})).is_error

    def plant(make: Any) -> None:
        def hook(path: Path) -> None:
            holder.files.on_checked = None
            make(path)

        holder.files.on_checked = hook

    # A folder of the path turned into a link to elsewhere.
    plant(lambda path: path.parent.symlink_to(outside, target_is_directory=True))
    result = await client.call_tool("take_screenshot", {"path": "sub/shot.png"})
    assert result.is_error
    assert "FileAccessError" in text_of(result), text_of(result)
    assert sorted(item.name for item in outside.iterdir()) == ["victim.txt"]
    # A link where the new file goes.
    for tool, name in (("take_screenshot", "new.png"), ("save_pdf", "new.pdf")):
        plant(lambda path: path.symlink_to(victim))
        result = await client.call_tool(tool, {"path": name})
        assert result.is_error
        assert "never overwritten" in text_of(result), text_of(result)
        assert victim.read_text() == "keep me"
        assert (output / name).is_symlink()
    # A link in place of a file this server wrote before.
    assert not (await client.call_tool("take_screenshot", {"path": "mine.png"})).is_error

    def swap(path: Path) -> None:
        path.unlink()
        path.symlink_to(victim)

    plant(swap)
    result = await client.call_tool("take_screenshot", {"path": "mine.png"})
    assert result.is_error
    assert "FileAccessError" in text_of(result), text_of(result)
    assert victim.read_text() == "keep me"
    # An upload swapped for a link to a file outside: Chrome never gets that file.
    (output / "upload.txt").write_text("to upload")
    plant(swap)
    result = await client.call_tool("upload_file", {"selector": "#f", "paths": ["upload.txt"]})
    assert result.is_error
    assert "FileAccessError" in text_of(result), text_of(result)
    count = await client.call_tool(
        "evaluate", {"expression": "document.querySelector('#f').files.length"}
    )
    assert value_of(count) == 0
    # Unhindered, the upload is a private copy of the file.
    (output / "again.txt").write_text("again")
    assert not (
        await client.call_tool("upload_file", {"selector": "#f", "paths": ["again.txt"]})
    ).is_error
    name = await client.call_tool(
        "evaluate", {"expression": "document.querySelector('#f').files[0].name"}
    )
    assert value_of(name) == "again.txt"


@chrome
async def test_any_other_exception_is_one_bounded_line_and_a_short_log(
    in_process: tuple[Client, BrowserHolder, Path], caplog: pytest.LogCaptureFixture
) -> None:
    client, holder, _ = in_process

    def deep(depth: int) -> None:
        deep(depth + 1)

    async def crash() -> Any:
        deep(0)  # a RecursionError, whose traceback is thousands of lines

    async def huge() -> Any:
        raise RuntimeError("line\n" * 100_000)

    for failing, kind in ((crash, "RecursionError"), (huge, "RuntimeError")):
        holder.browser = failing  # type: ignore[method-assign]
        caplog.clear()
        result = await client.call_tool("list_tabs", {})
        text = text_of(result)
        assert result.is_error
        assert kind in text, text
        assert "\n" not in text
        assert len(text) <= MAX_ERROR_CHARS
        logged = [record for record in caplog.records if record.name == "ego.mcp"]
        assert len(logged) == 1
        assert logged[0].exc_info is None
        assert len(logged[0].getMessage()) < 400


# -- dialogs ---------------------------------------------------------------------------------


@chrome
async def test_a_dialog_loop_cannot_hold_the_agent(
    allowing: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = allowing
    loop = server.route(
        "/hostile/alerts",
        "<title>Loop</title><button id=loop onclick=\"for (;;) alert('again')\">loop</button>",
    )
    value_of(await client.call("navigate", {"url": loop}))
    clicked = value_of(await client.call("click", {"selector": "#loop"}))
    assert clicked["dialog"]["message"] == "again"  # the first, under --dialogs manual
    notes = []
    for answered in range(1, 6):
        # Each answer opens the next: a page tool fails the moment one is open.
        result = await client.call("handle_dialog", {"accept": True})
        value_of(result)
        if answered < 5:
            refused(
                await client.call("wait_for", {"text": "never shown", "timeout": 30}),
                "DialogOpenError",
            )
        else:
            notes.append(_note(result))  # the sixth may have opened already
    # The sixth and the rest ego answers itself, and says so once.
    for _ in range(50):  # calls, not sleeps: each returns at once
        if notes[-1]:
            break
        notes.append(_note(await client.call("list_tabs")))
    assert "opened more than 5 dialogs" in notes[-1], notes
    assert "dialogs='auto'" in notes[-1]
    assert "opened more than" not in _note(await client.call("list_tabs"))  # said once
    calm = server.route(
        "/hostile/calm",
        "<title>Calm</title><button id=ask onclick=\"alert('one')\">ask</button>",
    )
    assert value_of(await client.call("navigate", {"url": calm}))["title"] == "Calm"
    assert "opened more than" not in _note(await client.call("list_tabs"))
    # Another page's dialog is the agent's to answer again.
    clicked = value_of(await client.call("click", {"selector": "#ask"}))
    assert clicked["dialog"]["message"] == "one"
    value_of(await client.call("handle_dialog", {"accept": True}))


# -- results ---------------------------------------------------------------------------------


def _size(result: CallToolResult) -> int:
    return len(text_of(result)) + len(json.dumps(result.structured_content or {}))


def _body(result: CallToolResult) -> str:
    """The value's part of a cut result's text (its last line says what was cut)."""
    text = text_of(result)
    assert text.splitlines()[-1].startswith("… "), text[-300:]
    return text.rsplit("\n", 1)[0]


@chrome
async def test_every_result_is_bounded_and_says_how_to_get_the_rest(
    allowing: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _output = allowing
    value_of(await client.call("navigate", {"url": server.route("/hostile/r", "<p>r</p>")}))
    # A 20 MiB string: cut, said once (not again in the structured content).
    big = await client.call("evaluate", {"expression": "'x'.repeat(20 * 1024 * 1024)"})
    assert not big.is_error
    assert _size(big) <= MAX_RESULT_CHARS
    assert set(big.structured_content or {}) == {"cut"}
    assert ".slice(" in text_of(big).splitlines()[-1]
    # Within the bound but twice over it: whole in the text, once.
    mid = await client.call("evaluate", {"expression": "'y'.repeat(60000)"})
    assert "y" * 60000 in text_of(mid)
    assert set(mid.structured_content or {}) == {"cut"}
    # Fifty one-megabyte console messages.
    value_of(
        await client.call(
            "evaluate",
            {
                "expression": "for (let i = 0; i < 50; i++) "
                "console.log(String(i).padEnd(1 << 20, 'z')); 0"
            },
        )
    )
    logs = await client.call("list_console_messages")
    assert _size(logs) <= MAX_RESULT_CHARS
    messages = json.loads(_body(logs))
    assert messages
    assert all(len(message["text"]) < 20_000 for message in messages)
    # A thrown error with a huge message: one bounded line.
    thrown = await client.call("evaluate", {"expression": "throw new Error('E'.repeat(1e6))"})
    assert thrown.is_error
    assert len(text_of(thrown)) <= MAX_ERROR_CHARS + 100


@chrome
async def test_a_long_snapshot_is_cut_where_the_next_offset_starts(
    allowing: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = allowing
    rows = "".join(f"<p>Row {n} {'words ' * 40}</p>" for n in range(1000))
    value_of(await client.call("navigate", {"url": server.route("/hostile/long", rows)}))
    first = await client.call("take_snapshot", {"max_lines": 5000})
    assert _size(first) <= MAX_RESULT_CHARS
    shown = _body(first).splitlines()
    last = int(shown[-1].split("Row ")[1].split()[0])
    hint = text_of(first).splitlines()[-1]
    offset = int(hint.split("offset: ")[1].split()[0])
    following = text_of(await client.call("take_snapshot", {"offset": offset, "max_lines": 3}))
    assert f"Row {last + 1} " in following.splitlines()[1]


@chrome
async def test_a_big_response_body_is_cut_or_saved_whole(
    allowing: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _output = allowing
    body = "b" * (2 * 1024 * 1024)
    server.route("/hostile/big.txt", body, content_type="text/plain")
    page = server.route(
        "/hostile/fetches", "<script>fetch('/hostile/big.txt').then(r => r.text())</script>"
    )
    value_of(await client.call("navigate", {"url": page}))
    value_of(await client.call("wait_for", {"network_idle": True}))
    listed = value_of(await client.call("list_network_requests"))
    [request] = [item for item in listed if item["url"].endswith("/big.txt")]
    cut = await client.call("get_network_request", {"id": request["id"]})
    assert _size(cut) <= MAX_RESULT_CHARS
    assert "path" in text_of(cut).splitlines()[-1]
    saved = value_of(
        await client.call("get_network_request", {"id": request["id"], "path": "big.txt"})
    )
    assert Path(saved["path"]).read_text() == body
    assert saved["bytes"] == len(body)


# -- files are private; the server's own folder goes with it ----------------------------------


@chrome
async def test_the_servers_own_folder_is_private_and_goes_unless_it_holds_files(
    tmp_path: Path, server: PageServer
) -> None:
    server.route(
        "/hostile/private.csv",
        "a,b\n1,2\n",
        content_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="private.csv"'},
    )
    page = server.route(
        "/hostile/private", '<p>private</p><a id="dl" href="/hostile/private.csv">get</a>'
    )
    for keep in (False, True):
        base = tmp_path / f"keep-{keep}"
        base.mkdir()
        env = ego_env(base / "profiles")
        client = McpClient(env, base, base / "server-stderr.log")  # no --output-dir
        await client.start()
        try:
            assert client.server is not None
            folder = base / "profiles" / ".ego-state" / "mcp" / f"server-{client.server.pid}"
            value_of(await client.call("navigate", {"url": page}))
            if keep:
                saved = value_of(await client.call("take_screenshot", {"path": "shot.png"}))
                assert Path(saved["path"]).parent == folder.resolve()
                assert stat.S_IMODE(os.stat(saved["path"]).st_mode) == 0o600
                clicked = value_of(await client.call("click", {"selector": "#dl"}))
                [download] = clicked["downloads"]
                assert stat.S_IMODE(os.stat(download["path"]).st_mode) == 0o600
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700
            assert stat.S_IMODE((folder / "downloads").stat().st_mode) == 0o700
        finally:
            await client.close()
        assert client.server is not None
        await _exited(client.server)
        log = client.errlog.read_text(errors="replace")
        if keep:
            assert (folder / "shot.png").is_file()
            assert (
                log.count(
                    f"kept 2 files its tools saved (screenshots, PDFs, downloads) in {folder}"
                )
                == 1
            )
        else:
            assert not folder.exists()
            assert "kept" not in log


async def _exited(process: psutil.Process) -> None:
    from tests.helpers.processes import wait_gone

    assert await wait_gone([process], 30) == []


# -- memory ----------------------------------------------------------------------------------


@chrome
async def test_the_operator_caps_a_renderers_javascript_memory(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    client, _ = await start(tmp_path_factory, "hostile-memory", "--max-js-heap", "64")
    try:
        value_of(await client.call("navigate", {"url": server.route("/hostile/m", "<p>m</p>")}))
        assert client.server is not None
        flags = [
            " ".join(process.cmdline())
            for process in process_tree(client.server)
            if is_chrome(process)
        ]
        assert any("--js-flags=--max-old-space-size=64" in cmdline for cmdline in flags)
        # The sandbox is off only where Chrome refuses it: as root (docs/mcp.md says so).
        started = [cmdline for cmdline in flags if "--remote-debugging-pipe" in cmdline]
        assert started
        assert all(("--no-sandbox" in cmdline) == (os.geteuid() == 0) for cmdline in started)
        hog = "const kept = []; for (;;) kept.push(new Array(1e6).fill(1.5))"
        refused(await client.call("evaluate", {"expression": hog, "timeout": 60}), "crash")
        value_of(await client.call("reload"))
        assert value_of(await client.call("evaluate", {"expression": "1 + 1"})) == 2
    finally:
        await client.close()


async def test_the_memory_cap_is_refused_for_a_browser_it_would_attach_to(tmp_path: Path) -> None:
    result = await ego_async(
        "mcp",
        "--max-js-heap",
        "64",
        "--endpoint",
        "http://127.0.0.1:9",
        env=ego_env(tmp_path / "profiles"),
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "--max-js-heap applies to a Chrome this server starts" in result.stderr


# -- who can drive the browser ----------------------------------------------------------------


@chrome
async def test_the_pipe_keeps_out_other_users_not_the_servers_own(
    allowing: tuple[McpClient, Path],
) -> None:
    client, _ = allowing
    before = {tab["id"] for tab in value_of(await client.call("list_tabs"))}
    assert client.server is not None
    # The pipe Chrome reads CDP from (its descriptor 3), and the server's end of it.
    reads = {
        _link(Path(f"/proc/{process.pid}/fd/3"))
        for process in process_tree(client.server)
        if is_chrome(process) and "--remote-debugging-pipe" in " ".join(process.cmdline())
    }
    fds = Path(f"/proc/{client.server.pid}/fd")
    [end] = [fd for fd in fds.iterdir() if _link(fd).startswith("pipe:") and _link(fd) in reads]
    if os.geteuid() == 0:
        # Another user cannot open the server's end of the pipe...
        other = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            'exec 3>"$0"',
            str(end_path := end),
            user=65534,
            cwd="/",
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(other.communicate(), 30)
        assert other.returncode != 0
        assert b"Permission denied" in err, (end_path, err)
    # ... while a process of the same user (here this test) can, and drives the browser.
    handle = os.open(end, os.O_WRONLY)
    try:
        command = {
            "id": 987654321,
            "method": "Target.createTarget",
            "params": {"url": "about:blank"},
        }
        os.write(handle, json.dumps(command).encode() + b"\0")
    finally:
        os.close(handle)
    after = {tab["id"] for tab in value_of(await client.call("list_tabs"))}
    [opened] = after - before
    value_of(await client.call("close_tab", {"id": opened}))


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


# -- the bounds themselves (no browser) -------------------------------------------------------


def test_a_result_over_the_bound_carries_its_value_once_cut() -> None:
    rows = [{"text": "z" * (1 << 20), "n": n} for n in range(50)]
    result = bounded("list_console_messages", {}, tool_result(rows))
    assert _size(result) <= MAX_RESULT_CHARS
    assert set(result.structured_content or {}) == {"cut"}
    shown = json.loads(_body(result))
    assert [row["n"] for row in shown] == list(range(len(shown)))
    assert "level" in text_of(result).splitlines()[-1]
    small = tool_result({"a": 1})
    assert bounded("list_tabs", {}, small) is small
    lines = "\n".join(f"line {n} " + "w" * 100 for n in range(5000))
    outline = bounded("take_snapshot", {"offset": 10}, tool_result(lines))
    kept = _body(outline).splitlines()
    assert f"offset: {10 + len(kept) - 1} " in text_of(outline).splitlines()[-1]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("x\x00y", "NUL"),
        ("x" * (MAX_PATH_CHARS + 1), "characters long"),
        ("d/" * (MAX_DEPTH + 1), "folders deep"),
        ("n" * (MAX_NAME_BYTES + 1), "bytes"),
        ("é" * 128, "bytes"),  # 256 bytes in UTF-8
    ],
)
def test_a_path_is_bounded_before_any_system_call(
    path: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_system_call(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a system call was made")

    for name in ("stat", "lstat", "open", "mkdir", "readlink"):
        monkeypatch.setattr(os, name, no_system_call)
    with pytest.raises(FileAccessError, match=why) as raised:
        bounded_path(path, "the path")
    assert "\n" not in str(raised.value)
