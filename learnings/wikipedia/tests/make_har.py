# ruff: noqa: E501  (page markup and scripts are kept one element per line, as served)
"""Build tests/wikipedia-article.har: an English Wikipedia article and the APIs the tools call.

Run ``python learnings/wikipedia/tests/make_har.py`` after changing it; the HAR is committed.

The article page follows the markup MediaWiki 1.43 renders with the Vector 2022 skin (trimmed:
one infobox row, a few paragraphs, the real heading structure), and the API answers follow the
documented shapes of the REST v1 page summary and the Action API's opensearch (see
../notes/overview.md). Response headers are the ones Wikipedia sends, minus cookies and
per-request ids, as ``ego record`` would keep them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from ego.replay.har import Har, build_entry

HERE = Path(__file__).resolve().parent
ORIGIN = "https://en.wikipedia.org"
STARTED = "2025-01-15T12:00:00.000Z"

# A 1x1 PNG standing in for the infobox logo (its bytes do not matter, its URL does).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
LOGO = (
    "https://upload.wikimedia.org/wikipedia/commons/thumb/c/c3/Python-logo-notext.svg/"
    "121px-Python-logo-notext.svg.png"
)
STYLES = "/w/load.php?lang=en&modules=site.styles&only=styles&skin=vector-2022"
STARTUP = "/w/load.php?lang=en&modules=startup&only=scripts&raw=1&skin=vector-2022"

PAGE_HEADERS = {
    "content-type": "text/html; charset=UTF-8",
    "content-language": "en",
    "cache-control": "private, s-maxage=0, max-age=0, must-revalidate, no-transform",
    "last-modified": "Sun, 12 Jan 2025 10:11:12 GMT",
    "vary": "Accept-Encoding,Cookie,Authorization",
    "x-content-type-options": "nosniff",
    "strict-transport-security": "max-age=106384710; includeSubDomains; preload",
    "server": "mw-web.eqiad.main-5c9b7d7d6-abcde",
    # As recorded: the wire was gzip, the HAR body is decoded; replay must drop this header.
    "content-encoding": "gzip",
}
REST_HEADERS = {
    "content-type": (
        'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/Summary/1.5.0"'
    ),
    "cache-control": "s-maxage=1209600, max-age=300",
    "access-control-allow-origin": "*",
    "content-language": "en",
    "vary": "Accept-Encoding",
    "x-content-type-options": "nosniff",
}
API_HEADERS = {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "private, must-revalidate, max-age=0",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
}

ARTICLE = """<!DOCTYPE html>
<html class="client-nojs vector-feature-language-in-header-enabled vector-feature-main-menu-pinned-disabled" lang="en" dir="ltr">
<head>
<meta charset="UTF-8">
<title>Python (programming language) - Wikipedia</title>
<script>(function(){var className="client-js vector-feature-language-in-header-enabled";document.documentElement.className=className;}());RLCONF={"wgBreakFrames":false,"wgCanonicalNamespace":"","wgCanonicalSpecialPageName":false,"wgNamespaceNumber":0,"wgPageName":"Python_(programming_language)","wgTitle":"Python (programming language)","wgCurRevisionId":1268881530,"wgArticleId":23862,"wgIsArticle":true,"wgAction":"view","wgUserName":null,"wgPageContentLanguage":"en","wgPageContentModel":"wikitext","wgRelevantPageName":"Python_(programming_language)","wgIsMainPage":false,"wgWikibaseItemId":"Q28865"};RLSTATE={"site.styles":"ready","user.styles":"ready","skins.vector.styles":"ready"};RLPAGEMODULES=["site","mediawiki.page.ready","skins.vector.js"];</script>
<script>(RLQ=window.RLQ||[]).push(function(){mw.loader.impl(function(){return["user.options@12s5i",function($,jQuery,require,module){mw.user.tokens.set({"patrolToken":"+\\\\","watchToken":"+\\\\","csrfToken":"+\\\\"});}];});});</script>
<link rel="stylesheet" href="/w/load.php?lang=en&amp;modules=site.styles&amp;only=styles&amp;skin=vector-2022">
<script async="" src="/w/load.php?lang=en&amp;modules=startup&amp;only=scripts&amp;raw=1&amp;skin=vector-2022"></script>
<meta name="generator" content="MediaWiki 1.44.0-wmf.8">
<link rel="canonical" href="https://en.wikipedia.org/wiki/Python_(programming_language)">
<link rel="search" type="application/opensearchdescription+xml" href="/w/rest.php/v1/search" title="Wikipedia (en)">
</head>
<body class="skin--responsive skin-vector skin-vector-search-vue mediawiki ltr sitedir-ltr mw-hide-empty-elt ns-0 ns-subject mw-editable page-Python_programming_language rootpage-Python_programming_language skin-vector-2022 action-view">
<a class="mw-jump-link" href="#bodyContent">Jump to content</a>
<div class="vector-header-container"><header class="vector-header mw-header">
<div class="vector-search-box-vue vector-search-box" role="search"><form action="/w/index.php" id="searchform" class="cdx-search-input">
<input class="cdx-text-input__input" type="search" name="search" placeholder="Search Wikipedia" aria-label="Search Wikipedia" autocapitalize="sentences" title="Search Wikipedia [f]" accesskey="f" id="searchInput"><input type="hidden" name="title" value="Special:Search">
</form></div></header></div>
<div class="mw-page-container"><div class="mw-page-container-inner"><div class="mw-content-container">
<main id="content" class="mw-body">
<header class="mw-body-header vector-page-titlebar">
<h1 id="firstHeading" class="firstHeading mw-first-heading"><span class="mw-page-title-main">Python (programming language)</span></h1>
</header>
<div id="bodyContent" class="vector-body" aria-labelledby="firstHeading" data-mw-ve-target-container>
<div class="vector-body-before-content"><div id="siteSub" class="noprint">From Wikipedia, the free encyclopedia</div></div>
<div id="contentSub"><div id="mw-content-subtitle"></div></div>
<div id="mw-content-text" class="mw-body-content"><div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr"><div class="shortdescription nomobile noexcerpt noprint searchaux" style="display:none">General-purpose programming language</div>
<p class="mw-empty-elt">
</p>
<table class="infobox vevent"><tbody><tr><th colspan="2" class="infobox-title summary">Python</th></tr><tr><td colspan="2" class="infobox-image"><span class="mw-default-size" typeof="mw:File/Frameless"><a href="/wiki/File:Python-logo-notext.svg" class="mw-file-description"><img src="//upload.wikimedia.org/wikipedia/commons/thumb/c/c3/Python-logo-notext.svg/121px-Python-logo-notext.svg.png" decoding="async" width="121" height="133" class="mw-file-element"></a></span></td></tr><tr><th scope="row" class="infobox-label"><a href="/wiki/Programming_paradigm" title="Programming paradigm">Paradigm</a></th><td class="infobox-data">Multi-paradigm: object-oriented, procedural, functional, structured, reflective</td></tr><tr><th scope="row" class="infobox-label">Designed&nbsp;by</th><td class="infobox-data"><a href="/wiki/Guido_van_Rossum" title="Guido van Rossum">Guido van Rossum</a></td></tr><tr><th scope="row" class="infobox-label">First&nbsp;appeared</th><td class="infobox-data">20&nbsp;February 1991</td></tr></tbody></table>
<p><b>Python</b> is a <a href="/wiki/High-level_programming_language" title="High-level programming language">high-level</a>, <a href="/wiki/General-purpose_programming_language" title="General-purpose programming language">general-purpose programming language</a>. Its design philosophy emphasizes <a href="/wiki/Code_readability" title="Code readability">code readability</a> with the use of <a href="/wiki/Off-side_rule" title="Off-side rule">significant indentation</a>.<sup id="cite_ref-AutoNT-7_1-0" class="reference"><a href="#cite_note-AutoNT-7-1"><span class="cite-bracket">&#91;</span>1<span class="cite-bracket">&#93;</span></a></sup>
</p><p>Python is <a href="/wiki/Type_system#DYNAMIC" title="Type system">dynamically type-checked</a> and <a href="/wiki/Garbage_collection_(computer_science)" title="Garbage collection (computer science)">garbage-collected</a>.<sup id="cite_ref-2" class="reference"><a href="#cite_note-2"><span class="cite-bracket">&#91;</span>2<span class="cite-bracket">&#93;</span></a></sup>
</p>
<meta property="mw:PageProp/toc">
<div class="mw-heading mw-heading2"><h2 id="History">History</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=1" title="Edit section: History"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<p>Python was conceived in the late 1980s by <a href="/wiki/Guido_van_Rossum" title="Guido van Rossum">Guido van Rossum</a> at <a href="/wiki/Centrum_Wiskunde_%26_Informatica" title="Centrum Wiskunde &amp; Informatica">Centrum Wiskunde &amp; Informatica</a> (CWI) in the <a href="/wiki/Netherlands" title="Netherlands">Netherlands</a>.</p>
<div class="mw-heading mw-heading3"><h3 id="Python_2_and_3">Python 2 and 3</h3><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=2" title="Edit section: Python 2 and 3"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<p>Python 3.0, released in 2008, was a major revision not completely backward-compatible with earlier versions.</p>
<div class="mw-heading mw-heading2"><h2 id="Design_philosophy_and_features">Design philosophy and features</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=3" title="Edit section: Design philosophy and features"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<p>Python is a <a href="/wiki/Multi-paradigm_programming_language" title="Multi-paradigm programming language">multi-paradigm programming language</a>.</p>
<div class="mw-heading mw-heading2"><h2 id="Syntax_and_semantics">Syntax and semantics</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=4" title="Edit section: Syntax and semantics"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<div class="mw-heading mw-heading3"><h3 id="Indentation">Indentation</h3><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=5" title="Edit section: Indentation"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<p>Python uses <a href="/wiki/Whitespace_character" title="Whitespace character">whitespace</a> indentation, rather than <a href="/wiki/Curly_bracket_programming_language" title="Curly bracket programming language">curly brackets</a> or keywords, to delimit <a href="/wiki/Block_(programming)" title="Block (programming)">blocks</a>.</p>
<div class="mw-heading mw-heading2"><h2 id="References">References</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Python_(programming_language)&amp;action=edit&amp;section=6" title="Edit section: References"><span>edit</span></a><span class="mw-editsection-bracket">]</span></span></div>
<div class="reflist"><div class="mw-references-wrap"><ol class="references">
<li id="cite_note-AutoNT-7-1"><span class="mw-cite-backlink"><b><a href="#cite_ref-AutoNT-7_1-0">^</a></b></span> <span class="reference-text">Kuhlman, Dave. "A Python Book".</span></li>
<li id="cite_note-2"><span class="mw-cite-backlink"><b><a href="#cite_ref-2">^</a></b></span> <span class="reference-text">"Python FAQ". python.org.</span></li>
</ol></div></div>
<div class="navbox-styles"></div><div role="navigation" class="navbox" aria-labelledby="Python_(programming_language)"><table class="nowraplinks navbox-inner"><tbody><tr><th scope="col" class="navbox-title" colspan="2"><div id="Python_(programming_language)">Python</div></th></tr></tbody></table></div>
</div></div>
<div id="catlinks" class="catlinks" data-mw="interface"><div id="mw-normal-catlinks" class="mw-normal-catlinks"><a href="/wiki/Help:Category" title="Help:Category">Categories</a>: <ul><li><a href="/wiki/Category:Python_(programming_language)" title="Category:Python (programming language)">Python (programming language)</a></li><li><a href="/wiki/Category:Class-based_programming_languages" title="Category:Class-based programming languages">Class-based programming languages</a></li><li><a href="/wiki/Category:Programming_languages_created_in_1991" title="Category:Programming languages created in 1991">Programming languages created in 1991</a></li></ul></div><div id="mw-hidden-catlinks" class="mw-hidden-catlinks mw-hidden-cats-hidden">Hidden categories: <ul><li><a href="/wiki/Category:Articles_with_short_description" title="Category:Articles with short description">Articles with short description</a></li></ul></div></div>
</div>
</main>
</div></div></div>
<footer id="footer" class="mw-footer"><ul id="footer-info"><li id="footer-info-lastmod"> This page was last edited on 12 January 2025, at 10:11<span class="anonymous-show">&#160;(UTC)</span>.</li></ul></footer>
</body>
</html>
"""

STARTUP_JS = """/* ResourceLoader startup module (trimmed for the test fixture: the real one registers
   ~2,000 modules and then loads RLPAGEMODULES). Defines the small part of mw.config the
   page's inline RLQ callbacks expect. */
(function () {
  var values = window.RLCONF || {};
  window.mw = window.mw || {
    config: { get: function (key) { return values[key]; }, values: values },
    loader: { impl: function () {}, load: function () {}, state: function () {} },
    user: { tokens: { set: function () {} } }
  };
  var queue = window.RLQ || [];
  for (var i = 0; i < queue.length; i++) { try { queue[i](); } catch (e) {} }
}());
"""

STYLES_CSS = """/* site.styles (trimmed) */
.mw-parser-output .shortdescription{display:none}
.mw-parser-output .infobox{float:right;clear:right;width:22em}
.mw-parser-output .reference{white-space:nowrap}
"""


def summary(
    title: str,
    *,
    pageid: int,
    qid: str,
    revision: str,
    timestamp: str,
    description: str,
    extract: str,
    thumbnail: dict[str, object] | None,
) -> dict[str, object]:
    """A REST v1 page summary as documented (Specs/Summary/1.5.0)."""
    key = title.replace(" ", "_")
    page = f"{ORIGIN}/wiki/{key}"
    data: dict[str, object] = {
        "type": "standard",
        "title": title,
        "displaytitle": f'<span class="mw-page-title-main">{title}</span>',
        "namespace": {"id": 0, "text": ""},
        "wikibase_item": qid,
        "titles": {
            "canonical": key,
            "normalized": title,
            "display": f'<span class="mw-page-title-main">{title}</span>',
        },
        "pageid": pageid,
    }
    if thumbnail is not None:
        data["thumbnail"] = thumbnail
    data.update(
        {
            "lang": "en",
            "dir": "ltr",
            "revision": revision,
            "tid": "5b7e5a70-d0d4-11ef-9c1a-8b1b0f4c2a11",
            "timestamp": timestamp,
            "description": description,
            "description_source": "local",
            "content_urls": {
                "desktop": {
                    "page": page,
                    "revisions": f"{page}?action=history",
                    "edit": f"{page}?action=edit",
                    "talk": f"{ORIGIN}/wiki/Talk:{key}",
                },
                "mobile": {
                    "page": f"https://en.m.wikipedia.org/wiki/{key}",
                    "revisions": f"https://en.m.wikipedia.org/wiki/Special:History/{key}",
                    "edit": f"https://en.m.wikipedia.org/wiki/{key}?action=edit",
                    "talk": f"https://en.m.wikipedia.org/wiki/Talk:{key}",
                },
            },
            "extract": extract,
            "extract_html": f"<p>{extract}</p>",
        }
    )
    return data


def article_har() -> Har:
    har = Har(comment="hand-built by learnings/wikipedia/tests/make_har.py")
    add = har.add
    add(
        build_entry(
            f"{ORIGIN}/wiki/Python_(programming_language)",
            ARTICLE,
            headers=PAGE_HEADERS,
            resource_type="document",
            started=STARTED,
        )
    )
    add(
        build_entry(
            ORIGIN + STYLES,
            STYLES_CSS,
            headers={
                "content-type": "text/css; charset=utf-8",
                "cache-control": "public, max-age=300, s-maxage=300",
            },
            resource_type="stylesheet",
            started=STARTED,
        )
    )
    add(
        build_entry(
            ORIGIN + STARTUP,
            STARTUP_JS,
            headers={
                "content-type": "text/javascript; charset=utf-8",
                "cache-control": "public, max-age=300, s-maxage=300",
            },
            resource_type="script",
            started=STARTED,
        )
    )
    add(
        build_entry(
            LOGO,
            PNG,
            headers={
                "content-type": "image/png",
                "cache-control": "public, max-age=31536000",
                "access-control-allow-origin": "*",
            },
            resource_type="image",
            started=STARTED,
        )
    )
    python = summary(
        "Python (programming language)",
        pageid=23862,
        qid="Q28865",
        revision="1268881530",
        timestamp="2025-01-12T10:11:12Z",
        description="General-purpose programming language",
        extract=(
            "Python is a high-level, general-purpose programming language. Its design "
            "philosophy emphasizes code readability with the use of significant indentation."
        ),
        thumbnail={
            "source": "https://upload.wikimedia.org/wikipedia/commons/thumb/c/c3/"
            "Python-logo-notext.svg/320px-Python-logo-notext.svg.png",
            "width": 320,
            "height": 352,
        },
    )
    guido = summary(
        "Guido van Rossum",
        pageid=12581,
        qid="Q30252",
        revision="1267000001",
        timestamp="2025-01-05T08:00:00Z",
        description="Dutch programmer, creator of Python (born 1956)",
        extract=(
            "Guido van Rossum is a Dutch programmer best known as the creator of the Python "
            "programming language."
        ),
        thumbnail=None,
    )
    for key, data in (("Python_(programming_language)", python), ("Guido_van_Rossum", guido)):
        add(
            build_entry(
                f"{ORIGIN}/api/rest_v1/page/summary/{key}",
                json.dumps(data, ensure_ascii=False),
                headers=REST_HEADERS,
                resource_type="fetch",
                started=STARTED,
            )
        )
    missing = {
        "type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found",
        "title": "Not found.",
        "method": "get",
        "detail": "Page or revision not found.",
        "uri": "/en.wikipedia.org/v1/page/summary/No_such_article_ego_test",
    }
    add(
        build_entry(
            f"{ORIGIN}/api/rest_v1/page/summary/No_such_article_ego_test",
            json.dumps(missing),
            status=404,
            headers={**REST_HEADERS, "content-type": "application/problem+json"},
            resource_type="fetch",
            started=STARTED,
        )
    )
    titles = [
        "Python",
        "Python (programming language)",
        "Pythonidae",
        "Python (missile)",
        "Monty Python",
    ]
    opensearch = [
        "python",
        titles,
        ["" for _ in titles],
        [f"{ORIGIN}/wiki/{t.replace(' ', '_')}" for t in titles],
    ]
    add(
        build_entry(
            f"{ORIGIN}/w/api.php?action=opensearch&format=json&formatversion=2&namespace=0"
            "&limit=5&search=python",
            json.dumps(opensearch),
            headers=API_HEADERS,
            resource_type="fetch",
            started=STARTED,
        )
    )
    return har


if __name__ == "__main__":
    path = article_har().save(HERE / "wikipedia-article.har")
    print(f"wrote {path}")
