// Waits until one of the elements an action names can take it as a user's input would, and
// answers where to send it. `this` is the element (a ref) or an array of the elements a
// selector matched (found again with selector when every one of them left the page).
// The checks, in order, each retried on every animation frame until options.timeout ms:
// attached, visible (a box, not visibility:hidden, not display:none, not [hidden]), enabled
// (not :disabled, no aria-disabled="true" on it or above it), editable (for typing), stable
// (the same box on two animation frames) and receives events (a hit test at the point, walked
// down open shadow roots, lands on the element or inside it). The first element in document
// order that passes them all is used, never a hidden one; when none does by the deadline the
// answer names the check that failed furthest along and what it saw.
// Answers {ok: true, index, x, y, what, ...} (x, y in the frame's viewport) or
// {ok: false, check, seen, what, count}.
async function (selector, options) {
  const dom = __DOM__;
  // Held: an array of matches, or a ref's node; unheld (no `this`): the selector's matches.
  let list = Array.isArray(this) ? this : this && this.nodeType ? [this.nodeType === 1 ? this : this.parentElement] : null;
  if (list === null) {
    const invalid = dom.problem(selector);
    if (invalid !== null) return { ok: false, invalid };
    list = dom.queryAll(selector);
  }
  const RANK = { attached: 0, visible: 1, checkable: 2, enabled: 3, editable: 4, stable: 5, "receives events": 6 };
  const TEXT_TYPES = new Set(["text", "search", "url", "tel", "email", "password", "number"]);
  const VALUE_TYPES = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);
  const CHECK_ROLES = new Set(["checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"]);
  const CHECKABLE = "input[type=checkbox],input[type=radio]," + [...CHECK_ROLES].map((r) => `[role=${r}]`).join(",");
  const parentOf = dom.parentOf;

  const describe = (el, withText = true) => {
    if (!el) return "nothing";
    if (el.nodeType !== 1) return el.nodeName.toLowerCase();
    let s = "<" + el.localName;
    if (el.id) s += ` id=${/\s/.test(el.id) ? JSON.stringify(el.id) : el.id}`;
    const cls = typeof el.className === "string" ? el.className.trim().split(/\s+/).filter(Boolean).slice(0, 2).join(" ") : "";
    if (cls) s += cls.includes(" ") ? ` class="${cls}"` : ` class=${cls}`;
    if (el.localName === "input") s += ` type=${el.type}`;
    const role = el.getAttribute("role");
    if (role) s += ` role=${role}`;
    s += ">";
    const text = (el.innerText ?? el.textContent ?? "").replace(/\s+/g, " ").trim();
    if (text && withText) s += ` ${JSON.stringify(text.length > 30 ? text.slice(0, 29) + "…" : text)}`;
    return s;
  };

  // The first box the element (or, for display: contents, what it shows) draws.
  const boxOf = (el, depth = 0) => {
    if (depth > 32) return null;
    const style = getComputedStyle(el);
    if (style.display === "contents" || el.localName === "slot") {
      const nodes = el.localName === "slot" && el.assignedNodes({ flatten: true }).length
        ? el.assignedNodes({ flatten: true }) : Array.from((el.shadowRoot || el).childNodes);
      for (const node of nodes) {
        if (node.nodeType === 1) { const found = boxOf(node, depth + 1); if (found) return found; }
        else if (node.nodeType === 3 && node.textContent.trim()) {
          const range = document.createRange();
          range.selectNodeContents(node);
          for (const r of range.getClientRects()) if (r.width > 0 && r.height > 0) return [r, el];
        }
      }
      return null;
    }
    for (const r of el.getClientRects()) if (r.width > 0 && r.height > 0) return [r, el];
    return null;
  };

  const hiddenWhy = (el) => {
    const style = getComputedStyle(el);
    const contents = style.display === "contents";
    if (!contents && !el.checkVisibility({ visibilityProperty: true })) {
      if (el.hidden) return "it has the hidden attribute";
      if (style.display === "none") return "display: none";
      for (let n = parentOf(el); n; n = parentOf(n)) {
        if (n.hidden) return `inside ${describe(n, false)}, which has the hidden attribute`;
        if (getComputedStyle(n).display === "none") return `inside ${describe(n, false)}, which has display: none`;
      }
      if (style.visibility !== "visible") return `visibility: ${style.visibility}`;
      return "not rendered (content-visibility: hidden above it)";
    }
    if (boxOf(el)) return null;
    const r = el.getBoundingClientRect();
    return `an empty box (${Math.round(r.width)}×${Math.round(r.height)})`;
  };

  const disabledWhy = (el) => {
    if (el.matches(":disabled")) {
      const fieldset = !el.hasAttribute("disabled") && el.closest("fieldset[disabled]");
      return fieldset ? `disabled by ${describe(fieldset, false)}` : "disabled";
    }
    for (let n = el; n; n = parentOf(n)) {
      if (n.getAttribute("aria-disabled") === "true") {
        return n === el ? 'aria-disabled="true"' : `aria-disabled="true" on ${describe(n, false)}`;
      }
    }
    return null;
  };

  const editableWhy = (el) => {
    if (el.localName === "input") {
      if (!TEXT_TYPES.has(el.type) && !VALUE_TYPES.has(el.type)) return `an <input type=${el.type}> takes no text`;
      if (el.readOnly) return "read-only";
    } else if (el.localName === "textarea" && el.readOnly) return "read-only";
    if (el.getAttribute("aria-readonly") === "true") return 'aria-readonly="true"';
    return null;
  };

  // The element whose checked state an action on el changes: el itself, a label's control,
  // or the one checkbox, switch or radio inside el (its shadow root included).
  const stateHolder = (el) => {
    if (el.matches(CHECKABLE)) return el;
    if (el.localName === "label" && el.control) return stateHolder(el.control);
    const inner = dom.queryAll(CHECKABLE, el, 2);
    return inner.length === 1 ? inner[0] : null;
  };
  const stateOf = (holder) => {
    if (holder.localName === "input") return holder.type === "checkbox" && holder.indeterminate ? "mixed" : holder.checked;
    const aria = holder.getAttribute("aria-checked");
    return aria === "mixed" ? "mixed" : aria === "true";
  };

  // The element on top at (x, y), walked down open shadow roots. In a root, the first of
  // elementsFromPoint that belongs to it: elementFromPoint there answers the host when what
  // is on top is the host's own text shown through a slot (<x-btn>Delete</x-btn> drawn in a
  // shadow <button>), where the button is what a user's click lands on.
  const deepHit = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const root = hit.shadowRoot;
      const inner = root.elementsFromPoint(x, y).find((e) => e.getRootNode() === root) || null;
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  // Whether hit is el or inside it in the composed tree: through shadow hosts, or through
  // the slot that shows it. A node of a closed shadow root (a ref can name one) is reached
  // when the hit test stops at that root's host.
  const reaches = (el, hit) => {
    for (let n = hit; n; n = parentOf(n)) if (n === el) return true;
    for (let n = hit; n; n = n.assignedSlot || parentOf(n)) if (n === el) return true;
    for (let root = el.getRootNode(); root.host; root = root.host.getRootNode()) {
      if (root.host === hit) return hit.shadowRoot !== root;
    }
    return false;
  };
  // An element that takes no pointer events (pointer-events: none, as a component's inner
  // control often is) lets a click at its point go to what is under it; when that is one of
  // its own ancestors (its shadow host, say), the click lands where a user's would, on the
  // component, and nothing else covers the element there.
  const passesThrough = (el, hit) => !!hit && getComputedStyle(el).pointerEvents === "none" && isAncestor(hit, el);
  const isAncestor = (maybe, el) => { for (let n = parentOf(el); n; n = parentOf(n)) if (n === maybe) return true; return false; };
  const focusable = (el) => el.tabIndex >= 0 || el.isContentEditable || el.hasAttribute("tabindex");

  const viewport = () => [
    Math.min(innerWidth, document.documentElement.clientWidth || innerWidth),
    Math.min(innerHeight, document.documentElement.clientHeight || innerHeight),
  ];
  const pointIn = (r) => {
    const [w, h] = viewport();
    const left = Math.max(r.left, 0), right = Math.min(r.right, w);
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, h);
    if (right <= left || bottom <= top) return null;
    return [(left + right) / 2, (top + bottom) / 2];
  };
  const inView = (r) => { const [w, h] = viewport(); return r.left >= 0 && r.top >= 0 && r.right <= w && r.bottom <= h; };
  const animated = (el) => {
    if (document.getAnimations().length) return true;
    for (let root = el.getRootNode(); root.host; root = root.host.getRootNode()) if (root.getAnimations().length) return true;
    return false;
  };
  // An animation or transition on the element or above it whose start is pending: it has
  // not moved the box yet, but will on the next frame.
  const starting = (el) => {
    if (!document.getAnimations().length && !animated(el)) return false;
    for (let n = el; n; n = parentOf(n)) if (n.getAnimations().some((a) => a.pending)) return true;
    return false;
  };
  const keyOf = (r) => `${r.left},${r.top},${r.width},${r.height}`;
  // Scrolled once each, at most; a scroll is followed by one more frame than stability needs,
  // so that the page has drawn it before input is sent (Chrome routes input by what it drew).
  const scrolled = new Set();
  let settling = 0;
  const scroll = (el) => { scrolled.add(el); settling = 2; el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" }); };

  // In a frame, where the mouse goes is decided by the browser from what the page drew last:
  // the mouse events that reach this document are recorded for pointer_seen.js to check.
  const track = (el) => {
    const key = Symbol.for("ego.pointer");
    if (window[key]) window[key].stop();
    const seen = [];
    const on = (e) => seen.push([e.clientX, e.clientY, reaches(el, e.composedPath()[0])]);
    window.addEventListener("mousemove", on, true);
    window[key] = { seen, stop: () => { window.removeEventListener("mousemove", on, true); delete window[key]; } };
  };

  // Until the click's events arrive the page may still move (a late layout, a component
  // defined a moment later): whatever is at the point then would get the click. So the
  // events of this click are checked where they arrive, in the capture phase at the window,
  // before any handler of the page's below it. A press that would reach another element
  // than the one the checks chose is cancelled there, with the rest of its gesture
  // ("missed": hit_verdict.js retries the click). The page may also answer the press itself
  // by moving things (an invisible element slid over the point, the element replaced): each
  // later event (the release, the click) is checked too, and one that reaches another
  // element is cancelled with the rest ("slipped": the page saw the press, so the action
  // fails naming what took the rest). Events a script of the page dispatched say nothing of
  // where the input went, and are let be.
  const intercept = (el, label) => {
    const key = Symbol.for("ego.hit");
    if (window[key]) window[key].stop();
    const record = { verdict: null, target: "", event: "" };
    const EVENTS = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "auxclick", "dblclick"];
    const on = (e) => {
      if (!e.isTrusted) return;
      if (record.verdict === null || record.verdict === "hit") {
        const path = e.composedPath();
        const target = path[0];
        const ok = path.includes(el) || (label && path.includes(label)) || passesThrough(el, target);
        if (!ok) {
          record.verdict = record.verdict === null ? "missed" : "slipped";
          record.target = describe(target && target.nodeType === 1 ? target : target && target.parentElement);
          record.event = e.type;
        } else record.verdict = "hit";
      }
      if (record.verdict !== "hit") { e.preventDefault(); e.stopImmediatePropagation(); }
      if (e.type === "click") record.stop();
    };
    for (const type of EVENTS) window.addEventListener(type, on, true);
    // Never left behind: a click that never comes (the page went) ends it in a few seconds.
    const timer = setTimeout(() => record.stop(), 10000);
    // Stopping ends the watch; the record stays for hit_verdict.js to read (and drop).
    record.stop = () => { clearTimeout(timer); for (const type of EVENTS) window.removeEventListener(type, on, true); };
    window[key] = record;
  };

  let failure = null;
  const fail = (index, check, seen, what, final = false) => {
    if (!failure || RANK[check] > RANK[failure.check]) failure = { ok: false, check, seen, what, index, final };
    return null;
  };
  const last = new Map();

  // One look at every element, in order; the answer when one passes every check.
  const attempt = (round) => {
    for (let i = 0; i < list.length; i++) {
      const el = list[i];
      if (!el || !el.isConnected) {
        // A ref names that node alone: once removed it never comes back.
        fail(i, "attached", "it was removed from the page", describe(el), !selector);
        continue;
      }
      let actor = el, holder = null;
      if (options.checkable) {
        holder = stateHolder(el);
        // A native checkbox drawn by its label (the input itself hidden): the label is clicked.
        if (holder && holder === el && el.labels && el.labels.length && hiddenWhy(el) && !options.force) {
          actor = Array.from(el.labels).find((label) => !hiddenWhy(label)) || el;
        }
      }
      const what = describe(actor);
      const answer = (x, y, extra = {}) => {
        const result = { ok: true, index: i, x, y, what, tag: el.localName, ...extra };
        if (options.track && !extra.focus && !extra.select) track(actor);
        if (options.intercept && !extra.focus && !extra.select && !options.force) {
          intercept(actor, el.labels && el.labels.length ? Array.from(el.labels).find((l) => !hiddenWhy(l)) : null);
        }
        if (holder) result.checked = stateOf(holder);
        if (el.localName === "input") { result.type = el.type; result.multiple = !!el.multiple; }
        return result;
      };
      if (options.force) {
        const found = boxOf(actor);
        if (!found) return fail(i, "visible", hiddenWhy(actor) || "no box", what, true);
        if (!inView(found[0])) { scroll(found[1]); }
        const point = pointIn((boxOf(actor) || found)[0]);
        return point ? answer(point[0], point[1]) : fail(i, "visible", "outside the viewport", what, true);
      }
      if (options.visible) {
        const why = hiddenWhy(actor);
        if (why) { fail(i, "visible", why, what); continue; }
      }
      if (options.checkable && !holder) {
        return fail(i, "checkable", `${describe(el)} is no checkbox, switch or radio, nor holds one`, what, true);
      }
      if (options.enabled) {
        const why = disabledWhy(el);
        if (why) { fail(i, "enabled", why, what); continue; }
      }
      if (options.editable) {
        if (el.localName === "select") return answer(0, 0, { select: true });
        const why = editableWhy(el);
        if (why) { fail(i, "editable", why, what); continue; }
        // A field that is itself the editor takes the focus as a click on it would give it;
        // anything else (a wrapper, an EditContext surface, a role=textbox) is clicked, and
        // the page decides where the focus goes.
        // It is focused and made ready here (focused_field.js), saving a round trip.
        if (el.localName === "input" || el.localName === "textarea" || el.isContentEditable) {
          return answer(0, 0, { focus: true, field: (__FIELD__).call(el, 0, { ...options.prepare, focus: true }) });
        }
      }
      if (!options.stable && !options.hit) return answer(0, 0);
      let found = boxOf(actor);
      if (!found) { fail(i, "visible", "an empty box", what); continue; }
      if (!inView(found[0]) && !scrolled.has(found[1])) {
        scroll(found[1]);
        found = boxOf(actor) || found;
      }
      const [rect] = found;
      if (options.stable) {
        // A box read between two frames may show an animation that has not started ticking:
        // where one runs (in the document or a shadow root above the element), boxes are
        // compared on animation frames only; elsewhere the box now is the first of the two.
        if (round === 0 && animated(actor)) { fail(i, "stable", "not measured yet", what); return null; }
        if (round > 0 && starting(actor)) { fail(i, "stable", "an animation or transition of it is about to start", what); return null; }
        const before = last.get(actor), now = keyOf(rect);
        last.set(actor, now);
        if (settling > 0) { settling--; fail(i, "stable", "scrolled into view just now", what); return null; }
        if (before !== now) {
          // Measured once, or it moved: decide on the next frame, before any later element.
          fail(i, "stable", before === undefined ? "not measured yet"
            : `moving: its box went from (${before.split(",").map((v) => Math.round(+v)).join(", ")}) to (${now.split(",").map((v) => Math.round(+v)).join(", ")})`, what);
          return null;
        }
      }
      const point = pointIn(rect);
      if (!point) { fail(i, "receives events", "it is outside the viewport and scrolling does not bring it in", what); continue; }
      if (options.hit) {
        const hit = deepHit(point[0], point[1]);
        const onLabel = el.labels && Array.from(el.labels).some((label) => reaches(label, hit));
        if (!reaches(actor, hit) && !onLabel && !passesThrough(actor, hit)) {
          if (options.focus && focusable(el)) return answer(point[0], point[1], { focus: true });
          // Clipped by a scrolling container of its own: bring it into view there.
          if (hit && isAncestor(hit, actor) && !scrolled.has(found[1])) scroll(found[1]);
          fail(i, "receives events", `covered by ${describe(hit)}`, what);
          continue;
        }
      }
      return answer(point[0], point[1]);
    }
    return null;
  };

  const frame = () => new Promise((resolve) => {
    // A tab in the background gets no animation frames: a timer stands in.
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => { clearTimeout(timer); resolve(); });
  });
  const deadline = performance.now() + options.timeout;
  let extra = 0;
  for (let round = 0; ; round++) {
    if (selector && (!list.length || list.every((el) => !el || !el.isConnected))) {
      list.splice(0, list.length, ...dom.queryAll(selector));
    }
    failure = null;
    const result = attempt(round);
    if (result) return result;
    if (failure && failure.final) return { ...failure, count: list.length };
    if (!list.length && round > 0 && performance.now() >= deadline) return { ok: false, check: "attached", seen: "nothing matches", what: "", count: 0 };
    // At the deadline, a stable check that has not compared two boxes yet gets a few more
    // frames: an error must say what it saw.
    const unmeasured = failure && failure.check === "stable" && !failure.seen.startsWith("moving") && extra < 3;
    if (round > 0 && performance.now() >= deadline) {
      if (unmeasured) extra++;
      else return { ...(failure || { ok: false, check: "attached", seen: "nothing matches", what: "" }), count: list.length };
    }
    await frame();
  }
}
