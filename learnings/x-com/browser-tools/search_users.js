async function (args) {
  // search_users: find accounts by name or handle.
  // 1. The web app's own typeahead API (GET /i/api/1.1/search/typeahead.json), sent the way the
  //    app sends it: session cookies, x-csrf-token = the ct0 cookie, and the app's public bearer
  //    token, read from its main.*.js bundle (cached in sessionStorage for this tab).
  // 2. Else the [data-testid="UserCell"] rows already on the page (x.com/search?q=...&f=user).
  const query = String((args && args.query) ?? "").trim().replace(/^@/, "");
  if (!query) return { error: "query: empty" };
  const limit = Math.max(1, Math.min(50, Number((args && args.limit) ?? 10)));

  const loggedOut = () =>
    !!document.querySelector('[data-testid="loginButton"], [data-testid="signupButton"], [data-testid="google_sign_in_container"]') &&
    !document.querySelector('[data-testid="SideNav_AccountSwitcher_Button"], [data-testid="AppTabBar_Profile_Link"]');
  const csrf = (document.cookie.match(/(?:^|;\s*)ct0=([^;]+)/) || [])[1] || null;

  const bearerToken = async () => {
    const KEY = "ego:x-com:bearer";
    try { const cached = sessionStorage.getItem(KEY); if (cached) return cached; } catch (e) { /* storage off */ }
    const bundles = Array.from(document.querySelectorAll("script[src]"))
      .map((s) => s.src)
      .filter((src) => /\/main\.[\w-]+\.js(\?|$)/.test(src));
    for (const src of bundles) {
      try {
        const source = await (await fetch(src)).text();
        const m = source.match(/"(AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,})"/);
        if (m) {
          try { sessionStorage.setItem(KEY, m[1]); } catch (e) { /* storage off */ }
          return m[1];
        }
      } catch (e) { /* try the next bundle */ }
    }
    return null;
  };

  let apiProblem = null;
  if (csrf) {
    const bearer = await bearerToken();
    if (!bearer) {
      apiProblem = "no bearer token found in the app bundle";
    } else {
      const params = new URLSearchParams({ q: query, src: "search_box", result_type: "users" });
      const response = await fetch("/i/api/1.1/search/typeahead.json?" + params, {
        credentials: "include",
        headers: {
          authorization: "Bearer " + bearer, // sent as compiled, %3D included
          "x-csrf-token": csrf,
          "x-twitter-active-user": "yes",
          "x-twitter-auth-type": "OAuth2Session",
          "x-twitter-client-language": (navigator.language || "en").slice(0, 2),
        },
      });
      if (response.status === 429) return { error: "rate limited: X answered 429; wait before searching again" };
      if (response.ok) {
        let data = null;
        try { data = await response.json(); } catch (e) { data = null; }
        if (!data || !Array.isArray(data.users)) {
          throw new Error("SKILL_BROKEN: typeahead.json no longer answers {users: [...]}");
        }
        const users = data.users.slice(0, limit).map((u) => ({
          id: u.id_str || String(u.id),
          handle: u.screen_name,
          name: u.name,
          verified: !!(u.verified || u.is_blue_verified || u.ext_is_blue_verified),
          // typeahead.json users carry v1.1's is_protected (not the REST user's protected).
          protected: !!(u.is_protected || u.protected),
          avatar: u.profile_image_url_https || null,
          url: "https://x.com/" + u.screen_name,
          bio: null,
        }));
        return { source: "api", query, count: users.length, users };
      }
      apiProblem = "typeahead.json answered HTTP " + response.status;
    }
  } else {
    apiProblem = "no ct0 cookie (not logged in, or X changed its CSRF scheme)";
  }

  if (loggedOut()) {
    throw new Error("NEEDS_LOGIN: x.com shows the logged-out prompt; log in by hand in this browser profile, then retry");
  }

  // DOM fallback: account rows on the current page.
  const onSearch = location.pathname === "/search" &&
    (new URLSearchParams(location.search).get("q") || "").replace(/^@/, "").toLowerCase() === query.toLowerCase();
  const cells = Array.from(document.querySelectorAll('[data-testid="UserCell"]'));
  const users = [];
  for (const cell of cells) {
    let handle = null;
    for (const a of cell.querySelectorAll('a[href^="/"]')) {
      const m = a.getAttribute("href").match(/^\/([A-Za-z0-9_]{1,15})\/?$/);
      if (m) { handle = m[1]; break; }
    }
    if (!handle) continue;
    const lines = (cell.innerText || cell.textContent).split("\n").map((s) => s.trim()).filter(Boolean);
    const name = lines[0] || handle;
    const skip = new Set([name, "@" + handle, "Follow", "Following", "Follows you", "Unfollow", "Click to Follow " + handle]);
    const bio = lines.filter((l) => !skip.has(l) && !/^Click to (Un)?[Ff]ollow/.test(l)).join(" ").trim() || null;
    const match = onSearch || (handle + " " + name).toLowerCase().includes(query.toLowerCase());
    if (!match || users.some((u) => u.handle === handle)) continue;
    const avatar = cell.querySelector('img[src*="profile_images"]');
    users.push({
      id: null,
      handle,
      name,
      verified: !!cell.querySelector('[data-testid="icon-verified"], svg[aria-label="Verified account"]'),
      protected: !!cell.querySelector('[data-testid="icon-lock"], svg[aria-label="Protected account"]'),
      avatar: avatar ? avatar.src : null,
      url: "https://x.com/" + handle,
      bio,
    });
    if (users.length >= limit) break;
  }
  if (users.length || onSearch) {
    return { source: "dom", query, count: users.length, users, api_problem: apiProblem };
  }
  if (!document.querySelector('[data-testid="primaryColumn"]')) {
    throw new Error('SKILL_BROKEN: typeahead API unusable (' + apiProblem + ') and no [data-testid="primaryColumn"] on the page');
  }
  return {
    error: "not found: the typeahead API was unusable (" + apiProblem + ") and no matching UserCell is on this page; open https://x.com/search?q=" +
      encodeURIComponent(query) + "&f=user and retry",
  };
}
