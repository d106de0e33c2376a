// Scrolls as a person with a scrollbar or the keyboard does, and answers where things are.
// `this` is the matches held, a ref's node, or nothing (the selector's matches are found;
// with options.page, the document itself is scrolled). The element must be attached and
// visible (waited for, every animation frame, until options.timeout ms). options.mode:
// "into_view": the element scrolled to the centre when it is not wholly in view, and its box
//   once it stops moving (the same on two frames);
// "by": the element's scroller (itself when it scrolls that way, else the nearest ancestor
//   in the composed tree that does, else the document) moved by options.dx, options.dy;
// "to": that scroller moved to its options.to edge (top, bottom, left, right);
// "until": that scroller moved toward options.to (bottom by default) a view at a time (each
//   view meets the last, so no row is skipped), a frame or two apart so a virtualized list
//   draws its rows, until options.until matches a visible element (then scrolled into view)
//   or the scroller's end.
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
  const settle = async (node) => {
    let before = null;
    for (let i = 0; i < 10; i++) {
      await frame();
      const now = JSON.stringify(boxOf(node));
      if (now === before) break;
      before = now;
    }
    return boxOf(node);
  };
  const inView = (node) => {
    const r = node.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  };
  if (options.mode === "into_view") {
    if (!inView(el)) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    return { ok: true, what: describe(el), box: await settle(el) };
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
  let scroller = page;
  for (let n = el; n && n.nodeType === 1; n = dom.parentOf(n)) {
    if (n === document.body || n === document.documentElement) break;
    if (scrolls(n)) { scroller = n; break; }
  }
  const target = scroller === page ? window : scroller;
  const instant = (x, y) => target.scrollTo({ left: x, top: y, behavior: "instant" });
  if (options.mode === "by") {
    target.scrollBy({ left: options.dx || 0, top: options.dy || 0, behavior: "instant" });
    await frame(); await frame();
    return { ok: true, ...where(scroller) };
  }
  if (options.mode === "to") {
    const now = where(scroller);
    instant(to === "left" ? 0 : to === "right" ? now.maxX : now.x, to === "top" ? 0 : to === "bottom" ? now.maxY : now.y);
    await frame(); await frame();
    return { ok: true, ...where(scroller) };
  }
  // until: a view at a time toward `to`, looking for options.until after each. A list that
  // draws its rows in its scroll handler has drawn them by the next frame; one that draws in
  // an animation frame of its own, by the frame after.
  let changed = false;
  const observer = new MutationObserver(() => { changed = true; });
  observer.observe(scroller === page ? document : scroller, { childList: true, subtree: true, characterData: true });
  const drawn = async () => { changed = false; await frame(); if (!changed) await frame(); };
  const back = to === "top" || to === "left";
  const look = () => dom.queryAll(options.until).find((e) => e.isConnected && shown(e)) || null;
  for (;;) {
    const found = look();
    if (found) {
      observer.disconnect();
      if (!inView(found)) found.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
      const box = await settle(found);
      const text = (found.innerText || found.textContent || "").replace(/\s+/g, " ").trim();
      const shownText = text ? ` "${text.length > 40 ? text.slice(0, 39) + "…" : text}"` : "";
      return { ok: true, found: describe(found) + shownText, box, ...where(scroller) };
    }
    const before = where(scroller);
    const stepY = vertical ? Math.max(1, scroller === page ? innerHeight : scroller.clientHeight) : 0;
    const stepX = horizontal ? Math.max(1, scroller === page ? innerWidth : scroller.clientWidth) : 0;
    target.scrollBy({ left: back ? -stepX : stepX, top: back ? -stepY : stepY, behavior: "instant" });
    await drawn();
    const after = where(scroller);
    if (after.x === before.x && after.y === before.y) {
      if (look()) continue;
      observer.disconnect();
      return { ok: false, why: "end", ...after };
    }
    if (performance.now() >= deadline) { observer.disconnect(); return { ok: false, why: "timeout", ...after }; }
  }
}
