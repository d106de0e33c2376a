// Resolves true as soon as the selector matches (watching DOM changes rather than polling),
// or false after ms milliseconds.
(selector, ms) => new Promise((resolve) => {
  const found = () => document.querySelector(selector) !== null;
  if (found()) return resolve(true);
  const observer = new MutationObserver(() => {
    if (found()) { observer.disconnect(); clearTimeout(timer); resolve(true); }
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true });
  const timer = setTimeout(() => { observer.disconnect(); resolve(found()); }, ms);
})
