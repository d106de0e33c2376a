export default async function searchProducts(args) {
  // search_products: the shop's own search API, GET /api/products?q=&category=&limit=&sort=.
  // Every word of the query must appear in the name, category or description.
  const params = new URLSearchParams();
  params.set("q", String(args.query ?? "").trim());
  if (args.category) params.set("category", String(args.category).trim().toLowerCase());
  params.set("limit", String(args.limit ?? 20));
  if (args.sort) params.set("sort", String(args.sort));
  const response = await fetch("/api/products?" + params, {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  const type = response.headers.get("content-type") || "";
  if (response.status === 429) return { error: "rate limited: try again later" };
  if (!type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: /api/products answered HTTP " + response.status + " with " + (type || "no type"));
  }
  const data = await response.json();
  if (response.status === 400) return { error: "bad request: " + data.error };
  if (!response.ok || !Array.isArray(data.products)) {
    throw new Error("SKILL_BROKEN: /api/products answered HTTP " + response.status + " without a products list");
  }
  const products = data.products.map((p) => ({
    id: p.id,
    name: p.name,
    price: p.price,
    category: p.category,
    rating: p.rating,
    stock: p.stock,
    in_stock: p.stock > 0,
    url: new URL(p.url || "/product/" + p.id, location.origin).href,
  }));
  return { query: params.get("q"), total: data.total, count: products.length, products };
}
