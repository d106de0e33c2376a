// A compact outline of one document for an agent: landmarks, headings, links, buttons, form
// fields, images, iframes and the text between them, in the order a reader sees them (open
// shadow roots included, slotted content where its slot is). Each line gets a CSS selector that
// stays valid across runs (ids, data-testid, name, aria-label; a :nth-of-type path only as a
// last resort), never ephemeral refs or coordinates: a selector can be saved into a tool.
// Answers {title, url, lines: [[depth, text, selector, owner]], cut, missing}: owner is the
// index (in owners) of the frame an iframe line shows, else -1; Python nests that frame's own
// outline under the line.
(options, ...owners) => {
  const dom = __DOM__;
  const limit = options.limit;
  const text = (s, n = 80) => { s = (s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; };
  const quoted = (s) => JSON.stringify(s);
  const visible = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return false;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return false;
    return style.display === "contents" || el.getClientRects().length > 0;
  };
  const labelOf = (el) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const root = el.getRootNode();
      const t = by.split(/\s+/).map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id))?.textContent || "").join(" ");
      if (t.trim()) return t;
    }
    if (el.labels && el.labels.length) return el.labels[0].textContent;
    return el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("name") || "";
  };
  const SKIP = new Set(["script", "style", "noscript", "template", "svg", "head", "link", "meta"]);
  const LANDMARK = { header: "banner", nav: "navigation", main: "main", footer: "contentinfo", aside: "complementary", form: "form", section: "region", dialog: "dialog" };
  // Elements whose line says all there is: their content is not walked.
  const LEAF = new Set(["a", "button", "select", "textarea", "input", "img", "iframe", "frame", "pre", "h1", "h2", "h3", "h4", "h5", "h6"]);
  const NAMED_BY_CONTENT = new Set(["button", "link", "heading", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "checkbox", "radio", "switch", "treeitem", "cell", "columnheader", "rowheader", "tooltip"]);
  const BEARS_LINES = "a[href],button,input,select,textarea,img,iframe,frame,pre,h1,h2,h3,h4,h5,h6,[role]";
  const lineOf = (el) => {
    const tag = el.localName;
    const role = el.getAttribute("role") || LANDMARK[tag] || "";
    if (/^h[1-6]$/.test(tag)) return `heading[${tag[1]}] ${quoted(text(el.innerText ?? el.textContent))}`;
    if (tag === "a" && el.hasAttribute("href")) return `link ${quoted(text(el.innerText || el.textContent || labelOf(el)))} -> ${el.getAttribute("href")}`;
    if (tag === "button" || role === "button" || (tag === "input" && ["submit", "button", "reset"].includes(el.type))) return `button ${quoted(text(el.innerText || el.textContent || el.value || labelOf(el)))}`;
    if (tag === "input" && el.type !== "hidden") {
      const check = el.type === "checkbox" || el.type === "radio";
      const kind = check ? el.type : "textbox";
      const state = check ? (el.checked ? " checked" : "") : el.value ? ` value=${quoted(text(el.value, 40))}` : "";
      return `${kind} ${quoted(text(labelOf(el)))}${state}${el.type !== "text" && !check ? ` type=${el.type}` : ""}`;
    }
    if (tag === "textarea") return `textbox ${quoted(text(labelOf(el)))} multiline`;
    if (tag === "select") return `combobox ${quoted(text(labelOf(el)))} value=${quoted(text(el.value, 40))}`;
    if (tag === "img") return `img ${quoted(text(el.getAttribute("alt") || ""))}`;
    if (tag === "iframe" || tag === "frame") return `iframe ${quoted(text(el.getAttribute("title") || el.getAttribute("name") || el.getAttribute("src") || ""))}`;
    if (tag === "pre") return `pre ${quoted(text((el.innerText ?? el.textContent).replace(/\n/g, " ⏎ "), 200))}`;
    if (role && role !== "presentation" && role !== "none" && role !== "generic") {
      const label = labelOf(el) || (NAMED_BY_CONTENT.has(role) ? el.innerText ?? el.textContent : "");
      return `${role}${label ? ` ${quoted(text(label))}` : ""}`;
    }
    return null;
  };
  // A role named by its content says all of it: its content is not walked.
  const leaf = (el) => LEAF.has(el.localName) || NAMED_BY_CONTENT.has(el.getAttribute("role") || "");
  // The children a reader sees: a shadow root's (slots replaced by what is assigned to them),
  // else the element's own.
  const childrenOf = (el) => {
    if (el.localName === "slot") {
      const assigned = el.assignedNodes({ flatten: true });
      return assigned.length ? assigned : Array.from(el.childNodes);
    }
    return Array.from((el.shadowRoot || el).childNodes);
  };
  // Inline content that becomes part of its parent's text line: inline, with no line of its
  // own and nothing inside that would have one.
  const inlineText = (el) => {
    if (SKIP.has(el.localName) || lineOf(el) !== null || el.shadowRoot) return null;
    if (el.localName === "br") return " ";
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return "";
    if (!style.display.startsWith("inline") || el.querySelector(BEARS_LINES)) return null;
    return el.innerText ?? el.textContent;
  };
  const lines = [];
  let cut = false;
  const push = (depth, line, el, owner = -1) => {
    if (lines.length >= limit) { cut = true; return false; }
    lines.push([depth, line, dom.selectorOf(el), owner]);
    return true;
  };
  const walk = (el, depth) => {
    if (cut || SKIP.has(el.localName) || !visible(el)) return;
    const line = lineOf(el);
    if (line !== null) {
      const owner = el.localName === "iframe" || el.localName === "frame" ? owners.indexOf(el) : -1;
      if (!push(depth, line, el, owner) || leaf(el)) return;
    }
    const inner = line !== null ? depth + 1 : depth;
    // A run of text and inline elements; when all its text comes from one inline element
    // (a lone <label> or <span>), the line takes that element's selector.
    let run = "", holder = null, mixed = false;
    const flush = () => {
      const t = text(run, 120);
      if (t) push(inner, `text ${quoted(t)}`, holder && !mixed ? holder : el);
      run = ""; holder = null; mixed = false;
    };
    for (const node of childrenOf(el)) {
      if (cut) return;
      if (node.nodeType === 3) { run += node.textContent; if (node.textContent.trim()) mixed = true; continue; }
      if (node.nodeType !== 1) continue;
      const inline = inlineText(node);
      if (inline !== null) {
        run += inline;
        if (inline.trim()) { if (holder) mixed = true; holder = node; }
        continue;
      }
      flush();
      walk(node, inner);
    }
    flush();
  };
  const root = options.root ? dom.query(options.root) : document.body || document.documentElement;
  if (options.root && !root) return { missing: true, title: document.title, url: location.href };
  if (root) walk(root, 0);
  return { title: document.title, url: location.href, lines, cut };
}
