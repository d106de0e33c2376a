# ruff: noqa: E501  (page markup and scripts are kept one element per line, as served)
"""Build the x.com HAR files the x-com cases replay. Run it after changing it; the HARs are
committed next to it.

- ``x-home.har``: ``https://x.com/home`` logged in. The page is X's app shell (navigation,
  composer, an empty timeline region); the app bundle fills the timeline from the
  ``HomeTimeline`` GraphQL call, and loads the next page on scroll (the second call differs
  only by the ``cursor`` in its POST body). Also the REST typeahead the ``search_users`` tool
  calls, and the avatars, media and emoji images the posts show.
- ``x-compose.har``: ``https://x.com/compose/post``, the modal composer, and the
  ``CreateTweet`` call its Post button makes (with the exact text of the case in its body).
- ``x-search.har``: ``https://x.com/search?q=nasa&src=typed_query&f=user`` with account rows,
  where the typeahead endpoint answers 404 (as if X retired it), so the tool must fall back
  to the rows on the page.
- ``x-logged-out.har``: ``/home`` without a session: a 302 to ``/i/flow/login``.

The markup follows X's ``data-testid`` hooks and the JSON follows the shapes of X's web API as
publicly documented by people who use it (see ../notes/overview.md). X's real bundle is ~3 MB of
React; ``main.7f1c2a9e.js`` below stands in for it with the behaviour the tools rely on, and it
holds a dummy bearer token of the real one's shape (never a real credential). Response headers
are what X sends minus cookies, as ``ego record`` keeps them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ego.replay.har import Har, build_entry

HERE = Path(__file__).resolve().parent
ORIGIN = "https://x.com"
STARTED = "2025-01-15T12:00:00.000Z"
BUNDLE = "https://abs.twimg.com/responsive-web/client-web/main.7f1c2a9e.js"
HOME_QID = "Iaj4kAIobIAtigNaYNIOAw"
CREATE_QID = "oB-5XsHNAbjvARJEc8CZFw"
POSTED_TEXT = "Hello from ego: this post only ever reached a recorded page"
POSTED_ID = "1879500000000000001"

# 1x1 PNG: image bytes do not matter to the tools, their URLs do.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 36 36"><circle cx="18" cy="18" '
    'r="16" fill="#A0041E"/></svg>'
)

CSP = (
    "connect-src 'self' blob: https://api.x.com https://*.twimg.com https://x.com; "
    "default-src 'self'; form-action 'self' https://x.com; font-src 'self' https://*.twimg.com; "
    "frame-src 'self' https://x.com https://accounts.google.com; img-src 'self' blob: data: "
    "https://*.twimg.com https://*.x.com; manifest-src 'self'; media-src 'self' blob: "
    "https://*.twimg.com; object-src 'none'; script-src 'self' 'nonce-ZWdvLWZpeHR1cmU=' "
    "https://*.twimg.com https://x.com; style-src 'self' 'unsafe-inline' https://*.twimg.com; "
    "worker-src 'self' blob:; report-uri https://x.com/i/csp_report?a=O5RXE%3D%3D%3D&ro=false"
)
PAGE_HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": CSP,
    "cache-control": "no-cache, no-store, must-revalidate, pre-check=0, post-check=0",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "strict-transport-security": "max-age=631138519",
    "cross-origin-opener-policy": "same-origin-allow-popups",
    "server": "tsa_k",
    "x-powered-by": "Express",
    # As recorded: compressed on the wire, decoded in the HAR; replay drops it.
    "content-encoding": "gzip",
}
API_HEADERS = {
    "content-type": "application/json;charset=utf-8",
    "cache-control": "no-cache, no-store, max-age=0",
    "x-rate-limit-limit": "500",
    "x-rate-limit-remaining": "499",
    "x-rate-limit-reset": "1736943600",
    "x-content-type-options": "nosniff",
    "server": "tsa_k",
    "content-encoding": "gzip",
}
STATIC_HEADERS = {
    "cache-control": "public, max-age=604800",
    "access-control-allow-origin": "*",
    "timing-allow-origin": "*",
}

FEATURES = {
    "rweb_tipjar_consumption_enabled": True,
    "responsive_web_graphql_exclude_directive_enabled": True,
    "verified_phone_label_enabled": False,
    "responsive_web_graphql_timeline_navigation_enabled": True,
    "view_counts_everywhere_api_enabled": True,
    "longform_notetweets_consumption_enabled": True,
    "responsive_web_edit_tweet_api_enabled": True,
}

# The app bundle stand-in. It renders the timeline from HomeTimeline (and the next page on
# scroll), enables the Post button when the composer has text, sends CreateTweet on click and
# shows X's "Your post was sent." toast.
BUNDLE_JS = (
    r"""/* Stand-in for X's responsive-web client bundle (main.<hash>.js), for ego's offline
   tests. It keeps what the x-com tools rely on: the public bearer token literal the app sends
   as "authorization" (a dummy here, shaped like the real one), the timeline rendered from
   HomeTimeline with its data-testid markup, the composer and the "sent" toast. */
(function () {
  "use strict";
  var BEARER = "AAAAAAAAAAAAAAAAAAAAAEgoFixtureToken0000000000000%3DNotARealCredentialJustTheShapeOfOne00000000";
  var HOME_QID = "__HOME_QID__", CREATE_QID = "__CREATE_QID__";
  var FEATURES = __FEATURES__;
  var ct0 = function () { var m = document.cookie.match(/(?:^|;\s*)ct0=([^;]+)/); return m ? m[1] : ""; };
  var gql = function (qid, operation, variables) {
    return fetch("/i/api/graphql/" + qid + "/" + operation, {
      method: "POST",
      credentials: "include",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer " + BEARER,
        "x-csrf-token": ct0(),
        "x-twitter-active-user": "yes",
        "x-twitter-auth-type": "OAuth2Session",
        "x-twitter-client-language": "en"
      },
      body: JSON.stringify({ variables: variables, features: FEATURES, queryId: qid })
    }).then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); });
  };
  var esc = function (s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); };
  var emoji = function (text) {
    return esc(text).replace(/\p{Extended_Pictographic}/gu, function (e) {
      return '<img alt="' + e + '" draggable="false" src="https://abs-0.twimg.com/emoji/v2/svg/' + e.codePointAt(0).toString(16) + '.svg">';
    });
  };
  var counter = function (testid, n, one, many) {
    var label = n ? n + " " + (n === 1 ? one : many) + ". " + one.replace(/^./, function (c) { return c.toUpperCase(); }) : one.replace(/^./, function (c) { return c.toUpperCase(); });
    return '<div><button data-testid="' + testid + '" aria-label="' + label + '" role="button" type="button"><span>' + (n || "") + "</span></button></div>";
  };
  function renderTweet(result, promoted) {
    var social = null, tweet = result;
    if (result.legacy.retweeted_status_result) {
      social = result.core.user_results.result.legacy.name + " reposted";
      tweet = result.legacy.retweeted_status_result.result;
    }
    var user = tweet.core.user_results.result, u = user.legacy, t = tweet.legacy;
    var path = "/" + u.screen_name + "/status/" + tweet.rest_id;
    var when = new Date(t.created_at);
    var timeLink = promoted ? "" :
      '<div><a href="' + path + '" dir="ltr" aria-label="' + when.toDateString() + '" role="link"><time datetime="' + when.toISOString() + '">' + when.toDateString().slice(4, 10) + "</time></a></div>";
    var media = (t.extended_entities && t.extended_entities.media || []).map(function (m) {
      return '<div data-testid="tweetPhoto"><img alt="Image" draggable="true" src="' + esc(m.media_url_https) + '"></div>';
    }).join("");
    var views = tweet.views && tweet.views.count ? Number(tweet.views.count) : 0;
    var article = document.createElement("div");
    article.setAttribute("data-testid", "cellInnerDiv");
    article.innerHTML =
      '<article data-testid="tweet" role="article" tabindex="0" aria-labelledby="id__' + tweet.rest_id + '">' +
      (social ? '<div><span data-testid="socialContext">' + emoji(social) + "</span></div>" : "") +
      '<div data-testid="Tweet-User-Avatar"><a href="/' + u.screen_name + '" role="link"><img alt="" draggable="true" src="' + esc(u.profile_image_url_https) + '"></a></div>' +
      '<div data-testid="User-Name"><div><a href="/' + u.screen_name + '" role="link"><div><div dir="ltr"><span><span>' + emoji(u.name) + "</span></span></div>" +
      (user.is_blue_verified ? '<div dir="ltr"><svg viewBox="0 0 22 22" aria-label="Verified account" role="img" data-testid="icon-verified"></svg></div>' : "") +
      '</div></a></div><div><div><a href="/' + u.screen_name + '" role="link" tabindex="-1"><div dir="ltr"><span>@' + u.screen_name + "</span></div></a></div>" +
      '<div dir="ltr" aria-hidden="true"><span>\u00b7</span></div>' + timeLink + "</div></div>" +
      '<div lang="' + (t.lang || "en") + '" dir="auto" data-testid="tweetText">' + emoji(t.full_text) + "</div>" + media +
      (promoted ? '<div><span>Ad</span></div>' : "") +
      '<div role="group" aria-label="' + t.reply_count + " replies, " + t.retweet_count + " reposts, " + t.favorite_count + " likes, " + views + ' views">' +
      counter("reply", t.reply_count, "reply", "Replies") + counter("retweet", t.retweet_count, "repost", "reposts") +
      counter("like", t.favorite_count, "like", "Likes") +
      (promoted ? "" : '<div><a href="' + path + '/analytics" aria-label="' + views + ' views. View post analytics" role="link"><span>' + views + "</span></a></div>") +
      "</div></article>";
    return article;
  }
  function wireTimeline() {
    var timeline = document.querySelector('[aria-label="Timeline: Your Home Timeline"] > div');
    if (!timeline) return;
    var cursor = null, loading = false, done = false;
    var load = function () {
      if (loading || done) return;
      loading = true;
      var variables = { count: 20, includePromotedContent: true, latestControlAvailable: true, requestContext: "launch", withCommunity: true };
      if (cursor) { variables.cursor = cursor; delete variables.requestContext; }
      gql(HOME_QID, "HomeTimeline", variables).then(function (data) {
        var next = null;
        data.data.home.home_timeline_urt.instructions.forEach(function (ins) {
          if (ins.type !== "TimelineAddEntries") return;
          ins.entries.forEach(function (entry) {
            var c = entry.content;
            if (c.entryType === "TimelineTimelineCursor") { if (c.cursorType === "Bottom") next = c.value; return; }
            var r = c.itemContent && c.itemContent.tweet_results && c.itemContent.tweet_results.result;
            if (r) timeline.appendChild(renderTweet(r, !!c.itemContent.promotedMetadata));
          });
        });
        cursor = next; done = !next; loading = false;
      }).catch(function () { loading = false; });
    };
    load();
    window.addEventListener("scroll", function () {
      // Like X, ask for the next page while the reader is still a screen away from the end.
      if (window.scrollY + 3 * window.innerHeight >= document.documentElement.scrollHeight) load();
    }, { passive: true });
  }
  function toast(href) {
    var el = document.createElement("div");
    el.setAttribute("data-testid", "toast");
    el.setAttribute("role", "alert");
    el.innerHTML = "<div><span>Your post was sent.</span></div><div><a href=\"" + href + "\" role=\"link\"><span>View</span></a></div>";
    document.getElementById("layers").appendChild(el);
  }
  function wireComposer(editor) {
    var scope = editor.closest('[role="dialog"]') || document;
    var button = scope.querySelector('[data-testid="tweetButton"], [data-testid="tweetButtonInline"]');
    if (!button) return;
    var sync = function () {
      var empty = !editor.innerText.trim();
      button.disabled = empty;
      button.setAttribute("aria-disabled", String(empty));
    };
    editor.addEventListener("input", sync);
    editor.addEventListener("paste", function (e) {
      e.preventDefault();
      document.execCommand("insertText", false, e.clipboardData.getData("text/plain"));
    });
    button.addEventListener("click", function () {
      var text = editor.innerText.trim();
      if (!text) return;
      button.disabled = true;
      button.setAttribute("aria-disabled", "true");
      gql(CREATE_QID, "CreateTweet", {
        tweet_text: text, dark_request: false,
        media: { media_entities: [], possibly_sensitive: false }, semantic_annotation_ids: []
      }).then(function (data) {
        var r = data.data.create_tweet.tweet_results.result;
        toast("/" + r.core.user_results.result.legacy.screen_name + "/status/" + r.rest_id);
        editor.innerHTML = "";
        sync();
        var dialog = editor.closest('[role="dialog"]');
        if (dialog) { dialog.remove(); history.replaceState(null, "", "/home"); }
      }).catch(function () { sync(); });
    });
    sync();
    if (editor.closest('[role="dialog"]')) editor.focus();
  }
  var box = document.querySelector('[data-testid="tweetTextarea_0"]');
  if (box) wireComposer(box);
  wireTimeline();
}());
""".replace("__HOME_QID__", HOME_QID)
    .replace("__CREATE_QID__", CREATE_QID)
    .replace("__FEATURES__", json.dumps(FEATURES))
)


def shell(title: str, main: str, *, logged_in: bool = True, layers: str = "") -> str:
    """X's document: head, side navigation, ``main``, modals in ``#layers``, the bundle."""
    nav = (
        '<header role="banner"><nav aria-label="Primary navigation" role="navigation">'
        '<a href="/home" aria-label="Home" role="link" data-testid="AppTabBar_Home_Link">Home</a>'
        '<a href="/explore" aria-label="Search and explore" role="link" '
        'data-testid="AppTabBar_Explore_Link">Explore</a>'
        '<a href="/egotester" aria-label="Profile" role="link" '
        'data-testid="AppTabBar_Profile_Link">Profile</a>'
        '<a href="/compose/post" aria-label="Post" role="link" '
        'data-testid="SideNav_NewTweet_Button">Post</a></nav>'
        '<button aria-label="Account menu" role="button" type="button" '
        'data-testid="SideNav_AccountSwitcher_Button"><span>Ego Tester</span>'
        "<span>@egotester</span></button></header>"
        if logged_in
        else ""
    )
    return f"""<!DOCTYPE html>
<html dir="ltr" lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1,maximum-scale=1,user-scalable=0,viewport-fit=cover">
<link rel="preconnect" href="//abs.twimg.com">
<link rel="manifest" href="/manifest.json" crossorigin="use-credentials">
<title>{title}</title>
<style>body{{margin:0;font-family:system-ui,sans-serif}}article{{display:block;min-height:180px;border-bottom:1px solid #eee}}[data-testid="primaryColumn"]{{max-width:600px}}img{{max-width:48px;max-height:48px}}[data-testid="tweetText"] img,[data-testid="User-Name"] img,[data-testid="socialContext"] img{{height:1.2em;width:1.2em}}[data-testid="tweetPhoto"] img{{max-width:100%;max-height:280px}}</style>
<script nonce="ZWdvLWZpeHR1cmU=">window.__SCRIPTS_LOADED__ = {{}};window.__INITIAL_STATE__ = {{"featureSwitch":{{"defaultConfig":{{}}}},"session":{{"country":"US","language":"en","isActiveCreator":false}}}};</script>
</head>
<body style="background-color: #FFFFFF;">
<noscript><div><h1>JavaScript is not available.</h1></div></noscript>
<div id="react-root"><div class="css-175oi2r r-13awgt0 r-12vffkv">
{nav}
<main role="main">{main}</main>
</div></div>
<div id="layers">{layers}</div>
<script type="text/javascript" charset="utf-8" nonce="ZWdvLWZpeHR1cmU=" crossorigin="anonymous" src="{BUNDLE}"></script>
</body>
</html>
"""


COMPOSER_INLINE = """<div data-testid="primaryColumn"><div aria-label="Home timeline" tabindex="0">
<h2 dir="ltr" role="heading" aria-level="2"><span>Home</span></h2>
<div class="DraftEditor-root"><div class="public-DraftEditorPlaceholder-root"><div>What is happening?!</div></div>
<div class="DraftEditor-editorContainer"><div aria-label="Post text" aria-multiline="true" class="notranslate public-DraftEditor-content" contenteditable="true" data-testid="tweetTextarea_0" role="textbox" spellcheck="true" tabindex="0" style="outline: none; user-select: text; white-space: pre-wrap; overflow-wrap: break-word;"></div></div></div>
<button data-testid="tweetButtonInline" role="button" type="button" aria-disabled="true" disabled><span>Post</span></button>
<section aria-labelledby="accessible-list-0" role="region"><h1 id="accessible-list-0">Your Home Timeline</h1>
<div aria-label="Timeline: Your Home Timeline"><div style="position: relative;"></div></div></section>
</div></div>
<div data-testid="sidebarColumn"><form aria-label="Search" role="search"><input data-testid="SearchBox_Search_Input" aria-label="Search query" placeholder="Search" role="combobox" type="text"></form></div>"""

COMPOSE_BEHIND = """<div data-testid="primaryColumn"><div aria-label="Home timeline"><h2 role="heading" aria-level="2"><span>Home</span></h2></div></div>"""

COMPOSE_MODAL = """<div aria-labelledby="modal-header" aria-modal="true" role="dialog" data-testid="sheetDialog">
<div><button aria-label="Close" role="button" type="button" data-testid="app-bar-close">Close</button><h2 id="modal-header" hidden>Compose post</h2></div>
<div class="DraftEditor-root"><div class="public-DraftEditorPlaceholder-root"><div>What is happening?!</div></div>
<div class="DraftEditor-editorContainer"><div aria-label="Post text" aria-multiline="true" class="notranslate public-DraftEditor-content" contenteditable="true" data-testid="tweetTextarea_0" role="textbox" spellcheck="true" tabindex="0" style="outline: none; user-select: text; white-space: pre-wrap;"></div></div></div>
<button data-testid="tweetButton" role="button" type="button" aria-disabled="true" disabled><span>Post</span></button>
</div>"""

SEARCH_USERS = """<div data-testid="primaryColumn"><div aria-label="Search timeline">
<div role="tablist" data-testid="ScrollSnap-List"><a href="/search?q=nasa&amp;src=typed_query" role="tab" aria-selected="false"><span>Top</span></a><a href="/search?q=nasa&amp;src=typed_query&amp;f=user" role="tab" aria-selected="true"><span>People</span></a></div>
<section role="region"><h1>Search timeline</h1><div aria-label="Timeline: Search timeline"><div>
<div data-testid="cellInnerDiv"><div data-testid="UserCell" role="button" tabindex="0"><div><a href="/NASA" role="link"><img alt="" src="https://pbs.twimg.com/profile_images/1321163587679784960/0ZxKlEKB_normal.png"></a></div><div><div><a href="/NASA" role="link"><div dir="ltr"><span>NASA</span></div><svg aria-label="Verified account" role="img" data-testid="icon-verified" viewBox="0 0 22 22"></svg></a></div><div><a href="/NASA" role="link" tabindex="-1"><div dir="ltr"><span>@NASA</span></div></a></div></div><div><button aria-label="Follow @NASA" role="button" type="button" data-testid="1234-follow"><span>Follow</span></button></div><div dir="auto"><span>There's space for everybody. \u2728</span></div></div></div>
<div data-testid="cellInnerDiv"><div data-testid="UserCell" role="button" tabindex="0"><div><a href="/NASAWebb" role="link"><img alt="" src="https://pbs.twimg.com/profile_images/1678850411416416256/c0xN7tKR_normal.png"></a></div><div><div><a href="/NASAWebb" role="link"><div dir="ltr"><span>NASA Webb Telescope</span></div><svg aria-label="Verified account" role="img" data-testid="icon-verified" viewBox="0 0 22 22"></svg></a></div><div><a href="/NASAWebb" role="link" tabindex="-1"><div dir="ltr"><span>@NASAWebb</span></div></a></div></div><div><button aria-label="Follow @NASAWebb" role="button" type="button" data-testid="5678-follow"><span>Follow</span></button></div><div dir="auto"><span>The official account for the James Webb Space Telescope.</span></div></div></div>
<div data-testid="cellInnerDiv"><div data-testid="UserCell" role="button" tabindex="0"><div><a href="/nasa_watcher" role="link"><img alt="" src="https://pbs.twimg.com/profile_images/1600000000000000000/Ab12Cd34_normal.png"></a></div><div><div><a href="/nasa_watcher" role="link"><div dir="ltr"><span>Night Sky Notes</span></div><svg aria-label="Protected account" role="img" data-testid="icon-lock" viewBox="0 0 22 22"></svg></a></div><div><a href="/nasa_watcher" role="link" tabindex="-1"><div dir="ltr"><span>@nasa_watcher</span></div></a></div></div><div><button aria-label="Follow @nasa_watcher" role="button" type="button" data-testid="9012-follow"><span>Follow</span></button></div></div></div>
</div></div></section></div></div>"""

LOGIN_FLOW = """<div aria-labelledby="modal-header" aria-modal="true" role="dialog">
<h1 id="modal-header"><span>Sign in to X</span></h1>
<div data-testid="google_sign_in_container"></div>
<div><span>or</span></div>
<label><span>Phone, email, or username</span><input autocomplete="username" name="text" type="text"></label>
<button role="button" type="button"><span>Next</span></button>
<a href="/i/flow/signup" role="link"><span>Sign up</span></a>
</div>"""


def user(
    rest_id: str, name: str, handle: str, avatar: str, *, blue: bool = False
) -> dict[str, Any]:
    return {
        "__typename": "User",
        "id": base64.b64encode(f"User:{rest_id}".encode()).decode(),
        "rest_id": rest_id,
        "is_blue_verified": blue,
        "legacy": {
            "name": name,
            "screen_name": handle,
            "profile_image_url_https": avatar,
            "protected": False,
        },
    }


def tweet(
    rest_id: str,
    author: dict[str, Any],
    text: str,
    created: str,
    *,
    replies: int,
    reposts: int,
    likes: int,
    views: int | None,
    media: tuple[str, ...] = (),
) -> dict[str, Any]:
    legacy: dict[str, Any] = {
        "created_at": created,
        "conversation_id_str": rest_id,
        "full_text": text,
        "lang": "en",
        "reply_count": replies,
        "retweet_count": reposts,
        "favorite_count": likes,
        "quote_count": 0,
        "bookmark_count": 0,
        "user_id_str": author["rest_id"],
        "id_str": rest_id,
    }
    if media:
        legacy["extended_entities"] = {
            "media": [{"type": "photo", "media_url_https": url} for url in media]
        }
    result: dict[str, Any] = {
        "__typename": "Tweet",
        "rest_id": rest_id,
        "core": {"user_results": {"result": author}},
        "legacy": legacy,
    }
    if views is not None:
        result["views"] = {"count": str(views), "state": "EnabledWithCount"}
    return result


def retweet(
    rest_id: str, by: dict[str, Any], created: str, original: dict[str, Any]
) -> dict[str, Any]:
    """A repost: its own id and author, the original in ``retweeted_status_result``."""
    text = f"RT @{original['core']['user_results']['result']['legacy']['screen_name']}: "
    result = tweet(
        rest_id,
        by,
        text + original["legacy"]["full_text"],
        created,
        replies=0,
        reposts=original["legacy"]["retweet_count"],
        likes=0,
        views=None,
    )
    result["legacy"]["retweeted_status_result"] = {"result": original}
    return result


def entry(result: dict[str, Any], *, promoted: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {
        "itemType": "TimelineTweet",
        "__typename": "TimelineTweet",
        "tweet_results": {"result": result},
        "tweetDisplayType": "Tweet",
    }
    if promoted:
        item["promotedMetadata"] = {"advertiser_results": {}, "disclosureType": "NoDisclosure"}
    prefix = "promoted-tweet" if promoted else "tweet"
    return {
        "entryId": f"{prefix}-{result['rest_id']}",
        "sortIndex": result["rest_id"],
        "content": {
            "entryType": "TimelineTimelineItem",
            "__typename": "TimelineTimelineItem",
            "itemContent": item,
        },
    }


def timeline(entries: list[dict[str, Any]], bottom: str | None) -> dict[str, Any]:
    cursors = [
        {
            "entryId": "cursor-top-1879400000000000000",
            "sortIndex": "1879400000000000000",
            "content": {
                "entryType": "TimelineTimelineCursor",
                "__typename": "TimelineTimelineCursor",
                "value": "DAABCgABGeEgAAAAAAAKAAIZ4SAAAAAAAAgAAwAAAAEAAA",
                "cursorType": "Top",
            },
        }
    ]
    if bottom is not None:
        cursors.append(
            {
                "entryId": "cursor-bottom-1879300000000000000",
                "sortIndex": "1879300000000000000",
                "content": {
                    "entryType": "TimelineTimelineCursor",
                    "__typename": "TimelineTimelineCursor",
                    "value": bottom,
                    "cursorType": "Bottom",
                },
            }
        )
    return {
        "data": {
            "home": {
                "home_timeline_urt": {
                    "instructions": [
                        {"type": "TimelineAddEntries", "entries": entries + cursors},
                        {"type": "TimelineTerminateTimeline", "direction": "Top"},
                    ],
                    "metadata": {"scribeConfig": {"page": "following"}},
                }
            }
        }
    }


AVATAR = "https://pbs.twimg.com/profile_images/{}/{}_normal.png"
NASA = user("11348282", "NASA", "NASA", AVATAR.format("1321163587679784960", "0ZxKlEKB"), blue=True)
ALICE = user("1500000001", "Alice \U0001f33b", "alice_dev", AVATAR.format("1500000001", "alice"))
BOB = user("1500000002", "Bob Builder", "bob", AVATAR.format("1500000002", "bob"))
SHOP = user("1500000003", "Gadget Shop", "gadgetshop", AVATAR.format("1500000003", "shop"))
PHOTO = "https://pbs.twimg.com/media/GhXyZ1AbCdEfGhI?format=png&name=small"
BOTTOM_1 = "DAABCgABGeEgAAAAAAAKAAIZ4R-AAAAAAAgAAwAAAAIAAA"

PAGE_1 = [
    entry(
        tweet(
            "1879000000000000001",
            NASA,
            "Artemis II crew training continues \U0001f680 #Artemis",
            "Tue Jan 14 18:30:00 +0000 2025",
            replies=12,
            reposts=45,
            likes=1204,
            views=98765,
        )
    ),
    entry(
        retweet(
            "1879000000000000002",
            ALICE,
            "Tue Jan 14 17:00:00 +0000 2025",
            tweet(
                "1878900000000000003",
                BOB,
                "Shipped the new release today. Notes below.",
                "Mon Jan 13 09:15:00 +0000 2025",
                replies=2,
                reposts=3,
                likes=27,
                views=1530,
                media=(PHOTO,),
            ),
        )
    ),
    entry(
        tweet(
            "1879000000000000004",
            SHOP,
            "The gadget you did not know you needed.",
            "Tue Jan 14 12:00:00 +0000 2025",
            replies=0,
            reposts=0,
            likes=5,
            views=None,
        ),
        promoted=True,
    ),
    entry(
        tweet(
            "1879000000000000005",
            BOB,
            "Quiet day. Reading docs.",
            "Tue Jan 14 08:05:00 +0000 2025",
            replies=0,
            reposts=0,
            likes=0,
            views=12,
        )
    ),
]
PAGE_2 = [
    entry(
        tweet(
            f"18789000000000000{n}",
            author,
            text,
            created,
            replies=n,
            reposts=0,
            likes=n * 10,
            views=n * 100,
        )
    )
    for n, author, text, created in (
        (11, NASA, "Look up tonight: the Moon and Venus.", "Mon Jan 13 20:00:00 +0000 2025"),
        (12, ALICE, "Coffee first.", "Mon Jan 13 07:30:00 +0000 2025"),
        (13, BOB, "Release candidate is out.", "Sun Jan 12 15:45:00 +0000 2025"),
    )
]


def gql_body(qid: str, variables: dict[str, Any]) -> str:
    # The bundle's JSON.stringify output: key order as written, no spaces.
    return json.dumps(
        {"variables": variables, "features": FEATURES, "queryId": qid}, separators=(",", ":")
    )


def page(url: str, html: str, har: Har) -> None:
    har.add(build_entry(url, html, headers=PAGE_HEADERS, resource_type="document", started=STARTED))


MANIFEST = {
    "background_color": "#ffffff",
    "categories": ["social", "news", "magazines"],
    "description": "It's what's happening. From breaking news and entertainment, sports and politics, to big events and everyday interests.",
    "display": "standalone",
    "icons": [
        {
            "src": "https://abs.twimg.com/responsive-web/client-web/icon-default.522d363a.png",
            "sizes": "192x192",
            "type": "image/png",
        }
    ],
    "name": "X",
    "short_name": "X",
    "start_url": "https://x.com/?utm_source=homescreen&utm_medium=shortcut",
    "theme_color": "#ffffff",
}


def static(har: Har) -> None:
    # Chrome reads the <link rel="manifest"> of the page at some point after load.
    har.add(
        build_entry(
            f"{ORIGIN}/manifest.json",
            json.dumps(MANIFEST),
            headers={
                "content-type": "application/manifest+json; charset=utf-8",
                "cache-control": "max-age=3600",
            },
            resource_type="manifest",
            started=STARTED,
        )
    )
    har.add(
        build_entry(
            BUNDLE,
            BUNDLE_JS,
            headers={**STATIC_HEADERS, "content-type": "application/javascript; charset=utf-8"},
            resource_type="script",
            started=STARTED,
        )
    )


def images(har: Har, urls: list[str]) -> None:
    for url in urls:
        body: str | bytes = SVG if url.endswith(".svg") else PNG
        kind = "image/svg+xml" if url.endswith(".svg") else "image/png"
        har.add(
            build_entry(
                url,
                body,
                headers={**STATIC_HEADERS, "content-type": kind},
                resource_type="image",
                started=STARTED,
            )
        )


def home_har() -> Har:
    har = Har(comment="hand-built by learnings/x-com/tests/make_har.py")
    page(f"{ORIGIN}/home", shell("Home / X", COMPOSER_INLINE), har)
    static(har)
    first = {
        "count": 20,
        "includePromotedContent": True,
        "latestControlAvailable": True,
        "requestContext": "launch",
        "withCommunity": True,
    }
    second = {
        "count": 20,
        "includePromotedContent": True,
        "latestControlAvailable": True,
        "withCommunity": True,
        "cursor": BOTTOM_1,
    }
    for variables, entries, bottom in ((first, PAGE_1, BOTTOM_1), (second, PAGE_2, None)):
        har.add(
            build_entry(
                f"{ORIGIN}/i/api/graphql/{HOME_QID}/HomeTimeline",
                json.dumps(timeline(entries, bottom), ensure_ascii=False),
                method="POST",
                post_data=gql_body(HOME_QID, variables),
                headers=API_HEADERS,
                resource_type="fetch",
                started=STARTED,
            )
        )
    images(
        har,
        [
            NASA["legacy"]["profile_image_url_https"],
            ALICE["legacy"]["profile_image_url_https"],
            BOB["legacy"]["profile_image_url_https"],
            SHOP["legacy"]["profile_image_url_https"],
            PHOTO,
            "https://abs-0.twimg.com/emoji/v2/svg/1f680.svg",
            "https://abs-0.twimg.com/emoji/v2/svg/1f33b.svg",
        ],
    )
    typeahead = {
        "num_results": 3,
        "users": [
            typeahead_user("11348282", "NASA", "NASA", verified=True, location="Pale Blue Dot"),
            typeahead_user(
                "1214262802",
                "NASA Webb Telescope",
                "NASAWebb",
                verified=True,
                location="Orbiting L2",
            ),
            typeahead_user(
                "1600000000000000000",
                "Night Sky Notes",
                "nasa_watcher",
                protected=True,
                location="",
            ),
        ],
        "topics": [],
        "events": [],
        "lists": [],
        "ordered_sections": [],
    }
    har.add(
        build_entry(
            f"{ORIGIN}/i/api/1.1/search/typeahead.json?q=nasa&src=search_box&result_type=users",
            json.dumps(typeahead),
            headers=API_HEADERS,
            resource_type="fetch",
            started=STARTED,
        )
    )
    return har


def typeahead_user(
    rest_id: str,
    name: str,
    handle: str,
    *,
    verified: bool = False,
    protected: bool = False,
    location: str = "",
) -> dict[str, Any]:
    """A user as /i/api/1.1/search/typeahead.json returns it (legacy v1.1 fields)."""
    avatar = f"pbs.twimg.com/profile_images/{rest_id}/{handle.lower()}_normal.png"
    return {
        "id": int(rest_id),
        "id_str": rest_id,
        "verified": False,
        "ext_is_blue_verified": verified,
        "badges": [],
        "is_dm_able": False,
        "is_secret_dm_able": False,
        "is_blocked": False,
        "can_media_tag": True,
        "name": name,
        "screen_name": handle,
        "profile_image_url": f"http://{avatar}",
        "profile_image_url_https": f"https://{avatar}",
        "location": location,
        "is_protected": protected,
        "rounded_score": 0,
        "social_proof": 0,
        "connecting_user_count": 0,
        "connecting_user_ids": [],
        "social_proofs_ordered": [],
        "social_context": {"following": False, "followed_by": False},
        "tokens": [],
        "inline": False,
    }


def compose_har() -> Har:
    har = Har(comment="hand-built by learnings/x-com/tests/make_har.py")
    page(f"{ORIGIN}/compose/post", shell("Home / X", COMPOSE_BEHIND, layers=COMPOSE_MODAL), har)
    static(har)
    created = {
        "data": {
            "create_tweet": {
                "tweet_results": {
                    "result": tweet(
                        POSTED_ID,
                        user(
                            "1700000000000000000",
                            "Ego Tester",
                            "egotester",
                            AVATAR.format("1700000000000000000", "ego"),
                        ),
                        POSTED_TEXT,
                        "Wed Jan 15 12:00:05 +0000 2025",
                        replies=0,
                        reposts=0,
                        likes=0,
                        views=None,
                    )
                }
            }
        }
    }
    variables = {
        "tweet_text": POSTED_TEXT,
        "dark_request": False,
        "media": {"media_entities": [], "possibly_sensitive": False},
        "semantic_annotation_ids": [],
    }
    har.add(
        build_entry(
            f"{ORIGIN}/i/api/graphql/{CREATE_QID}/CreateTweet",
            json.dumps(created),
            method="POST",
            post_data=gql_body(CREATE_QID, variables),
            headers=API_HEADERS,
            resource_type="fetch",
            started=STARTED,
        )
    )
    return har


def search_har() -> Har:
    har = Har(comment="hand-built by learnings/x-com/tests/make_har.py")
    page(
        f"{ORIGIN}/search?q=nasa&src=typed_query&f=user",
        shell("nasa - Search / X", SEARCH_USERS),
        har,
    )
    static(har)
    images(
        har,
        [
            "https://pbs.twimg.com/profile_images/1321163587679784960/0ZxKlEKB_normal.png",
            "https://pbs.twimg.com/profile_images/1678850411416416256/c0xN7tKR_normal.png",
            "https://pbs.twimg.com/profile_images/1600000000000000000/Ab12Cd34_normal.png",
        ],
    )
    gone = {"errors": [{"code": 34, "message": "Sorry, that page does not exist."}]}
    har.add(
        build_entry(
            f"{ORIGIN}/i/api/1.1/search/typeahead.json?q=nasa&src=search_box&result_type=users",
            json.dumps(gone),
            status=404,
            headers=API_HEADERS,
            resource_type="fetch",
            started=STARTED,
        )
    )
    return har


def logged_out_har() -> Har:
    har = Har(comment="hand-built by learnings/x-com/tests/make_har.py")
    login = f"{ORIGIN}/i/flow/login?redirect_after_login=%2Fhome"
    har.add(
        build_entry(
            f"{ORIGIN}/home",
            "",
            status=302,
            headers={
                "location": login,
                "content-type": "text/html; charset=utf-8",
                "cache-control": "no-cache, no-store, max-age=0",
            },
            resource_type="document",
            started=STARTED,
        )
    )
    page(login, shell("Log in to X / X", "", logged_in=False, layers=LOGIN_FLOW), har)
    static(har)
    return har


if __name__ == "__main__":
    for name, build in (
        ("x-home.har", home_har),
        ("x-compose.har", compose_har),
        ("x-search.har", search_har),
        ("x-logged-out.har", logged_out_har),
    ):
        print(f"wrote {build().save(HERE / name)}")
