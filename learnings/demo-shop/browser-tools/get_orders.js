async function (args) {
  // get_orders: the logged-in user's orders, GET /api/orders (auth: session).
  // 401 means no session: the person logs in by hand at /login, then the call is retried.
  const response = await fetch("/api/orders", {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  if (response.status === 401) {
    throw new Error("NEEDS_LOGIN: no shop session in this browser profile; log in by hand at " + location.origin + "/login, then retry");
  }
  const type = response.headers.get("content-type") || "";
  if (!response.ok || !type.includes("application/json")) {
    throw new Error("SKILL_BROKEN: GET /api/orders answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (!Array.isArray(data.orders)) throw new Error("SKILL_BROKEN: /api/orders has no orders list");
  const limit = args && args.limit != null ? Number(args.limit) : data.orders.length;
  const orders = data.orders.slice(0, limit).map((o) => ({
    id: o.id,
    date: o.date,
    status: o.status,
    total: o.total,
    items: o.items.map((i) => ({ product_id: i.product_id, name: i.name, quantity: i.quantity, price: i.price })),
  }));
  return { username: data.username, count: orders.length, orders };
}
