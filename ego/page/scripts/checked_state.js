// Whether the checkbox, switch or radio an action clicked is now in the state wanted: waits
// (animation frames, at most ms) for a framework that renders its state a little later.
// Answers the state: true, false or "mixed".
async function (index, wanted, ms) {
  const el = Array.isArray(this) ? this[index] : this;
  const CHECKABLE = "input[type=checkbox],input[type=radio],[role=checkbox],[role=switch],[role=radio],[role=menuitemcheckbox],[role=menuitemradio]";
  const holderOf = (node) => {
    if (node.matches(CHECKABLE)) return node;
    if (node.localName === "label" && node.control) return holderOf(node.control);
    const inner = __DOM__.queryAll(CHECKABLE, node, 2);
    return inner.length === 1 ? inner[0] : node;
  };
  const stateOf = (holder) => {
    if (holder.localName === "input") return holder.type === "checkbox" && holder.indeterminate ? "mixed" : holder.checked;
    const aria = holder.getAttribute("aria-checked");
    return aria === "mixed" ? "mixed" : aria === "true";
  };
  const deadline = performance.now() + ms;
  for (;;) {
    const state = stateOf(holderOf(el));
    if (state === wanted || performance.now() >= deadline) return state;
    await new Promise((resolve) => { const t = setTimeout(resolve, 100); requestAnimationFrame(() => { clearTimeout(t); resolve(); }); });
  }
}
