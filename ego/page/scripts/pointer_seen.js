// The mouse moves that reached this frame's document since actionable.js began tracking them,
// each [x, y, whether it reached the element]; with stop, the tracking ends.
function (stop) {
  const record = window[Symbol.for("ego.pointer")];
  if (!record) return [];
  const seen = record.seen.splice(0);
  if (stop) record.stop();
  return seen;
}
