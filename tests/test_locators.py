"""The selectors people use: text (a part in any case, a whole text in quotes, a pattern
between slashes, whitespace collapsed, the smallest element holding it), labels of every kind,
placeholder, alt, title and test id (with another attribute named), chained with ``>>`` and
taken by every verb; a malformed one refused before anything runs; ``selector_for`` giving
them when they name the node alone; ``wait_for(function=)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ego
from ego.errors import CommandTimeoutError, InvalidSelectorError, JavaScriptError
from ego.page.scripts import DEFAULT_TEST_ID_ATTRIBUTE, set_test_id_attribute
from tests.helpers.hands_pages import NAMED, RECORD
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome


async def serve(tab: ego.Tab, server: PageServer, path: str, body: str) -> None:
    await tab.navigate(server.route(path, f"<!doctype html><title>named</title>{RECORD}{body}"))


async def ids(tab: ego.Tab, selector: str) -> list[str]:
    """The ids of what ``selector`` matches, through the engine every verb uses."""
    found = await tab.evaluate(
        f"(() => {{ const r = ({ego.page.scripts.page_script('find_all')})({selector!r});"
        " return typeof r === 'string' ? r : r.map((e) => e.id || e.localName); })()"
    )
    assert isinstance(found, list), found
    return found


@pytest.fixture
def qa_attribute() -> Iterator[None]:
    set_test_id_attribute("data-qa")
    try:
        yield
    finally:
        set_test_id_attribute(DEFAULT_TEST_ID_ATTRIBUTE)


async def test_each_engine_finds_what_people_name(tab: ego.Tab, server: PageServer) -> None:
    await serve(tab, server, "/named/engines", NAMED)
    cases = {
        "text=apple": ["li", "li", "p"],  # a part, any case, the smallest holders
        'text="Apple"': ["li"],  # the whole text, exactly
        "text=apple outside": ["p"],  # whitespace collapsed
        "text=/^banana SPLIT$/i": ["li"],  # a pattern; the <b> alone does not hold it
        'text="Save"': ["span"],  # the smallest element holding it
        "label=email": ["email"],  # <label for>
        'label="Full name"': ["name"],  # a wrapping label
        "label=Phone": ["phone"],  # aria-labelledby
        "label=close": ["close"],  # aria-label
        "placeholder=search": ["search"],
        "alt=Company logo": ["logo"],
        'title="Go home"': ["home"],
        "testid=card-1": ["card"],
        "testid=card": [],  # a test id is always whole
        "#fruit >> text=apple": ["li", "li"],  # chained: inside the list only
        "#fruit >> li >> b": ["b"],
        "css=#save-all": ["save-all"],
    }
    for selector, expected in cases.items():
        assert await ids(tab, selector) == expected, selector
    await tab.click('text="Save all"')
    await tab.click("role=button >> text=Save")  # a chain's part may be a role
    await tab.type("label=Email", "me@example.com")
    await tab.type("placeholder=Search", "chairs")
    assert await tab.evaluate("[email.value, search.value]") == ["me@example.com", "chairs"]
    assert await tab.evaluate("log.map((e) => e[2])") == ["save-all", "save"]
    await tab.wait_for(selector="#fruit >> text=banana", timeout=5)


async def test_a_test_id_attribute_of_the_sites_own(
    tab: ego.Tab, server: PageServer, qa_attribute: None
) -> None:
    await serve(tab, server, "/named/qa", NAMED)
    assert await ids(tab, "testid=card-2") == ["qa"]
    assert await ids(tab, "testid=card-1") == []
    with pytest.raises(ValueError, match="attribute name"):
        set_test_id_attribute("not an attribute")


async def test_malformed_locators_are_refused_before_anything_runs(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/named/malformed", NAMED)
    for selector, words in {
        "text=": "give what to find after text=",
        'label="Email': "the quote is not closed",
        "text=/(/": "is not a regular expression",
        "#fruit >> placeholder=": "give what to find after placeholder=",
    }.items():
        with pytest.raises(InvalidSelectorError, match="is not a valid") as caught:
            await tab.click(selector, wait=0)
        assert words in str(caught.value), selector
    with pytest.raises(InvalidSelectorError, match="not a valid text= selector"):
        await tab.wait_for(selector="text=", timeout=1)
    assert await tab.evaluate("log") == []


async def test_selector_for_names_a_node_as_a_person_would(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/named/durable", NAMED)
    await tab.evaluate("document.getElementById('card').setAttribute('tabindex', '0')")
    outline = await tab.snapshot()

    def ref(line: str, nth: int = 0) -> str:
        return outline.split(line)[1 + nth].split("[ref=")[1].split("]")[0]

    # The role and name where they name the node alone; else its test id first, then its
    # placeholder, label, alt text, text or title, the first that does.
    assert await tab.selector_for(ref('textbox "Email address"')) == (
        'role=textbox[name="Email address"]'
    )
    assert await tab.selector_for(ref("generic")) == 'testid="card-1"'
    assert await tab.selector_for(ref('textbox "Quantity"', 1)) == 'placeholder="Desks"'
    assert await tab.selector_for(ref('link "Edit"', 1)) == 'title="Edit desks"'
    await tab.click('title="Edit desks"')
    assert tab.url.endswith("#d")


async def test_wait_for_a_function_polls_in_the_page_within_its_bound(
    tab: ego.Tab, server: PageServer
) -> None:
    later = "<script>setTimeout(() => { window.ready = 3; }, 200)</script>"
    await serve(tab, server, "/named/function", later)
    assert await tab.wait_for(function="() => window.ready === 3", timeout=10) >= 0
    await tab.evaluate("window.ready = 0; setTimeout(() => { window.ready = 1; }, 150); 0")
    await tab.wait_for(function="window.ready", polling=0.05, timeout=10)  # an expression
    with pytest.raises(CommandTimeoutError, match=r"'window\.never' to be true"):
        await tab.wait_for(function="window.never", timeout=0.3)
    with pytest.raises(JavaScriptError, match="boom"):
        await tab.wait_for(function="() => { throw new Error('boom') }", timeout=5)
    with pytest.raises(ValueError, match="exactly one of"):
        await tab.wait_for(function="1", text="x")
    with pytest.raises(ValueError, match="polling="):
        await tab.wait_for(function="1", polling="often")
