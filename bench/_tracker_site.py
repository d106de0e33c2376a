"""A small issue tracker, the page the change-note and snapshot benchmarks act on: named
landmarks, a list of labels, a filter form (two selects, a checkbox, a button), a button that
opens a modal dialog, and a table of ``rows`` issues, each with a link."""

from __future__ import annotations

__all__ = ["tracker"]

_STATUSES = ("Open", "Closed", "In progress")
_PRIORITIES = ("High", "Medium", "Low")


def tracker(rows: int = 200) -> str:
    """The tracker's HTML with ``rows`` issues."""
    body = "".join(
        f'<tr><td><a href="/issue/{n}">#{n}</a></td><td>Issue title number {n}</td>'
        f"<td>{_STATUSES[n % 3]}</td><td>{_PRIORITIES[n % 3]}</td><td>user{n % 7}</td></tr>"
        for n in range(1, rows + 1)
    )
    return f"""<!doctype html><title>Tracker</title>
<header><nav aria-label="Main"><a href="/">Issues</a> <a href="/labels">Labels</a></nav></header>
<main><h1>Issues</h1>
<ul aria-label="Labels"><li>bug</li><li>feature</li><li>docs</li></ul>
<form aria-label="Filter">
<label>Status <select id="status"><option>Open</option><option>Closed</option>
<option>All</option></select></label>
<label>Priority <select id="prio"><option>High</option><option>Medium</option>
<option>Low</option></select></label>
<label><input type="checkbox" id="mine"> Only mine</label> <button type="button">Apply</button>
</form>
<button id="new" onclick="d.showModal()">New issue</button>
<table aria-label="Issues"><thead><tr><th>Id</th><th>Title</th><th>Status</th><th>Priority</th>
<th>Assignee</th></tr></thead><tbody>{body}</tbody></table>
<dialog id="d"><h2>New issue</h2><label>Title <input></label>
<button onclick="d.close()">Create</button></dialog>
</main>"""
