// The Dice page: GET /api/fairness drawn as one card per physical die — a histogram (inline SVG,
// hidden from screen readers) and the same counts as a table they can read.
"use strict";

(() => {
  const { api, el, connect } = Dicecam;
  const SVG = "http://www.w3.org/2000/svg";
  const list = document.getElementById("dice-list");
  const empty = document.getElementById("empty");
  const link = document.getElementById("link");
  const summary = document.getElementById("summary");
  const form = document.getElementById("settings-form");
  const formMsg = document.getElementById("settings-msg");

  function faceText(type, face) {
    return type === "d00" ? String(face).padStart(2, "0") : String(face);
  }

  function svg(tag, attrs = {}, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The face the verdict names, so its bar can be marked (the verdict says it in words too).
  function strayFace(die) {
    if (!die.flagged) return null;
    const m = /^face (\d+) /.exec(die.verdict);
    return m ? Number(m[1]) : null;
  }

  function histogram(die) {
    const W = 640, H = 200, left = 34, bottom = 22, top = 10;
    const n = die.faces.length;
    const expected = die.faces.length ? die.faces[0].expected : 0;
    const peak = Math.max(1, expected, ...die.faces.map((f) => f.count));
    const step = (W - left - 6) / n;
    const y = (v) => top + (H - top - bottom) * (1 - v / peak);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "hist", "aria-hidden": "true", focusable: "false" });
    chart.append(svg("line", { x1: left, x2: W - 4, y1: y(0), y2: y(0), class: "axis" }));
    chart.append(svg("text", { x: left - 4, y: y(peak) + 4, "text-anchor": "end" }, String(peak)));
    chart.append(svg("text", { x: left - 4, y: y(0) + 4, "text-anchor": "end" }, "0"));
    const stray = strayFace(die);
    die.faces.forEach((f, i) => {
      const x = left + i * step;
      const h = y(0) - y(f.count);
      chart.append(svg("rect", { x: x + step * 0.12, y: y(f.count), width: step * 0.76, height: Math.max(h, 0),
                                 class: "bar-rect" + (f.face === stray ? " stray" : "") }));
      chart.append(svg("text", { x: x + step / 2, y: H - 6, "text-anchor": "middle" }, faceText(die.type, f.face)));
    });
    if (die.rolls) chart.append(svg("line", { x1: left, x2: W - 4, y1: y(expected), y2: y(expected), class: "expected" }));
    return chart;
  }

  function countsTable(die, headingId) {
    const head = el("tr", {}, el("th", { scope: "col", text: "Face" }));
    const counts = el("tr", {}, el("th", { scope: "row", text: "Rolls" }));
    const fair = el("tr", {}, el("th", { scope: "row", text: "Fair die" }));
    for (const f of die.faces) {
      head.append(el("th", { scope: "col", text: faceText(die.type, f.face) }));
      counts.append(el("td", { text: String(f.count) }));
      fair.append(el("td", { text: f.expected.toFixed(1) }));
    }
    const table = el("table", {},
      el("caption", { class: "sr-only", text: `Rolls per face of ${die.name}, against a fair die` }),
      el("thead", {}, head), el("tbody", {}, counts, fair));
    // A wide d20 table scrolls sideways: the region must be reachable by keyboard.
    return el("div", { class: "counts", role: "region", tabindex: "0", "aria-labelledby": headingId }, table);
  }

  function nameForm(die, idx) {
    const id = `name-${idx}`;
    const input = el("input", { id, type: "text", autocomplete: "off", maxlength: "40",
                                value: die.keys.length && die.name !== plainLabel(die) ? die.name : "" });
    const msg = el("p", { class: "msg", role: "alert" });
    const f = el("form", { class: "name-form" },
      el("div", {}, el("label", { for: id, text: `Name the ${plainLabel(die)}` }), input),
      el("button", { type: "submit", class: "secondary", text: "Save name" }), msg);
    f.addEventListener("submit", async (e) => {
      e.preventDefault();
      msg.textContent = "";
      try {
        for (const key of die.keys) await api("/api/dice/names", { method: "PUT", json: { die: key, name: input.value } });
        await load();
      } catch (err) {
        msg.textContent = err.message;
      }
    });
    return f;
  }

  function plainLabel(die) {
    return die.colour ? `${die.colour} ${die.type}` : `${die.type} (no colour read)`;
  }

  function card(die, idx) {
    const hid = `die-h-${idx}`;
    const verdictCls = die.flagged ? "flagged" : (die.enough ? "fair" : "");
    const icon = die.flagged ? "\u26A0" : (die.enough ? "\u2714" : "\u2026");
    const word = die.flagged ? "Looks biased: " : "";
    const facts = el("ul", { class: "facts" },
      el("li", { text: `${die.rolls} rolls counted` }),
      die.corrected ? el("li", { text: `${die.corrected} with a corrected value` }) : null,
      el("li", { text: `${die.uncertain} uncertain left out` }),
      die.chi_square !== null ? el("li", { text: `chi-square ${die.chi_square.toFixed(2)} on ${die.df} degrees of freedom` }) : null,
      die.p_value !== null ? el("li", { text: `p = ${die.p_value < 0.0001 ? die.p_value.toExponential(1) : die.p_value.toFixed(4)}` }) : null);
    return el("section", { class: "die-card", "aria-labelledby": hid },
      el("h2", { id: hid }, die.name, el("span", { class: "keys", text: die.keys.join(", ") })),
      el("p", { class: `die-verdict ${verdictCls}` }, el("span", { "aria-hidden": "true", text: icon }),
         el("span", { text: word + die.verdict })),
      histogram(die),
      el("p", { class: "legend", text: "Bars: rolls per face. Dashed line: what a fair die would show." }),
      countsTable(die, hid),
      facts,
      el("p", { text: die.plan.sentence }),
      nameForm(die, idx));
  }

  function query() {
    const p = new URLSearchParams();
    for (const k of ["alpha", "power", "ratio"]) p.set(k, form.elements[k].value);
    return p.toString();
  }

  let loading = null;
  async function load() {
    try {
      show(await api(`/api/fairness?${query()}`));
    } catch (err) {
      formMsg.textContent = err.message;
    }
  }

  function show(report) {
    formMsg.textContent = "";
    for (const c of list.querySelectorAll(".die-card")) c.remove();
    report.dice.forEach((d, i) => list.append(card(d, i)));
    empty.hidden = report.dice.length > 0;
    summary.textContent = report.summary;
    link.textContent = `${report.rolls_seen} rolls in the history, ${report.readings} readings counted`;
    window.__dicecamDice = report;
  }

  // New rolls update the counts; a burst of events loads once.
  function soon() {
    if (loading) return;
    loading = setTimeout(() => { loading = null; load(); }, 400);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); load(); });
  // The server painted the report for the form's starting settings in (#initial-state); a browser that
  // restored other settings into the form asks again.
  const start = Dicecam.initial();
  const asServed = form.elements.alpha.value === "0.01" && form.elements.power.value === "0.8" && form.elements.ratio.value === "2";
  if (start && start.fairness && asServed) show(start.fairness);
  else load();
  connect((ev) => { if (ev.type === "roll.settled" || ev.type === "roll.amended" || ev.type === "roll.uncertain") soon(); });
})();
