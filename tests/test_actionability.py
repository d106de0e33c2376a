"""Actions as a user makes them, on small pages the test server serves: a click reaches a
listener inside a shadow root and waits for a late-defined element to show, never acts on a
hidden twin, names what covers an element or keeps it moving, and fails naming what took the
release when the page slid something under the point at the press; typing goes where the focus
went (contenteditable, ``role=textbox``, an EditContext editor) and is refused on read-only
and disabled fields; check and uncheck verify the state; ``force`` skips the checks; a ref
acts on its node; a click in a cross-site frame lands; a malformed selector fails before
anything runs.

Nothing sleeps to synchronise: a test waits on the verb under test or on the page's own
events (animation frames, a counter the page keeps).
"""

from __future__ import annotations

import asyncio

import pytest

import ego
from ego.errors import ElementNotActionableError, InvalidSelectorError, StaleRefError
from tests.helpers.action_pages import CHECKS, COVERED, FIELDS, RECORD, SHADOW_ITEM, SLIDING_VEIL
from tests.helpers.page_server import PageServer

#: Turns a hang into a failure. Never a timing assertion: healthy calls end far sooner.
HANG = 20.0


async def serve(tab: ego.Tab, server: PageServer, path: str, body: str) -> None:
    await tab.navigate(server.route(path, f"<!doctype html><title>act</title>{RECORD}{body}"))


async def page_frames(tab: ego.Tab, count: int) -> None:
    """Let the page draw ``count`` animation frames (a page event, not a clock)."""
    await tab.evaluate(
        f"new Promise((resolve) => {{ let n = {count};"
        " const step = () => (--n <= 0 ? resolve(0) : requestAnimationFrame(step));"
        " requestAnimationFrame(step); })"
    )


# -- clicks reach what a user's click reaches ---------------------------------------------------


async def test_a_click_reaches_a_listener_inside_the_shadow_root(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/shadow-item", SHADOW_ITEM)
    await tab.click("#item")
    # The listener sits on the li inside the host's shadow root: only input at the point
    # reaches it, and it is real input.
    assert await tab.evaluate("log") == [["li", True]]
    await tab.click("#label")  # slotted light DOM: the li is its parent in the flat tree
    await tab.click("x-item li")  # the li itself, found through the shadow root
    assert await tab.evaluate("log") == [["li", True], ["li", True], ["li", True]]


SLOTTED_TEXT = """
<script>
customElements.define('x-btn', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'open'}).innerHTML =
      '<button style="padding:8px"><slot></slot></button>';
    this.shadowRoot.querySelector('button').addEventListener('click', record('button'));
  }
});
</script>
<x-btn>Delete account</x-btn>
"""


async def test_a_shadow_button_showing_its_hosts_text_takes_the_click(
    tab: ego.Tab, server: PageServer
) -> None:
    # What is on top at the button's centre is the host's own text, drawn through the slot:
    # the hit test in the shadow root must answer the button, not the host.
    await serve(tab, server, "/act/slotted-text", SLOTTED_TEXT)
    await tab.click('role=button[name="Delete account"]')
    await tab.click("x-btn button")
    await tab.click("x-btn")
    assert await tab.evaluate("log") == [["button", True]] * 3


SHIFTING = """
<style>#go, #decoy { position: absolute; left: 40px; width: 120px; height: 40px }</style>
<button id="go" style="top: 40px">Go</button>
<button id="decoy" style="top: 200px">Decoy</button>
<script>
document.getElementById('go').addEventListener('click', record('go'));
document.getElementById('decoy').addEventListener('click', record('decoy'));
// The page moves as the mouse arrives, after every check passed and before the button goes
// down: the decoy takes the spot the checks chose (a late layout does this on real pages).
window.addEventListener('pointermove', () => {
  if (window.moved) return;
  window.moved = true;
  document.getElementById('go').style.top = '300px';
  document.getElementById('decoy').style.top = '40px';
}, true);
</script>
"""


async def test_a_click_the_page_moved_away_from_is_cancelled_and_made_again(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/shifting", SHIFTING)
    await asyncio.wait_for(tab.click("#go"), HANG)
    # The press that would have reached the decoy never reached the page's handlers; the
    # click made again, where the button is now, did.
    assert await tab.evaluate("[window.moved, log]") == [True, [["go", True]]]


async def test_a_click_whose_release_a_sliding_veil_takes_fails_naming_it(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/sliding-veil", SLIDING_VEIL)
    with pytest.raises(ElementNotActionableError) as caught:
        await asyncio.wait_for(tab.click("#cancel"), HANG)
    error = caught.value
    assert error.check == "receives events"
    assert "went to <div id=veil>" in error.seen, error.seen
    assert "after the press reached it" in error.seen
    # The release and the click never reached the page's handlers; the veil is there.
    assert await tab.evaluate("[log, !!document.getElementById('veil')]") == [[], True]


REPLACED_ON_PRESS = """
<div id="box"><button id="send" style="position:absolute;left:20px;top:20px;width:120px;
  height:40px">Send</button></div>
<script>
// The page swaps the button for a copy as it goes down: no click reaches either.
send.addEventListener('mousedown', () => {
  const copy = send.cloneNode(true);
  copy.id = 'copy';
  copy.addEventListener('mouseup', record('copy'));
  send.replaceWith(copy);
});
</script>
"""


async def test_a_button_replaced_as_it_goes_down_is_no_click(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/replaced", REPLACED_ON_PRESS)
    with pytest.raises(ElementNotActionableError) as caught:
        await asyncio.wait_for(tab.click("#send"), HANG)
    assert caught.value.check == "receives events"
    assert "went to <button id=copy" in caught.value.seen, caught.value.seen
    assert await tab.evaluate("log") == []


PASS_THROUGH = """
<script>
customElements.define('x-seg', class extends HTMLElement {
  constructor() {
    super();
    // The inner control takes no pointer events: a user's click lands on the host, which is
    // where the component listens (segment buttons are built this way).
    this.attachShadow({mode: 'open'}).innerHTML =
      '<button role="tab" style="pointer-events:none;padding:8px"><slot></slot></button>';
    this.addEventListener('click', record('x-seg'));
  }
});
</script>
<x-seg>Favorites</x-seg>
"""


async def test_an_inner_control_without_pointer_events_is_clicked_through_its_host(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/pass-through", PASS_THROUGH)
    await asyncio.wait_for(tab.click("x-seg button"), HANG)
    snapshot = await tab.snapshot(find="Favorites")
    ref = snapshot.split("[ref=")[1].split("]")[0]
    await asyncio.wait_for(tab.click(f"ref={ref}"), HANG)
    assert await tab.evaluate("log") == [["x-seg", True], ["x-seg", True]]


LATE_DEFINED = """
<style>x-b:not(:defined) { visibility: hidden }</style>
<x-b id="buy">Buy</x-b>
<script>
// How many times a check looked at the element's visibility: the test's signal that the
// click is waiting, instead of a clock.
const seen = Element.prototype.checkVisibility;
window.looked = 0;
Element.prototype.checkVisibility = function (...args) {
  if (this.id === 'buy') looked++;
  return seen.apply(this, args);
};
window.define = () => customElements.define('x-b', class extends HTMLElement {
  connectedCallback() { this.addEventListener('click', record('x-b')); }
});
</script>
"""


async def test_a_click_waits_for_an_element_hidden_until_it_is_defined(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/late", LATE_DEFINED)
    clicking = asyncio.create_task(tab.click("#buy", wait=10))
    # The click looks again on each animation frame while the element is hidden.
    await tab.evaluate(
        "new Promise((resolve) => { const t = () => (looked >= 3 ? resolve(0)"
        " : requestAnimationFrame(t)); t(); })"
    )
    assert not clicking.done()
    assert await tab.evaluate("log") == []
    await tab.evaluate("define(); 0")
    await asyncio.wait_for(clicking, HANG)
    assert await tab.evaluate("log") == [["x-b", True]]


async def test_a_click_on_what_stays_hidden_names_the_check(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/late-never", LATE_DEFINED)
    with pytest.raises(ElementNotActionableError) as caught:
        await asyncio.wait_for(tab.click("#buy", wait=0.3), HANG)
    error = caught.value
    assert (error.check, error.seen, error.selector) == ("visible", "visibility: hidden", "#buy")
    assert isinstance(error, ego.ElementNotFoundError)  # callers catching that keep working
    assert "it is hidden (waited 0.3 s)" in str(error)
    assert await tab.evaluate("log") == []


HIDDEN_TWINS = """
<dialog id="dialog"><button class="save" onclick="log.push(['dialog', event.isTrusted])">
  Save</button></dialog>
<button class="save" hidden onclick="log.push(['hidden', event.isTrusted])">Save</button>
<div style="display:none"><button class="save" onclick="log.push(['none', event.isTrusted])">
  Save</button></div>
<button class="save" style="visibility:hidden" onclick="log.push(['invisible', true])">
  Save</button>
<button class="save" onclick="log.push(['shown', event.isTrusted])">Save</button>
"""


async def test_of_several_matches_the_visible_one_is_clicked(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/twins", HIDDEN_TWINS)
    await tab.click(".save")
    assert await tab.evaluate("log") == [["shown", True]]
    # When none shows, the error says why the first one is hidden.
    await tab.evaluate("document.querySelectorAll('.save')[4].remove(); 0")
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.click(".save", wait=0.2)
    assert caught.value.check == "visible"
    assert caught.value.seen == "inside <dialog id=dialog>, which has display: none"
    assert await tab.evaluate("log") == [["shown", True]]


async def test_a_covered_element_is_refused_naming_what_covers_it(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/covered", COVERED)
    with pytest.raises(ElementNotActionableError) as caught:
        await asyncio.wait_for(tab.click("#under", wait=0.3), HANG)
    error = caught.value
    assert error.check == "receives events"
    assert error.seen == 'covered by <div class=overlay> "Loading…"'
    assert "covered by <div class=overlay>" in str(error)
    assert await tab.evaluate("log") == []
    # The cover goes while the click waits: the click lands once it is gone.
    clicking = asyncio.create_task(tab.click("#under", wait=10))
    await page_frames(tab, 3)
    assert not clicking.done()
    await tab.evaluate("document.querySelector('.overlay').remove(); 0")
    await asyncio.wait_for(clicking, HANG)
    assert await tab.evaluate("log") == [["under", True]]


MOVING = """
<style>
@keyframes slide { from { transform: translateX(0) } to { transform: translateX(300px) } }
#runner { animation: slide 1s linear infinite }
#glide { transition: transform 0.4s linear }
</style>
<button id="runner" onclick="log.push(['runner', true])">Catch me</button>
<p><button id="glide" onclick="log.push(['glide', Math.round(this.getBoundingClientRect().left)])"
  >Glide</button></p>
"""


async def test_a_moving_element_is_waited_for_until_it_stops_or_named(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/moving", MOVING)
    await page_frames(tab, 2)  # the animation runs
    with pytest.raises(ElementNotActionableError) as caught:
        await asyncio.wait_for(tab.click("#runner", wait=0.3), HANG)
    assert caught.value.check == "stable"
    assert caught.value.seen.startswith("moving: its box went from (")
    assert "keeps moving" in str(caught.value)
    # A transition that ends: the click waits for the element to stop, then lands on it.
    start = await tab.evaluate("Math.round(glide.getBoundingClientRect().left)")
    await tab.evaluate("glide.style.transform = 'translateX(200px)'; 0")
    await asyncio.wait_for(tab.click("#glide", wait=10), HANG)
    assert await tab.evaluate("log") == [["glide", start + 200]]


async def test_force_skips_the_checks(tab: ego.Tab, server: PageServer) -> None:
    await serve(
        tab,
        server,
        "/act/force",
        '<div id="off" role="button" aria-disabled="true" style="padding:8px"'
        " onclick=\"log.push(['off', event.isTrusted])\">Send</div>",
    )
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.click("#off", wait=0.2)
    assert (caught.value.check, caught.value.seen) == ("enabled", 'aria-disabled="true"')
    await tab.click("#off", force=True)
    assert await tab.evaluate("log") == [["off", True]]


async def test_disabled_controls_wait_then_fail_and_a_fieldset_disables_its_fields(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(
        tab,
        server,
        "/act/disabled",
        '<button id="later" disabled onclick="log.push([\'later\', event.isTrusted])">Go</button>'
        '<fieldset disabled name="address"><button id="inside">Inside</button></fieldset>',
    )
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.click("#inside", wait=0.2)
    assert caught.value.seen == "disabled by <fieldset>"
    clicking = asyncio.create_task(tab.click("#later", wait=10))
    await page_frames(tab, 3)
    assert not clicking.done()
    await tab.evaluate("document.getElementById('later').disabled = false; 0")
    await asyncio.wait_for(clicking, HANG)
    assert await tab.evaluate("log") == [["later", True]]


# -- typing as a keyboard does ---------------------------------------------------------------


async def test_typing_goes_where_the_focus_went(tab: ego.Tab, server: PageServer) -> None:
    await serve(tab, server, "/act/fields", FIELDS)
    await tab.type("#editor", "new text")
    assert await tab.evaluate("editor.textContent") == "new text"
    await tab.type("#editor", " and more", clear=False)
    assert await tab.evaluate("editor.textContent") == "new text and more"
    await tab.type("#box", "Hi there")
    assert await tab.evaluate("box.textContent") == "Hi there"
    await tab.type("#surface", "fn main() {}")
    assert await tab.evaluate("received") == ["fn main() {}"]
    await tab.type("#wrap", "Ada")  # the label is clicked; the focus goes to its input
    assert await tab.evaluate("inner.value") == "Ada"
    # Key by key, as a keyboard sends them (the old text selected, then deleted by its key).
    await tab.evaluate(
        "window.keys = []; inner.addEventListener('keydown', (e) => keys.push(e.key)); 0"
    )
    await tab.type("#inner", "A!b", delay=0.01)
    assert await tab.evaluate("[inner.value, keys]") == ["A!b", ["Delete", "A", "!", "b"]]


async def test_read_only_and_disabled_fields_are_refused(tab: ego.Tab, server: PageServer) -> None:
    await serve(tab, server, "/act/refused", FIELDS)
    with pytest.raises(ElementNotActionableError) as read_only:
        await tab.type("#ro", "changed", wait=0.2)
    assert (read_only.value.check, read_only.value.seen) == ("editable", "read-only")
    with pytest.raises(ElementNotActionableError) as disabled:
        await tab.type("#off", "changed", wait=0.2)
    assert (disabled.value.check, disabled.value.seen) == ("enabled", "disabled")
    # What takes the focus is checked too: a button takes no text.
    await tab.evaluate(
        "document.body.insertAdjacentHTML('beforeend', '<div id=\"card\">"
        '<button id="inside">Open</button></div>\'); 0'
    )
    with pytest.raises(ElementNotActionableError) as no_text:
        await tab.type("#inside", "x")
    assert no_text.value.check == "editable"
    assert no_text.value.seen.startswith("<button id=inside>: it is not editable")
    assert await tab.evaluate("[ro.value, off.value]") == ["fixed", "frozen"]


# -- check and uncheck -----------------------------------------------------------------------


async def test_check_and_uncheck_click_only_when_needed_and_verify(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/checks", CHECKS)
    await tab.check("#terms")
    await tab.check("#terms")  # already checked: no second click
    await tab.check("#styled")  # the input is hidden: its label is clicked
    await tab.check("#switch")
    await tab.check("#big")
    switch = "document.getElementById('switch').getAttribute('aria-checked')"
    state = f"[terms.checked, styled.checked, {switch}, big.checked]"
    assert await tab.evaluate(state) == [True, True, "true", True]
    # One real click each where the state had to change (a radio's change fires on it alone).
    assert await tab.evaluate("log") == [["terms", True], ["styled", True], ["big", True]]
    await tab.uncheck("#terms")
    await tab.uncheck("#switch")
    assert await tab.evaluate(f"[terms.checked, {switch}]") == [
        False,
        "false",
    ]
    with pytest.raises(ElementNotActionableError) as stuck:
        await tab.check("#stuck")
    assert stuck.value.check == "state changed"
    assert "still unchecked" in stuck.value.seen
    with pytest.raises(ElementNotActionableError) as radio:
        await tab.uncheck("#big")
    assert radio.value.check == "checkable"
    with pytest.raises(ElementNotActionableError) as plain:
        await tab.check("#plain")
    assert plain.value.check == "checkable"


# -- refs, frames, malformed selectors ----------------------------------------------------------


async def ref_of(tab: ego.Tab, selector: str) -> str:
    """A ref for the element ``selector`` names, as a snapshot gives one."""
    found = await tab.send(
        "Runtime.evaluate", {"expression": f"document.querySelector({selector!r})"}
    )
    node = await tab.send("DOM.describeNode", {"objectId": found["result"]["objectId"]})
    return tab.refs.ref_for(tab.main_frame, node["node"]["backendNodeId"])


async def test_a_ref_acts_on_its_node_and_a_gone_one_fails_at_once(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/refs", SHADOW_ITEM + '<input id="name">')
    item, name = await ref_of(tab, "#item"), await ref_of(tab, "#name")
    await tab.click(f"ref={item}")
    await tab.type(f"ref={name}", "Grace")
    assert await tab.evaluate("[log, document.getElementById('name').value]") == [
        [["li", True]],
        "Grace",
    ]
    await tab.evaluate("document.getElementById('item').remove(); 0")
    with pytest.raises(StaleRefError, match=r"removed from the page.*new snapshot"):
        await asyncio.wait_for(tab.click(f"ref={item}", wait=60), HANG)  # at once, not in 60 s


async def test_a_click_in_a_cross_site_frame_is_real_input_at_its_point(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route(
        "/act/cross-inner",
        f"{RECORD}<button id='inner' onclick=\"record('inner')(event)\">Inner</button>",
    )
    cross = f"http://localhost:{server.port}/act/cross-inner"
    # Below the fold: the frame is scrolled into view in its parent first.
    await serve(
        tab,
        server,
        "/act/cross",
        f'<div style="height:1500px"></div><iframe id="pay" src="{cross}"></iframe>',
    )
    frame = await tab.frame(url=cross, timeout=10)
    await frame.wait_for(selector="#inner", timeout=10)
    await tab.click("#pay >> #inner")
    assert await frame.evaluate("log") == [["inner", True]]
    await frame.click("#inner")
    assert await frame.evaluate("log") == [["inner", True], ["inner", True]]


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        ("div[", "not valid CSS"),
        ("button:has-text('x')", "not valid CSS"),
        ("iframe >> ", "empty part"),
        (">> #x", "empty part"),
        ("#pay >> a[", "not valid CSS (the part 'a[')"),
        ("ref=e", "wrong shape"),
        ("ref=button", "wrong shape"),
        ("#pay >> ref=e5", "wrong shape inside a frame-qualified selector"),
        ("   ", "is empty"),
    ],
)
async def test_a_malformed_selector_fails_before_anything_runs(
    tab: ego.Tab, server: PageServer, selector: str, words: str
) -> None:
    await serve(tab, server, "/act/malformed", '<iframe id="pay" srcdoc="<p>x</p>"></iframe>')
    with pytest.raises(InvalidSelectorError) as caught:
        await asyncio.wait_for(tab.click(selector), HANG)
    assert isinstance(caught.value, ValueError)
    assert caught.value.selector == selector
    assert words in str(caught.value)
    assert repr(selector) in str(caught.value)


async def test_wait_for_refuses_a_malformed_selector_before_waiting(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/act/wait-malformed", "<p>x</p>")
    with pytest.raises(InvalidSelectorError, match=r"not valid CSS"):
        await asyncio.wait_for(tab.wait_for(selector="p[", timeout=60), HANG)
    with pytest.raises(InvalidSelectorError, match="takes CSS, not a ref"):
        await asyncio.wait_for(tab.wait_for(selector="ref=e3", timeout=60), HANG)


@pytest.mark.parametrize(
    ("where", "selector"),
    [
        ("the page", "#go"),
        ("an iframe", "#inner >> #go"),
        ("an iframe, target=_top", "#inner >> #top"),
    ],
)
async def test_a_click_whose_next_page_does_not_come_fails_naming_the_navigation_it_began(
    tab: ego.Tab, server: PageServer, where: str, selector: str
) -> None:
    # Chrome holds every command to a tab whose page is navigating away until the next one
    # commits (though not always the first sent after the click): the click's last question
    # waited the tab's timeout and then returned as if all was well, or returned at once.
    page = f"/act/slow-{len(where)}"
    server.route(f"{page}/next", "<title>next</title><p id='there'>there</p>"
                 "<script>document.title = 'ran'</script>")  # fmt: skip
    server.route(f"{page}/inner", f"<a id='go' href='{page}/next'>go</a>"
                 f"<a id='top' href='{page}/next' target='_top'>top</a>")  # fmt: skip
    body = "<a id='go' href='next'>go</a>" if where == "the page" else (
        "<iframe id='inner' src='inner'></iframe>")  # fmt: skip
    await serve(tab, server, f"{page}/", body)
    navigated: ego.Tab | ego.Frame = tab
    if where != "the page":
        inner = await tab.frame(url=server.url(f"{page}/inner"), timeout=10)
        await inner.wait_for(selector="#top", timeout=10)
        navigated = inner if where == "an iframe" else tab
    next_page = server.url(f"{page}/next")
    answer = server.hold(f"{page}/next")
    tab.default_timeout = 2
    try:
        with pytest.raises(ego.CommandTimeoutError, match=f"began a navigation to {next_page}"):
            await tab.click(selector)
        assert not answer.is_set()
    finally:
        answer.set()
        tab.default_timeout = 30
    await navigated.wait_for(url=next_page, timeout=10)
    await navigated.wait_for(selector="#there", timeout=10)
    # Nothing the click left behind stops the next page's own script.
    assert await navigated.evaluate("document.title") == "ran"


async def test_a_click_on_a_link_returns_once_the_next_page_came(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/act/link-next", "<title>next</title>")
    server.route("/act/link-inner", "<a id='go' href='link-next'>go</a>")
    links = "<a id='go' href='link-next'>go</a><a id='here' href='#below'>here</a>"
    await serve(tab, server, "/act/link", f"{links}<iframe id='inner' src='link-inner'></iframe>")
    inner = await tab.frame(url=server.url("/act/link-inner"), timeout=10)
    await inner.wait_for(selector="#go", timeout=10)
    await tab.click("#inner >> #go")
    assert inner.url == server.url("/act/link-next")
    await tab.click("#here")  # a move within the document ends the wait too
    assert tab.url == server.url("/act/link#below")
    await tab.click("#go")
    assert tab.url == server.url("/act/link-next")
