// Scrolls as a person with a scrollbar or the keyboard does, and answers where things are.
// `this` is the matches held, a ref's node, or nothing (the selector's matches are found;
// with options.page, the document itself is scrolled). The element must be attached and
// visible (waited for, every animation frame, until options.timeout ms). options.mode:
// "into_view": the element scrolled to the centre when it is not wholly in view, and its box
//   once the page handled the scroll;
// "by": the element's scroller (itself when it scrolls that way, else what inside it has the
//   most to scroll that way, else its nearest scrolling ancestor in the composed tree, else
//   the document) moved by options.dx, options.dy;
// "to": that scroller moved to its options.to edge (top, bottom, left, right);
// "until": that scroller moved toward options.to (bottom by default) a view at a time (each
//   view meets the last, so no row is skipped), each once the page handled it (its scroll
//   event, and what that asked of the next frame: a virtualized list draws its rows), until
//   options.until matches a visible element (then scrolled into view) or the scroller's end.
// Answers {ok: true, what, x, y, maxX, maxY, found?, box?} or {ok: false, why, ...}.
async function (selector, options) {
  const dom = __DOM__;
  const frame = () => new Promise((resolve) => {
    // A tab in the background gets no animation frames: a timer stands in.
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => { clearTimeout(timer); resolve(); });
  });
  const deadline = performance.now() + options.timeout;
  const describe = (el) => {
    if (!el || el.nodeType !== 1) return "the page";
    if (el === document.scrollingElement || el === document.documentElement || el === document.body) return "the page";
    let s = "<" + el.localName + (el.id ? ` id=${el.id}` : "");
    const cls = typeof el.className === "string" ? el.className.trim().split(/\s+/).filter(Boolean).slice(0, 2).join(" ") : "";
    return s + (cls ? ` class=${cls}` : "") + ">";
  };
  const shown = (el) => {
    if (!el.checkVisibility({ visibilityProperty: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  if (options.until !== undefined && options.until !== null) {
    const why = dom.problem(options.until);
    if (why !== null) return { ok: false, why: "invalid", invalid: why, part: "until" };
  }
  let el = null;
  if (!options.page) {
    if (selector !== null && !(this && (Array.isArray(this) || this.nodeType))) {
      const why = dom.problem(selector);
      if (why !== null) return { ok: false, why: "invalid", invalid: why };
    }
    for (;;) {
      const list = Array.isArray(this) ? this : this && this.nodeType ? [this] : dom.queryAll(selector);
      el = list.find((e) => e && e.nodeType === 1 && e.isConnected && shown(e)) || null;
      if (el) break;
      if (performance.now() >= deadline) {
        const connected = list.filter((e) => e && e.isConnected);
        return { ok: false, why: connected.length ? "hidden" : "missing", what: describe(connected[0]) };
      }
      await frame();
    }
  }
  const page = document.scrollingElement || document.documentElement;
  const where = (scroller) => ({
    what: describe(scroller),
    x: Math.round(scroller.scrollLeft), y: Math.round(scroller.scrollTop),
    maxX: Math.max(0, scroller.scrollWidth - scroller.clientWidth),
    maxY: Math.max(0, scroller.scrollHeight - scroller.clientHeight),
  });
  const boxOf = (node) => { const r = node.getBoundingClientRect(); return { x: r.left, y: r.top, width: r.width, height: r.height }; };
  // Runs move() (a scroll), then waits until the page has handled it: its `scroll` event
  // comes with the next frame (seen here in the capture phase, whatever scrolled), and a task
  // after it runs once the frame's scroll handlers and the animation frame callbacks they
  // asked for (a virtualized list's drawing) ran. When nothing scrolled, two frames end it.
  const scrolled = (move) => new Promise((resolve) => {
    let done = false;
    const finish = () => { if (!done) { done = true; removeEventListener("scroll", seen, true); resolve(); } };
    const seen = () => setTimeout(finish, 0);
    addEventListener("scroll", seen, true);
    move();
    frame().then(frame).then(finish);
  });
  const inView = (node) => {
    const r = node.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  };
  if (options.mode === "into_view") {
    if (!inView(el)) await scrolled(() => el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" }));
    return { ok: true, what: describe(el), box: boxOf(el) };
  }
  const to = options.to || "";
  const vertical = options.mode === "until" ? !(to === "left" || to === "right") : !!options.dy || to === "top" || to === "bottom";
  const horizontal = options.mode === "until" ? to === "left" || to === "right" : !!options.dx || to === "left" || to === "right";
  const scrolls = (node) => {
    if (node === page) return true;
    const style = getComputedStyle(node);
    const open = (o) => o === "auto" || o === "scroll" || o === "overlay";
    return (!vertical || (open(style.overflowY) && node.scrollHeight > node.clientHeight))
      && (!horizontal || (open(style.overflowX) && node.scrollWidth > node.clientWidth));
  };
  // What a person's wheel over the element would scroll: the element itself; else, inside it,
  // the one with the most to scroll that way (a grid's body, a list's viewport); else its
  // nearest scrolling ancestor; else the document.
  const range = (n) => (vertical ? n.scrollHeight - n.clientHeight : 0) + (horizontal ? n.scrollWidth - n.clientWidth : 0);
  let scroller = null;
  if (el && scrolls(el)) scroller = el;
  if (el && !scroller) {
    let most = 1;
    for (const n of dom.queryAll("*", el)) {
      const more = range(n);
      if (more > most && scrolls(n)) { scroller = n; most = more; }
    }
  }
  for (let n = el && !scroller ? dom.parentOf(el) : null; n && n.nodeType === 1; n = dom.parentOf(n)) {
    if (n === document.body || n === document.documentElement) break;
    if (scrolls(n)) { scroller = n; break; }
  }
  scroller = scroller || page;
  const target = scroller === page ? window : scroller;
  const instant = (x, y) => target.scrollTo({ left: x, top: y, behavior: "instant" });
  if (options.mode === "by") {
    await scrolled(() => target.scrollBy({ left: options.dx || 0, top: options.dy || 0, behavior: "instant" }));
    return { ok: true, ...where(scroller) };
  }
  if (options.mode === "to") {
    const now = where(scroller);
    await scrolled(() => instant(to === "left" ? 0 : to === "right" ? now.maxX : now.x, to === "top" ? 0 : to === "bottom" ? now.maxY : now.y));
    return { ok: true, ...where(scroller) };
  }
  // until: a view at a time toward `to`, looking for options.until after each, once the
  // page handled the scroll (a virtualized list has drawn its rows then).
  const back = to === "top" || to === "left";
  let stuck = 0;
  const look = () => dom.queryAll(options.until).find((e) => e.isConnected && shown(e)) || null;
  for (;;) {
    const found = look();
    if (found) {
      if (!inView(found)) await scrolled(() => found.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" }));
      const box = boxOf(found);
      const text = (found.innerText || found.textContent || "").replace(/\s+/g, " ").trim();
      const shownText = text ? ` "${text.length > 40 ? text.slice(0, 39) + "…" : text}"` : "";
      return { ok: true, found: describe(found) + shownText, box, ...where(scroller) };
    }
    const before = where(scroller);
    const stepY = vertical ? Math.max(1, scroller === page ? innerHeight : scroller.clientHeight) : 0;
    const stepX = horizontal ? Math.max(1, scroller === page ? innerWidth : scroller.clientWidth) : 0;
    await scrolled(() => target.scrollBy({ left: back ? -stepX : stepX, top: back ? -stepY : stepY, behavior: "instant" }));
    const after = where(scroller);
    // At the end when it is there; a scroll that did not move short of it (a grid that set
    // its own position back as it synced a scrollbar of its own) is made again, a few times.
    const atEnd = vertical ? (back ? after.y <= 0 : after.y >= after.maxY - 1)
      : (back ? after.x <= 0 : after.x >= after.maxX - 1);
    stuck = after.x === before.x && after.y === before.y ? stuck + 1 : 0;
    if (atEnd || stuck >= 5) {
      if (look()) continue;
      return { ok: false, why: "end", ...after };
    }
    if (performance.now() >= deadline) return { ok: false, why: "timeout", ...after };
  }
}
