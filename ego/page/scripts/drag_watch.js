// Whether an HTML5 drag began in this document under the pressed mouse. "arm", before the
// moves, keeps the page's `dragstart` events with a capture listener; "check", after a move
// once the page's own handlers ran, answers true when one came and was not cancelled (the
// watch then ends); "end" answers the same and ends the watch. Chrome hands such a drag to
// the caller (Input.dragIntercepted) instead of the system, which is how the drop is made
// with Input.dispatchDragEvent. Beside it, "observe" starts noting whether the page moves
// elements about while the mouse moves (a sortable list does), and "rearranged" answers
// that and stops.
function (mode) {
  if (mode === "observe" || mode === "rearranged") {
    const noted = Symbol.for("ego.rearranged");
    if (mode === "observe") {
      if (window[noted]) window[noted].observer.disconnect();
      const record = { moved: false };
      record.observer = new MutationObserver(() => { record.moved = true; });
      record.observer.observe(document, { childList: true, subtree: true });
      window[noted] = record;
      return false;
    }
    const record = window[noted];
    if (!record) return false;
    record.observer.disconnect();
    delete window[noted];
    return record.moved;
  }
  const key = Symbol.for("ego.drag");
  if (mode === "arm") {
    if (!window[key]) {
      const record = { event: null };
      record.on = (e) => { record.event = e; };
      window.addEventListener("dragstart", record.on, true);
      window[key] = record;
    }
    return false;
  }
  const record = window[key];
  if (!record) return false;
  // A timer runs after the dispatch of the move that started the drag, so after every
  // handler that could cancel it.
  return new Promise((resolve) => setTimeout(() => {
    const started = !!record.event && !record.event.defaultPrevented;
    record.event = null;
    if (started || mode === "end") {
      window.removeEventListener("dragstart", record.on, true);
      delete window[key];
    }
    resolve(started);
  }, 0));
}
