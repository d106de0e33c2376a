// The selector engines for what people find things by, as Playwright's getBy* do: text=
// (the text an element shows, the smallest element that holds it), label= (a field's
// <label for>, a wrapping <label>, aria-labelledby, aria-label), placeholder=, alt=, title=
// and testid= (the test id attribute, data-testid unless ego.set_test_id_attribute named
// another). What follows the = is matched with whitespace collapsed: as written, a part of
// the text in any case (text=sign in); in quotes, the whole text exactly ("Sign in", or
// "sign in"i in any case); between slashes, a regular expression (/^Sign (in|up)$/i). A
// testid is always whole and exact. dom.js splices this in where it says __LOCATORS__ and
// calls it with the composed tree's parent function; `compile` throws a SyntaxError naming
// the selector when it is malformed, which is the engine's one check.
(parentOf) => {
  const TEST_ID = __TESTID__;
  const ENGINES = new Set(["text", "label", "placeholder", "alt", "title", "testid"]);
  const collapse = (s) => String(s ?? "").replace(/\s+/g, " ").trim();
  const SKIPPED = new Set(["script", "style", "noscript", "template", "head"]);
  // The nodes an element shows, in the composed tree: a shadow root's in place of its
  // host's own (which show through its slots), a slot's assigned nodes.
  const childrenOf = (node) => {
    if (node.localName === "slot") {
      const assigned = node.assignedNodes({ flatten: true });
      return assigned.length ? assigned : Array.from(node.childNodes);
    }
    return Array.from((node.shadowRoot || node).childNodes);
  };
  const BUTTON_INPUTS = new Set(["button", "submit", "reset"]);

  // How `body` (what follows engine=) matches a string: exact, any case, or a pattern.
  const matcher = (engine, body, selector) => {
    // Worded as the browser words a bad CSS selector, so that one check handles both.
    const bad = (why) => new SyntaxError(`'${selector}' is not a valid selector: ${why.replace(/: /g, " - ")}`);
    const given = body.trim();
    if (!given) throw bad(`give what to find after ${engine}=, such as ${engine}=Save or ${engine}="Save"`);
    const quoted = /^(["'])((?:[^\\]|\\.)*?)\1([is]?)$/.exec(given);
    if (quoted) {
      let value;
      try { value = quoted[1] === '"' ? JSON.parse(`"${quoted[2]}"`) : quoted[2].replace(/\\(.)/g, "$1"); }
      catch (e) { throw bad("the quoted text has a bad escape"); }
      const wanted = collapse(value);
      if (quoted[3] === "i") { const lower = wanted.toLowerCase(); return (s) => collapse(s).toLowerCase() === lower; }
      return (s) => collapse(s) === wanted;
    }
    if (given[0] === '"' || given[0] === "'") throw bad("the quote is not closed");
    const pattern = /^\/(.+)\/([a-z]*)$/s.exec(given);
    if (pattern) {
      let re;
      try { re = new RegExp(pattern[1], pattern[2]); } catch (e) { throw bad(`the pattern ${given} is not a regular expression (${e.message})`); }
      return (s) => { re.lastIndex = 0; return re.test(collapse(s)); };
    }
    if (engine === "testid") { const wanted = collapse(given); return (s) => collapse(s) === wanted; }
    const part = collapse(given).toLowerCase();
    return (s) => collapse(s).toLowerCase().includes(part);
  };

  // One query's view of the texts elements show, each computed once.
  const texts = () => {
    const cache = new Map();
    const textOf = (node) => {
      if (node.nodeType === 3) return node.data;
      if (node.nodeType !== 1 || SKIPPED.has(node.localName)) return "";
      let text = cache.get(node);
      if (text !== undefined) return text;
      if (node.localName === "input" && BUTTON_INPUTS.has(node.type)) text = node.value;
      else {
        text = "";
        for (const child of childrenOf(node)) text += textOf(child);
      }
      cache.set(node, text);
      return text;
    };
    return textOf;
  };

  const labelsOf = (el, textOf) => {
    const found = [];
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const root = el.getRootNode();
      for (const id of by.split(/\s+/).filter(Boolean)) {
        const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        if (ref) found.push(textOf(ref));
      }
    }
    const aria = el.getAttribute("aria-label");
    if (aria) found.push(aria);
    if (el.labels) for (const label of el.labels) found.push(textOf(label));
    return found;
  };

  // A test of elements for `engine` with `body`; a text= test keeps only the smallest
  // elements holding the text (none of whose children holds it too).
  const compile = (engine, body, selector) => {
    const matches = matcher(engine, body, selector);
    const textOf = texts();
    if (engine === "text") {
      const holds = new Map();
      const has = (el) => {
        let yes = holds.get(el);
        if (yes === undefined) { yes = !SKIPPED.has(el.localName) && matches(textOf(el)); holds.set(el, yes); }
        return yes;
      };
      return (el) => has(el) && !childrenOf(el).some((child) => child.nodeType === 1 && has(child));
    }
    if (engine === "label") return (el) => labelsOf(el, textOf).some(matches);
    const attribute = engine === "testid" ? TEST_ID : engine;
    return (el) => { const value = el.getAttribute(attribute); return value !== null && matches(value); };
  };
  return { ENGINES, compile, collapse, texts, labelsOf, TEST_ID };
}
