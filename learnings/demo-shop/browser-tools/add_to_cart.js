export default async function addToCart(args) {
  // add_to_cart: POST /api/cart {product_id, quantity}; adds to what the cart already holds.
  const body = { product_id: Number(args.product_id), quantity: Number(args.quantity ?? 1) };
  const response = await fetch("/api/cart", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const type = response.headers.get("content-type") || "";
  if (!type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: POST /api/cart answered HTTP " + response.status + " with " + (type || "no type"));
  }
  const data = await response.json();
  if (response.status === 404) return { error: "not found: no product with id " + body.product_id };
  if (response.status === 409) return { error: data.error, stock: data.stock };
  if (response.status === 400) return { error: "bad request: " + data.error };
  if (response.status === 429) return { error: "rate limited: try again later" };
  if (!response.ok || !Array.isArray(data.items)) {
    throw new Error("SKILL_BROKEN: POST /api/cart answered HTTP " + response.status + " without a cart");
  }
  return { added: body, cart: { items: data.items, count: data.count, total: data.total } };
}
