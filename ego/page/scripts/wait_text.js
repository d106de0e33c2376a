// Resolves true as soon as the page's visible text contains text (watching DOM changes
// rather than polling), or false after ms milliseconds.
(text, ms) => new Promise((resolve) => {
  const found = () => {
    // A document just committed may have no root yet.
    const root = document.body || document.documentElement;
    return !!root && (root.innerText ?? root.textContent ?? "").includes(text);
  };
  if (found()) return resolve(true);
  const observer = new MutationObserver(() => {
    if (found()) { observer.disconnect(); clearTimeout(timer); resolve(true); }
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
  const timer = setTimeout(() => { observer.disconnect(); resolve(found()); }, ms);
})
