// Resolves true as soon as the selector matches (open shadow roots included), or false after
// ms milliseconds. DOM changes are watched, not polled: in the document and in every open
// shadow root, each new one observed as it appears. A shadow root attached to an element that
// was already in the page makes no change the observers see, so a slow check every 250 ms
// covers that case.
(selector, ms) => new Promise((resolve) => {
  const dom = __DOM__;
  const found = () => dom.query(selector) !== null;
  if (found()) return resolve(true);
  __WATCH__
})
