// A small local reader for /openapi.json (no CDN-hosted Swagger UI: the product runs offline).
"use strict";
(async () => {
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text) e.textContent = text; if (cls) e.className = cls; return e; };
  const spec = await (await fetch("/openapi.json")).json();
  const about = document.getElementById("about");
  for (const para of (spec.info.description || "").split(/\n\n+/)) about.append(el("p", para.replace(/\n/g, " ")));
  const box = document.getElementById("endpoints");
  box.replaceChildren();
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const art = el("article", null, "endpoint");
      art.append(el("h3", `${method.toUpperCase()} ${path}`));
      if (op.summary) art.append(el("p", op.summary));
      if (op.description) art.append(el("p", op.description, "muted"));
      const params = (op.parameters || []).map((p) => `${p.name} (${p.in}${p.required ? ", required" : ""})${p.description ? ": " + p.description : ""}`);
      if (op.requestBody) params.push(`request body: ${Object.keys(op.requestBody.content || {}).join(", ")}`);
      if (params.length) { const ul = el("ul"); params.forEach((t) => ul.append(el("li", t))); art.append(ul); }
      box.append(art);
    }
  }
  box.prepend(el("p", "WebSocket: /api/events/ws — the same events as /api/events, one JSON envelope per message, snapshot first."));
})();
