// Types into a field from inside the page: focus, set the value through the native setter
// (so frameworks that track the value, such as React, see it), then input and change
// events. A contenteditable element gets the text through insertText, as typing would.
(selector, value, clear) => {
  const el = __DOM__.query(selector);
  if (!el) return { found: false };
  el.scrollIntoView({ block: "center", inline: "center" });
  el.focus();
  if (el.isContentEditable) {
    if (clear) { document.execCommand("selectAll", false); document.execCommand("delete", false); }
    else {
      // focus() puts the caret at the start: move it to the end so that the text is appended.
      const range = document.createRange();
      range.selectNodeContents(el);
      range.collapse(false);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    document.execCommand("insertText", false, value);
    return { found: true, value: el.textContent };
  }
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype
    : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, "value")?.set;
  const next = clear ? value : (el.value || "") + value;
  if (setter) setter.call(el, next); else el.value = next;
  el.dispatchEvent(new InputEvent("input", { bubbles: true, data: value, inputType: "insertText" }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { found: true, value: el.value };
}
