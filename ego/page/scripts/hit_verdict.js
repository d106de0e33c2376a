// How the click that actionable.js watched for arrived: "hit" (it reached the element),
// "missed" (it would have reached another element, and was cancelled before the page saw
// it), or null (no watched click came); the watch and its record end either way.
function () {
  const key = Symbol.for("ego.hit");
  const record = window[key];
  if (!record) return { verdict: "gone" };
  record.stop();
  delete window[key];
  return { verdict: record.verdict, target: record.target };
}
