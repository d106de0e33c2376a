"""Small pages for the verbs of a user's hands (double and right clicks, drags, the wheel and
scrolling, typing into whole-document editors, the locators people use), served by the tests
in Python (tests/test_pointer.py, test_keyboard.py, test_locators.py) and through MCP
(tests/test_mcp_hands.py). Each page records what it saw in ``window.log`` as the page's own
handlers see it (``isTrusted`` says real input made it).
"""

from __future__ import annotations

#: Every page starts with this: a log of what its handlers saw.
RECORD = """<script>
window.log = [];
const record = (name, more = () => []) => (e) => log.push([name, e.isTrusted, ...more(e)]);
</script>"""

#: A to-do list whose item opens an editor on a double click, and a file that opens a
#: context menu on a right click; middle clicks and modified clicks are recorded.
CLICKS = """
<style>li { padding: 6px; } #menu { position: fixed; display: none; }</style>
<ul id=todos><li id=todo><span class=label>Buy milk</span></li></ul>
<div id=file style="width: 160px; padding: 10px">report.pdf</div>
<ul id=menu role=menu><li role=menuitem id=rename>Rename</li></ul>
<canvas id=pad width=200 height=100 style="border: 1px solid"></canvas>
<script>
const detail = (e) => [e.button, e.detail, e.shiftKey, e.ctrlKey];
for (const type of ['mousedown', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu']) {
  todo.addEventListener(type, record(type, detail));
  file.addEventListener(type, record(type, detail));
}
todo.addEventListener('dblclick', () => {
  const label = todo.querySelector('.label');
  todo.innerHTML = `<input id=edit value="${label.textContent}">`;
  edit.focus();
});
file.addEventListener('contextmenu', (e) => {
  e.preventDefault();
  Object.assign(menu.style, {display: 'block', left: e.clientX + 'px', top: e.clientY + 'px'});
});
rename.addEventListener('click', record('rename'));
pad.addEventListener('click', record('pad', (e) => [e.offsetX, e.offsetY]));
window.addEventListener('keydown', record('keydown', (e) => [e.key]));
</script>
"""

#: Two lists of HTML5 draggable cards: a card dropped on a list moves there, by the id the
#: page put in its dataTransfer.
KANBAN = """
<style>.column { width: 200px; min-height: 80px; padding: 8px; margin: 8px; background: #eee; }
.card { padding: 8px; margin: 4px; background: white; }</style>
<div class=column id=todo><div class=card draggable=true id=card-a>Card A</div>
  <div class=card draggable=true id=card-b>Card B</div></div>
<div class=column id=done></div>
<script>
for (const card of document.querySelectorAll('.card')) {
  card.addEventListener('dragstart', (e) => {
    e.dataTransfer.setData('text/plain', card.id);
    e.dataTransfer.effectAllowed = 'move';
    log.push(['dragstart', e.isTrusted, card.id]);
  });
  card.addEventListener('dragend',
    (e) => log.push(['dragend', e.isTrusted, e.dataTransfer.dropEffect]));
}
for (const column of document.querySelectorAll('.column')) {
  column.addEventListener('dragover', (e) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
  });
  column.addEventListener('drop', (e) => {
    e.preventDefault();
    const id = e.dataTransfer.getData('text/plain');
    column.appendChild(document.getElementById(id));
    log.push(['drop', e.isTrusted, id, column.id]);
  });
}
window.order = () => [...document.querySelectorAll('.column')].map(
  (c) => [c.id, [...c.children].map((card) => card.id)]);
</script>
"""

#: A list reordered by pointer events alone (no HTML5 drag): the dragged item goes before the
#: item under the pointer when the button comes up. Its items take the focus (for sorting by
#: the keyboard too), so a snapshot gives them refs.
SORTABLE = """
<style>
#list li { height: 32px; margin: 2px; background: #def; list-style: none; user-select: none; }
</style>
<ul id=list><li tabindex=0>One</li><li tabindex=0>Two</li><li tabindex=0>Three</li>
<li tabindex=0>Four</li></ul>
<script>
let dragged = null, moves = 0;
list.addEventListener('pointerdown', (e) => { dragged = e.target.closest('li'); moves = 0; });
window.addEventListener('pointermove', (e) => { if (dragged && e.buttons === 1) moves++; });
window.addEventListener('pointerup', (e) => {
  if (!dragged) return;
  const over = document.elementFromPoint(e.clientX, e.clientY)?.closest('li');
  if (over && over !== dragged && moves > 1) list.insertBefore(dragged, over);
  log.push(['sorted', e.isTrusted, moves]);
  dragged = null;
});
window.order = () => [...list.children].map((li) => li.textContent);
</script>
"""

#: A surface that pans as the pointer moves with the button down (as a map does).
PANNING = """
<div id=map style="width: 300px; height: 200px; overflow: hidden; background: #cde;
  touch-action: none">
  <div id=layer style="width: 40px; height: 40px; background: #246">x</div></div>
<script>
let start = null, offset = [0, 0];
map.addEventListener('pointerdown', (e) => {
  start = [e.clientX - offset[0], e.clientY - offset[1]];
  map.setPointerCapture(e.pointerId);
});
map.addEventListener('pointermove', (e) => {
  if (!start || !(e.buttons & 1)) return;
  offset = [e.clientX - start[0], e.clientY - start[1]];
  layer.style.transform = `translate(${offset[0]}px, ${offset[1]}px)`;
});
map.addEventListener('pointerup', () => { start = null; log.push(['panned', true, ...offset]); });
window.panned = () => offset;
</script>
"""

#: A list of 1,000 rows that draws only those in view (as a virtualized grid does), in a
#: scrolling box, with a wheel listener.
VIRTUAL = """
<section id=panel><h2>Rows</h2>
<div id=rows style="height: 300px; width: 300px; overflow-y: auto; position: relative">
  <div id=spacer style="height: 30000px"></div></div></section>
<script>
const ROW = 30;
const draw = () => {
  for (const row of rows.querySelectorAll('.row')) row.remove();
  const first = Math.floor(rows.scrollTop / ROW), last = first + Math.ceil(300 / ROW) + 1;
  for (let i = first; i <= Math.min(last, 999); i++) {
    const row = document.createElement('div');
    row.className = 'row';
    row.textContent = `Row ${i + 1}`;
    row.style.cssText = `position: absolute; top: ${i * ROW}px; height: ${ROW}px; width: 100%`;
    row.addEventListener('click', record('row', () => [row.textContent]));
    rows.appendChild(row);
  }
};
rows.addEventListener('scroll', draw);
rows.addEventListener('wheel', record('wheel', (e) => [e.deltaY]));
draw();
</script>
<div style="height: 2000px"></div><p id=far>Far below</p>
"""

#: A code editor of the kind that keeps a hidden textarea: the visible text is its own
#: model; it takes keys and input from the textarea, selects all on its shortcut, and learns
#: of a selection made in the textarea only in its own select handler, a task later.
TEXTAREA_EDITOR = """
<div id=editor style="position: relative; width: 300px; min-height: 40px; border: 1px solid">
  <div id=view style="white-space: pre">old text</div>
  <textarea id=input style="position: absolute; left: 0; top: 0; width: 1px; height: 1px;
    opacity: 0; padding: 0; border: 0"></textarea></div>
<script>
let model = 'old text', all = false;
const render = () => { view.textContent = model; };
editor.addEventListener('mousedown', (e) => { e.preventDefault(); input.focus(); });
// A selection made in the textarea becomes the editor's only once its select event runs.
input.addEventListener('select', () => setTimeout(() => {
  all = input.value !== ''
    && input.selectionStart === 0 && input.selectionEnd === input.value.length;
}, 20));
input.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 'a') { e.preventDefault(); all = true; }
  else if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    model = all ? '' : model.slice(0, -1);
    all = false;
    render();
  }
});
input.addEventListener('input', (e) => {
  if (all) { model = ''; all = false; }
  model += e.data || '';
  input.value = ' ';  // as such editors keep something to select
  render();
});
input.value = ' ';
</script>
"""

#: People's ways of naming things: text, labels of every kind, placeholder, alt, title and
#: test ids, with near twins that an exact match tells apart.
NAMED = """
<ul id=fruit><li>Apple pie</li><li>Banana <b>split</b></li><li>Apple</li></ul>
<p>Apple   outside  the list</p>
<label for=email>Email address</label><input id=email>
<label>Full name <input id=name></label>
<span id=phone-label>Phone</span><input id=phone aria-labelledby=phone-label>
<input id=search placeholder="Search items">
<button id=close aria-label="Close dialog">x</button>
<img id=logo alt="Company logo" width=20 height=20>
<a id=home title="Go home" href="#top">h</a>
<div data-testid="card-1" id=card>Card</div><div data-qa="card-2" id=qa>QA card</div>
<button id=save><span>Save</span></button><button id=save-all>Save all</button>
<input id=chairs aria-label="Quantity" placeholder="Chairs">
<input id=desks aria-label="Quantity" placeholder="Desks">
<a id=edit-chairs href="#c" title="Edit chairs">Edit</a>
<a id=edit-desks href="#d" title="Edit desks">Edit</a>
<script>
for (const b of document.querySelectorAll('button')) {
  b.addEventListener('click', record('click', () => [b.id]));
}
</script>
"""
