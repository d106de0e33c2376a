async function (args) {
  // list_products: read the product cards of the shop's list page ("/"), DOM only.
  // Uses this document when it already is the list page (same category filter); otherwise
  // it fetches "/" (or "/?category=...") from the same origin and parses that HTML, so it
  // works from any page of the shop without navigating.
  const limit = args && args.limit != null ? Number(args.limit) : 50;
  const category = (args && args.category ? String(args.category) : "").trim().toLowerCase();
  if (!Number.isInteger(limit) || limit < 1) return { error: "limit: expected a positive integer" };

  const here = new URLSearchParams(location.search).get("category") || "";
  let doc = document;
  let source = "page";
  if (!(location.pathname === "/" && here === category && document.querySelector('[data-testid="product-list"]'))) {
    const path = category ? "/?category=" + encodeURIComponent(category) : "/";
    const response = await fetch(path, { headers: { Accept: "text/html" }, credentials: "same-origin" });
    if (response.status === 429) return { error: "rate limited: try again later" };
    if (!response.ok) throw new Error("SKILL_BROKEN: GET " + path + " answered HTTP " + response.status);
    doc = new DOMParser().parseFromString(await response.text(), "text/html");
    source = "fetch";
  }

  const list = doc.querySelector('[data-testid="product-list"]');
  if (!list) throw new Error('SKILL_BROKEN: the list page has no [data-testid="product-list"]');
  const cards = Array.from(list.querySelectorAll('[data-testid="product-card"]'));
  const number = (el, attr) => {
    if (!el) return null;
    const raw = el.getAttribute(attr) ?? el.textContent.replace(/[^0-9.\-]/g, "");
    const value = Number.parseFloat(raw);
    return Number.isFinite(value) ? value : null;
  };
  const products = cards.slice(0, limit).map((card) => {
    const link = card.querySelector('[data-testid="product-name"]');
    const price = number(card.querySelector('[data-testid="product-price"]'), "data-price");
    if (!link || price === null) {
      throw new Error("SKILL_BROKEN: a product card lacks its name link or price");
    }
    const stock = number(card.querySelector('[data-testid="product-stock"]'), "data-stock");
    const categoryEl = card.querySelector('[data-testid="product-category"]');
    return {
      id: Number(card.getAttribute("data-product-id")),
      name: link.textContent.trim(),
      price,
      category: categoryEl ? categoryEl.textContent.trim() : card.getAttribute("data-category"),
      rating: number(card.querySelector('[data-testid="product-rating"]'), "data-rating"),
      stock,
      in_stock: stock === null ? null : stock > 0,
      url: new URL(link.getAttribute("href"), location.origin).href,
    };
  });
  return { source, category: category || null, total: cards.length, count: products.length, products };
}
