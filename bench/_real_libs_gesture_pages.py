"""The pages of ``real_libraries.py``'s gestures: a sortable list and a board of two lists
(SortableJS, HTML5 drag and drop), a virtualized data grid (AG Grid Community: only the rows
in view exist), an iframe-based rich-text editor (TinyMCE, self-hosted under its GPL
licence) and a map (Leaflet, with no tile server: a few shapes on a plain plane), each from
npm at one version, served by ``_real_libs_site.Site``.
"""

from __future__ import annotations

#: What the gesture pages load, each at one version.
GESTURE_PACKAGES = {
    "sortablejs": "1.15.7",
    "ag-grid-community": "36.2.0",
    "tinymce": "8.9.2",
    "leaflet": "1.9.4",
}

SORTABLE = """<!doctype html><meta charset=utf-8><title>Sortable</title>
<script src="/npm/sortablejs/Sortable.min.js"></script>
<style>body { font: 16px sans-serif; margin: 1em; } ul { list-style: none; padding: 0;
  width: 240px; min-height: 120px; background: #f3f3f3; margin: 0 1em 1em 0; float: left; }
li { padding: 10px; margin: 4px; background: white; border: 1px solid #ccc; }
h2 { font-size: 16px; }</style>
<section style="overflow: hidden"><h2>Priorities</h2>
<ul id=priorities><li>Write the report</li><li>Review the budget</li>
<li>Call the supplier</li><li>Book the venue</li></ul></section>
<section style="overflow: hidden"><h2>Board</h2>
<ul id=todo aria-label="To do"><li>Design the logo</li><li>Fix the login bug</li></ul>
<ul id=done aria-label="Done"><li>Set up the repository</li></ul></section>
<script>
new Sortable(priorities, { animation: 0 });
new Sortable(todo, { group: 'board', animation: 0 });
new Sortable(done, { group: 'board', animation: 0 });
window.order = (id) => [...document.getElementById(id).children].map((li) => li.textContent);
</script>"""

GRID = """<!doctype html><meta charset=utf-8><title>Grid</title>
<script src="/npm/ag-grid-community/dist/ag-grid-community.min.js"></script>
<style>body { font: 14px sans-serif; margin: 1em; }</style>
<div id=grid style="height: 420px; width: 520px"></div>
<script>
const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, task: `Task ${i + 1}`,
  owner: ['Ada', 'Grace', 'Linus', 'Barbara'][i % 4] }));
window.grid = agGrid.createGrid(document.getElementById('grid'), {
  rowData: rows,
  columnDefs: [{ field: 'id', width: 90 }, { field: 'task', editable: true, flex: 1 },
    { field: 'owner', width: 120 }],
  onCellClicked: (event) => { window.clicked = event.data.task; },
});
</script>"""

TINYMCE = """<!doctype html><meta charset=utf-8><title>TinyMCE</title>
<script src="/npm/tinymce/tinymce.min.js"></script>
<style>body { font: 16px sans-serif; margin: 1em; }</style>
<textarea id=editor><p>Draft text to replace.</p></textarea>
<script>
tinymce.init({ selector: '#editor', license_key: 'gpl', base_url: '/npm/tinymce',
  suffix: '.min', menubar: false, height: 300, promotion: false, branding: false });
</script>"""

LEAFLET = """<!doctype html><meta charset=utf-8><title>Map</title>
<link rel=stylesheet href="/npm/leaflet/dist/leaflet.css">
<script src="/npm/leaflet/dist/leaflet.js"></script>
<style>body { margin: 1em; }</style>
<div id=map style="width: 600px; height: 400px"></div>
<script>
// No tile server: a plain plane (CRS.Simple) with a few shapes, as a floor plan is drawn.
window.map = L.map('map', { crs: L.CRS.Simple, minZoom: -2, maxZoom: 4 });
L.rectangle([[0, 0], [500, 800]], { color: '#246', weight: 1 }).addTo(map);
for (const [y, x, name] of [[100, 100, 'Entrance'], [400, 700, 'Stage'], [250, 400, 'Bar']]) {
  L.circleMarker([y, x], { radius: 12 }).bindTooltip(name).addTo(map);
}
map.setView([250, 400], 0);
window.start = { center: map.getCenter(), zoom: map.getZoom() };
// Where the starting centre now is on screen: (300, 200) until the map moves.
window.startAt = () => map.latLngToContainerPoint(start.center);
</script>"""

#: The gesture pages by path.
GESTURE_PAGES = {"/sortable": SORTABLE, "/grid": GRID, "/tinymce": TINYMCE, "/leaflet": LEAFLET}
