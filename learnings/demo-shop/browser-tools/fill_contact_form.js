async function (args) {
  // fill_contact_form: fill the /contact form (name, email, message) and submit it, in the page.
  // The tab must show /contact. With the page's script active the form posts in place and shows
  // [data-testid="contact-status"]; without it, the form's own POST is sent with fetch.
  const form = document.querySelector('form[data-testid="contact-form"]');
  if (!form) {
    if (location.pathname === "/contact") {
      throw new Error('SKILL_BROKEN: /contact has no form[data-testid="contact-form"]');
    }
    return { error: "not on the contact page: navigate to " + location.origin + "/contact first" };
  }
  const values = { name: args.name, email: args.email, message: args.message };
  for (const [key, value] of Object.entries(values)) {
    const field = form.elements.namedItem(key);
    if (!field) throw new Error("SKILL_BROKEN: the contact form has no field named " + key);
    // The native setter plus input/change events is what a framework-controlled field needs.
    const proto = field instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value").set.call(field, String(value ?? ""));
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }
  if (!form.checkValidity()) {
    const invalid = Array.from(form.elements).filter((el) => el.willValidate && !el.checkValidity());
    return { error: "invalid: " + invalid.map((el) => el.name + " (" + el.validationMessage + ")").join(", ") };
  }

  if (form.dataset.enhanced !== "true") {
    const response = await fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      credentials: "same-origin",
    });
    const sent = new URL(response.url).searchParams.get("sent");
    if (!response.ok || !sent) return { error: "the shop refused the message (HTTP " + response.status + ")" };
    return { status: "sent", message_id: Number(sent), via: "form-post" };
  }

  const status = document.querySelector('[data-testid="contact-status"]');
  if (!status) throw new Error('SKILL_BROKEN: /contact has no [data-testid="contact-status"]');
  status.removeAttribute("data-state");
  const outcome = new Promise((resolve) => {
    const done = () => {
      const state = status.getAttribute("data-state");
      if (state === "sent" || state === "error") {
        observer.disconnect();
        clearTimeout(timer);
        resolve(state);
      }
    };
    const observer = new MutationObserver(done);
    observer.observe(status, { attributes: true, childList: true, characterData: true, subtree: true });
    const timer = setTimeout(() => {
      observer.disconnect();
      resolve("timeout");
    }, 10000);
  });
  form.requestSubmit();
  const state = await outcome;
  if (state === "sent") {
    return { status: "sent", message_id: Number(status.getAttribute("data-message-id")), via: "page" };
  }
  if (state === "error") return { error: "the shop refused the message: " + status.textContent.trim() };
  return { error: "no confirmation within 10 s" };
}
