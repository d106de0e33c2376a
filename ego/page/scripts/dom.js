// What every page script shares about the DOM: CSS selectors that pierce open shadow roots,
// as Playwright's CSS engine does, `role=` selectors (roles.js), what people find things by
// (text=, label=, placeholder=, alt=, title=, testid=: locators.js), `>>` chaining them (each
// part found inside the elements the part before found), the text a page shows, and a
// selector that finds an element again. Scripts get it as `dom` (page_script() splices it in
// where a script says __DOM__). Closed shadow roots stay closed: page script cannot see into
// them.
() => {
  // Splits text at the places `cut(text, i)` names (it answers the separator's length, or 0),
  // never inside brackets, parentheses or quotes.
  const splitTop = (text, cut) => {
    const parts = [];
    let depth = 0, quote = "", start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "\\") { i++; continue; }
      if (quote) { if (c === quote) quote = ""; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (c === "(" || c === "[") depth++;
      else if (c === ")" || c === "]") depth--;
      else if (depth === 0) {
        const n = cut(text, i);
        if (n) { parts.push(text.slice(start, i)); start = i + n; i += n - 1; }
      }
    }
    parts.push(text.slice(start));
    return parts;
  };
  const comma = (text, i) => (text[i] === "," ? 1 : 0);
  // A descendant combinator: whitespace between two compounds (not around >, + or ~).
  const descendant = (text, i) => {
    if (!/\s/.test(text[i])) return 0;
    let j = i;
    while (j < text.length && /\s/.test(text[j])) j++;
    const before = text[i - 1], after = text[j];
    return before && after && !/[>+~,]/.test(before) && !/[>+~,]/.test(after) ? j - i : 0;
  };
  const parsed = new Map();
  // Each alternative of a selector list as its descendant-separated segments: the only
  // combinator that crosses into a shadow root (`my-card button` finds the card's button).
  const parse = (selector) => {
    let alternatives = parsed.get(selector);
    if (!alternatives) {
      alternatives = splitTop(selector, comma)
        .map((alt) => splitTop(alt.trim(), descendant).map((s) => s.trim()).filter(Boolean))
        .filter((segments) => segments.length);
      parsed.set(selector, alternatives);
    }
    return alternatives;
  };
  // An element's parent in the composed tree: a shadow root's children belong to its host.
  const parentOf = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const matchesChain = (el, segments) => {
    if (!el.matches(segments[segments.length - 1])) return false;
    let node = el;
    // Nearest matching ancestor first: for descendant combinators a nearer match never
    // rules out a chain that a farther one would allow.
    for (let i = segments.length - 2; i >= 0; i--) {
      node = parentOf(node);
      while (node && !node.matches(segments[i])) node = parentOf(node);
      if (!node) return false;
    }
    return true;
  };
  // Elements under root in document order, each open shadow root's right after its host.
  const elementsOf = function* (root) {
    if (root.nodeType === 1 && root.shadowRoot) yield* elementsOf(root.shadowRoot);
    for (const el of root.querySelectorAll("*")) {
      yield el;
      if (el.shadowRoot) yield* elementsOf(el.shadowRoot);
    }
  };
  const roles = __ROLES__(parentOf);
  const locators = __LOCATORS__(parentOf);
  const ENGINE = /^\s*([a-z]+)=([\s\S]*)$/;
  // The parts of a chain (`#list >> text=Apple`), cut at each >> outside quotes and brackets.
  const chain = (selector) => (selector.includes(">>")
    ? splitTop(selector, (text, i) => (text[i] === ">" && text[i + 1] === ">" ? 2 : 0)).map((p) => p.trim())
    : [selector]);
  // A test of elements for one part of a chain: CSS (or css=...), role=, or an engine of
  // locators.js. Throws a SyntaxError naming the part when it is malformed.
  const compile = (part) => {
    if (!part.trim()) throw new SyntaxError(`'${part}' is empty: write a selector on each side of >>`);
    const engine = ENGINE.exec(part);
    if (engine && engine[1] === "role") {
      const wanted = roles.parse(part);
      return (el) => roles.matches(el, wanted);
    }
    if (engine && locators.ENGINES.has(engine[1])) return locators.compile(engine[1], engine[2], part.trim());
    const css = engine && engine[1] === "css" ? engine[2].trim() : part;
    document.createDocumentFragment().querySelector(css); // not CSS: throws, as querySelector does
    const alternatives = parse(css);
    return (el) => alternatives.some((segments) => matchesChain(el, segments));
  };
  const within = (el, scopes) => { for (let n = parentOf(el); n; n = parentOf(n)) if (scopes.has(n)) return true; return false; };
  const queryAll = (selector, root = document, limit = Infinity) => {
    const tests = chain(selector).map(compile);
    const found = [];
    if (limit <= 0) return found;
    let scopes = null;
    for (let i = 0; i < tests.length; i++) {
      const last = i === tests.length - 1;
      const matched = [];
      for (const el of elementsOf(root)) {
        if ((scopes === null || within(el, scopes)) && tests[i](el)) {
          matched.push(el);
          if (last && matched.length >= limit) break;
        }
      }
      if (last) return matched;
      if (!matched.length) return found;
      scopes = new Set(matched);
    }
    return found;
  };
  const query = (selector, root = document) => queryAll(selector, root, 1)[0] || null;
  // Why `selector` is no selector the engine takes (a message), or null: each part of a chain
  // is compiled (CSS checked on an empty fragment), so nothing in the page is looked up.
  const problem = (selector) => {
    try {
      chain(selector).forEach(compile);
      return null;
    } catch (e) {
      return String(e.message || e);
    }
  };
  // The document and every open shadow root in it, nested ones included.
  let rootsCache = null;
  const roots = (fresh = false) => {
    if (!rootsCache || fresh) {
      rootsCache = [document];
      for (let i = 0; i < rootsCache.length; i++) {
        for (const el of rootsCache[i].querySelectorAll("*")) if (el.shadowRoot) rootsCache.push(el.shadowRoot);
      }
    }
    return rootsCache;
  };
  // The text the page shows: the body's, then each open shadow root's.
  const shownText = () => {
    const parts = [];
    const top = document.body || document.documentElement;
    if (top) parts.push(top.innerText ?? top.textContent ?? "");
    for (const root of roots(true).slice(1)) {
      for (const child of root.children) parts.push(child.innerText ?? child.textContent ?? "");
    }
    return parts.join("\n");
  };
  const esc = (v) => (window.CSS && CSS.escape ? CSS.escape(v) : String(v).replace(/["\\]/g, "\\$&"));
  const quoted = (v) => `"${String(v).replace(/["\\]/g, "\\$&")}"`;
  // How many elements a selector without a descendant combinator matches, over every root.
  const count = (selector) => {
    try { return roots().reduce((n, root) => n + root.querySelectorAll(selector).length, 0); }
    catch (e) { return 0; }
  };
  const goodId = (id) => id && !/^\d|[:.]/.test(id);
  const ATTRIBUTES = ["data-testid", "data-test", "data-qa", "name", "aria-label", "href", "placeholder", "alt", "title"];
  // A selector that finds el alone (ids, test ids, names and labels when unique; a short
  // :nth-of-type path from the nearest unique anchor otherwise). An element inside a shadow
  // root gets its host's selector, a space, and its own within the root.
  const selectorOf = (el, attributes = ATTRIBUTES) => {
    if (goodId(el.id) && count(`#${esc(el.id)}`) === 1) return `#${esc(el.id)}`;
    for (const name of attributes) {
      const v = el.getAttribute(name);
      if (!v || v.length > 80) continue;
      const sel = `${el.localName}[${name}=${quoted(v)}]`;
      if (count(sel) === 1) return sel;
    }
    const root = el.getRootNode();
    const inShadow = root !== document && root.host;
    const unique = (sel) => (inShadow ? root.querySelectorAll(sel).length === 1 : count(sel) === 1);
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      if (node !== el && goodId(node.id) && unique(`#${esc(node.id)}`)) { parts.unshift(`#${esc(node.id)}`); break; }
      const testid = node.getAttribute("data-testid");
      if (node !== el && testid && unique(`[data-testid=${quoted(testid)}]`)) { parts.unshift(`[data-testid=${quoted(testid)}]`); break; }
      let part = node.localName;
      const parent = node.parentElement;
      const siblings = parent ? parent.children : node.parentNode ? node.parentNode.children : [];
      const same = Array.from(siblings).filter((c) => c.localName === node.localName);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      parts.unshift(part);
      node = parent;
    }
    const own = parts.join(" > ") || el.localName;
    return inShadow ? `${selectorOf(root.host, attributes)} ${own}` : own;
  };
  return { query, queryAll, problem, roots, shownText, selectorOf, parentOf, esc, roles, locators };
}
