// Roles and accessible names for the selector engine's `role=` selectors, computed in the page
// the way Chrome's accessibility tree does for the common cases: the `role` attribute, else
// the element's implicit role; the name from aria-labelledby, aria-label, a field's labels,
// alt, a value, the text content through shadow roots and slots (for roles named by their
// content), placeholder, title. dom.js splices this in where it says __ROLES__ and calls it
// with the composed-tree parent function. A `role=` selector the engine cannot compute the
// same way as Chrome simply does not match: tab.selector_for() checks each one it gives.
(parentOf) => {
  const collapse = (s) => String(s || "").replace(/\s+/g, " ").trim();
  const INPUT = {
    button: "button", submit: "button", reset: "button", image: "button", file: "button",
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    search: "searchbox", email: "textbox", tel: "textbox", text: "textbox", url: "textbox",
    password: "textbox", "": "textbox",
  };
  const LANDMARK_SCOPES = "article,aside,main,nav,section";
  const inScope = (el) => {
    for (let node = parentOf(el); node; node = parentOf(node)) if (node.matches(LANDMARK_SCOPES)) return true;
    return false;
  };
  const IMPLICIT = {
    a: (el) => (el.hasAttribute("href") ? "link" : ""),
    area: (el) => (el.hasAttribute("href") ? "link" : ""),
    article: () => "article", aside: () => "complementary", button: () => "button",
    datalist: () => "listbox", dd: () => "definition", details: () => "group",
    dfn: () => "term", dialog: () => "dialog", dt: () => "term", fieldset: () => "group",
    figure: () => "figure", form: () => "form", hr: () => "separator", iframe: () => "iframe",
    frame: () => "iframe", li: () => "listitem", main: () => "main", math: () => "math",
    menu: () => "list", meter: () => "meter", nav: () => "navigation", ol: () => "list",
    ul: () => "list", optgroup: () => "group", option: () => "option", output: () => "status",
    p: () => "paragraph", progress: () => "progressbar", search: () => "search",
    summary: () => "button", table: () => "table", tbody: () => "rowgroup",
    thead: () => "rowgroup", tfoot: () => "rowgroup", td: () => "cell", tr: () => "row",
    th: () => "columnheader", textarea: () => "textbox",
    header: (el) => (inScope(el) ? "" : "banner"),
    footer: (el) => (inScope(el) ? "" : "contentinfo"),
    section: (el) => (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") ? "region" : ""),
    img: (el) => (el.getAttribute("alt") === "" ? "" : "img"),
    select: (el) => (el.multiple || el.size > 1 ? "listbox" : "combobox"),
    input: (el) => {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (type === "hidden") return "";
      const role = INPUT[type] ?? "textbox";
      return el.hasAttribute("list") && (role === "textbox" || role === "searchbox") ? "combobox" : role;
    },
  };
  for (let n = 1; n <= 6; n++) IMPLICIT[`h${n}`] = () => "heading";
  const roleOf = (el) => {
    const explicit = (el.getAttribute("role") || "").trim().toLowerCase().split(/\s+/)[0];
    if (explicit && explicit !== "none" && explicit !== "presentation") return explicit;
    const implicit = IMPLICIT[el.localName];
    return implicit ? implicit(el) : "";
  };
  // Roles whose name comes from their content when nothing else names them.
  const BY_CONTENT = new Set([
    "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab",
    "tooltip", "treeitem",
  ]);
  const shown = (el) => {
    const style = getComputedStyle(el);
    return style.display !== "none" && style.visibility !== "hidden" && style.visibility !== "collapse"
      && el.getAttribute("aria-hidden") !== "true";
  };
  // Whether an element is out of the accessibility tree: hidden by CSS or `hidden`, or under
  // aria-hidden, anywhere up the composed tree.
  const hidden = (el) => {
    for (let node = el; node; node = parentOf(node)) {
      if (node.getAttribute("aria-hidden") === "true" || node.inert) return true;
    }
    let box = el;
    while (box && getComputedStyle(box).display === "contents") box = parentOf(box);
    return !box || !box.checkVisibility({ visibilityProperty: true });
  };
  const childrenOf = (node) => {
    if (node.localName === "slot") {
      const assigned = node.assignedNodes({ flatten: true });
      return assigned.length ? assigned : Array.from(node.childNodes);
    }
    return Array.from((node.shadowRoot || node).childNodes);
  };
  // The text an element contributes to a name: its content through the composed tree, an
  // embedded field's value, an image's alt, a block's spaces around it; never the element
  // being named (a field inside its own label).
  const contentOf = (node, top, named = top) => {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 || (node === named && node !== top)) return "";
    if (node !== top && !shown(node)) return "";
    if (node !== top) {
      const label = node.getAttribute("aria-label");
      if (label && label.trim()) return ` ${label} `;
      const tag = node.localName;
      if (tag === "img") return node.getAttribute("alt") || "";
      if (tag === "textarea") return ` ${node.value} `;
      if (tag === "input") return ["checkbox", "radio", "file", "hidden"].includes(node.type) ? "" : ` ${node.value} `;
      if (tag === "select") return ` ${node.selectedOptions[0]?.textContent || ""} `;
    }
    let text = "";
    for (const child of childrenOf(node)) text += contentOf(child, top, named);
    const display = node.localName === "slot" ? "contents" : getComputedStyle(node).display;
    return display.startsWith("inline") || display === "contents" ? text : ` ${text} `;
  };
  const byIds = (el, ids) => {
    const root = el.getRootNode();
    return ids.split(/\s+/).filter(Boolean)
      .map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id)))
      .filter(Boolean);
  };
  const nameOf = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = collapse(byIds(el, by).map((ref) => ref.getAttribute("aria-label") || contentOf(ref, ref)).join(" "));
      if (text) return text;
    }
    const aria = collapse(el.getAttribute("aria-label"));
    if (aria) return aria;
    const tag = el.localName;
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "input" && ["button", "submit", "reset"].includes(type)) {
      return collapse(el.value) || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
    }
    if (tag === "input" && type === "image") return collapse(el.getAttribute("alt") || el.value) || "Submit";
    if (el.labels && el.labels.length) {
      const text = collapse(Array.from(el.labels).map((label) => contentOf(label, label, el)).join(" "));
      if (text) return text;
    }
    if (tag === "img" || tag === "area") return collapse(el.getAttribute("alt"));
    if (tag === "fieldset") {
      const legend = Array.from(el.children).find((child) => child.localName === "legend");
      if (legend) return collapse(contentOf(legend, legend));
    }
    if (tag === "figure" || tag === "table") {
      const caption = Array.from(el.children).find((c) => c.localName === (tag === "table" ? "caption" : "figcaption"));
      if (caption) return collapse(contentOf(caption, caption));
    }
    if (BY_CONTENT.has(roleOf(el))) {
      const text = collapse(contentOf(el, el));
      if (text) return text;
    }
    return collapse(el.getAttribute("placeholder") || el.getAttribute("title"));
  };
  // `role=button` or `role=button[name="Delete account"]` (the name exact, spaces collapsed).
  const parse = (selector) => {
    const match = /^\s*role=([a-zA-Z-]+)\s*(?:\[\s*name\s*=\s*("(?:[^"\\]|\\.)*")\s*\])?\s*$/.exec(selector);
    if (!match) throw new SyntaxError(`'${selector}' is not a valid role selector: write role=button or role=button[name="Save"]`);
    return { role: match[1].toLowerCase(), name: match[2] === undefined ? null : collapse(JSON.parse(match[2])) };
  };
  const matches = (el, wanted) => roleOf(el) === wanted.role && !hidden(el)
    && (wanted.name === null || nameOf(el) === wanted.name);
  const isRole = (selector) => /^\s*role=/.test(selector);
  return { roleOf, nameOf, parse, matches, isRole };
}
