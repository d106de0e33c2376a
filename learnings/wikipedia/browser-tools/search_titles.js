async function (args) {
  // search_titles: what the search box suggests, from the Action API's opensearch, same-origin:
  //   GET /w/api.php?action=opensearch&format=json&formatversion=2&namespace=0&limit=N&search=q
  //   -> ["q", ["Title 1", "Title 2", ...], ["", "", ...], ["https://en.wikipedia.org/wiki/Title_1", ...]]
  // Index 2 (descriptions) is always empty strings on Wikipedia today, so it is not returned.
  // Action API errors arrive with HTTP 200 as {error: {code, info}}.
  const query = String((args && args.query) ?? "").trim();
  if (!query) return { error: "query: empty" };
  const limit = Math.max(1, Math.min(50, Number((args && args.limit) ?? 10)));
  const params = new URLSearchParams({
    action: "opensearch",
    format: "json",
    formatversion: "2",
    namespace: "0",
    limit: String(limit),
    search: query,
  });
  const response = await fetch("/w/api.php?" + params, { credentials: "same-origin" });
  if (response.status === 429) return { error: "rate limited: Wikipedia answered 429; wait before searching again" };
  if (!response.ok) return { error: "Wikipedia answered HTTP " + response.status + " for opensearch" };
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (data && !Array.isArray(data) && data.error) {
    return { error: "the API refused the search: " + data.error.code + ": " + data.error.info };
  }
  if (!Array.isArray(data) || !Array.isArray(data[1]) || !Array.isArray(data[3])) {
    throw new Error("SKILL_BROKEN: action=opensearch no longer answers [query, titles, descriptions, urls]");
  }
  const results = data[1].slice(0, limit).map((title, i) => ({
    title: String(title),
    url: String(data[3][i] || new URL("/wiki/" + encodeURIComponent(String(title).replace(/ /g, "_")), location.origin).href),
  }));
  return { query, count: results.length, results };
}
