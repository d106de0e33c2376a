"""Pages whose snapshots tests and benchmarks compare: components, states, a tracker, a big page."""

from __future__ import annotations

BIG = "<title>Big</title>" + "".join(
    f'<div><span>Row {n}</span> <button data-testid="row-{n}">Buy {n}</button></div>'
    for n in range(1500)
)


#: Components whose names come from slotted text, a shadow checkbox inside a label, and a
#: component whose ``childNodes`` a framework patched: each named as Chrome names it.
COMPONENTS = """<!doctype html><title>Components</title>
<script>
const component = (name, html, connected) => customElements.define(name, class extends HTMLElement {
  constructor() { super(); this.attachShadow({mode: 'open'}).innerHTML = html; }
  connectedCallback() { if (connected) connected(this, this.shadowRoot.firstElementChild); }
});
component('x-btn', '<button><slot></slot></button>', (host, button) => {
  button.onclick = () => { document.title = 'deleted'; };
});
component('x-tabs', '<div role="tablist"><slot></slot></div>');
component('x-tab', '<div role="tab" tabindex="0"><slot></slot></div>',
  (host, tab) => tab.setAttribute('aria-selected', String(host.hasAttribute('selected'))));
component('x-segment', '<div role="radiogroup" aria-label="Period"><slot></slot></div>');
component('x-segment-button', '<button role="radio"><slot></slot></button>',
  (host, button) => button.setAttribute('aria-checked', String(host.hasAttribute('checked'))));
component('x-listbox', '<div role="listbox" aria-label="Fruit"><slot></slot></div>');
component('x-option', '<div role="option" tabindex="-1"><slot></slot></div>',
  (host, option) => option.setAttribute('aria-selected', String(host.hasAttribute('selected'))));
component('x-check', '<input type="checkbox" id="box">');
customElements.define('x-scoped', class extends HTMLElement {
  connectedCallback() {
    this.innerHTML = '<label>Promo code <input name="promo"></label>';
    // A framework's slot relocation patches childNodes to show what it manages: none here.
    Object.defineProperty(this, 'childNodes',
      {get: () => document.createDocumentFragment().childNodes});
  }
});
customElements.define('closed-box', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'closed'}).innerHTML = '<button>Sealed</button>';
  }
});
</script>
<x-btn>Delete account</x-btn>
<x-tabs><x-tab selected>Overview</x-tab><x-tab>Settings</x-tab></x-tabs>
<x-segment><x-segment-button checked>Day</x-segment-button
><x-segment-button>Week</x-segment-button></x-segment>
<x-listbox><x-option>Apple</x-option><x-option selected>Pear</x-option></x-listbox>
<label>Remember me <x-check></x-check></label>
<x-scoped></x-scoped>
<closed-box></closed-box>
"""


COMPONENT_LINES = [
    'button "Delete account" [ref=e1]',
    "tablist",
    '  tab "Overview" [selected] [ref=e2]',
    '  tab "Settings" [ref=e3]',
    'radiogroup "Period"',
    '  radio "Day" [checked] [ref=e4]',
    '  radio "Week" [ref=e5]',
    'listbox "Fruit" [ref=e6]',
    '  option "Apple" [ref=e7]',
    '  option "Pear" [selected] [ref=e8]',
    "text: Remember me",
    "checkbox [ref=e9]",
    'textbox "Promo code" [ref=e10]',
    'button "Sealed" [ref=e11]',
]


#: Roles, states, values and link targets, and elements only a page's script makes controls.
STATES = """<!doctype html><title>States</title>
<h2>Order</h2>
<input type="number" aria-label="Quantity" value="3" min="1" max="9">
<button role="switch" aria-checked="true">Gift wrap</button>
<input type="checkbox" aria-label="Some" id="mixed"><script>mixed.indeterminate = true</script>
<button aria-expanded="true">Options</button>
<button disabled>Pay</button>
<label>Email <input type="email" required value="ada@example.com"></label>
<select aria-label="Size"><option>S</option><option selected>M</option></select>
<input type="range" aria-label="Volume" value="30">
<p><a href="/help">Help</a> or <a href="https://example.com/x">elsewhere</a></p>
<textarea aria-label="Note" readonly>hi</textarea>
<div aria-hidden="true"><button>Invisible</button></div>
<button style="display: none">Gone</button>
<div onclick="this.textContent = 'opened'">Open card</div>
<div style="cursor: pointer"><span>Row one</span></div>
<span tabindex="0">Focus me</span>
<p>Plain <b>bold</b> words</p>
"""


#: A small issue tracker: named landmarks, a list, a form with two selects, a named table.
TRACKER = (
    """<!doctype html><title>Tracker</title>
<header aria-label="Site"><nav aria-label="Main"><a href="/">Issues</a></nav></header>
<main aria-label="Work">
<ul aria-label="Labels"><li>bug <button>Drop bug</button></li>
<li>feature <button>Drop feature</button></li></ul>
<form aria-label="Filter"><label>Status <select><option>Open</option><option>Closed</option>
<optgroup label="More"><option disabled>Stale</option></optgroup></select></label>
<label>Tags <select multiple><option selected>ui</option><option>api</option></select></label>
<label><input type="checkbox"> Only mine</label><button type="button">Apply</button></form>
<search aria-label="Find"><input aria-label="Query"></search>
<table aria-label="Issues"><thead><tr><th>Id</th><th>Title</th></tr></thead><tbody>"""
    + "".join(
        f'<tr><td><a href="/issue/{n}">#{n}</a></td><td>Issue {n}</td></tr>' for n in range(1, 31)
    )
    + """</tbody></table>
<section aria-label="Help"><p>Ask us</p></section></main>
<aside aria-label="Tips"><p>Use labels</p></aside>
<dialog open aria-label="Notice"><p>Saved</p></dialog>
<footer aria-label="Legal"><p>No rights</p></footer>
"""
)


GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)


SNAPSHOT_PAGE = """<!doctype html>
<title>Snapshot page</title>
<header>
  <nav aria-label="Main">
    <a href="/docs">Docs</a> <a href="/blog">Blog</a>
    <a href="#top">Top</a> <a href="#top">Top</a>
  </nav>
</header>
<main>
  <h1>Catalog</h1>
  <form id="search-form">
    <h2>Filters</h2>
    <label for="email">Email</label> <input id="email" type="email">
    <label for="first name">First name</label> <input id="first name">
    <input name="q" aria-label="Search">
    <label>Notes <textarea name="notes"></textarea></label>
    <label><input type="checkbox" name="in_stock" checked> In stock</label>
    <select name="sort"><option>price</option><option>name</option></select>
    <button data-testid="save" type="button">Save</button>
    <button hidden>Ghost</button>
  </form>
  <h2>Items</h2>
  <ul>
    <li><span>Chair</span> <button>Add</button></li>
    <li><span>Desk</span> <button>Add</button></li>
    <li><span>Lamp</span> <button>Add</button></li>
  </ul>
  <div><input> <input></div>
  <div><input placeholder="Coupon"> <input placeholder="Coupon"></div>
  <div role="button" tabindex="0">Custom</div>
  <p>Plain paragraph</p>
  <img src="/cap/nav/pixel.gif" alt="logo" width="10" height="10">
  <section aria-label="More">
    <h3>More links</h3>
    <a href="/x" id="1bad">Leading digit</a>
    <div id="a.b:c"><button>Odd id</button></div>
  </section>
</main>
<footer><p>Footer text</p></footer>
"""
