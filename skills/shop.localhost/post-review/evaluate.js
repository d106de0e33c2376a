async (root, params) => {
  // post-review: POST /api/products/<id>/reviews {rating, text}; irreversible, auth: session.
  const productId = Number(params.product_id);
  const response = await fetch("/api/products/" + productId + "/reviews", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify({ rating: Number(params.rating), text: String(params.text) }),
  });
  if (response.status === 401) {
    throw new Error("NEEDS_LOGIN: reviews need a shop session; log in by hand at " + location.origin + "/login, then retry");
  }
  const type = response.headers.get("content-type") || "";
  if (!type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: POST /api/products/<id>/reviews answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (response.status === 404) return { error: "not found: no product with id " + productId };
  if (response.status === 400) return { error: "bad request: " + data.error };
  if (!response.ok || !data.review) {
    throw new Error("SKILL_BROKEN: the review endpoint answered HTTP " + response.status + " without a review");
  }
  return { published: true, review: data.review };
}
