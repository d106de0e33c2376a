// What a field shows after typing, to compare with what it showed before (focused_field.js
// answered it, and `read`): "active", the focused field's value or its editing host's text;
// "target", the text of the element the action named (an editor whose field is hidden).
// Waits (animation frames, at most ms) while it still shows `before` and not `expected`,
// for an editor that applies the text a little later, as a framework's render does.
async function (index, read, selector, before, expected, ms) {
  const el = Array.isArray(this) ? this[index] : this && this.nodeType ? this
    : selector ? __DOM__.queryAll(selector)[index] : null;
  const textOf = (node) => (node ? node.innerText ?? node.textContent ?? "" : "");
  const shown = () => {
    if (read === "target") return textOf(el);
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    if (!active) return "";
    if (active.localName === "input" || active.localName === "textarea") return active.value;
    let host = active;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    if (host === document.documentElement && document.body) host = document.body;
    return host.textContent;
  };
  // Spaces and line breaks aside: an input drops a line break, an editing host's text has none.
  const squash = (text) => text.replace(/\s+/g, "");
  const deadline = performance.now() + ms;
  for (;;) {
    const now = shown();
    if (now !== before || squash(now) === squash(expected) || performance.now() >= deadline) return now;
    await new Promise((resolve) => { const t = setTimeout(resolve, 100); requestAnimationFrame(() => { clearTimeout(t); resolve(); }); });
  }
}
