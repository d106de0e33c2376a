async function (args) {
  // get_autocomplete_suggestions: Google's own suggest endpoint, same-origin from www.google.com.
  // Primary: /complete/search?client=firefox  -> ["<query>", ["s1", "s2", ...], ...]
  // Fallback: /complete/search?client=gws-wiz -> )]}'\n[[["s1<b>...</b>", 0, [512, ...]], ...], {...}]
  const query = String((args && args.query) ?? "");
  if (!query.trim()) return { error: "query: empty" };
  const limit = Math.max(1, Math.min(20, Number((args && args.limit) ?? 10)));
  const hl = String((args && args.hl) || (navigator.language || "en").split("-")[0]);

  const get = async (client) => {
    const params = new URLSearchParams({ client, q: query, hl, ie: "utf-8", oe: "utf-8" });
    const response = await fetch("/complete/search?" + params, { credentials: "same-origin" });
    if (response.status === 429 || /\/sorry\//.test(response.url)) {
      return { limited: true };
    }
    return { status: response.status, text: response.ok ? await response.text() : "" };
  };
  const strip = (html) => {
    const doc = new DOMParser().parseFromString(html, "text/html");
    return (doc.body.textContent || "").trim();
  };

  const first = await get("firefox");
  if (first.limited) return { error: "rate limited: Google wants a CAPTCHA (/sorry/); solve it by hand in this tab, then retry" };
  try {
    const data = JSON.parse(first.text);
    if (Array.isArray(data) && typeof data[0] === "string" && Array.isArray(data[1])) {
      const suggestions = data[1].filter((s) => typeof s === "string").slice(0, limit);
      return { query, client: "firefox", count: suggestions.length, suggestions };
    }
  } catch (e) { /* not the firefox shape: try gws-wiz */ }

  const second = await get("gws-wiz");
  if (second.limited) return { error: "rate limited: Google wants a CAPTCHA (/sorry/); solve it by hand in this tab, then retry" };
  try {
    const data = JSON.parse(second.text.replace(/^\)\]\}'\s*/, ""));
    if (Array.isArray(data) && Array.isArray(data[0])) {
      const suggestions = data[0]
        .filter((entry) => Array.isArray(entry) && typeof entry[0] === "string")
        .map((entry) => strip(entry[0]))
        .filter(Boolean)
        .slice(0, limit);
      return { query, client: "gws-wiz", count: suggestions.length, suggestions };
    }
  } catch (e) { /* fall through */ }
  throw new Error("SKILL_BROKEN: /complete/search answered neither the client=firefox nor the client=gws-wiz JSON shape (HTTP " +
    first.status + ", " + second.status + ")");
}
