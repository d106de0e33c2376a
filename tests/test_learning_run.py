"""Loading and running tools: source shapes, JS errors, tab selection, Python tools, returns."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.errors import (
    BrowserToolError,
    ConfirmationRequiredError,
    JavaScriptError,
    NoTabError,
    ReturnsMismatchError,
    SiteMismatchError,
    ToolLoadError,
)
from ego.learning.catalog.registry import WORKSPACE_ENV, Learnings
from ego.learning.catalog.tool_source import normalize_source, source_url
from ego.runtime.js import wrap
from ego.site import Site
from tests.helpers.learnings import ECHO, WHERE, CdpSpy, make_site, tool
from tests.helpers.page_server import PageServer

PAGE = """<!doctype html><title>Items</title>
<ul id="items"><li class="item">apple</li><li class="item">pear</li><li class="item">fig</li></ul>
"""

BARE = """async function (args) {
  const items = [...document.querySelectorAll(args.selector)];
  return {shape: 'bare', texts: items.map((li) => li.textContent)};
}
"""

ARROW = """async ({selector}) => {
  const n = document.querySelectorAll(selector).length;
  return {shape: 'arrow', count: n};
}
"""

ARROW_EXPRESSION = "(args) => ({shape: 'arrow-expression', title: document.title, args})\n"

MODULE = """// A module with a helper above its default export.
const PREFIX = 'item:';
export function texts(selector) {
  return [...document.querySelectorAll(selector)].map((li) => PREFIX + li.textContent);
}

export default async function listItems(args) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  return {shape: 'module', texts: texts(args.selector)};
}
"""

SELECTOR_ARGS = {"selector": {"type": "string", "required": True}}

THROW_BARE = "async function (args) {\n  const a = 1;\n  throw new Error('bare boom');\n}\n"
THROW_ARROW = "async (args) => {\n  const a = 1;\n  throw new RangeError('arrow boom');\n}\n"
THROW_MODULE = """function fail(message) {
  const a = 1;
  throw new TypeError(message);
}

export default async function run(args) {
  fail('module boom');
}
"""
THROW_MODULE_LATE = """const helper = () => 1;

export default async function run(args) {
  helper();
  await 0;
  null.boom;
}
"""


@pytest.fixture(scope="module")
async def items_tab(browser: ego.Browser, server: PageServer) -> AsyncIterator[ego.Tab]:
    """One tab on the items page for the module."""
    tab = await browser.new_tab(server.route("/learning-run/items", PAGE))
    yield tab
    if not browser.closed:
        await tab.close()


@pytest.fixture
async def page(items_tab: ego.Tab) -> ego.Tab:
    await items_tab.evaluate("delete window.__posted; delete window.__calls")
    return items_tab


def _site(browser: ego.Browser, root: Path) -> Site:
    return Site(browser, Learnings(roots=[root]))


# --- source shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize("cache", [True, False])
async def test_all_source_shapes_run(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, cache: bool
) -> None:
    make_site(
        tmp_path,
        "shapes",
        domains=["127.0.0.1"],
        browser_tools={
            "bare": tool(BARE, args=SELECTOR_ARGS),
            "arrow": tool(ARROW, args=SELECTOR_ARGS),
            "arrow_expression": tool(ARROW_EXPRESSION, args={"n": {"type": "integer"}}),
            "module": tool(MODULE, args=SELECTOR_ARGS),
            "semicolon": tool("async function () { return 'ok'; };;\n\n"),
            "bom": tool("\ufeff(async () => 'bom ok')\n"),
        },
    )
    site = _site(browser, tmp_path)
    args = {"selector": "li.item"}

    async def run(name: str, run_args: dict[str, Any] | None = None) -> Any:
        return await site.run_browser_tool("shapes", name, run_args, tab=page, cache=cache)

    assert await run("bare", args) == {"shape": "bare", "texts": ["apple", "pear", "fig"]}
    assert await run("arrow", args) == {"shape": "arrow", "count": 3}
    assert await run("arrow_expression", {"n": 7}) == {
        "shape": "arrow-expression",
        "title": "Items",
        "args": {"n": 7},
    }
    assert await run("module", args) == {
        "shape": "module",
        "texts": ["item:apple", "item:pear", "item:fig"],
    }
    assert await run("semicolon") == "ok"
    assert await run("bom") == "bom ok"
    # run_tool dispatches browser tools too
    assert await site.run_tool("shapes", "arrow", args, tab=page) == {"shape": "arrow", "count": 3}
    # The module's helpers stay in the tool's scope.
    assert await page.evaluate("typeof texts + ' ' + typeof PREFIX + ' ' + typeof __ego_tool") == (
        "undefined undefined undefined"
    )


async def test_an_empty_tool_file_is_a_load_error(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    make_site(tmp_path, "shapes", domains=["127.0.0.1"], browser_tools={"empty": tool("  \n")})
    with pytest.raises(ToolLoadError, match=r"shapes/empty: cannot load .*empty\.js"):
        await _site(browser, tmp_path).run_browser_tool("shapes", "empty", tab=page)


def test_normalized_source_keeps_the_file_lines() -> None:
    for source in (THROW_BARE, THROW_ARROW, THROW_MODULE):
        expression = normalize_source(source)
        assert expression.endswith("\n")
        lines = expression.splitlines()
        assert "throw new" in lines[2]
        assert source.splitlines()[2].strip() in lines[2]
    code = wrap(normalize_source(THROW_BARE), {"a": 1}, url=source_url("s", "browser-tools/t.js"))
    assert code.startswith("(async () => { const __ego_tool = async function (args) {\n")
    assert code.splitlines()[2] == "  throw new Error('bare boom');"
    assert code.endswith("\n//# sourceURL=ego-learnings/s/browser-tools/t.js\n")
    assert '__ego_tool({"a":1})' in code


# --- JS errors name the tool file and line ----------------------------------------------------


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize(
    ("name", "source", "js_name", "js_message", "line"),
    [
        ("bare", THROW_BARE, "Error", "bare boom", 3),
        ("arrow", THROW_ARROW, "RangeError", "arrow boom", 3),
        ("module", THROW_MODULE, "TypeError", "module boom", 3),
        ("late", THROW_MODULE_LATE, "TypeError", "Cannot read properties of null", 6),
    ],
)
async def test_a_js_error_names_site_tool_file_and_line(
    tmp_path: Path,
    browser: ego.Browser,
    page: ego.Tab,
    cache: bool,
    name: str,
    source: str,
    js_name: str,
    js_message: str,
    line: int,
) -> None:
    site_dir = make_site(
        tmp_path, "errors", domains=["127.0.0.1"], browser_tools={name: tool(source)}
    )
    file = (site_dir / "browser-tools" / f"{name}.js").resolve()
    site = _site(browser, tmp_path)
    with pytest.raises(BrowserToolError) as info:
        await site.run_browser_tool("errors", name, tab=page, cache=cache)
    error = info.value
    assert isinstance(error, JavaScriptError)
    assert error.site_id == "errors"
    assert error.tool == name
    assert error.file == str(file)
    assert error.url == f"ego-learnings/errors/browser-tools/{name}.js"
    assert error.line == line
    assert error.column is not None
    assert error.name == js_name
    assert js_message in error.js_message
    assert f"ego-learnings/errors/browser-tools/{name}.js:{line}" in error.stack
    message = str(error)
    assert message.startswith(f"errors/{name} threw {js_name}: ")
    assert js_message in message
    assert message.endswith(f"({file}:{line})")


async def test_a_syntax_error_in_a_tool_is_a_browser_tool_error(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    make_site(
        tmp_path,
        "errors",
        domains=["127.0.0.1"],
        browser_tools={"broken": tool("async function (args) {\n  return {;\n}\n")},
    )
    with pytest.raises(BrowserToolError) as info:
        await _site(browser, tmp_path).run_browser_tool("errors", "broken", tab=page, cache=False)
    assert info.value.name == "SyntaxError"
    assert info.value.tool == "broken"
    assert "errors/broken threw SyntaxError" in str(info.value)


# --- Python-side tools ------------------------------------------------------------------------

SUMMARY_PY = """
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Summary:
    title: str
    count: int


async def run(ctx, args):
    title = await ctx.site.run_browser_tool(ctx.site_id, "get_title", tab=ctx.tab)
    counted = await ctx.site.run_browser_tool(
        ctx.site_id, "count_items", {"selector": args["selector"]}, tab=ctx.tab
    )
    summary = Summary(title, counted["count"])
    return {
        "title": summary.title,
        "count": summary.count,
        "site_id": ctx.site_id,
        "tool": ctx.tool,
        "tab": ctx.tab.target_id,
        "site": id(ctx.site),
        "browser": id(ctx.browser),
        "context": type(ctx).__name__,
    }
"""


def _python_site(root: Path) -> Path:
    return make_site(
        root,
        "py",
        domains=["127.0.0.1"],
        browser_tools={
            "get_title": tool("async () => document.title\n"),
            "count_items": tool(ARROW, args=SELECTOR_ARGS),
        },
        python_tools={
            "summary": tool(SUMMARY_PY, args=SELECTOR_ARGS),
            "sync_tool": tool("def run(ctx, args):\n    return ['sync', args]\n"),
            "syntax": tool("def run(ctx, args)\n    return 1\n"),
            "no_run": tool("RUN = 1\n"),
            "import_fails": tool("import ego_no_such_module_here\n"),
            "raises": tool("def run(ctx, args):\n    raise LookupError('from the tool')\n"),
        },
    )


async def test_a_python_tool_gets_a_context_and_calls_two_browser_tools(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    _python_site(tmp_path)
    site = _site(browser, tmp_path)
    spy = CdpSpy().install(monkeypatch)
    result = await site.run_tool("py", "summary", {"selector": "li.item"}, tab=page)
    monkeypatch.undo()
    assert result == {
        "title": "Items",
        "count": 3,
        "site_id": "py",
        "tool": "summary",
        "tab": page.target_id,
        "site": id(site),
        "browser": id(browser),
        "context": "ToolContext",
    }
    assert spy.methods.count("Runtime.evaluate") >= 2  # both browser tools ran in the page
    assert not any(name.startswith("ego_learnings.") for name in sys.modules)
    assert await site.run_tool("py", "sync_tool", {}, tab=page) == ["sync", {}]


@pytest.mark.parametrize(
    ("tool_name", "needle"),
    [
        ("syntax", "SyntaxError"),
        ("no_run", "defines no function run(ctx, args)"),
        ("import_fails", "ModuleNotFoundError"),
    ],
)
async def test_a_python_tool_that_cannot_load_is_a_tool_load_error(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, tool_name: str, needle: str
) -> None:
    site_dir = _python_site(tmp_path)
    with pytest.raises(ToolLoadError) as info:
        await _site(browser, tmp_path).run_tool("py", tool_name, tab=page)
    message = str(info.value)
    assert message.startswith(f"py/{tool_name}: ")
    assert str((site_dir / "tools" / f"{tool_name}.py").resolve()) in message
    assert needle in message


async def test_a_python_tool_exception_propagates_unchanged(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    _python_site(tmp_path)
    with pytest.raises(LookupError, match="from the tool"):
        await _site(browser, tmp_path).run_tool("py", "raises", tab=page)


async def test_an_edited_python_tool_is_reloaded(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_dir = _python_site(tmp_path)
    site = _site(browser, tmp_path)
    assert await site.run_tool("py", "sync_tool", tab=page) == ["sync", {}]
    (site_dir / "tools" / "sync_tool.py").write_text("def run(ctx, args):\n    return 'edited!'\n")
    assert await site.run_tool("py", "sync_tool", tab=page) == "edited!"


def test_a_python_tool_runs_its_source_never_a_cached_bytecode_file(tmp_path: Path) -> None:
    import importlib.util
    import os
    import py_compile

    site_dir = _python_site(tmp_path)
    file = site_dir / "tools" / "sync_tool.py"
    # Bytecode of other code, with a header that matches the real source's time and size: the
    # import system would take it for the source's own.
    real = file.read_text()
    other = real.replace("'sync'", "'pycs'")
    assert len(other) == len(real)
    file.write_text(other)
    cached = Path(importlib.util.cache_from_source(str(file)))
    py_compile.compile(str(file), cfile=str(cached), doraise=True)
    stat = file.stat()
    file.write_text(real)
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    learnings = Learnings(roots=[tmp_path])
    spec = learnings.find("py").require().python_tools["sync_tool"]
    assert learnings.python_callable("py", spec)(None, {}) == ["sync", {}]


# --- returns ----------------------------------------------------------------------------------

RETURNS = {
    "type": "object",
    "required": ["count"],
    "properties": {"count": {"type": "integer", "minimum": 0}},
}


async def test_results_are_checked_against_returns(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    make_site(
        tmp_path,
        "ret",
        domains=["127.0.0.1"],
        browser_tools={
            "good": tool("async () => ({count: 3})\n", returns=RETURNS),
            "bad": tool("async () => ({count: 'three'})\n", returns=RETURNS),
            "missing": tool("async () => ({total: 3})\n", returns=RETURNS),
            "never": tool("async () => 1\n", returns=False),
            "undeclared": tool("async () => 'anything'\n"),
        },
        python_tools={
            "py_good": tool("def run(ctx, args):\n    return {'count': 1}\n", returns=RETURNS),
            "py_bad": tool("def run(ctx, args):\n    return {'count': -1}\n", returns=RETURNS),
        },
    )
    site = _site(browser, tmp_path)
    assert await site.run_browser_tool("ret", "good", tab=page, check_returns=True) == {"count": 3}
    assert await site.run_tool("ret", "py_good", tab=page, check_returns=True) == {"count": 1}
    assert await site.run_browser_tool("ret", "undeclared", tab=page, check_returns=True) == (
        "anything"
    )
    for name, where in [("bad", "count"), ("missing", "(result)"), ("never", "(result)")]:
        with pytest.raises(ReturnsMismatchError) as info:
            await site.run_browser_tool("ret", name, tab=page, check_returns=True)
        assert f"ret/{name} returned data that does not match" in str(info.value)
        assert f"at {where}:" in str(info.value)
    with pytest.raises(ReturnsMismatchError, match=r"ret/py_bad .* at count: -1 is less than"):
        await site.run_tool("ret", "py_bad", tab=page, check_returns=True)
    # Unchecked, the result comes back as it is.
    assert await site.run_browser_tool("ret", "bad", tab=page) == {"count": "three"}
    assert await site.run_tool("ret", "py_bad", tab=page) == {"count": -1}


# --- side effects -----------------------------------------------------------------------------

POST = "async ({text}) => {\n  window.__posted = text;\n  return {posted: text};\n}\n"
WRITE = (
    "async () => {\n  window.__calls = (window.__calls || 0) + 1;\n  return window.__calls;\n}\n"
)


async def test_an_irreversible_tool_needs_confirm(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_site(
        tmp_path,
        "fx",
        domains=["127.0.0.1"],
        browser_tools={
            "post": tool(POST, sideEffect="irreversible", args={"text": {"type": "string"}}),
            "write": tool(WRITE, sideEffect="write"),
        },
        python_tools={
            "py_post": tool(
                "async def run(ctx, args):\n"
                "    return await ctx.site.run_browser_tool(\n"
                "        ctx.site_id, 'post', args, tab=ctx.tab, confirm=True\n    )\n",
                sideEffect="irreversible",
                args={"text": {"type": "string"}},
            )
        },
    )
    site = _site(browser, tmp_path)
    spy = CdpSpy().install(monkeypatch)
    for call, name in [
        (site.run_browser_tool, "post"),
        (site.run_tool, "post"),
        (site.run_tool, "py_post"),
    ]:
        with pytest.raises(ConfirmationRequiredError) as info:
            await call("fx", name, {"text": "hello"}, tab=page)
        assert f"fx/{name} is irreversible" in str(info.value)
        assert "confirm=True" in str(info.value)
    monkeypatch.undo()
    assert spy.methods == []
    assert await page.evaluate("window.__posted ?? null") is None

    assert await site.run_browser_tool("fx", "post", {"text": "hi"}, tab=page, confirm=True) == {
        "posted": "hi"
    }
    assert await page.evaluate("window.__posted") == "hi"
    assert await site.run_tool("fx", "py_post", {"text": "py"}, tab=page, confirm=True) == {
        "posted": "py"
    }
    assert await page.evaluate("window.__posted") == "py"
    # write and read tools need no confirmation
    assert await site.run_browser_tool("fx", "write", tab=page) == 1
    assert await site.run_browser_tool("fx", "write", tab=page) == 2


# --- tab selection, in a browser that resolves made-up host names to the test server ----------

HOSTS = "ego.test"


@pytest.fixture(scope="module")
async def named(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> AsyncIterator[tuple[ego.Browser, Path]]:
    """A browser of our own, launched with a workspace, where ``*.ego.test`` is the server."""
    workspace = tmp_path_factory.mktemp("workspace")
    server.route("/learning-run/a", "<title>A</title>")
    server.route("/learning-run/b", "<title>B</title>")
    server.route(
        "/learning-run/start",
        "<title>start</title><script>addEventListener('load', () => { window.__loaded = 1 })"
        "</script><img src='/learning-run/img'>",
    )
    server.route("/learning-run/img", b"GIF89a", content_type="image/gif")
    async with ego.launch(
        workspace=workspace, args=[f"--host-resolver-rules=MAP *.{HOSTS} 127.0.0.1"]
    ) as own:
        yield own, workspace


def _url(server: PageServer, host: str, path: str) -> str:
    return f"http://{host}.{HOSTS}:{server.port}{path}"


async def _hrefs(browser: ego.Browser) -> list[str]:
    return sorted(tab.url for tab in await browser.tabs())


async def test_launch_with_a_workspace_searches_it_first(
    named: tuple[ego.Browser, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    own, workspace = named
    assert isinstance(own.site, Site)
    assert own.site.browser is own
    assert own.site.learnings.roots[0] == workspace / "learnings"
    assert own.site.learnings.workspace_root == workspace / "learnings"
    # and from the environment when no workspace is given
    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    assert Site(own).learnings.roots[0] == workspace / "learnings"


async def test_tab_selection(named: tuple[ego.Browser, Path], server: PageServer) -> None:
    own, workspace = named
    root = workspace / "learnings"
    make_site(root, "sel", domains=[f"shop.{HOSTS}"], browser_tools={"where": tool(WHERE)})
    site = own.site
    url_a = _url(server, "shop", "/learning-run/a")
    url_b = _url(server, "other", "/learning-run/b")
    tab_b = await own.new_tab(url_b)
    tab_a = await own.new_tab(url_a)
    try:
        before = await _hrefs(own)
        # 1. the given tab, when it is on the site; a tab of another site is refused, naming
        # its host and the site's domains, before anything runs
        assert (await site.run_browser_tool("sel", "where", tab=tab_a))["href"] == url_a
        with pytest.raises(SiteMismatchError) as refused:
            await site.run_browser_tool("sel", "where", tab=tab_b)
        assert refused.value.domains == [f"shop.{HOSTS}"]
        assert refused.value.host.startswith(f"other.{HOSTS}")
        # 2. else an open tab whose host matches the site's domains
        assert (await site.run_browser_tool("sel", "where"))["href"] == url_a
        assert (await site.tab_for("sel")).target_id == tab_a.target_id
        assert await _hrefs(own) == before
    finally:
        await tab_a.close()
    # 3. nothing matches and no start URL: NoTabError, and no tab is opened
    before = await _hrefs(own)
    with pytest.raises(NoTabError) as info:
        await site.run_browser_tool("sel", "where")
    assert f"shop.{HOSTS}" in str(info.value)
    assert "'sel'" in str(info.value)
    assert "startUrl" in str(info.value)
    assert await _hrefs(own) == before
    await tab_b.close()


async def test_a_tab_is_opened_at_the_start_url(
    named: tuple[ego.Browser, Path], server: PageServer
) -> None:
    own, workspace = named
    root = workspace / "learnings"
    start = _url(server, "start", "/learning-run/start")
    make_site(
        root,
        "from-manifest",
        domains=[f"start.{HOSTS}"],
        start_url=start,
        browser_tools={"where": tool(WHERE)},
    )
    make_site(root, "from-setter", domains=[f"*.set.{HOSTS}"], browser_tools={"where": tool(WHERE)})
    site = own.site
    set_url = _url(server, "www.set", "/learning-run/start")
    site.set_start_url("from-setter", set_url)
    for site_id, url in [("from-manifest", start), ("from-setter", set_url)]:
        before = await own.tabs()
        result = await site.run_browser_tool(site_id, "where")
        after = await own.tabs()
        opened = [tab for tab in after if tab.target_id not in {t.target_id for t in before}]
        try:
            assert result == {"href": url, "ready": "complete"}
            assert len(opened) == 1
            assert opened[0].url == url
            assert await opened[0].evaluate("window.__loaded") == 1
            # the next call reuses the tab it opened
            assert (await site.run_browser_tool(site_id, "where"))["href"] == url
            assert len(await own.tabs()) == len(after)
        finally:
            for tab in opened:
                await tab.close()


async def test_a_python_tool_runs_in_a_tab_found_by_domain(
    named: tuple[ego.Browser, Path], server: PageServer
) -> None:
    own, workspace = named
    make_site(
        workspace / "learnings",
        "pysel",
        domains=[f"py.{HOSTS}:{server.port}"],
        browser_tools={"where": tool(WHERE)},
        python_tools={
            "both": tool(
                "async def run(ctx, args):\n"
                "    first = await ctx.site.run_browser_tool('pysel', 'where')\n"
                "    return [ctx.tab.url, first['href']]\n"
            )
        },
    )
    url = _url(server, "py", "/learning-run/a")
    tab = await own.new_tab(url)
    try:
        assert await own.site.run_tool("pysel", "both") == [url, url]
    finally:
        await tab.close()
    with pytest.raises(NoTabError):
        await own.site.run_tool("pysel", "both")


async def test_echo_through_launch(named: tuple[ego.Browser, Path], server: PageServer) -> None:
    own, workspace = named
    make_site(
        workspace / "learnings",
        "echo-ws",
        domains=[f"echo.{HOSTS}"],
        browser_tools={"echo": tool(ECHO)},
    )
    tab = await own.new_tab(_url(server, "echo", "/learning-run/a"))
    try:
        assert await own.site.run_browser_tool("echo-ws", "echo", {}) == {}
    finally:
        await tab.close()
