# ruff: noqa: E501, RUF001  (markup kept one element per line, with the characters Google serves)
"""Build the www.google.com HAR files the google-com cases replay. Run it after changing it;
the HARs are committed next to it.

- ``google-home.har``: ``https://www.google.com/`` and what the tools fetch from there:
  ``/complete/search`` in both shapes (``client=firefox`` JSON, ``client=gws-wiz`` with its
  ``)]}'`` prefix and ``<b>`` markup), a query for which ``client=firefox`` is gone so the tool
  must fall back, one for which both shapes changed (SKILL_BROKEN), and ``/search?q=`` fetched
  same-origin: once a full results page, once the JavaScript-required page Google serves to
  clients it does not trust.
- ``google-search.har``: a results page in the tab (organic results, "People also ask", an
  images link to skip), and one whose layout lost ``#search``.
- ``google-sorry.har``: a search that lands on the CAPTCHA page (``/sorry/index``, HTTP 429).

The markup follows Google's results page as it is served today, trimmed (class names are
Google's generated ones, which the tool avoids except as hints); ``/complete/search`` follows
the shapes described in ../notes/overview.md. Headers are Google's, minus cookies, as
``ego record`` keeps them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

from ego.replay.har import Entry, Har, build_entry

HERE = Path(__file__).resolve().parent
ORIGIN = "https://www.google.com"
STARTED = "2025-01-15T12:00:00.000Z"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
FAVICON = "data:image/png;base64," + base64.b64encode(PNG).decode()
LOGO = "/images/branding/googlelogo/2x/googlelogo_color_272x92dp.png"
SMALL_LOGO = "/images/branding/googlelogo/1x/googlelogo_color_92x30dp.png"

PAGE_HEADERS = {
    "content-type": "text/html; charset=UTF-8",
    "content-security-policy-report-only": (
        "object-src 'none';base-uri 'self';script-src 'nonce-bEGOfixtureNonce' 'strict-dynamic' "
        "'report-sample' 'unsafe-eval' 'unsafe-inline' https: http:;"
        "report-uri https://csp.withgoogle.com/csp/gws/other-hp"
    ),
    "cache-control": "private, max-age=0",
    "expires": "-1",
    "p3p": 'CP="This is not a P3P policy! See g.co/p3phelp for more info."',
    "server": "gws",
    "x-xss-protection": "0",
    "x-frame-options": "SAMEORIGIN",
    "alt-svc": 'h3=":443"; ma=2592000,h3-29=":443"; ma=2592000',
    # As recorded: brotli on the wire, decoded in the HAR; replay drops it.
    "content-encoding": "br",
}
SUGGEST_HEADERS = {
    "content-disposition": 'attachment; filename="f.txt"',
    "cache-control": "private, max-age=3600",
    "x-content-type-options": "nosniff",
    "server": "gws",
    "x-xss-protection": "0",
    "x-frame-options": "SAMEORIGIN",
}

HOME = f"""<!doctype html><html itemscope="" itemtype="http://schema.org/WebPage" lang="en"><head><meta charset="UTF-8"><meta content="origin" name="referrer"><meta content="/images/branding/googleg/1x/googleg_standard_color_128dp.png" itemprop="image"><title>Google</title>
<script nonce="bEGOfixtureNonce">(function(){{var _g={{kEI:'R0hHZ4SdBtyk5NoPx4a_mA4',kEXPI:'0,18168,1341242',kBL:'ego0',kOPI:89978449}};(function(){{google=window.google||{{}};google.sn='webhp';google.kHL='en';}})();}})();</script>
<style>body{{margin:0;font-family:arial,sans-serif}}.L3eUgb{{display:flex;flex-direction:column;height:100%}}.o3j99{{display:flex;justify-content:center}}textarea.gLFyf{{width:480px}}</style>
</head><body jsmodel="hspDDf"><div class="L3eUgb" data-hveid="1">
<div class="o3j99 n1xJcf Ne6nSd"><div class="LX3sZb"><div class="gb_Ad"><a class="gb_A" aria-label="Gmail" href="https://mail.google.com/mail/&amp;ogbl" target="_top">Gmail</a><a class="gb_A" aria-label="Search for Images" href="https://www.google.com/imghp?hl=en&amp;ogbl" target="_top">Images</a><a class="gb_A gb_Ja" href="https://accounts.google.com/ServiceLogin?hl=en&amp;passive=true&amp;continue=https://www.google.com/" target="_top"><span class="gb_Sd">Sign in</span></a></div></div></div>
<div class="o3j99 LLD4me yr19Zb LS8OJ"><div style="display:inline-flex"><img class="lnXdpd" alt="Google" height="92" src="{LOGO}" width="272"></div></div>
<div class="o3j99 ikrT4e om7nvf"><form action="/search" autocomplete="off" method="GET" role="search"><div jsmodel="b5W85"><div class="A8SBwf"><div class="RNNXgb"><div class="SDkEP"><div class="a4bIc"><textarea class="gLFyf" aria-controls="Alh6id" aria-owns="Alh6id" autofocus="" title="Search" value="" aria-label="Search" placeholder="" aria-autocomplete="both" aria-expanded="false" aria-haspopup="false" autocapitalize="off" autocomplete="off" autocorrect="off" id="APjFqb" maxlength="2048" name="q" role="combobox" rows="1" spellcheck="false"></textarea></div></div></div></div>
<div class="FPdoLc lJ9FBc"><center><input class="gNO89b" value="Google Search" aria-label="Google Search" name="btnK" role="button" tabindex="0" type="submit"><input class="RNmpXc" value="I'm Feeling Lucky" aria-label="I'm Feeling Lucky" name="btnI" type="submit"></center></div></div><input name="sca_esv" value="8a5fd1e3c6f42b7e" type="hidden"><input value="R0hHZ4SdBtyk5NoPx4a_mA4" name="ei" type="hidden"></form></div>
<div class="o3j99 c93Gbe"><div class="KxwPGc SSwjIe"><div class="KxwPGc AghGtd"><a class="pHiOh" href="https://about.google/?utm_source=google-US&amp;utm_medium=referral&amp;utm_campaign=hp-footer&amp;fg=1">About</a><a class="pHiOh" href="https://www.google.com/intl/en_us/ads/?subid=ww-ww-et-g-awa-a-g_hpafoot1_1!o2&amp;utm_source=google.com&amp;utm_medium=referral&amp;utm_campaign=google_hpafooter&amp;fg=1">Advertising</a></div></div></div>
</div></body></html>
"""


def organic(url: str, title: str, site: str, cite: str, path: str, snippet: str) -> str:
    """One organic result as Google renders it today (trimmed attributes)."""
    ping = f"/url?sa=t&amp;source=web&amp;rct=j&amp;opi=89978449&amp;url={quote(url, safe='')}&amp;ved=2ahUKEwi"
    return (
        f'<div class="MjjYud"><div class="g Ww4FFb vt6azd tF2Cxc asEBEc" lang="en" style="width:600px" data-hveid="CAgQAA">'
        f'<div class="N54PNb BToiNc" data-snc="ih6Jnb_KvtI6e"><div class="kb0PBd A9Y9g jGGQ5e" data-snf="x5WNvb" data-snhf="0">'
        f'<div class="yuRUbf"><div><span jscontroller="msmzHf"><a jsname="UWckNb" href="{url}" ping="{ping}"><br>'
        f'<h3 class="LC20lb MBeuO DKV0Md">{title}</h3><div class="notranslate HGLrXd NJjxre iUh30 ojE3Fb"><div class="q0vns">'
        f'<span class="H9lube"><div class="eqA2re NjwKYd Vwoesf" aria-hidden="true"><img class="XNo5Ab" src="{FAVICON}" style="height:18px;width:18px" alt=""></div></span>'
        f'<div><span class="VuuXrf">{site}</span><div class="byrV5b"><cite class="qLRx3b tjvcx GvPZzd cHaqb" role="text">{cite}'
        f'<span class="ylgVCe ob9lvb" role="text"> › {path}</span></cite></div></div></div></div></a></span></div></div></div>'
        f"{snippet}</div></div></div>"
    )


def snippet(text: str) -> str:
    return (
        '<div class="kb0PBd A9Y9g" data-sncf="1" data-snf="nke7rc"><div class="VwiC3b yXK7lf p4wth r025kc hJNv6b Hdw6tb" '
        f'style="-webkit-line-clamp:2"><span>{text}</span></div></div>'
    )


PAA = """<div class="MjjYud"><div jsname="N760b" class="cUnQKe"><div class="Wt5Tfe"><div class="iDjcJe IX9Lgd wwB5gf" aria-level="2" role="heading"><span>People also ask</span></div>
<div class="wQiwMc related-question-pair" data-q="What is the Chrome DevTools Protocol used for?" data-initq="chrome devtools protocol"><div jsname="tJHJj"><div role="button" aria-expanded="false"><span>What is the Chrome DevTools Protocol used for?</span></div></div>
<div jsname="ARU61" class="ymu2Hb"><div class="g"><div class="yuRUbf"><a href="https://www.browserstack.com/guide/chrome-devtools-protocol"><h3 class="LC20lb MBeuO DKV0Md">Chrome DevTools Protocol explained - BrowserStack</h3></a></div></div></div></div>
</div></div></div>"""

IMAGES = """<div class="MjjYud"><div class="ULSxyf"><div class="e2BEnf U7izfe"><a href="/search?q=chrome+devtools+protocol&amp;tbm=isch&amp;source=univ&amp;sa=X"><h3 class="GmE3X">Images for chrome devtools protocol</h3></a></div></div></div>"""


def results_page(query: str, body: str) -> str:
    title = f"{query} - Google Search"
    return f"""<!doctype html><html itemscope="" itemtype="http://schema.org/SearchResultsPage" lang="en"><head><meta charset="UTF-8"><meta content="/images/branding/googleg/1x/googleg_standard_color_128dp.png" itemprop="image"><title>{title}</title>
<style>body{{margin:0;font-family:arial,sans-serif}}#rcnt{{display:flex}}.g{{margin-bottom:24px}}h3{{font-size:20px;font-weight:400;margin:0}}</style>
</head><body jsmodel="hspDDf" id="gsr" class="srp"><div class="L3eUgb">
<div id="searchform" class="CvDJxb"><form action="/search" id="tsf" method="GET" name="f" role="search"><a href="/webhp?hl=en&amp;sa=X" id="logo" title="Go to Google Home"><img alt="Google" height="30" src="{SMALL_LOGO}" width="92"></a><textarea class="gLFyf" id="APjFqb" maxlength="2048" name="q" rows="1" aria-label="Search">{query}</textarea></form></div>
<div id="main" class="main"><div id="cnt"><div id="rcnt"><div id="center_col" class="s6JM6d">
<div id="taw"><div id="tvcap"><div id="tads" aria-label="Ads" data-ta-slot="0"><div class="uEierd"><div class="v5yQqb"><a class="sVXRqc" href="https://www.googleadservices.com/pagead/aclk?sa=L&amp;ai=DChcSEwi" data-rw="https://www.googleadservices.com/pagead/aclk?sa=L"><div role="heading" aria-level="3" class="CCgQ5 vCa9Yd QfkTvb N8QANc MUxGbd v0nnCb"><span>Automated Browser Testing - Try It Free</span></div></a><span class="U3A9Ac qV8iec">Sponsored</span></div></div></div></div></div>
<div id="res" class="eqAnXb" role="main"><div id="topstuff"></div>{body}</div>
</div></div></div></div>
<div id="botstuff"><div id="bottomads"></div></div>
</div></body></html>
"""


SEARCH_OK = results_page(
    "chrome devtools protocol",
    '<div id="search"><div data-hveid="CAEQAA"><h1 class="bNg8Rb OhScic zsYMMe BBwThe">Search Results</h1><div eid="R0hHZ4SdBtyk5NoPx4a_mA4" id="rso" class="dURPMd">'
    + organic(
        "https://chromedevtools.github.io/devtools-protocol/",
        "Chrome DevTools Protocol - GitHub Pages",
        "GitHub",
        "https://chromedevtools.github.io",
        "devtools-protocol",
        snippet(
            "The <em>Chrome DevTools Protocol</em> allows for tools to instrument, inspect, debug and profile Chromium, Chrome and other Blink-based browsers."
        ),
    )
    + organic(
        "https://developer.chrome.com/docs/devtools",
        "Chrome DevTools | Chrome for Developers",
        "Chrome for Developers",
        "https://developer.chrome.com",
        "docs › devtools",
        snippet(
            "Chrome DevTools is a set of web developer tools built directly into the Google Chrome browser."
        ),
    )
    + PAA
    + organic(
        "https://github.com/ChromeDevTools/devtools-protocol",
        "ChromeDevTools/devtools-protocol - GitHub",
        "GitHub",
        "https://github.com",
        "ChromeDevTools › devtools-protocol",
        # No snippet class here: the tool falls back to the longest text in the block.
        '<div class="kb0PBd"><div class="ITZIwc"><span>Chrome DevTools Protocol. Contribute to ChromeDevTools/devtools-protocol development by creating an account on GitHub.</span></div></div>',
    )
    + IMAGES
    + organic(
        "https://stackoverflow.com/questions/63316829/what-is-the-chrome-devtools-protocol",
        "What is the Chrome DevTools Protocol? - Stack Overflow",
        "Stack Overflow",
        "https://stackoverflow.com",
        "questions",
        snippet(
            "Aug 8, 2020 — The <em>Chrome DevTools Protocol</em> (CDP) is what DevTools itself uses to talk to the browser."
        ),
    )
    + "</div></div></div>",
)

# What a same-origin fetch of /search can get: the same page with redirect-style links.
FETCHED_OK = results_page(
    "chrome devtools protocol",
    '<div id="search"><div data-hveid="CAEQAA"><div id="rso" class="dURPMd">'
    + organic(
        "/url?q=https://chromedevtools.github.io/devtools-protocol/&amp;sa=U&amp;ved=2ahUKEwjQ&amp;usg=AOvVaw0",
        "Chrome DevTools Protocol - GitHub Pages",
        "GitHub",
        "https://chromedevtools.github.io",
        "devtools-protocol",
        snippet(
            "The <em>Chrome DevTools Protocol</em> allows for tools to instrument, inspect, debug and profile Chromium, Chrome and other Blink-based browsers."
        ),
    )
    + organic(
        "/url?q=https://developer.chrome.com/docs/devtools&amp;sa=U&amp;ved=2ahUKEwjR&amp;usg=AOvVaw1",
        "Chrome DevTools | Chrome for Developers",
        "Chrome for Developers",
        "https://developer.chrome.com",
        "docs › devtools",
        snippet(
            "Chrome DevTools is a set of web developer tools built directly into the Google Chrome browser."
        ),
    )
    + "</div></div></div>",
)

# Since 2025 Google answers clients it does not trust with a page that needs JavaScript.
NEEDS_JS = """<!DOCTYPE html><html lang="en"><head><title>Google Search</title><style>table,div,span,p{display:none}</style></head><body><noscript><style>table,div,span,p{display:block}</style><meta content="0;url=/httpservice/retry/enablejs?sei=R0hHZ4SdBtyk5NoPx4a_mA4" http-equiv="refresh"><div style="display:block">Please click <a href="/httpservice/retry/enablejs?sei=R0hHZ4SdBtyk5NoPx4a_mA4">here</a> if you are not redirected within a few seconds.</div></noscript><script nonce="bEGOfixtureNonce">(function(){var sei='R0hHZ4SdBtyk5NoPx4a_mA4';})();</script></body></html>"""

# A results page whose layout no longer has #search: the tool must say SKILL_BROKEN.
CHANGED = results_page(
    "layout changed",
    '<div id="results-v2"><div class="MjjYud"><a href="https://example.org/"><h3>Example Domain</h3></a></div></div>',
)

SORRY = """<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1"><title>https://www.google.com/search?q=too+many+searches</title></head>
<body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px; overscroll-behavior:contain;">
<div style="max-width:400px;"><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br>
<form id="captcha-form" action="index" method="post"><div id="recaptcha" class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b" data-s="ego-fixture"></div><input type='hidden' name='q' value='EgQKAAABGMiCoLwGIjB-ego-fixture'><input type="hidden" name="continue" value="https://www.google.com/search?q=too+many+searches"></form>
<hr noshade size="1" style="color:#ccc; background-color:#ccc;">
<div style="font-size:13px;"><b>About this page</b><br><br>Our systems have detected unusual traffic from your computer network. This page checks to see if it&#39;s really you sending the requests, and not a robot.</div></div></body></html>"""
SORRY_URL = (
    f"{ORIGIN}/sorry/index?continue=https://www.google.com/search%3Fq%3Dtoo%252Bmany%252Bsearches"
    "&q=EgQKAAABGMiCoLwGIjB-ego-fixture"
)


def suggest(url: str, body: str, *, content_type: str, status: int = 200) -> Entry:
    return build_entry(
        url,
        body,
        status=status,
        headers={**SUGGEST_HEADERS, "content-type": content_type},
        resource_type="fetch",
        started=STARTED,
    )


def complete(client: str, query: str) -> str:
    q = query.replace(" ", "+")
    return f"{ORIGIN}/complete/search?client={client}&q={q}&hl=en&ie=utf-8&oe=utf-8"


def page(url: str, html: str, *, status: int = 200) -> Entry:
    return build_entry(
        url, html, status=status, headers=PAGE_HEADERS, resource_type="document", started=STARTED
    )


def image(url: str) -> Entry:
    return build_entry(
        ORIGIN + url,
        PNG,
        headers={"content-type": "image/png", "cache-control": "private, max-age=31536000"},
        resource_type="image",
        started=STARTED,
    )


def home_har() -> Har:
    har = Har(comment="hand-built by learnings/google-com/tests/make_har.py")
    har.entries += [page(f"{ORIGIN}/", HOME), image(LOGO)]
    firefox = [
        "chrome devtools pro",
        [
            "chrome devtools protocol",
            "chrome devtools protocol python",
            "chrome devtools protocol viewer",
            "chrome devtools protocol vs webdriver bidi",
            "chrome devtools protocol network",
        ],
        [],
        {"google:suggestsubtypes": [[512, 433], [512, 433], [512], [512], [512]]},
    ]
    har.entries.append(
        suggest(
            complete("firefox", "chrome devtools pro"),
            json.dumps(firefox, separators=(",", ":")),
            content_type="text/javascript; charset=UTF-8",
        )
    )
    # client=firefox retired for this query: Google's classic 404 page, then gws-wiz answers.
    har.entries.append(
        suggest(
            complete("firefox", "ego fallback"),
            "<!DOCTYPE html><html lang=en><meta charset=utf-8><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL was not found on this server. <ins>That’s all we know.</ins>",
            content_type="text/html; charset=UTF-8",
            status=404,
        )
    )
    wiz = [
        [
            ["ego <b>fallback test</b>", 0, [512, 433]],
            ["ego <b>fallback</b> &amp; <b>recovery</b>", 0, [512]],
            ["ego <b>fallback mode</b>", 0, [512, 650]],
        ],
        {
            "ag": {"a": {"8": ["Search suggestions"]}},
            "q": "d2VnbzEx",
            "t": {"bpc": False, "tlw": False},
        },
    ]
    har.entries.append(
        suggest(
            complete("gws-wiz", "ego fallback"),
            ")]}'\n" + json.dumps(wiz, separators=(",", ":")),
            content_type="application/json; charset=UTF-8",
        )
    )
    # Both shapes changed: neither answer is what the tool knows, so SKILL_BROKEN.
    har.entries.append(
        suggest(
            complete("firefox", "shape changed"),
            '{"suggestions":[{"value":"shape changed"}]}',
            content_type="application/json; charset=UTF-8",
        )
    )
    har.entries.append(
        suggest(
            complete("gws-wiz", "shape changed"),
            ")]}'\n" + '{"suggestions":[{"value":"shape changed"}]}',
            content_type="application/json; charset=UTF-8",
        )
    )
    har.entries.append(page(f"{ORIGIN}/search?q=chrome+devtools+protocol&hl=en", FETCHED_OK))
    har.entries.append(page(f"{ORIGIN}/search?q=needs+javascript&hl=en", NEEDS_JS))
    return har


def search_har() -> Har:
    har = Har(comment="hand-built by learnings/google-com/tests/make_har.py")
    har.entries += [
        page(f"{ORIGIN}/search?q=chrome+devtools+protocol", SEARCH_OK),
        page(f"{ORIGIN}/search?q=layout+changed", CHANGED),
        image(SMALL_LOGO),
    ]
    return har


def sorry_har() -> Har:
    har = Har(comment="hand-built by learnings/google-com/tests/make_har.py")
    for url in (
        f"{ORIGIN}/search?q=too+many+searches",
        f"{ORIGIN}/search?q=too+many+searches&hl=en",
    ):
        har.entries.append(
            build_entry(
                url,
                "",
                status=302,
                headers={
                    "location": SORRY_URL,
                    "content-type": "text/html; charset=UTF-8",
                    "server": "gws",
                },
                resource_type="document",
                started=STARTED,
            )
        )
    har.entries.append(page(SORRY_URL, SORRY, status=429))
    return har


if __name__ == "__main__":
    for name, build in (
        ("google-home.har", home_har),
        ("google-search.har", search_har),
        ("google-sorry.har", sorry_har),
    ):
        print(f"wrote {build().save(HERE / name)}")
