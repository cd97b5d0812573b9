// acu HUD: shows the relay's feed live. Newest line large, older lines
// fading; priorities styled. The page logs in with the code of a one-time
// link (session.js) and reads /feed/stream with fetch, which can send the
// session header (EventSource cannot). It reconnects by itself, resuming
// with Last-Event-ID; a relay restart, seen as a new epoch, restarts the
// stream from the top.
"use strict";
(function () {
  const MAX_LINES = 6;
  const RETRY_MS = 1000;
  const list = document.getElementById("lines");
  const status = document.getElementById("status");
  let epoch = null;
  let lastId = null;
  let restart = false;

  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function render(item) {
    const li = document.createElement("li");
    li.textContent = item.text;
    li.dataset.id = String(item.id);
    const p = String(item.priority || "normal").toLowerCase();
    li.className = "p-" + p.replace(/[^a-z]/g, "");
    if (item.source === "agent") li.classList.add("agent");
    list.appendChild(li);
    while (list.children.length > MAX_LINES) list.removeChild(list.firstChild);
    const n = list.children.length;
    for (let i = 0; i < n; i++) {
      const el = list.children[i];
      const age = n - 1 - i;
      el.classList.toggle("newest", age === 0);
      el.style.opacity = String(Math.max(0.15, 1 - age * 0.2));
    }
  }

  // dispatch handles one server-sent event; ctrl aborts the stream when the
  // relay restarted.
  function dispatch(block, ctrl) {
    let event = "message", data = "", id = null;
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data += (data ? "\n" : "") + value;
      else if (field === "id") id = value;
    }
    if (event === "hello") {
      const e = JSON.parse(data).epoch;
      if (epoch !== null && e !== epoch) {
        // The relay restarted: its ids start again, so start from the top.
        epoch = e;
        restart = true;
        ctrl.abort();
        return;
      }
      epoch = e;
      setStatus("live", "live");
    } else if (event === "feed") {
      if (id !== null) lastId = id;
      try { render(JSON.parse(data)); } catch (err) { /* skip a bad item */ }
    }
  }

  class Refused extends Error {}

  async function stream(url) {
    const ctrl = new AbortController();
    const headers = {Accept: "text/event-stream"};
    if (lastId !== null) headers["Last-Event-ID"] = lastId;
    const r = await window.acuSession.fetch(url, {headers: headers, signal: ctrl.signal});
    if (r.status === 401 || r.status === 403) {
      const j = await r.json().catch(() => ({}));
      throw new Refused((j.error && j.error.message) || ("refused: " + r.status));
    }
    if (!r.ok || !r.body) throw new Error("stream: " + r.status);
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buf += value.replace(/\r\n?/g, "\n");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        dispatch(block, ctrl);
        if (restart) return;
      }
    }
  }

  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

  async function run() {
    try {
      await window.acuSession.ready;
    } catch (err) {
      setStatus("down", err.message);
      return;
    }
    let url = "/feed/stream";
    for (;;) {
      try {
        await stream(url);
      } catch (err) {
        if (err instanceof Refused) {
          setStatus("down", err.message);
          return;
        }
      }
      if (restart) {
        restart = false;
        lastId = null;
        url = "/feed/stream?after=0";
        continue;
      }
      url = "/feed/stream";
      setStatus("down", "reconnecting");
      await sleep(RETRY_MS);
    }
  }

  run();
})();
