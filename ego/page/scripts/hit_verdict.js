// How the click that actionable.js watched for arrived: "hit" (every event reached the
// element), "missed" (the press would have reached another element, and the whole click was
// cancelled before the page saw it), "slipped" (the press reached the element, then a later
// event, named in `event`, would have reached another, and was cancelled with the rest), or
// null (no watched click came); `target` names what the cancelled event would have reached.
// The watch and its record end either way.
function () {
  const key = Symbol.for("ego.hit");
  const record = window[key];
  if (!record) return { verdict: "gone" };
  record.stop();
  delete window[key];
  return { verdict: record.verdict, target: record.target, event: record.event };
}
