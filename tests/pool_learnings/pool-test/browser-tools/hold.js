async (args) => {
  // The test server records the request, then answers only when the test releases it.
  const response = await fetch("/hold?id=" + encodeURIComponent(args.id), { method: "POST" });
  return { id: args.id, status: response.status, body: await response.text() };
}
