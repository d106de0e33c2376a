"""Pages of the actionability tests that the MCP action tests serve too: a click log, covered,
sliding and shadow targets, form fields and check boxes."""

from __future__ import annotations

#: Every handler records whether its event came from real input (a script's el.click()
#: makes an untrusted one).
RECORD = """<script>
window.log = [];
const record = (name) => (e) => log.push([name, e.isTrusted]);
</script>"""


SHADOW_ITEM = """
<script>
customElements.define('x-item', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'open'}).innerHTML =
      '<li role="menuitem" style="display:block;padding:8px"><slot></slot></li>';
    this.shadowRoot.querySelector('li').addEventListener('click', record('li'));
  }
});
</script>
<ul><x-item id="item"><span id="label">Delete</span></x-item></ul>
"""


SLIDING_VEIL = """
<button id="cancel" style="position:absolute;left:20px;top:20px;width:120px;height:40px"
  onclick="log.push(['cancel', event.isTrusted])">Cancel</button>
<script>
// The page answers the press by sliding an invisible element over the button: the release
// and the click that follows land on it (the click on what holds both, <body>).
cancel.addEventListener('pointerdown', () => {
  const veil = document.createElement('div');
  veil.id = 'veil';
  veil.style.cssText = 'position:fixed;inset:0;opacity:0';
  veil.addEventListener('mouseup', record('veil'));
  document.body.append(veil);
});
document.body.addEventListener('click', (e) => log.push(['body click', e.target.localName]));
</script>
"""


COVERED = """
<button id="under" style="position:absolute;left:20px;top:20px;width:120px;height:40px"
  onclick="log.push(['under', event.isTrusted])">Pay</button>
<div class="overlay" style="position:fixed;inset:0;background:rgba(0,0,0,.3)">Loading…</div>
"""


FIELDS = """
<textarea id="ro" readonly>fixed</textarea>
<input id="off" disabled value="frozen">
<div id="editor" contenteditable="true" style="min-height:20px">old text</div>
<div id="box" role="textbox" tabindex="0" style="min-height:20px;border:1px solid">draft</div>
<div id="surface" tabindex="0" style="min-height:20px;border:1px solid"></div>
<label id="wrap">Name <span><input id="inner"></span></label>
<script>
// A role=textbox that edits itself from the keys it hears, as a custom widget does.
let all = false;
box.addEventListener('keydown', (e) => {
  if (e.ctrlKey && e.key === 'a') all = true;
  else if (e.key === 'Delete' || e.key === 'Backspace') {
    box.textContent = all ? '' : box.textContent.slice(0, -1);
    all = false;
  } else if (e.key.length === 1 && !e.ctrlKey) box.textContent += e.key;
});
// An editor built on EditContext: text arrives as textupdate events, not as DOM edits.
window.received = [];
surface.editContext = new EditContext();
surface.editContext.addEventListener('textupdate', (e) => received.push(e.text));
</script>
"""


CHECKS = """
<label><input type="checkbox" id="terms"> I agree</label>
<input type="checkbox" id="styled" style="display:none"><label for="styled">Styled</label>
<button id="switch" role="switch" aria-checked="false"
  onclick="this.setAttribute('aria-checked', this.getAttribute('aria-checked') !== 'true')"
  >Wi-Fi</button>
<input type="radio" name="size" id="small" checked><input type="radio" name="size" id="big">
<input type="checkbox" id="stuck" onclick="event.preventDefault()">
<div id="plain">Not a box</div>
<script>
for (const id of ['terms', 'styled', 'small', 'big'])
  document.getElementById(id).addEventListener('change', record(id));
</script>
"""
