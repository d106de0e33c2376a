// Counts what changes a document from now on: its mutations (its open shadow roots' too) and
// the input, change, focus and toggle events of its elements. Answers the watcher (held by
// its remote object, so nothing is left on the page); `stop.call(watcher)` answers the count
// and ends the watch.
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
    this.count += this.observer.takeRecords().length;
    this.observer.disconnect();
    this.controller.abort();
    return this.count;
  };
  return watcher;
}
