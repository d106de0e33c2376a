// Resolves true as soon as the page's shown text (open shadow roots included) contains text,
// or false after ms milliseconds. Watched as wait_for.js watches a selector.
(text, ms) => new Promise((resolve) => {
  const dom = __DOM__;
  // A document just committed may have no root yet.
  const found = () => dom.shownText().includes(text);
  if (found()) return resolve(true);
  __WATCH__
})
