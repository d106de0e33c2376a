export default async function postFromActiveElement(args) {
  // post_from_active_element: type `text` into the focused compose box (or the home composer)
  // and click the Post button. Irreversible: the post is public once X accepts it.
  const text = String((args && args.text) ?? "");
  if (!text.trim()) return { error: "text: empty" };

  const loggedOut = () =>
    !!document.querySelector('[data-testid="loginButton"], [data-testid="signupButton"], [data-testid="google_sign_in_container"]') &&
    !document.querySelector('[data-testid="SideNav_AccountSwitcher_Button"], [data-testid="AppTabBar_Profile_Link"]');
  if (loggedOut() || location.pathname.startsWith("/i/flow/login")) {
    throw new Error("NEEDS_LOGIN: x.com shows the logged-out prompt; log in by hand in this browser profile, then retry");
  }

  const waitFor = (test, ms) => new Promise((resolve) => {
    const first = test();
    if (first) return resolve(first);
    const observer = new MutationObserver(() => {
      const value = test();
      if (value) { observer.disconnect(); clearTimeout(timer); resolve(value); }
    });
    observer.observe(document.documentElement, { childList: true, subtree: true, attributes: true, characterData: true });
    const timer = setTimeout(() => { observer.disconnect(); resolve(test()); }, ms);
  });
  const editable = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" ||
    (el.tagName === "INPUT" && /^(text|search|)$/.test(el.type || "")));
  const contentOf = (el) => (el.isContentEditable ? el.innerText : el.value) || "";

  // The focused element first (the agent or the person put the caret there), else the composer.
  let editor = document.activeElement;
  if (!editable(editor)) {
    const box = document.querySelector('[data-testid="tweetTextarea_0"]');
    editor = box && (editable(box) ? box : box.querySelector('[contenteditable="true"], textarea'));
  }
  if (!editable(editor)) {
    throw new Error('SKILL_BROKEN: no focused editable element and no [data-testid="tweetTextarea_0"] composer');
  }
  editor.focus();

  // X's composer is a Draft.js contenteditable: it listens to beforeinput/input from real
  // editing commands, so insertText (or a synthetic paste as the fallback) is what it accepts.
  const before = contentOf(editor);
  let ok = false;
  try { ok = document.execCommand("insertText", false, text); } catch (e) { ok = false; }
  if (!ok || contentOf(editor) === before) {
    const data = new DataTransfer();
    data.setData("text/plain", text);
    editor.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }
  if (!editor.isContentEditable && contentOf(editor) === before) {
    const proto = editor.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value").set.call(editor, before + text);
    editor.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // The button of the composer the editor is in: the modal's tweetButton, else the inline one.
  const scope = editor.closest('[role="dialog"]') || document;
  const findButton = () =>
    scope.querySelector('[data-testid="tweetButton"]') || scope.querySelector('[data-testid="tweetButtonInline"]') ||
    document.querySelector('[data-testid="tweetButtonInline"], [data-testid="tweetButton"]');
  const enabled = (b) => b && !b.disabled && b.getAttribute("aria-disabled") !== "true";
  const button = await waitFor(() => { const b = findButton(); return enabled(b) ? b : null; }, 5000);
  if (!button) {
    if (!findButton()) throw new Error('SKILL_BROKEN: no [data-testid="tweetButtonInline"] or [data-testid="tweetButton"]');
    return { error: "the Post button stayed disabled: the text was not accepted (too long, or the composer ignored it)" };
  }
  button.click();

  // Confirmation: X shows a toast ("Your post was sent", with a View link) and empties the box.
  const outcome = await waitFor(() => {
    const toast = document.querySelector('[data-testid="toast"]');
    if (toast) return { toast };
    if (!editor.isConnected || contentOf(editor).trim() === "") return { cleared: true };
    return null;
  }, 10000);
  const toast = outcome && outcome.toast;
  const link = toast && toast.querySelector('a[href*="/status/"]');
  return {
    status: outcome ? "posted" : "submitted",
    text,
    confirmed: !!outcome,
    toast: toast ? toast.innerText.trim() : null,
    permalink: link ? new URL(link.getAttribute("href"), location.origin).href : null,
  };
}
