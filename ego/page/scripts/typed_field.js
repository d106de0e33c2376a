// What a field shows after typing, to compare with what it showed before (focused_field.js
// answered it, and `read`): "active", the focused field's value or its editing host's text;
// "target", the text of the element the action named (an editor whose field is hidden).
// Waits (animation frames, at most ms) while it still shows `before` and not `expected`,
// for an editor that applies the text a little later, as a framework's render does.
// Answers {shown, marked}. With watched (the read-back sent with the input), it reads only
// once the text arrived, as focused_field.js's watch saw it; before that it answers at once
// {marked: false} (Chrome ran this first), and is asked again once the input was handled.
async function (index, read, selector, before, expected, ms, watched) {
  const key = Symbol.for("ego.typing");
  const record = window[key];
  if (record) { record.stop(); delete window[key]; }
  if (watched && !(record && record.marked)) return { shown: null, marked: false };
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
    if (now !== before || squash(now) === squash(expected) || performance.now() >= deadline) return { shown: now, marked: true };
    await new Promise((resolve) => { const t = setTimeout(resolve, 100); requestAnimationFrame(() => { clearTimeout(t); resolve(); }); });
  }
}
