// What a field shows after typing, to compare with what it showed before (focused_field.js
// answered it, and `read`): "active", the focused field's value or its editing host's text;
// "target", the text of the element the action named (an editor whose field is hidden).
function (index, read, selector) {
  const el = Array.isArray(this) ? this[index] : this && this.nodeType ? this
    : selector ? __DOM__.queryAll(selector)[index] : null;
  const textOf = (node) => (node ? node.innerText ?? node.textContent ?? "" : "");
  if (read === "target") return textOf(el);
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  if (!active) return "";
  if (active.localName === "input" || active.localName === "textarea") return active.value;
  let host = active;
  while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
  if (host === document.documentElement && document.body) host = document.body;
  return host.textContent;
}
