async () => {
  // whoami: is there a shop session in this browser profile? GET /api/me.
  const response = await fetch("/api/me", { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const type = response.headers.get("content-type") || "";
  if (!type.includes("application/json") || (response.status !== 200 && response.status !== 401)) {
    throw new Error("SKILL_BROKEN: GET /api/me answered HTTP " + response.status + " " + type);
  }
  const data = await response.json();
  if (response.status === 401) return { logged_in: false, username: null, login_url: location.origin + "/login" };
  return { logged_in: true, username: data.username, display_name: data.display_name ?? null };
}
