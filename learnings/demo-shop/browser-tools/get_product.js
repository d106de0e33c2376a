async (args) => {
  // get_product: one product with its description and reviews, from GET /api/products/<id>.
  const id = Number(args.id);
  if (!Number.isInteger(id) || id < 1) return { error: "id: expected a positive integer" };
  const response = await fetch("/api/products/" + id, {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  const type = response.headers.get("content-type") || "";
  if (response.status === 404 && type.includes("json")) {
    return { error: "not found: no product with id " + id };
  }
  if (response.status === 429) return { error: "rate limited: try again later" };
  if (!response.ok || !type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: GET /api/products/" + id + " answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (typeof data.name !== "string" || typeof data.price !== "number" || !Array.isArray(data.reviews)) {
    throw new Error("SKILL_BROKEN: /api/products/<id> no longer has name, price and reviews");
  }
  return {
    id: data.id,
    name: data.name,
    price: data.price,
    currency: data.currency || "USD",
    category: data.category,
    rating: data.rating,
    stock: data.stock,
    in_stock: data.stock > 0,
    description: data.description,
    url: new URL(data.url || "/product/" + id, location.origin).href,
    review_count: data.reviews.length,
    reviews: data.reviews.map((r) => ({ author: r.author, rating: r.rating, text: r.text })),
  };
}
