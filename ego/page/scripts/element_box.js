// The box of the first element matching selector, in CSS pixels relative to the viewport,
// with the page's scroll offsets; null when nothing matches. With scroll, the element is
// first scrolled to the centre of the viewport (for hovering it).
(selector, scroll) => {
  const el = __DOM__.query(selector);
  if (!el) return null;
  if (scroll) el.scrollIntoView({ block: "center", inline: "center" });
  const r = el.getBoundingClientRect();
  return {
    x: r.left, y: r.top, width: r.width, height: r.height,
    scrollX: window.scrollX, scrollY: window.scrollY, tag: el.localName,
  };
}
