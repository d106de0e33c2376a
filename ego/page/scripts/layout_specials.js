// The elements of a document whose kind a snapshot needs beyond its accessibility tree, in
// its open shadow roots too: the page's own (<html>, <body>), iframes, native selects,
// elements made tabbable (a tabindex of 0 or more) that no role already makes controls,
// draggable ones (draggable="true") and inert ones. Answers {elements, kinds, names}: each
// element's kind ("page", "frame", "select", "tabbable", "draggable", "inert": an element may
// come twice) and, for a frame, the name that names it (its name attribute, else its src).
function () {
  const dom = __DOM__;
  const CONTROLS = "a[href], button, input, select, textarea, summary, [contenteditable]";
  const found = { elements: [], kinds: [], names: [] };
  const add = (el, kind, name = "") => {
    found.elements.push(el);
    found.kinds.push(kind);
    found.names.push(name);
  };
  for (const el of [document.documentElement, document.body]) if (el) add(el, "page");
  for (const el of dom.queryAll("iframe, frame, select, [tabindex], [inert], [draggable]")) {
    const tag = el.localName;
    if (tag === "iframe" || tag === "frame") add(el, "frame", el.getAttribute("name") || el.getAttribute("src") || "");
    else if (tag === "select") add(el, "select");
    if (el.hasAttribute("inert")) add(el, "inert");
    if ((el.getAttribute("draggable") || "").trim().toLowerCase() === "true") add(el, "draggable");
    if (/^\s*\d+\s*$/.test(el.getAttribute("tabindex") || "") && !el.matches(CONTROLS)) add(el, "tabbable");
  }
  return found;
}
