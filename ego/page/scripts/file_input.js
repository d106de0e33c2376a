// What upload() needs to know of the element selector names: its tag, type and whether it
// takes several files; null when nothing matches.
(selector) => {
  const el = __DOM__.query(selector);
  return el && { tag: el.localName, type: el.type || "", multiple: !!el.multiple };
}
