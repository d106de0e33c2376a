// After the click that typing starts with (or focus(), for a field something covers): what
// took the focus, and whether it takes text. Gets it ready as a user would: with clear, its
// text selected (select(), or a range over a contenteditable's contents); without, the caret
// at its end. Answers {kind, what, empty, keys} where kind is "insert" (an input, a textarea,
// a contenteditable, an EditContext: text goes in as an input method commits it), "keys"
// (a role=textbox or the like that only listens to keys), "value" (a date, time, colour or
// range input, which no keyboard text fills: its value is set here) or "refuse" (with why);
// keys are the shortcuts Python must press to get it ready where script cannot.
function (index, options) {
  // The element the checks chose: of the matches held, the ref's node, or found again.
  const el = Array.isArray(this) ? this[index] : this && this.nodeType ? this
    : options.selector ? __DOM__.queryAll(options.selector)[index] : null;
  const describe = (node) => {
    if (!node || node.nodeType !== 1) return "nothing";
    let s = "<" + node.localName + (node.id ? ` id=${node.id}` : "");
    if (node.localName === "input") s += ` type=${node.type}`;
    const role = node.getAttribute("role");
    return s + (role ? ` role=${role}` : "") + ">";
  };
  if (options.focus && el && el.isConnected) el.focus();
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  const what = describe(active);
  if (!active || active === document.body || active === document.documentElement) {
    return { kind: "refuse", what, why: `nothing took the focus when ${describe(el)} was clicked` };
  }
  const TEXT = new Set(["text", "search", "url", "tel", "email", "password", "number"]);
  const VALUE = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);
  const ROLES = new Set(["textbox", "searchbox", "combobox", "spinbutton"]);
  const tag = active.localName;
  if (tag === "input" || tag === "textarea") {
    if (active.disabled) return { kind: "refuse", what, why: "it is disabled" };
    if (active.readOnly) return { kind: "refuse", what, why: "it is read-only" };
    if (tag === "input" && VALUE.has(active.type)) {
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
      setter.call(active, options.text);
      active.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      active.dispatchEvent(new Event("change", { bubbles: true }));
      return { kind: "value", what, value: active.value };
    }
    if (tag === "input" && !TEXT.has(active.type)) return { kind: "refuse", what, why: `an <input type=${active.type}> takes no text` };
    const empty = active.value === "";
    if (options.clear) active.select();
    else {
      try { const end = active.value.length; active.setSelectionRange(end, end); }
      catch (e) { return { kind: "insert", what, empty, keys: ["End"] }; } // email, number
    }
    return { kind: "insert", what, empty, keys: [] };
  }
  if (active.getAttribute("aria-readonly") === "true") return { kind: "refuse", what, why: 'it is aria-readonly="true"' };
  if (active.getAttribute("aria-disabled") === "true") return { kind: "refuse", what, why: 'it is aria-disabled="true"' };
  if (active.isContentEditable) {
    // The editing host: the outermost editable element holding the caret.
    let host = active;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    const empty = host.textContent === "";
    const range = document.createRange();
    range.selectNodeContents(host);
    if (!options.clear) range.collapse(false);
    const selection = host.getRootNode().getSelection ? host.getRootNode().getSelection() : getSelection();
    (selection || getSelection()).removeAllRanges();
    (selection || getSelection()).addRange(range);
    return { kind: "insert", what, empty, keys: [] };
  }
  if (active.editContext) {
    return { kind: "insert", what, empty: false, keys: [options.clear ? "Control+A" : "Control+End"] };
  }
  if (ROLES.has(active.getAttribute("role") || "")) {
    return { kind: "keys", what, empty: false, keys: [options.clear ? "Control+A" : "Control+End"] };
  }
  return { kind: "refuse", what, why: "it is not editable (no input, textarea, contenteditable, EditContext or role=textbox)" };
}
