// The table view: live video, current roll, rules controls, odds, manual entry, history.
"use strict";
(() => {
  const D = Dicecam, $ = (id) => document.getElementById(id);
  const state = { fixSeq: 0, rolls: new Map(), current: null, config: null, systems: [], offset: 0 };
  const TYPES = ["d4", "d6", "d8", "d10", "d00", "d12", "d20"];
  const FACES = { d4: [1, 4], d6: [1, 6], d8: [1, 8], d10: [0, 9], d00: [0, 90], d12: [1, 12], d20: [1, 20] };

  // ---- current roll ---------------------------------------------------------------
  function showRoll(roll) {
    state.current = roll;
    window.__dicecamCurrent = roll.id;
    $("roll-empty").hidden = true;
    $("roll").hidden = false;
    const adj = roll.adjudication || {};
    const m = D.mark(D.outcome(roll));
    const v = $("verdict");
    v.textContent = (m.word ? m.word + ": " : "") + (D.outcome(roll) || "uncertain");
    v.parentElement.className = `verdict ${m.cls}`;
    $("verdict-icon").textContent = m.icon;
    $("summary").textContent = D.summary(roll);
    const bits = [roll.system, D.isDemo(roll) ? "demo clip, not your dice" : roll.source, D.time(roll.ts)];
    if (roll.amends) bits.push("correction of an earlier read");
    if (roll.status === "uncertain") bits.push("uncertain" + (roll.reason ? `: ${roll.reason}` : ""));
    $("roll-meta").textContent = bits.join(" · ");
    const dice = $("dice");
    dice.replaceChildren();
    const shown = (adj.dice && adj.dice.length) ? adj.dice : roll.dice;
    for (const d of shown) {
      const fate = D.dieFate(d);
      const li = D.el("li", { class: `die ${fate}` },
        D.el("span", { class: "face", text: D.dieLabel(d) }),
        D.el("span", { class: "role", text: d.role || (d.colour ? d.colour : "") }),
        D.el("span", { class: "fate", text: fate + (d.why ? ` — ${d.why}` : "") }));
      if (d.effective !== null && d.effective !== undefined && d.effective !== d.value)
        li.append(D.el("span", { class: "role", text: `counts as ${d.effective}` }));
      dice.append(li);
    }
    const ex = $("explanation");
    ex.replaceChildren(...(adj.explanation || [roll.reason || "Not adjudicated."]).map((t) => D.el("li", { text: t })));
    if (state.fixing && state.fixing.id !== roll.id) {
      // A roll landed while a correction is open: the form keeps correcting the roll it was opened for.
      $("correct-msg").textContent = `A new roll arrived; this form still corrects the roll from ${D.time(state.fixing.ts)}.`;
    } else {
      closeCorrection();
    }
  }

  function closeCorrection() {
    state.fixing = null;
    $("correct-form").hidden = true;
    $("correct-btn").hidden = false;
  }

  // ---- correction -------------------------------------------------------------------
  function correctionRow(d, i) {
    const n = state.fixSeq++;  // ids stay unique when rows are removed and added
    const row = D.el("div", { class: "correct-row", "data-index": i });
    const name = i >= 0 ? `Die ${i + 1}` : `Added die ${n + 1}`;
    const t = D.el("select", { id: `fix-type-${n}`, "aria-label": `${name} kind` });
    for (const k of TYPES) t.append(D.el("option", { value: k, text: k, selected: k === d.type }));
    const v = D.el("input", { id: `fix-value-${n}`, type: "number", value: d.value, "aria-label": `${name} face` });
    const setRange = () => { const [lo, hi] = FACES[t.value]; v.min = lo; v.max = hi; v.step = t.value === "d00" ? 10 : 1; };
    t.addEventListener("change", setRange); setRange();
    const remove = D.el("button", { type: "button", class: "small secondary", text: "Remove",
      "aria-label": `Remove ${name.toLowerCase()}`, onclick: () => { row.remove(); $("correct-add").focus(); } });
    row.append(D.el("span", { text: `${name}${d.colour ? " (" + d.colour + ")" : ""}` }), t, v, remove);
    $("correct-dice").append(row);
  }

  function openCorrection() {
    const roll = state.current;
    if (!roll) return;
    state.fixing = roll;
    $("correct-dice").replaceChildren();
    state.fixSeq = 0;
    roll.dice.forEach((d, i) => correctionRow(d, i));
    $("correct-msg").textContent = "";
    $("correct-form").hidden = false;
    $("correct-btn").hidden = true;
    $("fix-value-0") && $("fix-value-0").focus();
  }

  async function submitCorrection(e) {
    e.preventDefault();
    const roll = state.fixing;
    if (!roll) return;
    const dice = [...$("correct-dice").children].map((row) => {
      const i = Number(row.dataset.index), old = i >= 0 ? roll.dice[i] : null;
      const out = { type: row.querySelector("select").value, value: Number(row.querySelector("input").value) };
      // A corrected die keeps its box and colour (where it lies is still right): the training example needs them.
      if (old) {
        if (old.box) out.box = old.box;
        if (old.colour) out.colour = old.colour;
      }
      return out;
    });
    if (!dice.length) { $("correct-msg").textContent = "Not saved: a roll needs at least one die."; return; }
    try {
      const amended = await D.api(`/api/rolls/${roll.id}/amend`, { method: "POST", json: { dice } });
      state.fixing = null;
      addRoll(amended, true);
      document.dispatchEvent(new CustomEvent("dicecam:amended", { detail: amended }));  // teach.js says what it taught
      $("current").focus();
    } catch (err) {
      $("correct-msg").textContent = `Not saved: ${err.message}`;
    }
  }

  // ---- history ----------------------------------------------------------------------
  function addRoll(roll, show) {
    if (!state.rolls.has(roll.id)) {
      // The table's first roll of its own clears the demo rolls from the history (the server did too).
      if (!D.isDemo(roll)) pruneDemo(Date.parse(roll.ts));
      state.rolls.set(roll.id, roll);
      $("history").prepend(historyRow(roll));
    }
    if (show) showRoll(roll);
  }

  // Demo rows of rolls older than `before` (ms): the server cleared them when a roll of the table's own came.
  function pruneDemo(before) {
    for (const [id, r] of state.rolls) {
      if (!D.isDemo(r) || Date.parse(r.ts) > before) continue;
      state.rolls.delete(id);
      const row = $("history").querySelector(`tr[data-roll="${CSS.escape(id)}"]`);
      if (row) { row.remove(); state.offset = Math.max(0, state.offset - 1); }
    }
  }

  function historyRow(roll) {
    const m = D.mark(D.outcome(roll));
    const demo = D.isDemo(roll);
    const tr = D.el("tr", { "data-roll": roll.id, class: demo ? "demo" : null });
    tr.append(
      // A roll of the demo clip says so where it is listed: it is not the table's.
      D.el("td", {}, D.time(roll.ts), demo ? D.el("span", { class: "tag demo", text: "demo" }) : null),
      D.el("td", { text: roll.system }),
      D.el("td", { class: `outcome ${m.cls}` }, D.el("span", { "aria-hidden": "true", text: m.icon + " " }),
        (roll.amends ? "corrected: " : "") + (D.outcome(roll) || "")),
      D.el("td", { text: roll.dice.map(D.dieLabel).join(", ") }),
      D.el("td", { text: D.summary(roll) }),
      // A roll typed by hand was never seen by the camera: say so here rather than behind a button.
      roll.source === "manual" ? D.el("td", { class: "muted", text: "None: typed by hand" })
        : D.el("td", {}, D.el("button", { type: "button", class: "small secondary", text: "Picture",
          "aria-label": `Picture of the roll of ${D.time(roll.ts)}`, "aria-haspopup": "dialog",
          onclick: (e) => showFrame(roll, e.currentTarget) })),
      D.el("td", {}, D.el("button", { type: "button", class: "small", text: "Show",
        "aria-label": `Show roll of ${D.time(roll.ts)}`, onclick: () => { showRoll(roll); $("current").focus(); } })));
    return tr;
  }

  // ---- a roll's picture ---------------------------------------------------------------------
  async function showFrame(roll, opener) {
    const dialog = $("frame-dialog"), img = $("frame-img"), msg = $("frame-msg"), save = $("frame-save");
    const url = `/api/rolls/${encodeURIComponent(roll.id)}/frame.jpg`;
    const dice = roll.dice.map(D.dieLabel).join(", ");
    const when = D.time(roll.ts);
    $("frame-caption").textContent = `${when} · ${roll.system} · ${dice}. ${D.summary(roll)}`;
    $("frame-note").hidden = !roll.amends;
    img.hidden = true; save.hidden = true;
    img.removeAttribute("src");
    msg.textContent = "Loading the picture…";
    state.frameOpener = opener;
    state.frameFor = roll.id;
    window.__dicecamFrame = "loading";
    if (!dialog.open) dialog.showModal();
    let blob = null, reason = null;
    try {
      const res = await fetch(url);
      if (res.ok) blob = await res.blob();
      else {
        let data = null;
        try { data = await res.json(); } catch (e) { data = null; }
        reason = data && data.detail ? data.detail : `${res.status} ${res.statusText}`;
      }
    } catch (err) { reason = err.message; }
    if (state.frameFor !== roll.id) return;  // another roll's picture was asked for meanwhile
    if (!blob) {
      msg.textContent = reason.charAt(0).toUpperCase() + reason.slice(1) + ".";
      window.__dicecamFrame = "none";
      return;
    }
    if (state.frameURL) URL.revokeObjectURL(state.frameURL);
    state.frameURL = URL.createObjectURL(blob);
    img.alt = `The picture the dice were read from at ${when}: ${dice}, each die boxed and labelled as read.`;
    img.onload = () => { window.__dicecamFrame = "shown"; };
    img.src = state.frameURL;
    img.hidden = false;
    save.href = url;
    save.setAttribute("download", `dicecam-roll-${roll.id}.jpg`);
    save.hidden = false;
    msg.textContent = "";
  }

  function closedFrame() {
    state.frameFor = null;
    const opener = state.frameOpener;
    state.frameOpener = null;
    if (opener && opener.isConnected) opener.focus();
  }

  async function loadMore() {
    try {
      const page = await D.api(`/api/rolls?offset=${state.offset}&limit=50`);
      for (const r of page.items) {
        if (state.rolls.has(r.id)) continue;
        state.rolls.set(r.id, r);
        $("history").append(historyRow(r));
      }
      state.offset += page.items.length;
      $("more").hidden = state.offset >= page.total;
    } catch (err) { /* the snapshot already shows the recent rolls */ }
  }

  // ---- rules controls ------------------------------------------------------------------
  function resolveRef(schema, prop) {
    let p = prop;
    if (p.$ref) p = Object.assign({}, schema.$defs[p.$ref.split("/").pop()], p);
    if (p.allOf && p.allOf.length === 1 && p.allOf[0].$ref) p = Object.assign({}, resolveRef(schema, p.allOf[0]), p);
    if (p.anyOf) {
      const real = p.anyOf.filter((x) => x.type !== "null");
      const nullable = real.length < p.anyOf.length;
      if (real.length === 1) p = Object.assign({}, resolveRef(schema, real[0]), p, { nullable });
    }
    return p;
  }

  function renderOptions() {
    const fs = $("options");
    fs.replaceChildren(D.el("legend", { text: "Options" }));
    const sys = state.systems.find((s) => s.name === $("system").value);
    const cfgOpts = (state.config && state.config.system === $("system").value) ? state.config.options : {};
    if (!sys || !sys.schema || !sys.schema.properties || !Object.keys(sys.schema.properties).length) {
      fs.append(D.el("p", { class: "muted", text: "This system has no options." }));
      return;
    }
    for (const [name, raw] of Object.entries(sys.schema.properties)) {
      const p = resolveRef(sys.schema, raw);
      const id = `opt-${name}`;
      const val = cfgOpts[name] !== undefined ? cfgOpts[name] : p.default;
      const label = D.el("label", { for: id, text: p.title || name });
      const desc = p.description ? D.el("span", { class: "hint", id: `${id}-d`, text: p.description }) : null;
      let input;
      if (p.enum) {
        input = D.el("select", { id, name });
        if (p.nullable) input.append(D.el("option", { value: "", text: "(none)" }));
        for (const e of p.enum) input.append(D.el("option", { value: JSON.stringify(e), text: String(e), selected: e === val }));
      } else if (p.type === "boolean") {
        input = D.el("input", { id, name, type: "checkbox", checked: !!val });
        input.dataset.kind = "boolean";
        const wrap = D.el("div", { class: "check" }, input, label);
        if (desc) { input.setAttribute("aria-describedby", desc.id); wrap.append(desc); }
        fs.append(wrap);
        continue;
      } else if (p.type === "integer" || p.type === "number") {
        input = D.el("input", { id, name, type: "number", step: p.type === "integer" ? 1 : "any",
          min: p.minimum ?? p.exclusiveMinimum, max: p.maximum ?? p.exclusiveMaximum, value: val ?? "" });
      } else if (p.type === "array") {
        const items = p.items ? resolveRef(sys.schema, p.items) : {};
        if (items.type === "object" || items.properties) {
          input = D.el("textarea", { id, name, rows: 4, spellcheck: "false" });
          input.value = JSON.stringify(val || [], null, 0);
          input.dataset.items = "json";
        } else {
          input = D.el("input", { id, name, type: "text", value: (val || []).join(" "), placeholder: "values separated by spaces" });
          input.dataset.items = items.type || "string";
        }
      } else {
        input = D.el("input", { id, name, type: "text", value: val ?? "" });
      }
      input.dataset.kind = p.enum ? "enum" : p.type || "string";
      if (desc) input.setAttribute("aria-describedby", desc.id);
      fs.append(D.el("div", { class: "field" }, label, input, desc));
    }
  }

  function readOptions() {
    const out = {};
    for (const input of $("options").querySelectorAll("input, select, textarea")) {
      const k = input.dataset.kind, name = input.name;
      if (k === "boolean") out[name] = input.checked;
      else if (k === "array") {
        const text = input.value.trim();
        if (input.dataset.items === "json") out[name] = text ? JSON.parse(text) : [];
        else {
          const parts = text ? text.split(/[\s,]+/) : [];
          out[name] = input.dataset.items === "integer" || input.dataset.items === "number" ? parts.map(Number) : parts;
        }
      }
      else if (input.value === "") continue;
      else if (k === "enum") out[name] = JSON.parse(input.value);
      else if (k === "integer") out[name] = parseInt(input.value, 10);
      else if (k === "number") out[name] = Number(input.value);
      else out[name] = input.value;
    }
    return out;
  }

  // `odds`: the odds of `cfg` when already known (the page's initial state); a config already shown
  // with its odds is not drawn again (the event stream's snapshot repeats what the page started with).
  function showConfig(cfg, odds) {
    const same = state.config && state.oddsShown && JSON.stringify(state.config) === JSON.stringify(cfg);
    state.config = cfg;
    window.__dicecamConfig = cfg;
    if (same) return;
    if (state.systems.length && $("system").value !== cfg.system) $("system").value = cfg.system;
    $("pool").value = (cfg.pool || []).join(" ");
    renderOptions();
    loadOdds(odds);
  }

  async function loadOdds(known) {
    const box = $("odds");
    state.oddsShown = false;
    try {
      const o = known || await D.api("/api/odds");
      const table = D.el("table", { class: "odds" },
        D.el("thead", {}, D.el("tr", {}, D.el("th", { scope: "col", text: "Outcome" }), D.el("th", { scope: "col", text: "Chance" }))));
      const body = D.el("tbody");
      for (const row of o.outcomes || []) {
        const pct = (row.probability * 100).toFixed(1) + "%";
        body.append(D.el("tr", {}, D.el("th", { scope: "row", text: row.outcome }),
          D.el("td", {}, D.el("span", { class: "bar", style: `width:${Math.max(1, row.probability * 100)}%`, "aria-hidden": "true" }),
            D.el("span", { text: `${pct} (${row.fraction})` }))));
      }
      table.append(body);
      box.replaceChildren(D.el("p", { text: o.summary || "" }), table);
      window.__dicecamOdds = o.system;
      state.oddsShown = true;
    } catch (err) {
      box.replaceChildren(D.el("p", { class: "muted", text: `No odds: ${err.message}` }));
      window.__dicecamOdds = null;
    }
  }

  async function applyConfig(e) {
    e.preventDefault();
    const button = $("config-form").querySelector("button[type=submit]");
    if (button.disabled) return;
    button.disabled = true;  // one change at a time: a late answer must not undo a newer choice
    try { await sendConfig(); } finally { button.disabled = false; }
  }

  async function sendConfig() {
    const pool = $("pool").value.trim().split(/[\s,]+/).filter(Boolean);
    try {
      const keepPool = state.config && state.config.system === $("system").value && pool.join(" ") !== (state.config.pool || []).join(" ");
      const cfg = await D.api("/api/config", { method: "PUT",
        json: { system: $("system").value, options: readOptions(), pool: keepPool ? pool : null } });
      $("config-msg").textContent = "";
      showConfig(cfg);
    } catch (err) {
      $("config-msg").textContent = `Not applied: ${err.message}`;
    }
  }

  async function manualRoll(e) {
    e.preventDefault();
    const dice = $("manual-dice").value.trim().split(/[\s,]+/).filter(Boolean);
    try {
      const roll = await D.api("/api/rolls", { method: "POST", json: { dice } });
      $("manual-msg").textContent = "";
      addRoll(roll, true);
      entered(`Entered ${roll.dice.map(D.dieLabel).join(", ")}. ${D.summary(roll)}`);
    } catch (err) {
      entered("");
      $("manual-msg").textContent = `Not resolved: ${err.message}`;
    }
  }

  function entered(text) {
    // Emptied first, so the same verdict twice in a row is spoken twice.
    const region = $("entered");
    region.textContent = "";
    if (text) setTimeout(() => { region.textContent = text; }, 50);
  }

  async function uploadPhoto(e) {
    e.preventDefault();
    const f = $("upload").files[0];
    if (!f) { $("upload-msg").textContent = "Choose a photo first."; return; }
    const fd = new FormData(); fd.append("image", f);
    try {
      const res = await D.api("/api/read", { method: "POST", body: fd });
      $("upload-msg").textContent = res.roll ? `Read ${res.read.dice.length} dice.` : (res.error || "No roll.");
      if (res.roll) addRoll(res.roll, true);
    } catch (err) {
      $("upload-msg").textContent = `Not read: ${err.message}`;
    }
  }

  // ---- camera and notices ------------------------------------------------------------------
  function showCamera(cam) {
    const live = cam && cam.status && !["none", "error", "stopped", "lost"].includes(cam.status);
    const img = $("video");
    if (live && img.hidden) { img.src = "/api/video.mjpg"; img.hidden = false; }
    if (!live && !img.hidden) { img.removeAttribute("src"); img.hidden = true; }
    $("camera-status").textContent = cam && cam.message ? cam.message : `Camera: ${cam ? cam.status : "none"}`;
    state.camera = cam;
    showBanner();
  }

  function showBanner() {
    const msgs = [...(state.notices || [])];
    const cam = state.camera;
    const demo = cam && (cam.status === "demo" || cam.source === "demo" || cam.demo);
    // The server's notice already says why the demo plays (no camera found, or --source demo).
    if (demo && !msgs.some((m) => /demo/i.test(m))) msgs.unshift(cam.message || "No camera found: showing the demo clip.");
    if (cam && ["error", "lost", "retrying"].includes(cam.status)) msgs.unshift(cam.message || "The camera failed.");
    const b = $("banner");
    b.replaceChildren(...[...new Set(msgs)].map((m) => D.el("p", { text: m })));
    b.hidden = msgs.length === 0;
  }

  // ---- events ---------------------------------------------------------------------------------
  // `initial`: the snapshot the server painted the page with, not an event of the stream (not counted).
  function onEvent(ev, initial, odds) {
    if (!initial) window.__dicecamEvents = (window.__dicecamEvents || 0) + 1;
    if (ev.type === "snapshot") {
      state.notices = ev.data.notices || [];
      const newest = (ev.data.rolls || [])[0];
      const fresh = newest && !state.rolls.has(newest.id);  // a roll came while the page was not connected
      const own = (ev.data.rolls || []).find((r) => !D.isDemo(r));
      if (own) pruneDemo(Date.parse(own.ts));
      const rolls = (ev.data.rolls || []).slice().reverse();
      for (const r of rolls) if (!state.rolls.has(r.id)) { state.rolls.set(r.id, r); $("history").prepend(historyRow(r)); }
      state.offset = Math.max(state.offset, (ev.data.rolls || []).length);
      if (fresh && (!state.current || Date.parse(newest.ts) >= Date.parse(state.current.ts))) showRoll(newest);
      if (ev.data.rolls && ev.data.rolls.length >= 20) $("more").hidden = false;
      showCamera(ev.data.camera);
      showConfig(ev.data.config, odds);
    } else if (ev.type.startsWith("roll.")) {
      addRoll(ev.data, true);
      // The Teach a die flow learns from rolls the camera settles on (teach.js).
      if (ev.type !== "roll.amended") document.dispatchEvent(new CustomEvent("dicecam:settled", { detail: ev.data }));
    } else if (ev.type === "camera.status") {
      showCamera(ev.data);
    } else if (ev.type === "config.changed") {
      if (!state.config || JSON.stringify(state.config) !== JSON.stringify(ev.data)) showConfig(ev.data);
    }
  }

  async function init() {
    $("correct-btn").addEventListener("click", openCorrection);
    $("correct-cancel").addEventListener("click", () => { closeCorrection(); $("correct-btn").focus(); });
    $("correct-form").addEventListener("submit", submitCorrection);
    $("correct-add").addEventListener("click", () => {
      correctionRow({ type: "d6", value: 1 }, -1);
      const rows = $("correct-dice").children;
      rows[rows.length - 1].querySelector("select").focus();
    });
    $("config-form").addEventListener("submit", applyConfig);
    $("manual-form").addEventListener("submit", manualRoll);
    $("upload-form").addEventListener("submit", uploadPhoto);
    $("system").addEventListener("change", renderOptions);
    $("more").addEventListener("click", loadMore);
    $("frame-dialog").addEventListener("close", closedFrame);
    // The server painted the page's state in (#initial-state): drawn before anything is fetched.
    const start = D.initial();
    if (start && start.systems) state.systems = start.systems;
    else {
      try {
        state.systems = await D.api("/api/systems");
      } catch (err) { state.systems = []; }
    }
    $("system").replaceChildren(...state.systems.map((s) => D.el("option", { value: s.name, text: s.title || s.name })));
    if (start && start.snapshot) onEvent(start.snapshot, true, start.odds);
    else if (state.config) { state.oddsShown = false; showConfig(state.config); }  // drawn before the systems came
    D.connect(onEvent, (s) => {
      $("link").textContent = s === "open" ? "Live" : "Reconnecting…";
      document.body.dataset.link = s;
    });
  }
  init();
})();
