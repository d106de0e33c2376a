async () => {
  // get_cart: this browser's cart, GET /api/cart (the cart cookie is set on the first add).
  const response = await fetch("/api/cart", {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  const type = response.headers.get("content-type") || "";
  if (!response.ok || !type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: GET /api/cart answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (!Array.isArray(data.items)) throw new Error("SKILL_BROKEN: /api/cart has no items list");
  return { items: data.items, count: data.count, total: data.total };
}
