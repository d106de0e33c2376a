"""A page with everything at once (shadow roots open and closed, frames same-origin and
cross-site, a download), and the refs of a snapshot of it."""

from __future__ import annotations

import re

from tests.helpers.page_server import PageServer

SHADOW = """
<script>
customElements.define('my-card', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'open'}).innerHTML = `
      <p>Shadow text</p>
      <button id="inner-btn" onclick="this.textContent = 'inner clicked'">In shadow</button>
      <input id="inner-field">
      <select id="inner-select"><option value="a">A</option><option value="b">B</option></select>
      <input id="inner-file" type="file">
      <span id="hovered"></span>
      <slot></slot>`;
    const hover = this.shadowRoot.getElementById('hovered');
    this.shadowRoot.getElementById('inner-btn').addEventListener('mouseenter',
      () => { hover.textContent = 'hovering'; });
  }
});
customElements.define('closed-card', class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({mode: 'closed'}).innerHTML =
      '<button id="secret">Secret</button><p>Hidden words</p>';
  }
});
</script>
"""


def real_page(server: PageServer, tag: str) -> str:
    """Serve the page with everything at once; answer its URL."""
    cross = f"http://localhost:{server.port}/real/{tag}/cross"
    server.route(
        f"/real/{tag}/same",
        "<title>Same</title><p>Same-origin text</p>"
        '<button id="same-btn" onclick="this.textContent=\'same clicked\'">Same button</button>'
        '<input id="same-field"><select id="same-select"><option value="x">X</option>'
        '<option value="y">Y</option></select><input id="same-file" type="file">',
    )
    server.route(
        f"/real/{tag}/cross",
        "<title>Cross</title><p>Cross-site text</p>"
        '<button id="cross-btn" onclick="this.textContent=\'cross clicked\'">Cross button</button>'
        '<input id="cross-field">',
    )
    server.route(
        f"/real/{tag}/report.csv",
        "a,b\n1,2\n",
        content_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="report.csv"'},
    )
    return server.route(
        f"/real/{tag}/",
        f"""<!doctype html><title>Real</title>{SHADOW}
<h1>Real page</h1>
<p>Use <code>demo</code> / <b>demo</b> here</p>
<pre>first line
second line</pre>
<my-card><span>Slotted words</span></my-card>
<closed-card></closed-card>
<iframe name="same" src="/real/{tag}/same" width="400" height="200"></iframe>
<iframe name="cross" id="cross" src="{cross}" width="400" height="200"></iframe>
<a id="dl" href="/real/{tag}/report.csv">Download report</a>
""",
    )


def ref_of(outline: str, fragment: str, *, after: str = "") -> str:
    """The ref (``ref=e12``) printed on the first line of ``outline`` holding ``fragment``
    (the first after the line holding ``after``, when given)."""
    lines = outline.splitlines()
    if after:
        lines = lines[next(i for i, line in enumerate(lines) if after in line) + 1 :]
    for line in lines:
        if fragment in line:
            match = re.search(r"\[ref=(e\d+)\]", line)
            assert match, line
            return f"ref={match.group(1)}"
    raise AssertionError(f"{fragment!r} not in\n{outline}")
