async (root, params) => {
  // search-products: the shop's own search API, GET /api/products?q=&category=&limit=.
  const query = new URLSearchParams();
  query.set("q", String(params.query ?? "").trim());
  if (params.category) query.set("category", String(params.category).trim().toLowerCase());
  query.set("limit", String(params.limit ?? 20));
  const response = await fetch("/api/products?" + query, {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  if (response.status === 429) return { error: "rate limited: try again later" };
  const type = response.headers.get("content-type") || "";
  if (!type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: /api/products answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (response.status === 400) return { error: "bad request: " + data.error };
  if (!response.ok || !Array.isArray(data.products)) {
    throw new Error("SKILL_BROKEN: /api/products answered HTTP " + response.status + " without products");
  }
  const origin = root.location ? root.location.origin : location.origin;
  const products = data.products.map((p) => ({
    id: p.id,
    name: p.name,
    price: p.price,
    category: p.category,
    rating: p.rating,
    stock: p.stock,
    in_stock: p.stock > 0,
    url: new URL(p.url || "/product/" + p.id, origin).href,
  }));
  return { query: query.get("q"), total: data.total, count: products.length, products };
}
