// Clicks from inside the page: scroll the element into view and call its click(), which
// behaves the same on every browser bridge and needs no coordinates.
(selector) => {
  const el = document.querySelector(selector);
  if (!el) return { found: false };
  el.scrollIntoView({ block: "center", inline: "center" });
  if (typeof el.focus === "function") el.focus();
  el.click();
  return { found: true, tag: el.localName };
}
