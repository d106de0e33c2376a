async function (args) {
  // get_article_outline: title, short description, first paragraph, headings and categories of
  // the article in the tab, from MediaWiki's rendered markup (skins Vector 2022, Vector, Monobook).
  const max = Math.max(1, Math.min(500, Number((args && args.max_sections) ?? 100)));
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();

  if (document.body && document.body.classList.contains("ns-special")) {
    return { error: "not an article: this tab shows a special page (" + location.pathname + "); open /wiki/<title> first" };
  }
  const heading = document.querySelector("#firstHeading");
  const content = document.querySelector("#mw-content-text .mw-parser-output");
  if (!heading || !content) {
    throw new Error("SKILL_BROKEN: no #firstHeading or #mw-content-text .mw-parser-output: the skin or the parser output changed");
  }

  // Text without the citation markers ([1], [a]) and the edit links.
  const textOf = (el) => {
    const copy = el.cloneNode(true);
    for (const junk of copy.querySelectorAll("sup.reference, .mw-editsection, .noprint, style")) junk.remove();
    return clean(copy.textContent);
  };
  const lead = Array.from(content.querySelectorAll(":scope > p"))
    .filter((p) => !p.classList.contains("mw-empty-elt"))
    .map(textOf)
    .find(Boolean) || null;
  const short = content.querySelector(".shortdescription");

  // Headings: since MediaWiki 1.43 <div class="mw-heading mw-heading2"><h2 id="...">Title</h2>
  // <span class="mw-editsection">...</span></div>; before, <h2><span class="mw-headline"
  // id="...">Title</span>...</h2>. The old table of contents (#toc) has its own h2.
  const sections = [];
  for (const h of content.querySelectorAll("h2, h3, h4, h5, h6")) {
    if (h.closest("#toc, .toc, .navbox, .infobox")) continue;
    const headline = h.querySelector(".mw-headline");
    const title = textOf(headline || h);
    if (!title) continue;
    sections.push({ level: Number(h.tagName.slice(1)), title, anchor: (headline && headline.id) || h.id || null });
    if (sections.length >= max) break;
  }
  const categories = Array.from(document.querySelectorAll("#mw-normal-catlinks ul a")).map((a) => clean(a.textContent)).filter(Boolean);
  const canonical = document.querySelector('link[rel="canonical"]');
  return {
    title: clean((heading.querySelector(".mw-page-title-main") || heading).textContent),
    url: canonical ? canonical.href : location.href,
    description: short ? clean(short.textContent) || null : null,
    lead,
    sections,
    categories,
  };
}
