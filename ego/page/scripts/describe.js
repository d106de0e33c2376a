// Describes a value for Tab.evaluate so that it survives the trip as JSON: JSON values stay
// as they are, and what JSON cannot carry comes back in words (docs/architecture.md, "Values from evaluate", lists the rules).
// Answers [value] or [value, specials]: each special ([path, kind, text]) is a number or
// BigInt JSON cannot carry, left as null at that path for Python to put back.
(value) => {
  const MAX_DEPTH = 290; // the by-value answer allows 297 levels of nesting; a node adds one
  const specials = [];
  const path = [];
  const ancestors = [];
  const ancestorDepths = [];
  const excerpt = (s, n = 80) => { s = String(s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; };
  const esc = (v) => (window.CSS && CSS.escape ? CSS.escape(v) : String(v).replace(/["\\]/g, "\\$&"));
  const unique = (el, sel) => { try { const found = el.ownerDocument.querySelectorAll(sel); return found.length === 1 && found[0] === el; } catch (e) { return false; } };
  const selectorOf = (el) => {
    if (el.id && unique(el, `#${esc(el.id)}`)) return `#${esc(el.id)}`;
    for (const name of ["data-testid", "data-test", "data-qa", "name", "aria-label"]) {
      const v = el.getAttribute(name);
      if (v && v.length <= 80) {
        const sel = `${el.localName}[${name}="${String(v).replace(/["\\]/g, "\\$&")}"]`;
        if (unique(el, sel)) return sel;
      }
    }
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== node.ownerDocument.documentElement) {
      if (node !== el && node.id && unique(node, `#${esc(node.id)}`)) { parts.unshift(`#${esc(node.id)}`); break; }
      let part = node.localName;
      const parent = node.parentElement;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      node = parent;
    }
    return parts.length ? parts.join(" > ") : el.localName;
  };
  const describeNode = (n) => {
    if (n.nodeType === 1) {
      // innerText: the text as shown (a list's items apart), where the element has it.
      const shown = typeof n.innerText === "string" ? n.innerText : n.textContent;
      return { tag: n.localName, id: n.id || null, classes: Array.from(n.classList || []), text: excerpt(shown), selector: selectorOf(n) };
    }
    if (n.nodeType === 9) return { tag: "#document", id: null, classes: [], text: excerpt(n.title), selector: null };
    const parent = n.parentElement;
    return { tag: String(n.nodeName).toLowerCase(), id: null, classes: [], text: excerpt(n.textContent), selector: parent ? selectorOf(parent) : null };
  };
  const pathText = (keys) => "$" + keys.map((k) => (typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)).join("");
  const special = (kind, text) => { specials.push([path.slice(), kind, text]); return null; };
  const kindOf = (v) => { try { return Object.prototype.toString.call(v).slice(8, -1); } catch (e) { return "Object"; } };
  const isNode = (v) => { try { return typeof v.nodeType === "number" && typeof v.nodeName === "string" && typeof v.cloneNode === "function"; } catch (e) { return false; } };
  const isWindow = (v) => { try { return v === v.window && typeof v.document === "object"; } catch (e) { return false; } };

  const each = (items, depth) => items.map((item, i) => { path.push(i); const out = walk(item, depth); path.pop(); return out; });

  const objectOf = (v, depth) => {
    const kind = kindOf(v);
    if (isNode(v)) return describeNode(v);
    if (kind === "Date") { try { return Date.prototype.toISOString.call(v); } catch (e) { return "Invalid Date"; } }
    if (kind === "Map") { try { return each(Array.from(Map.prototype.entries.call(v)), depth); } catch (e) { /* not a real Map */ } }
    if (kind === "Set") { try { return each(Array.from(Set.prototype.values.call(v)), depth); } catch (e) { /* not a real Set */ } }
    if (Array.isArray(v)) return each(Array.from(v, (item) => item), depth);
    if (kind === "NodeList" || kind === "HTMLCollection") return each(Array.from(v), depth);
    if (kind === "RegExp") return String(v);
    if (v instanceof Error || kind === "Error") { try { return `${v.name}: ${v.message}`; } catch (e) { return "Error"; } }
    if (ArrayBuffer.isView(v) && kind !== "DataView") return each(Array.from(v), depth);
    if (kind === "ArrayBuffer" || kind === "SharedArrayBuffer" || kind === "DataView") return `[${kind} ${v.byteLength} bytes]`;
    if (kind === "Promise" || kind === "WeakMap" || kind === "WeakSet" || kind === "WeakRef") return `[${kind}]`;
    if (isWindow(v)) { try { return `[Window ${v.location.href}]`; } catch (e) { return "[Window]"; } }
    let keys;
    try { keys = Object.keys(v); } catch (e) { return `[Unreadable ${kind}]`; }
    const out = {};
    for (const key of keys) {
      let item;
      try { item = v[key]; } catch (e) { item = `[Thrown: ${e && e.message ? e.message : e}]`; }
      if (item === undefined) continue; // as JSON: the key is left out
      path.push(key);
      // defineProperty, not assignment: a key named "__proto__" stays an own key, as in JSON.
      Object.defineProperty(out, key, { value: walk(item, depth), enumerable: true, writable: true, configurable: true });
      path.pop();
    }
    return out;
  };

  const walk = (v, depth) => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        if (Number.isFinite(v) && !Object.is(v, -0)) return v;
        return special("number", Object.is(v, -0) ? "-0" : String(v));
      case "bigint":
        return special("bigint", v.toString());
      case "undefined":
        return null;
      case "symbol":
        return v.toString();
      case "function":
        return `[Function ${v.name || "(anonymous)"}]`;
    }
    if (v === null) return null;
    const seen = ancestors.indexOf(v);
    if (seen >= 0) return `[Circular ${pathText(path.slice(0, ancestorDepths[seen]))}]`;
    if (depth >= MAX_DEPTH) return "[Nested too deep]";
    ancestors.push(v);
    ancestorDepths.push(path.length);
    try {
      return objectOf(v, depth + 1);
    } finally {
      ancestors.pop();
      ancestorDepths.pop();
    }
  };

  const described = walk(value, 0);
  return specials.length ? [described, specials] : [described];
}
