// Where an action chose to act on an element, refined: position ({x, y} from the top-left
// corner of its padding box, as Playwright measures it), else the point the checks chose (x
// and y), else (x null) the centre of its box's part in view, read now, in the frame's
// viewport; and whether a press there can start an HTML5 drag (the element under the point,
// or one above it in the composed tree, is draggable: draggable="true", a link or an image,
// or -webkit-user-drag: element; draggable="false" or user-drag: none stops it). `this` is the
// matches held, a ref's node, or nothing (the selector's matches are found again).
function (index, position, x, y, selector) {
  const dom = __DOM__;
  const el = Array.isArray(this) ? this[index] : this && this.nodeType ? this
    : selector ? dom.queryAll(selector)[index] : null;
  if (!el || !el.isConnected) return null;
  const r = el.getBoundingClientRect();
  if (position) {
    x = r.left + el.clientLeft + position.x;
    y = r.top + el.clientTop + position.y;
  } else if (x === null) {
    const right = Math.min(r.right, innerWidth), bottom = Math.min(r.bottom, innerHeight);
    x = (Math.max(r.left, 0) + right) / 2;
    y = (Math.max(r.top, 0) + bottom) / 2;
  }
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  let draggable = false;
  for (let n = hit; n; n = dom.parentOf(n)) {
    const drag = n.getAttribute("draggable");
    const style = getComputedStyle(n).webkitUserDrag;
    if (drag === "false" || style === "none") break;
    if (drag === "true" || style === "element" || (n.localName === "a" && n.hasAttribute("href")) || n.localName === "img") {
      draggable = true;
      break;
    }
  }
  return { x, y, draggable };
}
