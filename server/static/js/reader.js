// Accessible reader: one polite live region, one sentence per roll; opt-in speech.
"use strict";
(() => {
  const D = Dicecam, $ = (id) => document.getElementById(id);
  const store = (() => { try { return window.localStorage; } catch (e) { return null; } })();
  const saved = (k, dflt) => (store && store.getItem(`dicecam.reader.${k}`)) ?? dflt;
  const save = (k, v) => store && store.setItem(`dicecam.reader.${k}`, String(v));
  const seen = new Set();
  let last = null;
  window.__dicecamAnnounced = [];

  const synth = "speechSynthesis" in window ? window.speechSynthesis : null;

  function speak(text) {
    if (!synth || !$("speak").checked) return;
    synth.cancel();
    const u = new SpeechSynthesisUtterance(text);
    u.rate = parseFloat($("rate").value) || 1;
    const name = $("voice").value;
    const v = name && synth.getVoices().find((x) => x.name === name);
    if (v) u.voice = v;
    synth.speak(u);
  }

  function announce(text) {
    const region = $("announce");
    // Clearing first makes screen readers speak a repeated sentence again.
    region.textContent = "";
    setTimeout(() => { region.textContent = text; }, 50);
    window.__dicecamAnnounced.push(text);
    speak(text);
  }

  function sentence(roll) {
    // An uncertain roll has no verdict to speak, so the sentence says what the camera saw instead.
    const base = (D.isDemo(roll) ? "Demo roll. " : "") + (roll.amends ? "Corrected. " : "") + D.summary(roll);
    if (roll.adjudication && roll.adjudication.summary) return base;
    const seen = (roll.dice || []).map((d) => (d.colour ? `${d.colour} ` : "") + D.dieLabel(d));
    return `${base.replace(/\.?$/, ".")} ${seen.length ? "Dice seen: " + seen.join(", ") + "." : "No dice seen."}`;
  }

  function render(roll, isNew) {
    const adj = roll.adjudication || {};
    const outcome = D.outcome(roll) || "uncertain";
    const m = D.mark(outcome);
    $("waiting").hidden = true;
    $("detail").hidden = false;
    $("verdict").className = `verdict ${m.cls}`;
    $("verdict").replaceChildren(D.isDemo(roll) ? D.el("span", { class: "tag demo", text: "demo" }) : null,
      D.el("span", { "aria-hidden": "true", text: m.icon + " " }),
      (m.word ? m.word + ": " : "") + outcome + (roll.amends ? " (corrected)" : ""));
    const shown = (adj.dice && adj.dice.length) ? adj.dice : roll.dice;
    $("dice").replaceChildren(...shown.map((d) => D.el("li", { text:
      `${D.dieLabel(d)}${d.role ? ", " + d.role : ""}, ${D.dieFate(d)}${d.why ? " (" + d.why + ")" : ""}` })));
    $("explanation").replaceChildren(...(adj.explanation || [roll.reason || "Not adjudicated."]).map((t) => D.el("li", { text: t })));
    if (!D.isDemo(roll)) pruneDemo();  // the table's own roll: the server cleared the demo rolls
    if (last && last.id !== roll.id && !(D.isDemo(last) && !D.isDemo(roll))) {
      $("recent").prepend(earlier(last));
      while ($("recent").children.length > 20) $("recent").lastChild.remove();
    }
    last = roll;
    if (isNew) announce(sentence(roll));
  }

  // An earlier roll in the list; a demo roll is tagged in words.
  function earlier(roll) {
    const demo = D.isDemo(roll);
    return D.el("li", { class: demo ? "demo" : null }, demo ? D.el("span", { class: "tag demo", text: "demo" }) : null,
      `${D.time(roll.ts)}: ${D.summary(roll)}`);
  }

  function pruneDemo() {
    for (const li of [...$("recent").querySelectorAll("li.demo")]) li.remove();
  }

  function onEvent(ev) {
    if (ev.type === "snapshot") {
      const rolls = ev.data.rolls || [];
      if (!last && !seen.size) {
        // The first snapshot (the page's initial state): old rolls are shown, not announced: the live
        // region speaks only what happens now.
        for (const r of rolls) seen.add(r.id);
        for (const r of rolls.slice(1, 20)) $("recent").append(earlier(r));
        if (rolls.length) render(rolls[0], false);
        return;
      }
      // A later one (the stream opened or reconnected): rolls missed meanwhile are shown, oldest first.
      for (const r of rolls.filter((x) => !seen.has(x.id)).reverse()) { seen.add(r.id); render(r, false); }
      return;
    }
    if (!ev.type.startsWith("roll.")) return;
    const roll = ev.data;
    if (seen.has(roll.id)) return;  // once per roll, even across reconnects
    seen.add(roll.id);
    render(roll, true);
  }

  function repeat() {
    if (last) announce(sentence(last));
    else announce("No roll yet.");
  }

  function loadVoices() {
    if (!synth) return;
    const sel = $("voice"), want = saved("voice", "");
    const voices = synth.getVoices();
    sel.replaceChildren(D.el("option", { value: "", text: "System default" }),
      ...voices.map((v) => D.el("option", { value: v.name, text: `${v.name} (${v.lang})`, selected: v.name === want })));
  }

  function init() {
    $("speak").checked = saved("speak", "false") === "true";
    $("rate").value = saved("rate", "1");
    $("shortcut").checked = saved("shortcut", "true") === "true";
    const showRate = () => { $("rate-out").textContent = `${$("rate").value}×`; $("rate").setAttribute("aria-valuetext", `${$("rate").value} times`); };
    showRate();
    if (!synth) {
      $("speak").disabled = true;
      $("speech-note").textContent = "This browser has no speech synthesis; use your screen reader, or ask the host to start the server with --speak.";
    } else {
      loadVoices();
      synth.addEventListener && synth.addEventListener("voiceschanged", loadVoices);
    }
    $("speak").addEventListener("change", () => { save("speak", $("speak").checked); if ($("speak").checked) speak("Speech on."); });
    $("rate").addEventListener("input", () => { save("rate", $("rate").value); showRate(); });
    $("voice").addEventListener("change", () => save("voice", $("voice").value));
    $("shortcut").addEventListener("change", () => save("shortcut", $("shortcut").checked));
    $("repeat").addEventListener("click", repeat);
    document.addEventListener("keydown", (e) => {
      if (!$("shortcut").checked || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target.tagName;
      if (["INPUT", "SELECT", "TEXTAREA"].includes(t) && e.target.type !== "checkbox" && e.target.type !== "range") return;
      if (e.key === "r" || e.key === "R") { e.preventDefault(); repeat(); }
    });
    const start = D.initial();
    if (start && start.snapshot) onEvent(start.snapshot);
    D.connect(onEvent, (s) => { $("link").textContent = s === "open" ? "Connected to the table." : "Connection lost, retrying…"; });
  }
  init();
})();
