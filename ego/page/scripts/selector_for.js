// A durable selector for one element (called on it), as a person would name it, in this
// order: its test id (testid=), the role and name Chrome computes (role=...[name="..."]), its
// placeholder, label, alt text, own text or title (placeholder="...", label="...", ...: the
// whole text, exact), else a CSS selector (dom.selectorOf). Each is checked here to find
// exactly this element; the first that does is the answer. Answers {selector}, or {problem}
// when none does. With byContent false, what the element shows (label, alt, text, title) is
// left out: for an element read for its content, which changes with the answer.
function (role, name, byContent) {
  const dom = __DOM__;
  const el = this;
  if (!el || el.nodeType !== 1) return { problem: "it is not an element" };
  for (let root = el.getRootNode(); root !== document; root = root.host.getRootNode()) {
    if (!root.host) return { problem: "it is not in the page's document any more" };
    if (root.mode === "closed") return { problem: "it is inside a closed shadow root, which no selector reaches into" };
  }
  const { collapse, texts, labelsOf, TEST_ID } = dom.locators;
  const exact = (engine, value) => {
    const text = collapse(value);
    return text && text.length <= 80 ? `${engine}=${JSON.stringify(text)}` : null;
  };
  const textOf = texts();
  const shown = byContent === false ? [] : [
    role && name ? `role=${role}[name=${JSON.stringify(name)}]` : null,
    exact("placeholder", el.getAttribute("placeholder")),
    ...labelsOf(el, textOf).map((label) => exact("label", label)),
    exact("alt", el.getAttribute("alt")),
    exact("text", textOf(el)),
    exact("title", el.getAttribute("title")),
  ];
  const tries = [exact("testid", el.getAttribute(TEST_ID)), ...shown].filter(Boolean);
  tries.push(dom.selectorOf(el));
  for (const selector of tries) {
    let found;
    try { found = dom.queryAll(selector, document, 2); } catch (e) { continue; }
    if (found.length === 1 && found[0] === el) return { selector };
  }
  return { problem: "every selector tried also matches other elements" };
}
