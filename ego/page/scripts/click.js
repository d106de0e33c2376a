// Clicks from inside the page: scroll the element into view and call its click(), which
// behaves the same on every browser bridge and needs no coordinates. The selector pierces
// open shadow roots.
(selector) => {
  const dom = __DOM__;
  const el = dom.query(selector);
  if (!el) return { found: false };
  el.scrollIntoView({ block: "center", inline: "center" });
  if (typeof el.focus === "function") el.focus();
  // SVG and MathML elements have no click(): dispatch the event a click would fire.
  if (typeof el.click === "function") el.click();
  else el.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, composed: true, view: window }));
  return { found: true, tag: el.localName };
}
