// acu agent panel: polls /state, shows the screenshot with its overlays, the
// observation, the actions and the raw model JSON; pause/step/stop.
// With annotator=panel it draws the overlays itself (the seed's protocol)
// and POSTs the annotated PNG to /annotated with pending_seq.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let cfg = null, lastMsg = -1, lastImg = "", posted = 0, busy = false;

  async function api(path, body) {
    const opts = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
    const r = await window.acuSession.fetch(path, opts);
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((j.error && j.error.message) || r.statusText);
    return j;
  }

  function loadImage(b64) {
    return new Promise((res, rej) => {
      const im = new Image();
      im.onload = () => res(im);
      im.onerror = rej;
      im.src = "data:image/png;base64," + b64;
    });
  }

  function px(v, n) { v = Math.min(Math.max(v, 0), 1000); return Math.round(v * (n - 1) / 1000); }

  function gradient(ctx, x, y, r, stops, alpha) {
    const g = ctx.createRadialGradient(x, y, 0, x, y, r);
    for (const [pos, col] of stops) g.addColorStop(pos, col);
    ctx.globalAlpha = alpha;
    return g;
  }

  // drawOverlays mirrors internal/annotate: bbox heat, action heat with the
  // trail (oldest first), labels of the current turn.
  function drawOverlays(ctx, W, H, st) {
    const ui = cfg.ui;
    if (ui.bbox_heat.enabled) {
      for (const b of st.bboxes || []) {
        const x1 = px(b.x1, W), y1 = px(b.y1, H), x2 = px(b.x2, W), y2 = px(b.y2, H);
        const r = Math.max(x2 - x1, y2 - y1, 2) / 2;
        ctx.fillStyle = gradient(ctx, (x1 + x2) / 2, (y1 + y2) / 2, r, ui.bbox_heat.fill_stops, 1);
        ctx.fillRect(x1, y1, x2 - x1 + 1, y2 - y1 + 1);
        ctx.globalAlpha = 1;
        if (ui.bbox_heat.border_width > 0) {
          ctx.strokeStyle = ui.bbox_heat.border;
          ctx.lineWidth = ui.bbox_heat.border_width;
          ctx.strokeRect(x1 + ctx.lineWidth / 2, y1 + ctx.lineWidth / 2, x2 - x1 + 1 - ctx.lineWidth, y2 - y1 + 1 - ctx.lineWidth);
        }
      }
    }
    const h = ui.executed_heat;
    const trail = (st.trail || []).slice(0, Math.max(h.trail_turns, 1));
    if (h.enabled) {
      const base = h.radius_scale * Math.max(W, H);
      for (let age = trail.length - 1; age >= 0; age--) {
        const fade = (h.trail_turns - age) / h.trail_turns;
        const shrink = Math.pow(h.trail_shrink, age);
        const r = base * shrink;
        for (const a of trail[age] || []) {
          if (a.name === "type" || a.name === "key") continue;
          let x1 = px(a.x1, W), y1 = px(a.y1, H);
          const pts = [[x1, y1]];
          if (a.name === "drag") {
            let x2 = px(a.x2, W), y2 = px(a.y2, H);
            const mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
            x1 = mx + (x1 - mx) * shrink; y1 = my + (y1 - my) * shrink;
            x2 = mx + (x2 - mx) * shrink; y2 = my + (y2 - my) * shrink;
            pts[0] = [x1, y1]; pts.push([x2, y2]);
          }
          for (const [x, y] of pts) {
            ctx.fillStyle = gradient(ctx, x, y, r, h.stops, fade);
            ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill();
          }
          ctx.globalAlpha = 1;
        }
      }
    }
    if (ui.labels && ui.labels.enabled) {
      ctx.font = "bold 14px monospace";
      ctx.textBaseline = "top";
      let listY = 4;
      (st.actions || []).forEach((a, i) => {
        let text, x, y;
        if (a.name === "type") text = `${i + 1} type "${a.text}"`;
        else if (a.name === "key") text = `${i + 1} key ${a.keys}`;
        else if (a.name === "drag") text = `${i + 1} drag ${a.x1},${a.y1}>${a.x2},${a.y2}`;
        else text = `${i + 1} ${a.name} ${a.x1},${a.y1}`;
        const w = ctx.measureText(text).width + 6, lh = 19;
        if (a.name === "type" || a.name === "key") { x = 4; y = listY; listY += lh + 2; }
        else {
          x = px(a.x1, W) + 10; y = px(a.y1, H) + 10;
          if (x + w > W) x = px(a.x1, W) - 10 - w;
          if (y + lh > H) y = px(a.y1, H) - 10 - lh;
        }
        ctx.fillStyle = ui.labels.background; ctx.fillRect(x, y, w, lh);
        ctx.fillStyle = ui.labels.color; ctx.fillText(text, x + 3, y + 2);
      });
    }
  }

  // annotate is the seed's browser annotation: decode the raw PNG, draw the
  // overlays on a canvas, export PNG base64.
  async function annotate(st) {
    const im = await loadImage(st.raw_b64);
    const off = document.createElement("canvas");
    off.width = im.naturalWidth; off.height = im.naturalHeight;
    const octx = off.getContext("2d");
    octx.drawImage(im, 0, 0);
    drawOverlays(octx, off.width, off.height, st);
    return off.toDataURL("image/png").split(",")[1];
  }
  // For benchmarks of the seed's round trip (bench_test.go).
  window.acuPanelAnnotate = async (st) => { if (!cfg) cfg = await api("/config"); return annotate(st); };

  async function render(st) {
    const c = $("shot"), ctx = c.getContext("2d");
    const showRaw = $("show-raw").checked;
    const b64 = (!showRaw && st.annotated_b64) ? st.annotated_b64 : st.raw_b64;
    if (b64 && b64 !== lastImg) {
      const im = await loadImage(b64);
      c.width = im.naturalWidth; c.height = im.naturalHeight;
      ctx.drawImage(im, 0, 0);
      if (!st.annotated_b64 && !showRaw && cfg) drawOverlays(ctx, c.width, c.height, st);
      lastImg = b64;
      c.dataset.turn = String(st.turn);
    }
    if (cfg && cfg.annotator === "panel" && st.phase === "waiting_annotated" && st.pending_seq > posted && st.raw_b64) {
      posted = st.pending_seq;
      const png = await annotate(st);
      await api("/annotated", {seq: st.pending_seq, image_b64: png}).catch((e) => showError(e.message));
    }
  }

  function showError(msg) {
    const e = $("error");
    e.textContent = msg || "";
    e.hidden = !msg;
  }

  function text(id, s) { const el = $(id); if (el.textContent !== s) el.textContent = s; }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      if (!cfg) cfg = await api("/config");
      const st = await api("/state?since=" + lastMsg);
      text("turn", String(st.turn));
      text("phase", st.phase + (st.paused ? " (paused)" : ""));
      text("annotator", st.annotator);
      // A call without a provider figure or a price makes the cost unknown,
      // not $0: show what is known and say so.
      text("cost", (st.cost_usd || 0).toFixed(4) + (st.cost_unknown ? " + unknown (" + st.unpriced_calls + " unpriced calls)" : ""));
      text("run", st.run_id ? "run " + st.run_id : "");
      text("pause", st.paused ? "Resume" : "Pause");
      showError(st.error);
      if (st.msg_id !== lastMsg) {
        text("observation", st.observation || "");
        const ol = $("actions");
        ol.replaceChildren(...(st.actions || []).map((a) => {
          const li = document.createElement("li");
          li.textContent = JSON.stringify(a);
          return li;
        }));
        $("rejected").textContent = (st.rejected || []).map((r) => `not run: ${r.kind} ${r.index + 1} ${r.name || ""}: ${r.reason}`).join("\n");
        text("vlm-json", st.vlm_json || "");
        if (st.raw_b64 || st.annotated_b64) await render(st);
        lastMsg = st.msg_id;
      }
    } catch (e) {
      showError("panel: " + e.message);
    } finally {
      busy = false;
    }
  }

  function control(action) { api("/control", {action}).then(poll).catch((e) => showError(e.message)); }
  $("pause").addEventListener("click", () => control($("pause").textContent === "Resume" ? "resume" : "pause"));
  $("step").addEventListener("click", () => control("step"));
  $("stop").addEventListener("click", () => control("stop"));
  $("show-raw").addEventListener("change", () => { lastMsg = -1; lastImg = ""; });
  $("inject").addEventListener("click", () => {
    api("/inject", {vlm_text: $("inject-text").value}).then(poll).catch((e) => showError(e.message));
  });
  poll();
  setInterval(poll, 400);
})();
