// A durable selector for one element (called on it): `role=...[name="..."]` from the role and
// name Chrome computes, when the engine finds this element alone by them, else a CSS selector
// (dom.selectorOf); each is checked here to find exactly this element. Answers {selector},
// or {problem} when none does.
function (role, name) {
  const dom = __DOM__;
  const el = this;
  if (!el || el.nodeType !== 1) return { problem: "it is not an element" };
  for (let root = el.getRootNode(); root !== document; root = root.host.getRootNode()) {
    if (!root.host) return { problem: "it is not in the page's document any more" };
    if (root.mode === "closed") return { problem: "it is inside a closed shadow root, which no selector reaches into" };
  }
  const tries = [];
  if (role && name) tries.push(`role=${role}[name=${JSON.stringify(name)}]`);
  tries.push(dom.selectorOf(el));
  for (const selector of tries) {
    let found;
    try { found = dom.queryAll(selector, document, 2); } catch (e) { continue; }
    if (found.length === 1 && found[0] === el) return { selector };
  }
  return { problem: "every selector tried also matches other elements" };
}
