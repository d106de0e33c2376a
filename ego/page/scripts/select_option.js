// Selects options of a <select> by value, else by label, and fires input and change as a
// user's choice would. `this` is the element (a ref) or a selector's matches (index says which
// the checks chose). Reports what went wrong instead of throwing, so that Python can word it.
function (index, wanted) {
  const el = Array.isArray(this) ? this[index] : this;
  if (!(el instanceof HTMLSelectElement)) {
    return { found: true, notSelect: { tag: el.localName, type: el.localName === "input" ? el.type : "", role: el.getAttribute("role") || "" } };
  }
  const options = Array.from(el.options);
  const label = (option) => (option.label || option.text).trim();
  const picked = [];
  for (const want of wanted) {
    const option = options.find((o) => o.value === want)
      || options.find((o) => label(o) === want.trim());
    if (!option) {
      return { found: true, missing: want, options: options.slice(0, 30).map((o) => o.value) };
    }
    if (!picked.includes(option)) picked.push(option);
  }
  if (!el.multiple && picked.length > 1) return { found: true, tooMany: picked.length };
  if (el.disabled) return { found: true, disabled: true };
  el.focus();
  if (!el.multiple && picked.length === 1) {
    // The native setter, as type() does, so that frameworks tracking the value see it.
    const setter = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set;
    setter.call(el, picked[0].value);
  } else {
    for (const option of options) option.selected = picked.includes(option);
  }
  el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { found: true, selected: Array.from(el.selectedOptions).map((o) => o.value) };
}
