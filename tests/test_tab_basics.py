from __future__ import annotations

import math

import ego
from tests.conftest import PageServer


async def test_navigate_and_evaluate(tab: ego.Tab, server: PageServer) -> None:
    url = server.route("/basic", "<title>Basic</title><p id=x>hello</p>")
    await tab.navigate(url)
    assert await tab.evaluate("document.title") == "Basic"
    assert await tab.evaluate("document.getElementById('x').textContent") == "hello"
    assert math.isnan(await tab.evaluate("NaN"))
