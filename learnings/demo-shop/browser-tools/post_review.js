async (args) => {
  // post_review: publishes a review, POST /api/products/<id>/reviews {rating, text}.
  // Irreversible (it is public at once) and needs the logged-in session.
  const productId = Number(args.product_id);
  const response = await fetch("/api/products/" + productId + "/reviews", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify({ rating: Number(args.rating), text: String(args.text) }),
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
  if (response.status === 429) return { error: "rate limited: try again later" };
  if (!response.ok || !data.review) {
    throw new Error("SKILL_BROKEN: the review endpoint answered HTTP " + response.status + " without a review");
  }
  return { published: true, review: data.review };
}
