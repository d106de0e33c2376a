// Every element matching selector (open shadow roots pierced, engines and >> chains as dom.js
// takes them), in document order, as an array the actions keep by reference; a malformed
// selector answers "invalid: <why>" instead, checked before anything is looked up.
(selector) => {
  const dom = __DOM__;
  const why = dom.problem(selector);
  if (why !== null) return "invalid: " + why;
  return dom.queryAll(selector);
}
