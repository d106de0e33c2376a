"use strict";
// The trace viewer: everything it shows is in the page (the trace's lines as JSON in
// #trace-data), nothing is fetched. Text from the trace is set with textContent only.
(function () {
  const trace = JSON.parse(document.getElementById("trace-data").textContent);
  const head = trace.header || {};
  const end = trace.end;
  const records = trace.records || [];
  const steps = records.filter((r) => r.type === "step").sort((a, b) => a.step - b.step);
  const others = records.filter((r) => r.type !== "step" && r.type !== "tab");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function seconds(value) {
    if (value === null || value === undefined) return "";
    return value < 1 ? `${Math.round(value * 1000)} ms` : `${value.toFixed(2)} s`;
  }

  function when(t) {
    return t ? new Date(t * 1000).toLocaleString() : "";
  }

  function ended(step) {
    return (step.t || 0) + (step.seconds || 0);
  }

  // Each record goes with the last step of its tab that started before it: what a step
  // did and what followed it until the next one (a page's own fetches after a click's load).
  const owned = new Map(steps.map((step) => [step.step, []]));
  const byStart = [...steps].sort((a, b) => (a.t || 0) - (b.t || 0));
  for (const record of others) {
    const mine = byStart.filter((s) => !record.tab || !s.tab || s.tab === record.tab);
    if (!mine.length) continue;
    const at = (record.t || 0) + 0.001;
    const before = mine.filter((s) => (s.t || 0) <= at);
    const owner = before.length ? before[before.length - 1] : mine[0];
    owned.get(owner.step).push(record);
  }

  // What a step acted on: its target, else its arguments (wait_for text="Saved").
  function object(step) {
    if (step.target) return step.target;
    const given = Object.entries(step.args || {}).filter(([, value]) => value !== null && value !== false);
    return given.map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(" ").slice(0, 80);
  }

  function title(step) {
    const what = object(step);
    return what ? `${step.verb} ${what}` : step.verb;
  }

  // -- the header ------------------------------------------------------------------------
  document.getElementById("title").textContent = `Trace of ${head.subject || "a run"}`;
  const failed = steps.filter((s) => !s.ok).length;
  const lastEnd = steps.length ? Math.max(...steps.map(ended)) : head.t;
  document.getElementById("facts").textContent = [
    `${steps.length} step${steps.length === 1 ? "" : "s"}`,
    failed ? `${failed} failed` : "none failed",
    `started ${when(head.t)}`,
    head.t && lastEnd ? `${seconds(Math.max(0, lastEnd - head.t))} long` : null,
    head.ego ? `ego ${head.ego}` : null,
  ].filter(Boolean).join(" · ");
  const notes = [];
  if (!end) notes.push("The trace never closed: its process ended first; the steps written are all there.");
  if (trace.torn) notes.push("Its last line was cut and is left out.");
  if (end && end.omitted && Object.keys(end.omitted).length) {
    const parts = Object.entries(end.omitted).map(([kind, count]) => `${count} ${kind.replace("_", " ")}`);
    notes.push(`Left out to stay within ${Number(end.max_bytes).toLocaleString()} bytes: ${parts.join(", ")}.`);
  }
  if (end && end.window_dropped) notes.push(`${end.window_dropped} earlier record(s) were left out of the failure's window.`);
  for (const version of (end && end.health) || []) {
    if (version.suspect) notes.push(`${version.site}/${version.tool} ${version.version}: ${version.health}`);
  }
  document.getElementById("notes").textContent = notes.join(" ");

  // -- the timeline ----------------------------------------------------------------------
  const timeline = document.getElementById("timeline");
  const buttons = new Map();
  for (const step of steps) {
    const button = el(
      "button",
      {
        class: `step ${step.kind}${step.ok ? "" : " error"}`,
        type: "button",
        "data-step": step.step,
        "aria-selected": "false",
        title: step.ok ? title(step) : `${title(step)} (failed)`,
      },
      el("span", { class: "number" }, `${step.step}.`),
      el("span", { class: "what" },
        el("span", { class: "verb" }, step.verb),
        " ",
        el("span", { class: "target" }, object(step))),
      el("span", { class: "time" },
        step.ok ? "" : el("span", { class: "mark", "aria-label": "failed" }, "✕ "),
        seconds(step.seconds)),
    );
    button.addEventListener("click", () => select(step.step));
    buttons.set(step.step, button);
    timeline.append(el("li", {}, button));
  }
  timeline.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const order = steps.map((s) => s.step);
    const at = order.indexOf(current);
    const next = order[at + (event.key === "ArrowDown" ? 1 : -1)];
    if (next !== undefined) {
      select(next);
      buttons.get(next).focus();
      event.preventDefault();
    }
  });

  // -- the selected step -----------------------------------------------------------------
  let current = null;
  const detail = document.getElementById("detail");

  function pretty(value) {
    return JSON.stringify(value, null, 2);
  }

  function section(name, ...content) {
    return [el("h3", {}, name), ...content];
  }

  function screenshot(step) {
    const shot = step.screenshot;
    if (!shot) return section("Screenshot", el("p", { class: "none" }, "No screenshot for this step."));
    if (!shot.jpeg) return section("Screenshot", el("p", { class: "none" }, shot.error || shot.omitted || "No screenshot."));
    return section("Screenshot", el("figure", { class: "shot" },
      el("img", {
        src: `data:image/jpeg;base64,${shot.jpeg}`,
        alt: `The page after step ${step.step}`,
        // Shown at the page's own size (the image was scaled down to keep the trace small).
        width: Math.round(shot.width / (shot.scale || 1)),
        height: Math.round(shot.height / (shot.scale || 1)),
      })));
  }

  function snapshot(step) {
    const read = step.snapshot;
    if (!read) return [];
    if (!read.lines) return section("Snapshot", el("p", { class: "none" }, read.error || read.omitted || "Not read."));
    const pre = el("pre", { class: "snapshot" });
    read.lines.forEach((line, index) => {
      const text = `${line}\n`;
      pre.append(index === read.target ? el("span", { class: "target-line" }, text) : document.createTextNode(text));
    });
    const where = read.total > read.lines.length
      ? `lines ${read.first + 1}-${read.first + read.lines.length} of ${read.total}`
      : `${read.total} lines`;
    return section("Snapshot", el("p", { class: "facts" }, `${read.title || ""} ${read.url || ""} (${where})`), pre);
  }

  function body(label, part) {
    if (!part) return null;
    const text = part.text === null || part.text === undefined ? (part.note || "not kept") : part.text;
    return el("details", {}, el("summary", {}, `${label}${part.note && part.text ? ` (${part.note})` : ""}`), el("pre", {}, text));
  }

  function headers(label, pairs) {
    if (!pairs || !pairs.length) return null;
    return el("details", {}, el("summary", {}, `${label} (${pairs.length})`),
      el("pre", {}, pairs.map(([name, value]) => `${name}: ${value}`).join("\n")));
  }

  function network(list) {
    const requests = list.filter((r) => r.type === "request");
    if (!requests.length) return section("Network", el("p", { class: "none" }, "No request."));
    const rows = requests.map((request) => {
      const bad = request.failed || request.status >= 400;
      return el("tr", { class: bad ? "request bad" : "request" },
        el("td", {}, request.method),
        el("td", {}, request.failed ? request.failed : String(request.status)),
        el("td", { class: "url" }, el("details", {},
          el("summary", {}, request.url),
          headers("Request headers", request.request_headers),
          body("Request body", request.request_body),
          headers("Response headers", request.response_headers),
          body("Response body", request.response_body),
          request.redacted ? el("p", { class: "facts" }, `Redacted: ${pretty(request.redacted)}`) : null)),
        el("td", {}, request.resource || ""),
        el("td", {}, request.ms !== undefined ? `${Math.round(request.ms)} ms` : ""));
    });
    return section(`Network (${requests.length})`, el("table", { class: "network" },
      el("thead", {}, el("tr", {}, ["Method", "Status", "URL", "Type", "Time"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
  }

  function consoleLines(list) {
    const messages = list.filter((r) => r.type === "console");
    if (!messages.length) return section("Console", el("p", { class: "none" }, "No console message."));
    return section(`Console (${messages.length})`, el("ul", { class: "console" }, messages.map((m) =>
      el("li", { class: m.exception ? "exception" : m.level }, `${m.level}: ${m.text}`,
        m.url ? el("span", { class: "facts" }, ` (${m.url}${m.line ? `:${m.line}` : ""})`) : null))));
  }

  function events(list) {
    const shown = list.filter((r) => ["dialog", "download", "page"].includes(r.type));
    if (!shown.length) return [];
    return section("Pages, dialogs and downloads", el("ul", { class: "events" }, shown.map((r) => {
      if (r.type === "page") return el("li", {}, `page: ${r.url}`);
      if (r.type === "dialog") return el("li", {}, `${r.dialog_type} "${r.message}": ${r.answer || "open"}${r.handled_by ? ` (by ${r.handled_by})` : ""}`);
      return el("li", {}, `download ${r.filename || r.url}: ${r.state}, ${r.size} bytes`);
    })));
  }

  function select(number) {
    const step = steps.find((s) => s.step === number);
    if (!step) return;
    if (current !== null) buttons.get(current).setAttribute("aria-selected", "false");
    current = number;
    buttons.get(number).setAttribute("aria-selected", "true");
    const list = owned.get(number) || [];
    const facts = [
      step.kind === "tool" ? `tool ${step.site}/${step.tool}, version ${step.version || "?"}, ${step.outcome}` : null,
      step.element ? `on ${step.element.role}${step.element.name ? ` "${step.element.name}"` : ""} [ref=${step.element.ref}]` : null,
      step.frame ? `in the frame ${step.frame}` : null,
      step.input ? `input ${step.input}` : null,
      `${seconds(step.seconds)} at ${when(step.t)}`,
      step.url_after && step.url_after !== step.url ? `${step.url} → ${step.url_after}` : step.url,
    ].filter(Boolean);
    const parts = [
      el("h2", {}, `${step.step}. ${title(step)}`),
      el("p", { class: "facts" }, facts.join(" · ")),
    ];
    if (step.error) parts.push(el("div", { class: "error-box", role: "alert" }, `${step.error.type}: ${step.error.message}`));
    parts.push(...screenshot(step), ...snapshot(step));
    const hasArgs = step.args && Object.keys(step.args).length;
    if (hasArgs) parts.push(...section("Arguments", el("pre", { class: "args" }, pretty(step.args))));
    if (step.result !== null && step.result !== undefined) parts.push(...section("Result", el("pre", { class: "result" }, pretty(step.result))));
    parts.push(...network(list), ...consoleLines(list), ...events(list));
    detail.replaceChildren(...parts);
    if (history.replaceState) history.replaceState(null, "", `#step-${number}`);
  }

  const asked = /^#step-(\d+)$/.exec(location.hash);
  const first = asked ? Number(asked[1]) : (steps.find((s) => !s.ok) || steps[0] || {}).step;
  if (first !== undefined) select(first);
})();
