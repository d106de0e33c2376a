async (args) => {
  // get_timeline_posts: read the posts of the timeline on screen (home, a profile, a search),
  // scrolling to load more until max_posts. X virtualises the list, so posts are collected
  // while scrolling and deduplicated by status id.
  const maxPosts = Math.max(1, Math.min(200, Number((args && args.max_posts) ?? 20)));
  const mayScroll = !(args && args.scroll === false);
  const started = Date.now(); // the whole call stays under ~45 s (the manifest's timeout is 60)

  const waitFor = (test, ms) => new Promise((resolve) => {
    const first = test();
    if (first) return resolve(first);
    const observer = new MutationObserver(() => {
      const value = test();
      if (value) { observer.disconnect(); clearTimeout(timer); resolve(value); }
    });
    observer.observe(document.documentElement, { childList: true, subtree: true });
    const timer = setTimeout(() => { observer.disconnect(); resolve(test()); }, ms);
  });
  const loggedOut = () =>
    !!document.querySelector('[data-testid="loginButton"], [data-testid="signupButton"], [data-testid="google_sign_in_container"]') &&
    !document.querySelector('[data-testid="SideNav_AccountSwitcher_Button"], [data-testid="AppTabBar_Profile_Link"]');

  // X renders on the client: wait (up to 8 s) for posts, the login prompt, or an empty column.
  await waitFor(() => document.querySelector('article[data-testid="tweet"]') || loggedOut(), 8000);
  if (loggedOut() || location.pathname.startsWith("/i/flow/login")) {
    throw new Error("NEEDS_LOGIN: x.com shows the logged-out login prompt; log in by hand in this browser profile, then retry");
  }
  const column = document.querySelector('[data-testid="primaryColumn"]');
  if (!column) throw new Error('SKILL_BROKEN: no timeline container [data-testid="primaryColumn"]');

  const count = (el) => {
    if (!el) return null;
    const label = el.getAttribute("aria-label") || el.textContent || "";
    const m = label.replace(/,/g, "").match(/(\d+(?:\.\d+)?)\s*([KMB])?/i);
    if (!m) return 0; // "Reply" with no number means zero
    const scale = { K: 1e3, M: 1e6, B: 1e9 }[(m[2] || "").toUpperCase()] || 1;
    return Math.round(Number(m[1]) * scale);
  };
  const textOf = (el) => {
    if (!el) return null;
    const copy = el.cloneNode(true);
    for (const img of copy.querySelectorAll("img[alt]")) img.replaceWith(img.getAttribute("alt"));
    return copy.textContent;
  };
  const parse = (article) => {
    const nameBox = article.querySelector('[data-testid="User-Name"]');
    let handle = null;
    let name = null;
    if (nameBox) {
      // The first profile link holds the display name (emoji as <img alt>), the next "@handle".
      for (const a of nameBox.querySelectorAll('a[href^="/"]')) {
        const m = a.getAttribute("href").match(/^\/([A-Za-z0-9_]{1,15})\/?$/);
        if (!m) continue;
        handle = handle || m[1];
        const label = (textOf(a) || "").trim();
        if (!name && label && !label.startsWith("@")) name = label;
      }
      if (!handle) handle = (nameBox.textContent.match(/@([A-Za-z0-9_]{1,15})/) || [])[1] || null;
      if (!name) name = (nameBox.innerText || nameBox.textContent).split("\n").map((s) => s.trim()).filter(Boolean)[0] || null;
    }
    const time = article.querySelector("time[datetime]");
    const link = (time && time.closest('a[href*="/status/"]')) || article.querySelector('a[href*="/status/"]');
    const href = link ? link.getAttribute("href").replace(/\/(analytics|photo\/\d+|video\/\d+|quotes|retweets|likes)$/, "") : null;
    const id = href ? (href.match(/\/status\/(\d+)/) || [])[1] || null : null;
    const social = article.querySelector('[data-testid="socialContext"]');
    return {
      id,
      author: { name, handle },
      text: textOf(article.querySelector('[data-testid="tweetText"]')),
      time: time ? time.getAttribute("datetime") : null,
      permalink: href ? new URL(href, location.origin).href : null,
      metrics: {
        replies: count(article.querySelector('[data-testid="reply"]')),
        reposts: count(article.querySelector('[data-testid="retweet"], [data-testid="unretweet"]')),
        likes: count(article.querySelector('[data-testid="like"], [data-testid="unlike"]')),
        views: count(article.querySelector('a[href$="/analytics"]')),
      },
      // Names in the repost header carry emoji as <img alt> like the author's name does.
      social_context: social ? textOf(social).trim() : null,
      has_media: !!article.querySelector('[data-testid="tweetPhoto"], [data-testid="videoPlayer"], [data-testid="videoComponent"]'),
      promoted: !time, // ads carry no timestamp
    };
  };

  const posts = new Map();
  const collect = () => {
    let added = 0;
    for (const article of column.querySelectorAll('article[data-testid="tweet"]')) {
      const post = parse(article);
      const key = post.id || post.permalink || (post.author.handle + "|" + post.text);
      if (!posts.has(key)) { posts.set(key, post); added += 1; }
    }
    return added;
  };
  collect();
  let scrolls = 0;
  let idle = 0;
  while (mayScroll && posts.size < maxPosts && scrolls < 25 && idle < 2 && Date.now() - started < 45000) {
    const seen = column.querySelectorAll('article[data-testid="tweet"]').length;
    const lastId = (() => { const all = column.querySelectorAll('article[data-testid="tweet"]'); return all.length ? parse(all[all.length - 1]).id : null; })();
    window.scrollBy(0, Math.max(400, window.innerHeight * 0.9));
    scrolls += 1;
    await waitFor(() => {
      const all = column.querySelectorAll('article[data-testid="tweet"]');
      return all.length !== seen || (all.length && parse(all[all.length - 1]).id !== lastId);
    }, 2500);
    idle = collect() ? 0 : idle + 1;
  }
  const list = Array.from(posts.values()).slice(0, maxPosts);
  return { url: location.href, count: list.length, scrolls, posts: list };
}
