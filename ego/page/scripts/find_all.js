// Every element matching selector (open shadow roots pierced), in document order, as an array
// the actions keep by reference; a selector the engine does not take (CSS or role=) answers
// "invalid: <why>" instead, checked before anything is looked up.
(selector) => {
  const dom = __DOM__;
  const invalid = dom.problem(selector);
  if (invalid !== null) return "invalid: " + invalid;
  return dom.queryAll(selector);
}
