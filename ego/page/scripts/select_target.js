// What a choice of options was given, before any wait: `this` is the element (a ref) or a
// selector's matches. Answers {kind: "select"} when one is a <select>; {kind: "option",
// choice} for an option (or group) of a <select>, or with `owner` true the <select> itself (to
// name its ref); else {kind: "other", tag, type, role} to word what it is.
function (owner) {
  const list = (Array.isArray(this) ? this : [this]).filter((node) => node && node.nodeType === 1);
  if (list.some((el) => el instanceof HTMLSelectElement)) return { kind: "select" };
  const el = list[0];
  if (!el) return { kind: "other", tag: "#text", type: "", role: "" };
  const select = el instanceof HTMLOptionElement || el instanceof HTMLOptGroupElement
    ? el.closest("select") : null;
  if (select) {
    if (owner) return select;
    const option = el instanceof HTMLOptionElement ? el : el.querySelector("option");
    return { kind: "option", choice: option ? option.value : "", label: option ? option.label.trim() : "" };
  }
  return { kind: "other", tag: el.localName, type: el.localName === "input" ? el.type : "", role: el.getAttribute("role") || "" };
}
