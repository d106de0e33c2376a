// After the click that typing starts with (or focus(), for a field something covers): what
// took the focus, and whether it takes text. Gets it ready as a user would: with clear, its
// text selected (select(), or a range over a contenteditable's contents, the document's body
// included when it is the editing host or the document is in designMode); without, the caret
// at its end. A hidden text field (the tiny textarea a code editor listens to) is readied by
// the keyboard instead: select all by the platform's shortcut, which the editor handles as
// its own, where select() would reach the editor's own select event only after the Delete.
// Answers {kind, what, empty, keys, before, read, redo, secret} where kind is "insert" (an
// input, a textarea, a contenteditable, an EditContext: text goes in as an input method
// commits it), "keys" (a role=textbox or the like that only listens to keys), "value" (a
// date, time, colour or range input, which no keyboard text fills: its value is set here,
// unless the browser takes no such value (took), and kept says the page's handlers left it) or
// "refuse" (with why); keys are the shortcuts Python must press to get it ready where script
// cannot; before is what the field shows now, read again after typing (typed_field.js) from
// the focused field ("active": whether any text arrived) or the named element ("target": an
// editor whose field is hidden, whose text may show later or never, as a terminal's echo);
// redo says a clear that did not take is made again by the keyboard (an editor that readies
// its selection late), and secret that what the field holds is never shown (a password).
// With options.watch, a field that is read back gets a watch for the text's arrival (the
// trusted beforeinput of its insertText), which typed_field.js reads: the read-back is sent
// with the input, and Chrome may run it before the input has come.
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
  // A document that is itself the editor (designMode, or a contenteditable body, as in an
  // iframe-based rich-text editor) takes the focus on its body.
  const wholeDocument = document.designMode === "on" || !!(document.body && document.body.isContentEditable);
  if (options.focus && el && el.isConnected) {
    if (el === document.body || el === document.documentElement) window.focus();
    (el === document.documentElement && document.body ? document.body : el).focus();
  }
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  if (active === document.documentElement && wholeDocument) active = document.body;
  const what = describe(active);
  if (!active || ((active === document.body || active === document.documentElement) && !wholeDocument)) {
    return { kind: "refuse", what, why: `nothing took the focus when ${describe(el)} was clicked` };
  }
  // A field no user sees, drawn over by what it edits: no box to speak of, or out of view.
  // Transparency alone does not count: a field with a floating label is transparent until
  // it has the focus, and holds its value itself.
  const hidden = (field) => {
    const r = field.getBoundingClientRect();
    return r.width <= 2 || r.height <= 2 || r.right <= 0 || r.bottom <= 0;
  };
  const textOf = (node) => (node ? node.innerText ?? node.textContent ?? "" : "");
  // Notes in the window when the text to type arrives as an input method's commit.
  const watched = (field) => {
    if (!options.watch || !options.text) return field;
    const key = Symbol.for("ego.typing");
    if (window[key]) window[key].stop();
    const record = { marked: false };
    const on = (e) => {
      if (e.isTrusted && e.inputType === "insertText" && e.data === options.text) { record.marked = true; record.stop(); }
    };
    window.addEventListener("beforeinput", on, true);
    // Never left behind: a read-back that never comes (an error first) ends it in seconds.
    const timer = setTimeout(() => record.stop(), 10000);
    record.stop = () => { clearTimeout(timer); window.removeEventListener("beforeinput", on, true); };
    window[key] = record;
    return field;
  };
  const TEXT = new Set(["text", "search", "url", "tel", "email", "password", "number"]);
  const VALUE = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);
  const ROLES = new Set(["textbox", "searchbox", "combobox", "spinbutton"]);
  const tag = active.localName;
  if (tag === "input" || tag === "textarea") {
    if (active.disabled) return { kind: "refuse", what, why: "it is disabled" };
    if (active.readOnly) return { kind: "refuse", what, why: "it is read-only" };
    if (tag === "input" && VALUE.has(active.type)) {
      // The text as the browser writes such a value ("" when it takes none; a range's
      // number as a number input keeps it, before its min and max clamp it).
      const probe = document.createElement("input");
      probe.type = active.type === "range" ? "number" : active.type;
      probe.value = options.text;
      const wanted = probe.value;
      const before = active.value;
      const took = active.type === "color" ? wanted === options.text.toLowerCase() : wanted !== "" || options.text === "";
      if (!took) return { kind: "value", what, value: before, before, took, type: active.type };
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
      setter.call(active, options.text);
      active.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      active.dispatchEvent(new Event("change", { bubbles: true }));
      // Kept unless the page's handlers put back what it held before.
      const value = active.value;
      const kept = value !== before || value === wanted || (active.type === "range" && Number(value) === Number(wanted));
      return { kind: "value", what, value, before, took, kept, type: active.type };
    }
    if (tag === "input" && !TEXT.has(active.type)) return { kind: "refuse", what, why: `an <input type=${active.type}> takes no text` };
    if (hidden(active)) {
      // What is read back is what the named element shows: the field is the editor's.
      return watched({
        kind: "insert", what, empty: false, before: textOf(el), read: "target", redo: true,
        keys: [options.clear ? "ControlOrMeta+A" : "Control+End"],
      });
    }
    const empty = active.value === "";
    const field = { kind: "insert", what, empty, keys: [], before: active.value, read: "active",
      secret: active.type === "password" };
    if (options.clear) active.select();
    else {
      try { const end = active.value.length; active.setSelectionRange(end, end); }
      catch (e) { return watched({ ...field, keys: ["End"] }); } // email, number
    }
    return watched(field);
  }
  if (active.getAttribute("aria-readonly") === "true") return { kind: "refuse", what, why: 'it is aria-readonly="true"' };
  if (active.getAttribute("aria-disabled") === "true") return { kind: "refuse", what, why: 'it is aria-disabled="true"' };
  if (active.isContentEditable) {
    // The editing host: the outermost editable element holding the caret.
    let host = active;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    if (host === document.documentElement && document.body) host = document.body;
    const empty = host.textContent === "";
    const range = document.createRange();
    range.selectNodeContents(host);
    if (!options.clear) range.collapse(false);
    const selection = host.getRootNode().getSelection ? host.getRootNode().getSelection() : getSelection();
    (selection || getSelection()).removeAllRanges();
    (selection || getSelection()).addRange(range);
    return watched({ kind: "insert", what, empty, keys: [], before: host.textContent, read: "active", redo: true });
  }
  if (active.editContext) {
    return { kind: "insert", what, empty: false, keys: [options.clear ? "ControlOrMeta+A" : "Control+End"] };
  }
  if (ROLES.has(active.getAttribute("role") || "")) {
    return { kind: "keys", what, empty: false, keys: [options.clear ? "ControlOrMeta+A" : "Control+End"] };
  }
  return { kind: "refuse", what, why: "it is not editable (no input, textarea, contenteditable, EditContext or role=textbox)" };
}
