// Heard in every document of a recorded tab (ego/actions/page_events.py): each action a user
// makes (clicks and keys from trusted events only; a change also when a script fired it, as
// a <select> chosen by a driver's script is), told to the binding __BINDING__ as JSON with the element's
// role, name, tag, input type, a selector checked to find it alone, and the page's URL.
(() => {
  if (window.__egoPageActions) return;
  window.__egoPageActions = true;
  const dom = (__DOM__)();
  const CLICKABLE = "a,button,summary,input[type=submit],input[type=button],"
    + "[role=button],[role=link],[role=tab],[role=menuitem]";
  const TEXT = new Set(["", "text", "search", "url", "tel", "email", "password", "number"]);
  const send = (data) => { try { window.__BINDING__(JSON.stringify(data)); } catch (e) {} };
  const typeOf = (el) => (el.getAttribute("type") || "").toLowerCase();
  const field = (el) => el.localName === "textarea" || el.isContentEditable
    || (el.localName === "input" && TEXT.has(typeOf(el)));
  const box = (el) => el.localName === "input"
    && (typeOf(el) === "checkbox" || typeOf(el) === "radio");
  const describe = (el) => {
    const role = dom.roles.roleOf(el) || el.localName;
    const name = dom.roles.nameOf(el) || "";
    const tries = [];
    if (role && name) tries.push(`role=${role}[name=${JSON.stringify(name)}]`);
    tries.push(dom.selectorOf(el));
    let selector = null;
    for (const s of tries) {
      try {
        const found = dom.queryAll(s, document, 2);
        if (found.length === 1 && found[0] === el) { selector = s; break; }
      } catch (e) {}
    }
    const inputType = el.localName === "input" ? typeOf(el) || "text" : null;
    return { role, name, tag: el.localName, input_type: inputType, selector, url: location.href };
  };
  // Enter in a field: its value and the key are told at once; the change of that field and
  // the click the form's implicit submission fires on its button, in the same turn, are not.
  let entered = null;
  document.addEventListener("change", (e) => {
    const el = e.target;
    if (!(el instanceof Element) || el === entered) return;
    if (el.localName === "select") {
      const value = el.multiple ? [...el.selectedOptions].map((o) => o.value) : el.value;
      send({ verb: "select", value, ...describe(el) });
    } else if (box(el)) send({ verb: el.checked ? "check" : "uncheck", ...describe(el) });
    else if (field(el)) send({ verb: "type", value: el.value ?? el.textContent, ...describe(el) });
  }, true);
  document.addEventListener("click", (e) => {
    if (!e.isTrusted || !(e.target instanceof Element) || (entered && e.detail === 0)) return;
    const el = e.target.closest(CLICKABLE) || e.target;
    if (["select", "option", "label"].includes(el.localName) || field(el) || box(el)) return;
    send({ verb: "click", ...describe(el) });
  }, true);
  document.addEventListener("keydown", (e) => {
    const el = e.target;
    if (!e.isTrusted || e.key !== "Enter" || !(el instanceof Element)) return;
    if (!field(el) || el.localName === "textarea") return;
    send({ verb: "type", value: el.value, ...describe(el) });
    send({ verb: "press", value: "Enter", url: location.href });
    entered = el;
    setTimeout(() => { entered = null; }, 0);
  }, true);
})();
