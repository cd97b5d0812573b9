// acu live view: the display's frames (pushed by the daemon only when the
// screen changed), overlays of its waits, actions and element ids, and the
// take-over: the human's pointer and keyboard sent to the display while
// acu's own agents and tasks there pause. Logs in with session.js.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const dpy = params.get("display") || "";
  const q = dpy ? "display=" + encodeURIComponent(dpy) : "";
  const api = (path, opts) => window.acuSession.fetch(path, opts);

  // Test and bench hooks: every painted frame, with the wall time of its paint.
  const acuLive = window.acuLive = {painted: [], last: null, frames: 0, dropped: 0};
  let screenW = 0, screenH = 0, taken = false;

  function status(text, state) {
    $("status").textContent = text;
    if (state) document.body.dataset.state = state;
  }

  // ---- frames ----
  let decoding = false, pending = null;
  function show(f) {
    if (decoding) { if (pending) acuLive.dropped++; pending = f; return; }
    decoding = true;
    const img = $("screen");
    img.src = "data:image/jpeg;base64," + f.jpeg;
    img.decode().catch(() => {}).then(() => requestAnimationFrame(() => {
      const sizeChanged = screenW !== f.screen_w || screenH !== f.screen_h;
      screenW = acuLive.screenW = f.screen_w; screenH = acuLive.screenH = f.screen_h;
      if (sizeChanged) layout();
      acuLive.frames++;
      acuLive.last = {seq: f.seq, hash: f.hash, wall: Date.now(), at: f.at};
      acuLive.painted.push(acuLive.last);
      if (acuLive.painted.length > 1000) acuLive.painted.shift();
      img.dataset.seq = String(f.seq);
      decoding = false;
      const p = pending; pending = null;
      if (p) show(p);
    }));
  }

  // readSSE calls onEvent(name, data, id) for each event of a fetch stream.
  async function readSSE(resp, onEvent) {
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buf += dec.decode(value, {stream: true});
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        let name = "message", data = "", id = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
          else if (line.startsWith("id: ")) id = line.slice(4);
        }
        if (data) onEvent(name, data, id);
      }
    }
  }

  let frameAbort = null;
  async function frames() {
    for (;;) {
      frameAbort = new AbortController();
      const main = document.querySelector("main");
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(($("stage").parentElement.clientWidth || main.clientWidth) * dpr);
      const h = Math.round((main.clientHeight || window.innerHeight) * dpr);
      const path = "/v1/live/frames?" + [q, "max_width=" + w, "max_height=" + h].filter(Boolean).join("&");
      try {
        const r = await api(path, {headers: {Accept: "text/event-stream"}, signal: frameAbort.signal});
        if (!r.ok) {
          const j = await r.json().catch(() => ({}));
          status((j.error && j.error.message) || ("frames: " + r.status), "down");
          if (r.status === 401) return;
        } else {
          status("live", "live");
          await readSSE(r, (name, data) => { if (name === "frame") show(JSON.parse(data)); });
        }
      } catch (e) {
        if (e.name !== "AbortError") status("reconnecting: " + e.message, "down");
      }
      await new Promise((res) => setTimeout(res, frameAbort.signal.aborted ? 0 : 1000));
    }
  }

  // layout fits the stage to the window with the screen's aspect ratio.
  function layout() {
    if (!screenW) return;
    const area = $("stage").parentElement;
    const aw = area.clientWidth, ah = document.querySelector("main").clientHeight;
    const s = Math.min(aw / screenW, ah / screenH);
    $("stage").style.width = Math.floor(screenW * s) + "px";
    $("stage").style.height = Math.floor(screenH * s) + "px";
    drawElements();
  }
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    layout();
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => frameAbort && frameAbort.abort(), 300); // a new size: a new stream
  });
  const scale = () => $("stage").clientWidth / (screenW || 1);

  // ---- take-over ----
  let queue = [], inFlight = false, renewTimer = 0;
  async function flush() {
    if (inFlight || !queue.length || !taken) return;
    inFlight = true;
    const events = queue; queue = [];
    try {
      const r = await api("/v1/live/input", {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({display: dpy, events})});
      if (!r.ok) {
        const j = await r.json().catch(() => ({}));
        status((j.error && j.error.message) || ("input: " + r.status));
        if (r.status === 409) setTaken(false);
      }
    } catch (e) { status("input: " + e.message); }
    inFlight = false;
    if (queue.length) flush();
  }
  function send(ev) {
    if (!taken) return;
    // Consecutive moves collapse to the newest: a slow link drops stale ones.
    const last = queue[queue.length - 1];
    if (ev.type === "move" && last && last.type === "move") queue[queue.length - 1] = ev;
    else queue.push(ev);
    flush();
  }
  function setTaken(on) {
    taken = on;
    document.body.dataset.takeover = on ? "on" : "off";
    $("takeover").hidden = on; $("handback").hidden = !on;
    clearInterval(renewTimer);
    if (on) {
      $("stage").focus();
      renewTimer = setInterval(() => api("/v1/live/takeover", {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({display: dpy})}), 4000);
    }
  }
  $("takeover").addEventListener("click", async () => {
    const r = await api("/v1/live/takeover", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({display: dpy})});
    const j = await r.json().catch(() => ({}));
    if (!r.ok) { status((j.error && j.error.message) || ("take over: " + r.status)); return; }
    setTaken(true);
    status("you have the wheel: acu's agents and tasks on this display are paused", "live");
  });
  $("handback").addEventListener("click", async () => {
    setTaken(false);
    queue = [];
    await api("/v1/live/takeover" + (q ? "?" + q : ""), {method: "DELETE"});
    status("handed back: acu's agents and tasks resume", "live");
  });
  window.addEventListener("pagehide", () => {
    if (taken) api("/v1/live/takeover" + (q ? "?" + q : ""), {method: "DELETE", keepalive: true});
  });

  function pos(e) {
    const r = $("screen").getBoundingClientRect();
    return {x: Math.max(0, Math.min(screenW - 1, Math.floor((e.clientX - r.left) * screenW / r.width))),
      y: Math.max(0, Math.min(screenH - 1, Math.floor((e.clientY - r.top) * screenH / r.height)))};
  }
  const stage = $("stage");
  stage.addEventListener("mousemove", (e) => { if (taken) send(Object.assign({type: "move"}, pos(e))); });
  stage.addEventListener("mousedown", (e) => {
    if (!taken) return;
    e.preventDefault(); stage.focus();
    send(Object.assign({type: "down", button: [1, 2, 3][e.button] || 1}, pos(e)));
  });
  stage.addEventListener("mouseup", (e) => {
    if (!taken) return;
    e.preventDefault();
    send(Object.assign({type: "up", button: [1, 2, 3][e.button] || 1}, pos(e)));
  });
  stage.addEventListener("contextmenu", (e) => { if (taken) e.preventDefault(); });
  stage.addEventListener("wheel", (e) => {
    if (!taken) return;
    e.preventDefault();
    const dy = Math.sign(e.deltaY), dx = Math.sign(e.deltaX);
    if (dx || dy) send(Object.assign({type: "wheel", dx, dy}, pos(e)));
  }, {passive: false});

  const named = {Enter: "Return", Backspace: "BackSpace", Tab: "Tab", Escape: "Escape", Delete: "Delete",
    Home: "Home", End: "End", PageUp: "Prior", PageDown: "Next", ArrowLeft: "Left", ArrowRight: "Right",
    ArrowUp: "Up", ArrowDown: "Down", Insert: "Insert", " ": "space"};
  document.addEventListener("keydown", (e) => {
    if (!taken || document.activeElement !== stage) return;
    if (["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock"].includes(e.key)) return;
    e.preventDefault();
    const mods = [];
    if (e.ctrlKey) mods.push("ctrl");
    if (e.altKey) mods.push("alt");
    if (e.metaKey) mods.push("super");
    let name = named[e.key] || (/^F\d{1,2}$/.test(e.key) ? e.key : "");
    if (!name && e.key.length === 1 && !mods.length) { send({type: "text", text: e.key}); return; }
    if (!name && [...e.key].length === 1) name = e.key.toLowerCase();
    if (!name) return;
    if (e.shiftKey && (named[e.key] || /^F\d/.test(e.key))) mods.push("shift");
    send({type: "key", keys: mods.concat([name]).join("+")});
  });

  // ---- overlays ----
  const on = (id) => $(id).checked;
  function fmtLeft(deadline) {
    const s = Math.max(0, Math.round((new Date(deadline) - Date.now()) / 1000));
    return s >= 60 ? Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s" : s + "s";
  }
  let waitsTimer = 0;
  async function waits() {
    clearTimeout(waitsTimer);
    $("waits-panel").hidden = !on("ov-waits");
    if (on("ov-waits")) {
      try {
        const r = await api("/v1/waits");
        const j = r.ok ? await r.json() : {waits: []};
        const ul = $("waits");
        ul.textContent = "";
        for (const w of j.waits || []) {
          if (w.ended_at || (dpy && w.display && w.display !== dpy)) continue;
          const li = document.createElement("li");
          li.className = "wait";
          li.dataset.id = w.id;
          const v = w.last_verdict;
          const crit = document.createElement("div"); crit.className = "criteria"; crit.textContent = w.criteria;
          const meta = document.createElement("div"); meta.className = "meta";
          meta.textContent = w.target + " · " + w.state + " · " + fmtLeft(w.deadline) + " left · " + w.evaluations + " judged";
          const ver = document.createElement("div"); ver.className = "verdict " + (v ? (v.met ? "met" : "unmet") : "none");
          ver.textContent = v ? (v.met ? "YES" : "NO") + (v.evidence ? ": " + v.evidence : "") : "no verdict yet";
          li.append(crit, meta, ver);
          ul.append(li);
        }
        if (!ul.children.length) { const li = document.createElement("li"); li.className = "empty"; li.textContent = "no live waits"; ul.append(li); }
      } catch (e) { /* next round */ }
    }
    waitsTimer = setTimeout(waits, 1000);
  }
  $("ov-waits").addEventListener("change", waits);

  // Actions: the event stream's action, turn, iteration and intervention
  // events of runs on this display.
  const runDisplay = new Map();
  async function displayOf(runID) {
    if (runDisplay.has(runID)) return runDisplay.get(runID);
    let d = "";
    try {
      const r = await api("/v1/runs/" + encodeURIComponent(runID));
      if (r.ok) { const run = await r.json(); d = (run.spec && run.spec.display) || ""; }
    } catch (e) { /* unknown */ }
    runDisplay.set(runID, d);
    return d;
  }
  function mark(x, y, label) {
    if (!on("ov-actions") || !screenW) return;
    const m = document.createElement("div");
    m.className = "mark";
    const s = scale();
    m.style.left = (x * s) + "px"; m.style.top = (y * s) + "px";
    m.textContent = label;
    $("marks").append(m);
    setTimeout(() => m.remove(), 2500);
  }
  function logAction(text, cls) {
    const ul = $("actions");
    const li = document.createElement("li");
    li.className = cls || "";
    li.textContent = new Date().toLocaleTimeString() + " " + text;
    ul.prepend(li);
    while (ul.children.length > 60) ul.lastChild.remove();
  }
  async function onEvent(ev) {
    const d = ev.data || {};
    if (ev.stream === "action") {
      if (dpy && d.display && d.display !== dpy) return;
      for (const a of d.actions || []) {
        const what = a.kind + (a.element ? " " + a.element : "") + (a.keys ? " " + a.keys : "") +
          (a.text_len ? " (" + a.text_len + " chars typed)" : "") + (a.at ? " at " + a.at[0] + "," + a.at[1] : "");
        logAction(d.client + ": " + what + (a.ok ? "" : " ✗ " + (a.error || "")), "action");
        if (a.at) mark(a.at[0], a.at[1], a.kind);
      }
      if (!d.ok && d.code) logAction(d.client + ": refused (" + d.code + ")", "refused");
      return;
    }
    const rd = await displayOf(ev.runId);
    if (dpy && rd && rd !== dpy) return;
    if (ev.stream === "turn") {
      logAction("agent turn " + d.turn + ": " + (d.actions || []).map((a) => a.type || a.action || JSON.stringify(a)).join(", "), "turn");
    } else if (ev.stream === "iteration") {
      logAction("task step " + d.iteration + ": " + (d.steps || []).map((s) => s.action || s.kind || JSON.stringify(s)).join(", "), "turn");
    } else if (ev.stream === "intervention") {
      logAction(ev.runId.split("_")[0] + " " + d.phase + (d.detail ? ": " + d.detail : "") + (d.reason ? ": " + d.reason : ""), "intervention");
    }
  }
  async function events() {
    let after = "";
    for (;;) {
      try {
        if (!after) {
          const r0 = await api("/v1/events?limit=1&after=0");
          if (r0.ok) after = String((await r0.json()).cursor);
        }
        const r = await api("/v1/events?stream=action,turn,iteration,intervention&after=" + after,
          {headers: {Accept: "text/event-stream"}});
        if (r.ok) {
          await readSSE(r, (name, data, id) => {
            if (name !== "message") return;
            if (id) after = id;
            if (on("ov-actions")) onEvent(JSON.parse(data));
          });
        } else if (r.status === 401) return;
      } catch (e) { /* reconnect */ }
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
  $("ov-actions").addEventListener("change", () => { $("actions-panel").hidden = !on("ov-actions"); });

  let elementsList = [], elementsTimer = 0;
  async function elements() {
    clearTimeout(elementsTimer);
    if (!on("ov-elements")) { elementsList = []; drawElements(); return; }
    try {
      const r = await api("/v1/elements" + (q ? "?" + q : ""));
      if (r.ok) elementsList = (await r.json()).elements || [];
      else { const j = await r.json().catch(() => ({})); status((j.error && j.error.message) || ("elements: " + r.status)); }
    } catch (e) { /* next round */ }
    drawElements();
    elementsTimer = setTimeout(elements, 3000);
  }
  function drawElements() {
    const box = $("elements");
    box.textContent = "";
    if (!on("ov-elements") || !screenW) return;
    const s = scale();
    for (const el of elementsList) {
      if (!el.showing || !el.box) continue;
      const d = document.createElement("div");
      d.className = "el" + (el.clickable ? " clickable" : "") + (el.editable ? " editable" : "");
      d.style.left = (el.box[0] * s) + "px"; d.style.top = (el.box[1] * s) + "px";
      d.style.width = (el.box[2] * s) + "px"; d.style.height = (el.box[3] * s) + "px";
      const label = document.createElement("span");
      label.textContent = el.id;
      d.append(label);
      d.title = el.type + " " + (el.text || "");
      box.append(d);
    }
  }
  $("ov-elements").addEventListener("change", elements);

  window.acuSession.ready.then(async () => {
    $("display").textContent = dpy || "";
    $("runs-link").href = "/ui/runs" + (q ? "?" + q : "");
    const r = await api("/v1/live/takeover" + (q ? "?" + q : ""));
    if (r.ok) {
      const st = await r.json();
      $("display").textContent = st.display;
      setTaken(!!st.active && st.by === "a browser (live view)");
    }
    frames();
    waits();
    events();
  }, (err) => status(err.message, "login-failed"));
})();
