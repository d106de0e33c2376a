"""The README's first script: launch Chrome, open a page, evaluate in it."""

import asyncio

import ego


async def main() -> None:
    async with ego.launch() as browser:  # headless Chrome, temporary profile
        tab = await browser.new_tab("data:text/html,<title>Hello</title><h1>ego</h1>")
        print(await tab.evaluate("document.title"))  # Hello
        print(await tab.evaluate("[1, 2, 3].map(n => n * 2)"))  # [2, 4, 6]


asyncio.run(main())
