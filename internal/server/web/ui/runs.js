// acu run timeline: runs filtered by kind, status and display; each opens
// to its events in order, with the frame each judgement saw and its
// verdict, agent turns, task steps, actions and interventions. Logs in with
// session.js; judged frames are fetched with the session header and shown
// as blob: URLs.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const api = (path, opts) => window.acuSession.fetch(path, opts);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };

  function status(text, state) {
    $("status").textContent = text;
    if (state) document.body.dataset.state = state;
  }
  async function json(path) {
    const r = await api(path);
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((j.error && j.error.message) || (path + ": " + r.status));
    return j;
  }

  const frameURLs = new Map();
  async function frameURL(hash) {
    if (frameURLs.has(hash)) return frameURLs.get(hash);
    const p = api("/v1/frames/" + encodeURIComponent(hash)).then(async (r) => r.ok ? URL.createObjectURL(await r.blob()) : "");
    frameURLs.set(hash, p);
    return p;
  }

  function summary(run) {
    const s = run.spec || {};
    return s.criteria || s.task || s.client || s.by || (s.display ? "on " + s.display : "") || "";
  }

  let selected = "";
  async function list() {
    const q = new URLSearchParams();
    if ($("kind").value) q.set("kind", $("kind").value);
    if ($("status-filter").value) q.set("status", $("status-filter").value);
    if ($("display-filter").value.trim()) q.set("display", $("display-filter").value.trim());
    q.set("limit", "200");
    try {
      const j = await json("/v1/runs?" + q);
      const tb = $("runs");
      tb.textContent = "";
      for (const run of j.runs || []) {
        const tr = el("tr");
        tr.dataset.id = run.id;
        tr.dataset.kind = run.kind;
        if (run.id === selected) tr.classList.add("sel");
        tr.append(el("td", "", run.kind), el("td", "status-" + run.status, run.status),
          el("td", "", new Date(run.startedAt).toLocaleString()), el("td", "", summary(run)));
        tr.addEventListener("click", () => open(run.id));
        tb.append(tr);
      }
      status((j.runs || []).length + " runs", "ok");
    } catch (e) { status(e.message, "down"); }
  }
  for (const id of ["kind", "status-filter"]) $(id).addEventListener("change", list);
  $("display-filter").addEventListener("change", list);

  function describe(ev) {
    const d = ev.data || {};
    switch (ev.stream) {
      case "lifecycle": return d.phase + (d.status ? " (" + d.status + ")" : "") + (d.error ? ": " + d.error : "");
      case "verdict": return d.error ? "judge error: " + d.error : (d.met ? "YES" : "NO") + (d.evidence ? ": " + d.evidence : "") +
        (d.deduped ? " (shared verdict)" : "") + (d.backend ? " · " + d.backend : "") + (d.latencyMs !== undefined ? " · " + d.latencyMs + " ms" : "");
      case "update": return "updated: " + JSON.stringify(d);
      case "intervention": return d.phase + (d.detail ? ": " + d.detail : "") + (d.reason ? ": " + d.reason : "") + (d.paused_ms ? " after " + d.paused_ms + " ms" : "");
      case "action": return (d.client || "") + ": " + (d.actions || []).map((a) => a.kind + (a.element ? " " + a.element : "") +
        (a.at ? " at " + a.at[0] + "," + a.at[1] : "") + (a.keys ? " " + a.keys : "") + (a.ok ? "" : " ✗")).join(", ") + (d.ok ? "" : " (" + (d.code || d.error || "failed") + ")");
      case "turn": return "turn " + d.turn + ": " + (d.observation || "") + " → " + (d.actions || []).map((a) => a.name).join(", ");
      case "iteration": return "step " + d.iteration + ": " + (d.thought || "") + " → " + (d.steps || []).map((s) => s.action || s.kind || "").join(", ");
      case "plan": case "check": case "verify": case "recovery": return JSON.stringify(d).slice(0, 400);
      default: return JSON.stringify(d).slice(0, 400);
    }
  }

  async function open(id) {
    selected = id;
    history.replaceState(null, "", "/ui/runs?run=" + encodeURIComponent(id));
    for (const tr of document.querySelectorAll("#runs tr")) tr.classList.toggle("sel", tr.dataset.id === id);
    const tl = $("timeline");
    tl.textContent = "";
    tl.dataset.run = id;
    try {
      const run = await json("/v1/runs/" + encodeURIComponent(id));
      const head = el("div", "run-head");
      const spec = el("details");
      spec.append(el("summary", "", "spec"), el("pre", "", JSON.stringify(run.spec || {}, null, 1)));
      head.append(el("h2", "", run.kind + " " + run.id), el("div", "status-" + run.status, run.status +
        (run.error ? ": " + run.error : "") + (summary(run) ? " · " + summary(run) : "")), spec);
      tl.append(head);
      // A run with judged frames can export them as an animated GIF or
      // WebP (WebP: full colour, smaller; needs the daemon's ffmpeg).
      api("/v1/runs/" + encodeURIComponent(id) + "/frames").then(async (r) => {
        if (!r.ok || !((await r.json()).frames || []).length) return;
        for (const ext of ["gif", "webp"]) {
          const b = el("button", "export", "export judged frames as " + ext.toUpperCase());
          b.type = "button";
          b.dataset.format = ext;
          b.addEventListener("click", async () => {
            const g = await api("/v1/runs/" + encodeURIComponent(id) + "/frames." + ext);
            if (!g.ok) { status(ext.toUpperCase() + ": " + g.status); return; }
            const a = el("a");
            a.href = URL.createObjectURL(await g.blob());
            a.download = id + "." + ext;
            document.body.append(a); a.click(); a.remove();
          });
          head.append(b);
        }
      });
      // The run's recording (or the run itself, when it is one): played
      // here, and every event seeks to its moment.
      let video = null, videoStart = 0;
      try {
        const recs = run.kind === "recording" ? (await json("/v1/recordings?limit=1000")).recordings.filter((r) => r.id === id) :
          (await json("/v1/recordings?run=" + encodeURIComponent(id))).recordings;
        const rec = (recs || []).find((r) => r && r.status !== "running" && r.video_start && !r.incomplete);
        if (rec) {
          video = el("video", "recording");
          video.controls = true;
          video.dataset.id = rec.id;
          videoStart = new Date(rec.video_start).getTime();
          api(rec.url).then(async (r) => { if (r.ok) { video.src = URL.createObjectURL(await r.blob()); video.dataset.loaded = "1"; } });
          tl.append(video);
        }
      } catch (e) { /* no recordings here */ }
      const evs = await json("/v1/events?run=" + encodeURIComponent(id) + "&limit=10000");
      let lastHash = "";
      for (const ev of evs.events || []) {
        const d = ev.data || {};
        const box = el("div", "ev " + ev.stream);
        box.dataset.stream = ev.stream;
        if (ev.stream === "verdict" && !d.error) { box.classList.add(d.met ? "verdict-yes" : "verdict-no"); box.dataset.met = String(!!d.met); }
        box.append(el("div", "when", new Date(ev.at).toLocaleTimeString() + " · " + ev.stream), el("div", "what", describe(ev)));
        if (video) {
          const t = Math.max(0, (new Date(ev.at).getTime() - videoStart) / 1000);
          box.title = "play from here (" + t.toFixed(1) + " s)";
          box.addEventListener("click", () => { video.currentTime = t; video.play().catch(() => {}); });
        }
        if ((ev.stream === "verdict" || ev.stream === "turn" || ev.stream === "iteration") && d.frameHash) {
          box.dataset.hash = d.frameHash;
          if (d.frameHash === lastHash) box.append(el("div", "when", "same frame as above"));
          else {
            const img = el("img", "judged");
            img.alt = ev.stream === "turn" ? "the annotated frame the model saw" : ev.stream === "iteration" ? "the screen the task's map was read from" : "the frame judged";
            img.dataset.hash = d.frameHash;
            frameURL(d.frameHash).then((u) => { if (u) { img.src = u; img.onload = () => { img.dataset.loaded = "1"; }; } else img.replaceWith(el("div", "when", "frame not kept")); });
            box.append(img);
          }
          lastHash = d.frameHash;
        }
        tl.append(box);
      }
      document.body.dataset.timeline = id;
    } catch (e) { status(e.message, "down"); }
  }

  window.acuSession.ready.then(() => {
    if (params.get("display")) $("display-filter").value = params.get("display");
    $("live-link").href = "/ui/" + (params.get("display") ? "?display=" + encodeURIComponent(params.get("display")) : "");
    list();
    if (params.get("run")) open(params.get("run"));
    setInterval(list, 5000);
  }, (err) => status(err.message, "login-failed"));
})();
