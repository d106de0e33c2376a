// Every element matching selector (open shadow roots pierced), in document order, as an array
// the actions keep by reference; a selector that is not CSS answers "invalid: <why>" instead,
// checked on an empty fragment before anything is looked up.
(selector) => {
  try { document.createDocumentFragment().querySelector(selector); }
  catch (e) { return "invalid: " + e.message; }
  return __DOM__.queryAll(selector);
}
