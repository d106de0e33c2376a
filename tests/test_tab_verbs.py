"""The tab's verbs beyond the six capabilities, on pages the test server serves: screenshot,
console, wait_for, press, hover, select, upload, back/forward and response bodies.

Nothing sleeps to synchronise: a test waits on a CDP event or on the verb under test, and
every wait is bounded.
"""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.page import waits
from ego.page.console import ConsoleLog, format_args
from ego.page.keys import key_event as _key_event
from ego.page.waits import url_matcher
from tests.helpers.page_server import PageServer

#: Turns a hang into a failure. Never a timing assertion: healthy calls end far sooner.
HANG = 15.0


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (after checking the signature)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_first_pixel(data: bytes) -> tuple[int, int, int]:
    """The top-left pixel's RGB of an 8-bit RGB or RGBA PNG (its first row needs no
    unfiltering for the first pixel: every filter leaves it as is, except Average and Paeth,
    which add nothing from the missing left and upper neighbours)."""
    position, idat = 8, b""
    while position < len(data):
        length = struct.unpack(">I", data[position : position + 4])[0]
        kind = data[position + 4 : position + 8]
        if kind == b"IDAT":
            idat += data[position + 8 : position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(idat)
    return raw[1], raw[2], raw[3]


async def page(tab: ego.Tab, server: PageServer, path: str, body: str) -> str:
    url = server.route(path, body)
    await tab.navigate(url)
    return url


# --- screenshot -----------------------------------------------------------------------------


async def test_screenshot_of_the_viewport_is_a_png_of_its_size(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/shot", "<body style='margin:0;background:#0f0'>green</body>")
    data = await tab.screenshot()
    width, height = await tab.evaluate(
        "[innerWidth * devicePixelRatio, innerHeight * devicePixelRatio]"
    )
    assert png_size(data) == (width, height)
    assert png_first_pixel(data) == (0, 255, 0)


async def test_screenshot_full_page_covers_the_whole_document(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(
        tab,
        server,
        "/verbs/tall",
        "<body style='margin:0'><div style='height:3000px;width:100px;background:red'></div>",
    )
    viewport = png_size(await tab.screenshot())
    full = png_size(await tab.screenshot(full_page=True))
    content_height = await tab.evaluate("document.documentElement.scrollHeight")
    assert full == (viewport[0], content_height)
    assert full[1] > viewport[1]


async def test_screenshot_of_an_element_clips_to_its_box_even_off_screen(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    await page(
        tab,
        server,
        "/verbs/element",
        "<body style='margin:0'><div style='height:2500px'></div>"
        "<div id=box style='margin-left:30px;width:200px;height:120px;background:rgb(0,0,255)'>"
        "</div>",
    )
    target = tmp_path / "box.png"
    data = await tab.screenshot(selector="#box", path=target)
    assert png_size(data) == (200, 120)
    assert png_first_pixel(data) == (0, 0, 255)
    assert target.read_bytes() == data


async def test_screenshot_formats_and_bad_arguments(tab: ego.Tab, server: PageServer) -> None:
    await page(tab, server, "/verbs/formats", "<p>formats</p>")
    jpeg = await tab.screenshot(format="jpeg", quality=50)
    assert jpeg[:3] == b"\xff\xd8\xff"
    webp = await tab.screenshot(format="webp")
    assert webp[:4] == b"RIFF"
    assert webp[8:12] == b"WEBP"
    with pytest.raises(ego.ElementNotFoundError, match="#nothing") as caught:
        await tab.screenshot(selector="#nothing")
    assert caught.value.selector == "#nothing"
    with pytest.raises(ValueError, match="format"):
        await tab.screenshot(format="gif")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="quality"):
        await tab.screenshot(quality=80)
    with pytest.raises(ValueError, match="not both"):
        await tab.screenshot(full_page=True, selector="p")


# --- console --------------------------------------------------------------------------------


async def test_console_lists_messages_with_level_source_and_line_and_uncaught_errors(
    tab: ego.Tab, server: PageServer
) -> None:
    body = (
        "<p>console</p>\n"
        "<script>\n"
        "console.log('hello %s', 'world', 42, {a: 1}, [1, 'x']);\n"
        "console.warn('careful');\n"
        "console.error('bad', null, undefined, true);\n"
        "setTimeout(() => { throw new Error('boom'); }, 0);\n"
        "</script>"
    )
    thrown = (await tab.attach()).expect("Runtime.exceptionThrown")
    url = await page(tab, server, "/verbs/console", body)
    await asyncio.wait_for(thrown, HANG)
    messages = [m for m in await tab.console() if m.url == url]
    assert [(m.level, m.text, m.line) for m in messages] == [
        ("log", "hello world 42 {a: 1} [1, 'x']", 3),
        ("warning", "careful", 4),
        ("error", "bad null undefined true", 5),
        ("error", "Uncaught Error: boom", 6),
    ]
    assert [m.exception for m in messages] == [False, False, False, True]
    assert "boom" in messages[-1].stack
    assert messages[0].column == 9
    assert messages[0].timestamp > 0
    assert messages[-1].as_dict()["exception"] is True


async def test_console_spans_navigations_and_clear_empties_it(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/log1", "<script>console.log('first page')</script>")
    await page(tab, server, "/verbs/log2", "<script>console.info('second page')</script>")
    # Chrome reports an unhandled rejection after the task that left it: wait for it.
    rejected = (await tab.attach()).expect("Runtime.exceptionThrown")
    await tab.evaluate("Promise.reject(new Error('nobody catches me')); 1")
    await asyncio.wait_for(rejected, HANG)
    texts = [m.text for m in await tab.console(clear=True)]
    assert texts[:2] == ["first page", "second page"]
    assert any("nobody catches me" in text for text in texts[2:])
    assert await tab.console() == []


async def test_console_keeps_the_newest_thousand_and_counts_the_dropped(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/many", "<p>many</p>")
    await tab.evaluate("for (let i = 0; i < 1005; i++) console.log('m' + i)")
    messages = await tab.console()
    assert len(messages) == 1000
    assert (messages[0].text, messages[-1].text) == ("m5", "m1004")
    assert tab.console_dropped == 5
    await tab.console(clear=True)
    assert tab.console_dropped == 0


def test_console_text_follows_format_specifiers() -> None:
    def string(value: str) -> dict[str, Any]:
        return {"type": "string", "value": value}

    number = {"type": "number", "value": 3.7, "description": "3.7"}
    assert format_args([string("%d items, %s%%"), number, string("ok")]) == "3 items, ok%"
    assert format_args([string("%cstyled"), string("color: red")]) == "styled"
    assert format_args([string("left %s")]) == "left %s"
    assert format_args([{"type": "number", "unserializableValue": "NaN"}]) == "NaN"
    log = ConsoleLog(max_messages=2)
    for text in ("a", "b", "c"):
        log._on_console({"type": "log", "args": [string(text)]})
    assert [m.text for m in log._messages] == ["b", "c"]
    assert log.dropped == 1


# --- wait_for -------------------------------------------------------------------------------


class StoppedClock:
    """A ``time`` stand-in for the waits: it reads ``now`` until a test moves it, and says
    when it was first read (the wait has started)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.read = asyncio.Event()

    def monotonic(self) -> float:
        self.read.set()
        return self.now


async def test_wait_for_returns_the_seconds_waited_for_what_appears_later(
    tab: ego.Tab, server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await page(tab, server, "/verbs/later", "<div id=root></div>")
    clock = StoppedClock()
    monkeypatch.setattr(waits, "time", clock)
    waiting = asyncio.create_task(tab.wait_for(text="Results are ready", timeout=HANG))
    await asyncio.wait_for(clock.read.wait(), HANG)  # the wait took its start time
    clock.now += 2.5
    await tab.evaluate("root.innerHTML = '<p class=done>Results are ready</p>'")
    # The seconds waited are those of the clock between the start and the text showing.
    assert await asyncio.wait_for(waiting, HANG) == 2.5
    assert await tab.wait_for(selector="p.done", timeout=HANG) == 0.0  # there already
    monkeypatch.undo()
    await tab.evaluate("setTimeout(() => { root.append(document.createElement('aside')) }, 200)")
    await tab.wait_for(selector="#root aside", timeout=HANG)
    assert await tab.evaluate("!!document.querySelector('#root aside')")


async def test_wait_for_follows_a_navigation_to_the_next_document(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/verbs/landing", "<h1>Welcome aboard</h1>")
    await page(
        tab,
        server,
        "/verbs/redirecting",
        "<script>setTimeout(() => { location.href = '/verbs/landing' }, 200)</script>",
    )
    await tab.wait_for(text="Welcome aboard", timeout=HANG)
    assert tab.url == server.url("/verbs/landing")


async def test_wait_for_that_times_out_names_the_condition(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/never", "<p>nothing comes</p>")
    with pytest.raises(ego.CommandTimeoutError, match="text 'never here'"):
        await tab.wait_for(text="never here", timeout=0.5)
    with pytest.raises(ego.CommandTimeoutError, match="#missing"):
        await tab.wait_for(selector="#missing", timeout=0.3)
    with pytest.raises(ego.CommandTimeoutError, match="/elsewhere"):
        await tab.wait_for(url="/elsewhere", timeout=0.3)
    with pytest.raises(ValueError, match="exactly one"):
        await tab.wait_for(text="a", selector="b")
    with pytest.raises(ValueError, match="exactly one"):
        await tab.wait_for()


async def test_wait_for_url_by_navigation_and_by_history_api(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/verbs/next-page", "<p>next</p>")
    here = await page(tab, server, "/verbs/url", "<p>start</p>")
    assert await tab.wait_for(url="/verbs/url", timeout=HANG) >= 0  # already there
    await tab.evaluate("setTimeout(() => history.pushState({}, '', '/verbs/pushed?q=1'), 200)")
    await tab.wait_for(url="*/verbs/pushed?q=*", timeout=HANG)
    assert await tab.evaluate("location.pathname") == "/verbs/pushed"
    await tab.evaluate("setTimeout(() => { location.href = '/verbs/next-page' }, 200)")
    await tab.wait_for(url=server.url("/verbs/next-page"), timeout=HANG)
    assert here != tab.url == server.url("/verbs/next-page")


def test_url_matcher_takes_a_part_or_a_glob() -> None:
    assert url_matcher("/checkout")("https://shop.test/checkout?step=2")
    assert not url_matcher("/checkout")("https://shop.test/cart")
    assert url_matcher("*/orders/*/done")("https://shop.test/orders/12/done")
    assert not url_matcher("*/orders/*/done")("https://shop.test/orders/12/done/more")


async def test_wait_for_network_idle_waits_for_requests_in_flight(
    tab: ego.Tab, server: PageServer
) -> None:
    server.hanging.add("/verbs/slow-api")
    server.route("/verbs/quick-api", '{"ok": true}', content_type="application/json")
    await page(tab, server, "/verbs/idle", "<p>idle</p>")
    await tab.evaluate(
        "window.ctl = new AbortController();"
        "window.slow = fetch('/verbs/slow-api', {signal: ctl.signal}).catch((e) => e.name);"
        "fetch('/verbs/quick-api'); 1"
    )
    with pytest.raises(ego.CommandTimeoutError, match="slow-api"):
        await tab.wait_for(network_idle=True, timeout=0.8)
    await tab.evaluate("setTimeout(() => ctl.abort(), 300); 1")
    await tab.wait_for(network_idle=True, timeout=HANG)
    assert await tab.evaluate("slow") == "AbortError"
    slow = [r for r in await tab.network() if r.url.endswith("/verbs/slow-api")]
    assert slow
    assert slow[0].failed


# --- press, hover, select, upload -------------------------------------------------------------

KEYS_PAGE = """
<form id=form onsubmit="event.preventDefault(); window.submitted = field.value">
  <input id=first><input id=field><button>go</button>
</form>
<script>
  window.keys = [];
  field.addEventListener('keydown',
    (e) => keys.push([e.key, e.code, e.keyCode, e.ctrlKey, e.shiftKey]));
</script>
"""


async def test_press_types_characters_runs_shortcuts_and_moves_focus(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/keys", KEYS_PAGE)
    await tab.click("#field")
    for key in ("h", "i", "Shift+a", "!"):
        await tab.press(key)
    assert await tab.evaluate("field.value") == "hiA!"
    await tab.press("Control+A")
    await tab.press("Backspace")
    assert await tab.evaluate("field.value") == ""
    await tab.press("x")
    await tab.press("Enter")
    assert await tab.evaluate("window.submitted") == "x"
    keys = await tab.evaluate("keys")
    assert ["a", "KeyA", 65, True, False] in keys  # Control+A: Control held, key unshifted
    assert ["A", "KeyA", 65, False, True] in keys
    assert ["Enter", "Enter", 13, False, False] in keys
    await tab.press("Shift+Tab")
    assert await tab.evaluate("document.activeElement.id") == "first"


def test_press_parses_keys_and_refuses_unknown_ones() -> None:
    assert _key_event("Control++") == (
        ["Control"],
        {"key": "+", "code": "Equal", "windowsVirtualKeyCode": 187, "nativeVirtualKeyCode": 187},
    )
    modifiers, event = _key_event("ctrl+shift+ArrowLeft")
    assert modifiers == ["Control", "Shift"]
    assert event["key"] == "ArrowLeft"
    assert _key_event("Space")[1]["text"] == " "
    with pytest.raises(ValueError, match="not a modifier"):
        _key_event("Hyper+a")
    with pytest.raises(ValueError, match="unknown key 'Enterr'"):
        _key_event("Enterr")


async def test_hover_moves_the_mouse_over_the_element(tab: ego.Tab, server: PageServer) -> None:
    await page(
        tab,
        server,
        "/verbs/hover",
        "<style>#menu:hover { color: rgb(255, 0, 0) }</style>"
        "<div style='height:2000px'></div><button id=menu style='width:80px;height:30px'>"
        "Menu</button><div id=hidden style='display:none'>x</div><script>window.entered = 0;"
        "menu.addEventListener('mouseenter', () => { entered++ })</script>",
    )
    await tab.hover("#menu")
    # The :hover style applies (Chrome no longer lets script match :hover itself).
    assert await tab.evaluate("[entered, getComputedStyle(menu).color]") == [1, "rgb(255, 0, 0)"]
    with pytest.raises(ego.ElementNotFoundError, match="#absent"):
        await tab.hover("#absent", wait=0)
    with pytest.raises(ego.ElementNotFoundError, match="hidden"):
        await tab.hover("#hidden", wait=0.2)  # it waits for the element to show


SELECT_PAGE = """
<select id=size><option value=s>Small</option><option value=m>Medium</option>
  <option value=l>Large</option></select>
<select id=extras multiple><option value=gift>Gift wrap</option><option value=note>Note</option>
  <option value=fast>Fast delivery</option></select>
<input id=text>
<script>
  window.events = [];
  for (const el of [size, extras]) for (const type of ['input', 'change'])
    el.addEventListener(type, () => events.push(type + ':' + el.id));
</script>
"""


async def test_select_chooses_by_value_or_label_and_fires_events(
    tab: ego.Tab, server: PageServer
) -> None:
    await page(tab, server, "/verbs/select", SELECT_PAGE)
    assert await tab.select("#size", "m") == ["m"]
    assert await tab.select("#size", "Large") == ["l"]
    assert await tab.evaluate("size.value") == "l"
    assert await tab.select("#extras", ["gift", "Fast delivery"]) == ["gift", "fast"]
    assert await tab.evaluate("events") == [
        "input:size",
        "change:size",
        "input:size",
        "change:size",
        "input:extras",
        "change:extras",
    ]
    assert await tab.select("#extras", []) == []


async def test_select_errors_name_the_problem(tab: ego.Tab, server: PageServer) -> None:
    await page(tab, server, "/verbs/select-errors", SELECT_PAGE)
    with pytest.raises(ego.ElementNotFoundError, match=r"no option .* 'xl'.*'s', 'm', 'l'"):
        await tab.select("#size", "xl")
    with pytest.raises(ego.WrongElementError, match="an <input type=text>, not a <select>"):
        await tab.select("#text", "a")
    with pytest.raises(ego.ElementNotFoundError, match="#nope"):
        await tab.select("#nope", "a", wait=0)
    with pytest.raises(ValueError, match="one choice"):
        await tab.select("#size", ["s", "m"])
    assert await tab.evaluate("size.value") == "s"


UPLOAD_PAGE = """
<input type=file id=one><input type=file id=many multiple><input id=text>
<script>
  window.seen = new Promise((resolve) => one.addEventListener('change', async () => {
    const file = one.files[0];
    resolve([file.name, await file.text()]);
  }));
</script>
"""


async def test_upload_sets_files_the_page_can_read(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    await page(tab, server, "/verbs/upload", UPLOAD_PAGE)
    first, second = tmp_path / "notes.txt", tmp_path / "more.csv"
    first.write_text("hello upload")
    second.write_text("a,b")
    await tab.upload("#one", str(first))
    assert await tab.evaluate("seen") == ["notes.txt", "hello upload"]
    await tab.upload("#many", [first, second])
    assert await tab.evaluate("[...many.files].map((f) => f.name)") == ["notes.txt", "more.csv"]


async def test_upload_errors(tab: ego.Tab, server: PageServer, tmp_path: Path) -> None:
    await page(tab, server, "/verbs/upload-errors", UPLOAD_PAGE)
    real = tmp_path / "real.txt"
    real.write_text("x")
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        await tab.upload("#one", tmp_path / "missing.txt")
    with pytest.raises(ego.ElementNotFoundError, match=r"input\[type=text\]"):
        await tab.upload("#text", real)
    with pytest.raises(ValueError, match="takes one file"):
        await tab.upload("#one", [real, real])
    assert await tab.evaluate("one.files.length") == 0


# --- back, forward, reload --------------------------------------------------------------------


async def test_back_and_forward_move_through_history_and_wait_for_the_page(
    tab: ego.Tab, server: PageServer
) -> None:
    first = await page(tab, server, "/verbs/history-1", "<title>One</title><p>one</p>")
    second = await page(tab, server, "/verbs/history-2", "<title>Two</title><p>two</p>")
    await tab.back()
    assert tab.url == first
    assert await tab.evaluate("[location.href, document.readyState]") == [first, "complete"]
    await tab.forward()
    assert tab.url == second
    assert await tab.evaluate("document.title") == "Two"
    with pytest.raises(ego.NavigationError, match="cannot go forward"):
        await tab.forward()
    await tab.evaluate("location.hash = 'part'")
    await tab.back()
    assert await tab.evaluate("location.href") == second
    await tab.reload()
    assert await tab.evaluate("document.title") == "Two"


async def test_back_at_the_first_page_is_a_clear_error(tab: ego.Tab) -> None:
    with pytest.raises(ego.NavigationError, match=r"cannot go back: .*first page"):
        await tab.back()


# --- response bodies --------------------------------------------------------------------------

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2b6a6b40000000049454e44ae426082"
)


async def test_response_body_of_text_and_binary_requests(tab: ego.Tab, server: PageServer) -> None:
    server.route("/verbs/data.json", '{"items": [1, 2]}', content_type="application/json")
    server.route("/verbs/pixel.png", PIXEL, content_type="image/png")
    await page(tab, server, "/verbs/bodies", "<img src='/verbs/pixel.png'><p>bodies</p>")
    await tab.evaluate("fetch('/verbs/data.json').then((r) => r.text())")
    by_url = {r.url: r for r in await tab.network()}
    data = by_url[server.url("/verbs/data.json")]
    assert data.as_dict()["request_id"] == data.request_id
    assert await tab.response_body(data) == '{"items": [1, 2]}'
    assert await tab.response_body(by_url[server.url("/verbs/pixel.png")].request_id) == PIXEL
    await page(tab, server, "/verbs/elsewhere", "<p>elsewhere</p>")
    with pytest.raises(ego.ProtocolError, match="no longer has the body"):
        await tab.response_body(data)
    with pytest.raises(ego.ProtocolError, match="no longer has the body of request 'nope'"):
        await tab.response_body("nope")
