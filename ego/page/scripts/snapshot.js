// A compact text outline of the page for an agent: landmarks, headings, links, buttons,
// form fields, images and short text, each with a CSS selector that stays valid across
// runs (ids, data-testid, name, aria-label; a :nth-of-type path only as a last resort).
// Never ephemeral refs or coordinates: a selector can be saved into a tool.
(maxLines) => {
  const esc = (v) => (window.CSS && CSS.escape ? CSS.escape(v) : String(v).replace(/["\\]/g, "\\$&"));
  const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
  const attrSel = (el, name) => {
    const v = el.getAttribute(name);
    if (!v || v.length > 80) return null;
    const sel = `${el.localName}[${name}="${String(v).replace(/["\\]/g, "\\$&")}"]`;
    return unique(sel) ? sel : null;
  };
  const selectorOf = (el) => {
    if (el.id && !/^\d|[:.]/.test(el.id) && unique(`#${esc(el.id)}`)) return `#${esc(el.id)}`;
    for (const name of ["data-testid", "data-test", "data-qa", "name", "aria-label", "href", "placeholder", "alt", "title"]) {
      const sel = attrSel(el, name);
      if (sel) return sel;
    }
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      if (node.id && !/^\d|[:.]/.test(node.id) && unique(`#${esc(node.id)}`)) { parts.unshift(`#${esc(node.id)}`); break; }
      const testid = node.getAttribute("data-testid");
      if (testid && unique(`[data-testid="${testid}"]`)) { parts.unshift(`[data-testid="${testid}"]`); break; }
      let part = node.localName;
      const parent = node.parentElement;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      node = parent;
    }
    return parts.join(" > ");
  };
  const visible = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return false;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return false;
    return style.display === "contents" || el.getClientRects().length > 0;
  };
  const text = (s, n = 80) => { s = (s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; };
  const labelOf = (el) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    const by = el.getAttribute("aria-labelledby");
    if (by) { const t = by.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" "); if (t.trim()) return t; }
    if (el.labels && el.labels.length) return el.labels[0].textContent;
    return el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("name") || "";
  };
  const LANDMARK = { header: "banner", nav: "navigation", main: "main", footer: "contentinfo", aside: "complementary", form: "form", section: "region", dialog: "dialog" };
  const lines = [`page "${text(document.title, 120)}" ${location.href}`];
  let truncated = false;
  const walk = (el, depth) => {
    if (lines.length >= maxLines) { truncated = true; return; }
    if (!(el instanceof Element) || ["script", "style", "noscript", "template", "svg", "head"].includes(el.localName)) return;
    if (!visible(el)) return;
    const tag = el.localName;
    const role = el.getAttribute("role") || LANDMARK[tag] || "";
    const pad = "  ".repeat(depth);
    let line = null;
    if (/^h[1-6]$/.test(tag)) line = `heading[${tag[1]}] "${text(el.textContent)}"`;
    else if (tag === "a" && el.hasAttribute("href")) line = `link "${text(el.textContent || labelOf(el))}" -> ${el.getAttribute("href")}`;
    else if (tag === "button" || role === "button" || (tag === "input" && ["submit", "button", "reset"].includes(el.type))) line = `button "${text(el.textContent || el.value || labelOf(el))}"`;
    else if (tag === "input" && el.type !== "hidden") line = `${el.type === "checkbox" || el.type === "radio" ? el.type : "textbox"} "${text(labelOf(el))}"${el.type === "checkbox" || el.type === "radio" ? (el.checked ? " checked" : "") : el.value ? ` value="${text(el.value, 40)}"` : ""}${el.type !== "text" && el.type !== "checkbox" && el.type !== "radio" ? ` type=${el.type}` : ""}`;
    else if (tag === "textarea") line = `textbox "${text(labelOf(el))}" multiline`;
    else if (tag === "select") line = `combobox "${text(labelOf(el))}" value="${text(el.value, 40)}"`;
    else if (tag === "img") line = `img "${text(el.getAttribute("alt") || "")}"`;
    else if (role && role !== "presentation" && role !== "none") line = `${role}${labelOf(el) ? ` "${text(labelOf(el))}"` : ""}`;
    if (line !== null) {
      lines.push(`${pad}${line}  {${selectorOf(el)}}`);
      if (["a", "button", "select", "textarea", "input"].includes(tag) || /^h[1-6]$/.test(tag)) return;
    } else {
      const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join(" ");
      if (text(own) && ["p", "li", "td", "th", "span", "div", "label", "dd", "dt", "strong", "em", "small", "blockquote", "figcaption"].includes(tag)) {
        lines.push(`${pad}text "${text(own, 100)}"  {${selectorOf(el)}}`);
      }
    }
    for (const child of el.children) walk(child, line !== null ? depth + 1 : depth);
  };
  if (document.body) walk(document.body, 0);
  if (truncated) lines.push(`… (cut at ${maxLines} lines)`);
  return lines.join("\n");
}
