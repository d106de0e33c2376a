export default async function searchAndExtract(args) {
  // search_and_extract: organic results (title, link, snippet) of a Google results page.
  // Reads this tab when it shows /search for the query (or any results page when no query is
  // given); otherwise fetches /search?q= same-origin and parses that HTML without navigating.
  const query = String((args && args.query) ?? "").trim();
  const max = Math.max(1, Math.min(50, Number((args && args.max_results) ?? 10)));
  const limited = { error: "rate limited: Google shows its CAPTCHA page (/sorry/); solve it by hand in this tab, then retry" };

  const here = new URLSearchParams(location.search).get("q");
  let doc = document;
  let source = "page";
  if (!(location.pathname === "/search" && (!query || here === query))) {
    if (!query) return { error: "query: empty, and this tab does not show a results page" };
    const params = new URLSearchParams({ q: query, hl: (navigator.language || "en").split("-")[0] });
    const response = await fetch("/search?" + params, { credentials: "same-origin" });
    if (response.status === 429 || /\/sorry\//.test(response.url)) return limited;
    if (!response.ok) return { error: "Google answered HTTP " + response.status + " for /search" };
    doc = new DOMParser().parseFromString(await response.text(), "text/html");
    source = "fetch";
  }
  if (doc.querySelector('#captcha-form, form[action*="/sorry/"]')) return limited;

  const root = doc.querySelector("#search");
  if (!root) {
    if (source === "fetch") {
      return {
        error: "the fetched results page has no #search block (Google may require JavaScript for it): navigate the tab to https://www.google.com/search?q=" +
          encodeURIComponent(query) + " and call again",
      };
    }
    throw new Error("SKILL_BROKEN: this results page has no #search block");
  }
  const container = root.querySelector("#rso") || root;

  const target = (href) => {
    let url;
    try { url = new URL(href, location.origin); } catch (e) { return null; }
    if (url.pathname === "/url" && (url.searchParams.get("q") || url.searchParams.get("url"))) {
      try { url = new URL(url.searchParams.get("q") || url.searchParams.get("url")); } catch (e) { return null; }
    }
    if (!/^https?:$/.test(url.protocol)) return null;
    if (/(^|\.)google\.[a-z.]+$/.test(url.hostname) && !/^(support|developers|cloud|blog|about)\./.test(url.hostname)) return null;
    return url.href;
  };
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const snippetOf = (block, anchor, title) => {
    const marked = block.querySelector('[data-sncf], .VwiC3b, [style*="-webkit-line-clamp"]');
    if (marked && clean(marked.textContent)) return clean(marked.textContent);
    let best = "";
    for (const el of block.querySelectorAll("span, div")) {
      if (anchor.contains(el) || el.querySelector("div, h3")) continue;
      const text = clean(el.textContent);
      if (text.length > best.length && text !== title) best = text;
    }
    return best.length >= 30 ? best : null;
  };

  const results = [];
  const seen = new Set();
  for (const h3 of container.querySelectorAll("h3")) {
    if (h3.closest('.related-question-pair, [data-q], [data-initq], g-accordion-expander, #tads, #bottomads')) continue;
    const anchor = h3.closest("a[href]") || h3.querySelector("a[href]");
    if (!anchor) continue;
    const link = target(anchor.getAttribute("href"));
    if (!link || seen.has(link)) continue;
    seen.add(link);
    // The result's block: the largest ancestor that still holds only this one title.
    let block = anchor;
    while (block.parentElement && block.parentElement !== container && block.parentElement.querySelectorAll("h3").length === 1) {
      block = block.parentElement;
    }
    const title = clean(h3.textContent);
    const cite = block.querySelector("cite");
    results.push({
      position: results.length + 1,
      title,
      url: link,
      displayed_url: cite ? clean(cite.textContent) : null,
      snippet: snippetOf(block, anchor, title),
    });
    if (results.length >= max) break;
  }
  return { query: query || here, source, count: results.length, results };
}
