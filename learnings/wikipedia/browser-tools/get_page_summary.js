async function (args) {
  // get_page_summary: the REST API's summary of an article, fetched same-origin:
  //   GET /api/rest_v1/page/summary/<Title_with_underscores>
  //   -> {type, title, displaytitle, titles: {canonical, normalized, display}, pageid,
  //       description, extract, thumbnail: {source, width, height}, lang, timestamp,
  //       content_urls: {desktop: {page}}, ...}
  // A missing page answers 404 with an HTTP problem object ({type, title, detail, uri}).
  const fromTab = () => {
    const canonical = document.querySelector('link[rel="canonical"]');
    const path = new URL(canonical ? canonical.getAttribute("href") : location.href, location.origin).pathname;
    const m = path.match(/^\/wiki\/(.+)$/);
    return m ? decodeURIComponent(m[1]) : null;
  };
  const given = String((args && args.title) ?? "").trim();
  const title = given || fromTab();
  if (!title) return { error: "title: not given, and this tab shows no article (/wiki/<title>)" };

  // The REST API wants the DB key: underscores for spaces, each path segment escaped.
  const key = title.replace(/ /g, "_");
  const response = await fetch("/api/rest_v1/page/summary/" + encodeURIComponent(key), { credentials: "same-origin" });
  if (response.status === 404) return { error: "not found: Wikipedia has no article titled " + JSON.stringify(title.replace(/_/g, " ")) };
  if (response.status === 429) return { error: "rate limited: Wikipedia answered 429; wait before asking again" };
  if (!response.ok) return { error: "Wikipedia answered HTTP " + response.status + " for the summary of " + JSON.stringify(title) };
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!data || typeof data.extract !== "string" || typeof data.title !== "string") {
    throw new Error("SKILL_BROKEN: /api/rest_v1/page/summary no longer answers {title, extract, ...}");
  }
  const text = (html) => {
    if (!html) return null;
    return (new DOMParser().parseFromString(html, "text/html").body.textContent || "").trim();
  };
  const titles = data.titles || {};
  const desktop = (data.content_urls && data.content_urls.desktop) || {};
  return {
    title: titles.normalized || data.title.replace(/_/g, " "),
    display_title: text(titles.display || data.displaytitle) || data.title,
    description: data.description || null,
    extract: data.extract,
    type: data.type || "standard",
    page_id: Number.isInteger(data.pageid) ? data.pageid : null,
    lang: data.lang || null,
    url: desktop.page || null,
    thumbnail: data.thumbnail && data.thumbnail.source ? data.thumbnail.source : null,
    timestamp: data.timestamp || null,
  };
}
