// Shared by the three pages: the event connection, roll helpers and outcome marks.
"use strict";

const Dicecam = (() => {
  const params = new URLSearchParams(location.search);
  const token = params.get("token");

  // Open the event stream: WebSocket first, Server-Sent Events as the fallback.
  // onEvent(ev) gets every envelope, snapshot first; onState("open"|"closed") reports the link.
  function connect(onEvent, onState) {
    let ws = null, es = null, retry = 500, stopped = false;
    const useSSE = params.get("transport") === "sse" || !("WebSocket" in window);

    function open() {
      if (stopped) return;
      if (useSSE) {
        es = new EventSource("/api/events");
        const types = ["snapshot", "roll.settled", "roll.amended", "roll.uncertain", "camera.status", "config.changed"];
        for (const t of types) es.addEventListener(t, (m) => onEvent(JSON.parse(m.data)));
        es.onopen = () => { retry = 500; onState && onState("open"); };
        es.onerror = () => { onState && onState("closed"); };
        return;
      }
      const proto = location.protocol === "https:" ? "wss:" : "ws:";
      ws = new WebSocket(`${proto}//${location.host}/api/events/ws`);
      ws.onopen = () => { retry = 500; onState && onState("open"); };
      ws.onmessage = (m) => onEvent(JSON.parse(m.data));
      ws.onclose = () => {
        onState && onState("closed");
        if (!stopped) setTimeout(open, retry);
        retry = Math.min(retry * 2, 10000);
      };
    }
    open();
    return { close() { stopped = true; ws && ws.close(); es && es.close(); } };
  }

  async function api(path, opts = {}) {
    const headers = Object.assign({}, opts.headers || {});
    if (token) headers["Authorization"] = `Bearer ${token}`;
    if (opts.json !== undefined) {
      headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(opts.json);
    }
    const res = await fetch(path, { method: opts.method || "GET", headers, body: opts.body });
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) {
      const reason = data && data.detail ? data.detail : `${res.status} ${res.statusText}`;
      throw new Error(typeof reason === "string" ? reason : JSON.stringify(reason));
    }
    return data;
  }

  // Outcome words that deserve a mark beyond colour (an icon and a word, never colour alone).
  const MARKS = [
    { re: /crit|triumph|exceptional|glory|overwhelm/, cls: "crit", icon: "\u2605", word: "Critical" },
    { re: /disaster|botch|fumble|calamity|catastroph|despair/, cls: "disaster", icon: "\u2716", word: "Disaster" },
    { re: /success|hit|pass|win|full|yes/, cls: "good", icon: "\u2714", word: "" },
    { re: /partial|mixed|messy|cost|weak/, cls: "mixed", icon: "\u25D0", word: "" },
    { re: /fail|miss|\bno\b|lose|loss/, cls: "bad", icon: "\u2717", word: "" },
  ];
  function mark(outcome) {
    const o = String(outcome || "").toLowerCase();
    for (const m of MARKS) if (m.re.test(o)) return m;
    return { cls: "plain", icon: "\u25CF", word: "" };
  }

  function summary(roll) {
    const adj = roll && roll.adjudication;
    if (adj && adj.summary) return adj.summary;
    if (roll && roll.reason) return `Roll uncertain: ${roll.reason}`;
    return "Roll could not be adjudicated.";
  }

  function outcome(roll) {
    const adj = roll && roll.adjudication;
    return adj ? adj.outcome : (roll && roll.status) || "";
  }

  function dieLabel(d) {
    const face = d.type === "d00" ? String(d.value).padStart(2, "0") : String(d.value);
    return `${d.type} ${face}`;
  }

  function dieFate(d) {
    if (d.is_ignored) return "ignored";
    if (d.is_dropped) return "dropped";
    return "kept";
  }

  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  // The state the server painted the page with (#initial-state), read once; null when there is none.
  let initialState;
  function initial() {
    if (initialState === undefined) {
      const node = document.getElementById("initial-state");
      try { initialState = node ? JSON.parse(node.textContent) : null; } catch (e) { initialState = null; }
    }
    return initialState;
  }

  // A roll of the bundled demo clip, not of the table's own dice.
  function isDemo(roll) { return !!roll && roll.source === "demo"; }

  function time(ts) {
    try { return new Date(ts).toLocaleTimeString(); } catch (e) { return ts; }
  }

  return { params, token, connect, api, initial, isDemo, mark, summary, outcome, dieLabel, dieFate, el, time };
})();
