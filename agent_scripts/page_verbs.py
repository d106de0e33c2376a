"""The README's second script: a screenshot, console messages, a wait and a page dialog."""

import asyncio

import ego

PAGE = """data:text/html,<title>Verbs</title><h1>ego</h1>
<button onclick="console.log('clicked'); setTimeout(() => document.body.append('done'), 50)">
go</button><button id=ask onclick="document.title = confirm('Sure?') ? 'yes' : 'no'">ask</button>"""


async def main() -> None:
    async with ego.launch(dialogs="manual") as browser:  # dialogs wait for an answer
        tab = await browser.new_tab(PAGE)
        png = await tab.screenshot(selector="h1")
        print(png[:4] == b"\x89PNG")  # True
        await tab.click("button")
        await tab.wait_for(text="done")
        print([message.text for message in await tab.console()])  # ['clicked']
        async with tab.expect_dialog(accept=True) as expected:  # answers the next dialog
            await tab.click("#ask")
        print(expected.dialog.message)  # Sure?
        print(await tab.evaluate("document.title"))  # yes


asyncio.run(main())
