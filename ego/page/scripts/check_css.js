// The first selector of parts the engine does not take (neither CSS nor role=), with why, as
// [index, message]; null when all are. Nothing in the page is looked up or touched.
(parts) => {
  const dom = __DOM__;
  for (let i = 0; i < parts.length; i++) {
    const why = dom.problem(parts[i]);
    if (why !== null) return [i, why];
  }
  return null;
}
