"""The README's third script: a double click, a context menu, a drag, a far row of a
virtualized list, the keyboard, and elements found by their text and label."""

import asyncio
from urllib.parse import quote

import ego

PAGE = "data:text/html," + quote("""<title>Hands</title>
<ul><li id=todo>Buy milk</li></ul>
<p id=file>report.pdf</p>
<menu id=menu hidden><li role=menuitem onclick="log.push('rename')">Rename</li></menu>
<div><p draggable=true id=card>Card A</p></div><div id=done style="min-height: 40px"></div>
<div id=rows style="height: 300px; overflow: auto; position: relative">
  <div style="height: 30000px"></div></div>
<label>Email <input id=email></label>
<script>
window.log = [];
todo.ondblclick = () => { todo.innerHTML = '<input id=edit value="Buy milk">'; edit.focus(); };
file.oncontextmenu = (e) => { e.preventDefault(); menu.hidden = false; };
card.ondragstart = (e) => e.dataTransfer.setData('text/plain', card.id);
done.ondragover = (e) => e.preventDefault();
done.ondrop = (e) => {
  e.preventDefault();
  done.append(document.getElementById(e.dataTransfer.getData('text/plain')));
};
const draw = () => {  // only the rows in view exist, as in a virtualized grid
  rows.querySelectorAll('p').forEach((row) => row.remove());
  const first = Math.floor(rows.scrollTop / 30);
  for (let i = first; i < first + 11 && i < 1000; i++) {
    const row = document.createElement('p');
    row.textContent = `Row ${i + 1}`;
    row.style.cssText = `position: absolute; top: ${i * 30}px; margin: 0`;
    row.onclick = () => log.push(row.textContent);
    rows.append(row);
  }
};
rows.onscroll = draw;
draw();
</script>""")


async def main() -> None:
    async with ego.launch() as browser:
        tab = await browser.new_tab(PAGE)
        await tab.dblclick("text=Buy milk")  # opens the item's editor
        await tab.keyboard.press("ControlOrMeta+A")  # whatever has the focus
        await tab.keyboard.type("Buy bread")
        await tab.click("text=report.pdf", button="right")  # its context menu
        await tab.click('role=menuitem[name="Rename"]')
        await tab.drag_to("text=Card A", "#done")  # HTML5 drag and drop
        await tab.scroll("#rows", until='text="Row 750"')  # reach a far row, then click it
        await tab.click('text="Row 750"')
        await tab.type("label=Email", "me@example.com")  # by the label people read
        print(await tab.evaluate("edit.value"))  # Buy bread
        print(await tab.evaluate("log"))  # ['rename', 'Row 750']
        print(await tab.evaluate("done.textContent"))  # Card A
        print(await tab.evaluate("email.value"))  # me@example.com


asyncio.run(main())
