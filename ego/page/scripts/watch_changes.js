// Counts what changes a document from now on: its mutations (its open shadow roots' too) and
// the input, change, focus and toggle events of its elements. Answers the watcher (held by
// its remote object, so nothing is left on the page); `watcher.stop()` answers the count and
// ends the watch, which also ends by itself after a minute (a watch nobody asked about).
function () {
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  const watcher = { count: 0, controller: new AbortController() };
  const seen = () => { watcher.count += 1; };
  watcher.observer = new MutationObserver((records) => { watcher.count += records.length; });
  const roots = [document];
  while (roots.length) {
    const root = roots.pop();
    watcher.observer.observe(root, options);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
    }
  }
  for (const type of ["input", "change", "focusin", "focusout", "toggle"]) {
    document.addEventListener(type, seen, { capture: true, signal: watcher.controller.signal });
  }
  watcher.stop = function () {
    clearTimeout(this.timer);
    this.count += this.observer.takeRecords().length;
    this.observer.disconnect();
    this.controller.abort();
    return this.count;
  };
  watcher.timer = setTimeout(() => watcher.stop(), 60000);
  return watcher;
}
