// The table page's "Your dice" section: what the dice memory knows, the Teach a die flow, forgetting,
// carrying the memory to another table; and the note a correction leaves ("learnt ... confirmed ...").
"use strict";

(() => {
  const D = Dicecam;
  const $ = (id) => document.getElementById(id);
  const state = { memory: null, teaching: null };

  function faceWord(kind, v) { return kind === "d00" ? String(v).padStart(2, "0") : String(v); }

  // ---- what is known ----------------------------------------------------------------------
  async function load() {
    try {
      state.memory = await D.api("/api/memory");
    } catch (err) {
      $("memory-status").textContent = `Could not load this table's dice: ${err.message}`;
      return;
    }
    render();
  }

  function render() {
    const m = state.memory;
    const list = $("memory-dice");
    list.replaceChildren();
    $("teach-controls").hidden = !m.available;
    if (!m.available) {
      $("memory-status").textContent = `This table cannot learn dice: ${m.reason}.`;
      return;
    }
    const known = m.dice.filter((d) => d.known).length;
    $("memory-status").textContent = m.dice.length
      ? `This table knows ${m.dice.length} ${m.dice.length === 1 ? "die" : "dice"} (${known ? `${known} with every face` : "none with every face yet"}), from ${m.examples} confirmed ${m.examples === 1 ? "photo" : "photos"}.`
      : "This table knows none of your dice yet. Teach one below, or correct a misread roll.";
    if (m.camera_learnt) {
      const from = [m.camera_dice && `${m.camera_dice} taught numeral ${m.camera_dice === 1 ? "die" : "dice"}`,
                    m.camera_seen && `${m.camera_seen} ${m.camera_seen === 1 ? "die" : "dice"} it read surely`].filter(Boolean);
      $("memory-status").textContent += ` It has learnt where this camera shows a die's up face, from ${from.join(" and ")}.`;
    }
    for (const d of m.dice) {
      const faces = Object.keys(d.faces).length, all = faces + d.missing.length;
      const what = d.known ? `known: all ${all} faces learnt`
        : `${faces} of ${all} faces learnt; missing ${d.missing.map((v) => faceWord(d.kind, v)).join(", ")}`;
      const forget = D.el("button", { type: "button", class: "secondary small", text: `Forget ${d.die}`,
                                      onclick: () => forgetDie(d.die) });
      list.append(D.el("li", { "data-die": d.die },
        D.el("span", { class: "die-name", text: d.die }), ` (${d.kind}) — ${what}. `, forget));
    }
    if (state.teaching) showSteps();
  }

  async function forgetDie(name) {
    if (!confirm(`Forget everything this table learnt about ${name}?`)) return;
    try {
      const r = await D.api(`/api/memory/dice/${encodeURIComponent(name)}`, { method: "DELETE" });
      state.memory = r.memory;
      say(`Forgot ${name} (${r.forgotten} ${r.forgotten === 1 ? "photo" : "photos"}).`);
      render();
      $("memory-status").focus();
    } catch (err) { fail(`Not forgotten: ${err.message}`); }
  }

  function say(text) { $("teach-said").textContent = text; $("teach-msg").textContent = ""; $("teach-force").hidden = true; }
  function fail(text) { $("teach-msg").textContent = text; $("teach-said").textContent = ""; $("teach-force").hidden = true; }

  // ---- the Teach a die flow -------------------------------------------------------------------
  function known(name) { return (state.memory.dice || []).find((d) => d.die === name); }

  function start(e) {
    e.preventDefault();
    const name = $("teach-name").value.trim(), kind = $("teach-kind").value;
    if (!name) { fail("Name the die first (e.g. gold d20)."); $("teach-name").focus(); return; }
    const have = known(name);
    if (have && have.kind !== kind) { fail(`${name} is already known as a ${have.kind}: choose another name.`); return; }
    const faces = state.memory.kinds[kind];
    const learnt = new Set(have ? Object.keys(have.faces).map(Number) : []);
    state.teaching = { name, kind, faces, learnt, skipped: new Set(), at: faces.find((v) => !learnt.has(v)) };
    $("teach-start").hidden = true;
    $("teach-steps").hidden = false;
    showSteps();
    say(`Teaching ${name}. Put it alone under the camera.`);
    $("teach-ask").focus();
  }

  function showSteps() {
    const t = state.teaching;
    const list = $("teach-faces");
    list.replaceChildren();
    list.setAttribute("aria-label", `Faces of ${t.name}`);
    for (const v of t.faces) {
      const done = t.learnt.has(v);
      list.append(D.el("li", { class: done ? "learnt" : "", "aria-current": v === t.at ? "step" : null },
        D.el("span", { "aria-hidden": "true", text: done ? "\u2714 " : "\u25CB " }),
        `${faceWord(t.kind, v)}: ${done ? "learnt" : v === t.at ? "now" : "not yet"}`));
    }
    const allDone = t.faces.every((v) => t.learnt.has(v));
    $("teach-learn").hidden = $("teach-skip").hidden = t.at === undefined;
    if (allDone) {
      $("teach-ask").textContent = `${t.name} is known: every face is learnt. You can roll it and confirm more faces, or finish.`;
    } else if (t.at === undefined) {
      $("teach-ask").textContent = `Skipped faces are left: ${t.faces.filter((v) => !t.learnt.has(v)).map((v) => faceWord(t.kind, v)).join(", ")}. Roll the die and confirm what is read, or finish.`;
    } else {
      $("teach-ask").textContent = $("teach-auto").checked
        ? `Show face ${faceWord(t.kind, t.at)} on top of ${t.name}, alone under the camera, and let it lie still: it is learnt by itself.`
        : `Show face ${faceWord(t.kind, t.at)} on top of ${t.name}, under the camera, then press Learn.`;
      $("teach-learn").textContent = `Learn face ${faceWord(t.kind, t.at)}`;
    }
  }

  function next() {
    const t = state.teaching;
    t.at = t.faces.find((v) => !t.learnt.has(v) && !t.skipped.has(v) && v !== t.at)
      ?? t.faces.find((v) => !t.learnt.has(v) && !t.skipped.has(v));
  }

  // Teaching posts to `path` (the live camera's die, or one die of a stored roll): what the server
  // learnt, or why not, is shown the same way either way.
  async function teach(value, force, path = "/api/memory/teach/live", extra = {}) {
    const t = state.teaching;
    const body = { die: t.name, kind: t.kind, force: !!force, ...extra };
    if (value !== undefined) body.value = value;
    try {
      const r = await D.api(path, { method: "POST", json: body });
      if (!r.learnt) {
        // The player may know better than the earlier example: offer to replace it.
        fail(`Not learnt: ${r.reason.replace(/; confirm to replace that example$/, "")}.`);
        t.pending = r.value;
        $("teach-force").textContent = `Replace it: this is face ${faceWord(t.kind, r.value)}`;
        $("teach-force").hidden = false;
        return;
      }
      await load();
      // The server's word on what is learnt: a replaced example may have un-learnt another face.
      const have = known(t.name);
      t.learnt = new Set(have ? Object.keys(have.faces).map(Number) : []);
      t.skipped.delete(r.value);
      if (t.at === undefined || t.learnt.has(t.at)) next();
      showSteps();
      const left = t.faces.filter((v) => !t.learnt.has(v)).length;
      say(`Learnt face ${faceWord(t.kind, r.value)} of ${t.name}. ` +
          (left ? `${left} ${left === 1 ? "face" : "faces"} to go: ${$("teach-ask").textContent}`
                : `${t.name} is known: every face is learnt.`));
    } catch (err) { fail(`Not learnt: ${err.message}`); }
  }

  // The live camera learns where it shows up faces from its own sure reads (vision/camera.py): when a roll it
  // settled on changes whether it has, the status says so then, not at the next reload. Only that change is said:
  // the status is read out, and a count that grows with every roll would be read out with every roll.
  async function cameraLearning(roll) {
    if (roll.source !== "camera" || !state.memory || !state.memory.available) return;
    let now;
    try { now = await D.api("/api/memory"); } catch (err) { return; }
    if (now.camera_learnt === state.memory.camera_learnt) return;
    state.memory = now;
    render();
  }

  // Learning by itself: each time the camera settles on a roll while a face is asked for, that face is
  // learnt from the roll's frame, so a player only turns the die and waits. One die must lie there.
  async function settled(ev) {
    cameraLearning(ev.detail);
    const t = state.teaching, roll = ev.detail;
    if (!t || t.at === undefined || t.busy || !$("teach-auto").checked || roll.source !== "camera") return;
    if ((roll.dice || []).length !== 1) {
      fail(`${(roll.dice || []).length} dice under the camera: leave only ${t.name} there.`);
      return;
    }
    t.busy = true;
    try {
      await teach(t.at, false, `/api/memory/teach/roll/${encodeURIComponent(roll.id)}`, { index: 0 });
    } finally { t.busy = false; }
  }

  function stop() {
    const t = state.teaching;
    state.teaching = null;
    $("teach-steps").hidden = true;
    $("teach-start").hidden = false;
    if (t) say(`Finished teaching ${t.name}.`);
    $("teach-name").focus();
  }

  // ---- carrying the memory -----------------------------------------------------------------------
  async function importFile(e) {
    e.preventDefault();
    const f = $("memory-file").files[0];
    if (!f) { fail("Choose a memory file first."); return; }
    const fd = new FormData(); fd.append("file", f);
    try {
      const r = await D.api("/api/memory/import", { method: "POST", body: fd });
      state.memory = r.memory;
      render();
      say(`Imported ${r.learnt} ${r.learnt === 1 ? "photo" : "photos"}` +
          (r.flagged ? `; ${r.flagged} left out: they contradict what this table learnt.` : "."));
    } catch (err) { fail(`Not imported: ${err.message}`); }
  }

  // ---- what a correction taught ----------------------------------------------------------------
  async function afterCorrection(ev) {
    const out = $("taught-msg");
    if (!out) return;
    try {
      const note = await D.api(`/api/memory/taught/${encodeURIComponent(ev.detail.id)}`);
      out.textContent = note.message;
      load();
    } catch (err) {
      out.textContent = "";
    }
  }

  function init() {
    const kinds = ["d4", "d6", "d8", "d10", "d00", "d12", "d20"];
    for (const k of kinds) $("teach-kind").append(D.el("option", { value: k, text: k, selected: k === "d6" }));
    $("teach-start").addEventListener("submit", start);
    $("teach-learn").addEventListener("click", () => teach(state.teaching.at));
    $("teach-confirm").addEventListener("click", () => teach(undefined));
    $("teach-skip").addEventListener("click", () => {
      const t = state.teaching;
      t.skipped.add(t.at); next(); showSteps(); $("teach-ask").focus();
    });
    $("teach-stop").addEventListener("click", stop);
    $("teach-force").addEventListener("click", () => teach(state.teaching.pending, true));
    $("memory-import").addEventListener("submit", importFile);
    document.addEventListener("dicecam:amended", afterCorrection);
    document.addEventListener("dicecam:settled", settled);
    $("teach-auto").addEventListener("change", () => { if (state.teaching) showSteps(); });
    load();
  }
  init();
})();
