// OBS browser source: transparent, the verdict large; URL parameters:
//   theme=dark|light|plain  scale=0.5..3  pos=top-left|top|top-right|left|center|right|bottom-left|bottom|bottom-right
//   hold=seconds a result stays (0: until the next)  events=settled,amended,uncertain
"use strict";
(() => {
  const D = Dicecam, P = D.params, $ = (id) => document.getElementById(id);
  const theme = ["dark", "light", "plain"].includes(P.get("theme")) ? P.get("theme") : "dark";
  const scale = Math.min(3, Math.max(0.25, parseFloat(P.get("scale") || "1") || 1));
  const POS = ["top-left", "top", "top-right", "left", "center", "right", "bottom-left", "bottom", "bottom-right"];
  const pos = POS.includes(P.get("pos")) ? P.get("pos") : "bottom-right";
  const holdRaw = parseFloat(P.get("hold") ?? "12");
  const hold = Number.isFinite(holdRaw) ? Math.max(0, Math.min(3600, holdRaw)) : 12;
  const wanted = new Set((P.get("events") || "settled,amended,uncertain").split(",").map((s) => "roll." + s.trim()));
  document.body.classList.add(`theme-${theme}`, `pos-${pos}`);
  document.documentElement.style.setProperty("--scale", scale);

  let timer = null, lastId = null;
  const paints = (window.__dicecamPaints = []);
  window.__dicecamSeen = 0;

  function show(ev) {
    const roll = ev.data, adj = roll.adjudication || {};
    const outcome = D.outcome(roll) || "uncertain";
    const m = D.mark(outcome);
    const card = $("card");
    card.className = `card ${m.cls}` + (ev.type === "roll.uncertain" ? " uncertain" : "");
    $("icon").textContent = m.icon;
    // The badge names the mark (Critical, Disaster) unless the outcome already says it; then the system.
    const word = m.word && m.word.toLowerCase() !== outcome.toLowerCase() ? m.word : "";
    $("word").textContent = [roll.source === "demo" ? "Demo" : "", ev.type === "roll.amended" ? "Corrected" : "",
      word || roll.system].filter(Boolean).join(" · ");
    $("outcome").textContent = outcome;
    $("summary").textContent = D.summary(roll);
    const dice = $("dice");
    dice.replaceChildren(...((adj.dice && adj.dice.length) ? adj.dice : roll.dice).map((d) => {
      const fate = D.dieFate(d);
      return D.el("li", { class: `die ${fate}`, title: fate }, D.el("span", { text: D.dieLabel(d) }),
        fate !== "kept" ? D.el("span", { class: "fate", text: fate }) : null);
    }));
    card.hidden = false;
    card.classList.remove("enter"); void card.offsetWidth; card.classList.add("enter");
    clearTimeout(timer);
    if (hold > 0) timer = setTimeout(() => { card.hidden = true; }, hold * 1000);
    // Latency probe for the benchmark: the frame after this DOM change is the one that paints it.
    const id = ev.id, sent = Date.parse(ev.ts);
    requestAnimationFrame(() => {
      paints.push({ id, sent, painted: performance.timeOrigin + performance.now() });
      if (paints.length > 5000) paints.shift();
    });
  }

  D.connect((ev) => {
    window.__dicecamSeen += 1;
    if (ev.type === "snapshot") return;  // an overlay shows only what happens while it is on air
    if (!wanted.has(ev.type) || ev.id === lastId) return;
    lastId = ev.id;
    show(ev);
  });
})();
