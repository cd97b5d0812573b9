// acu API page: after the one-time login (session.js) it GETs API paths
// with the session header and shows the JSON.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);

  async function show(path) {
    if (!path.startsWith("/")) path = "/" + path;
    $("path").value = path;
    $("status").textContent = "GET " + path;
    try {
      const r = await window.acuSession.fetch(path);
      const text = await r.text();
      let body = text;
      try { body = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON */ }
      $("out").textContent = body;
      $("status").textContent = r.status + " " + path;
      document.body.dataset.state = r.ok ? "ok" : "error";
    } catch (e) {
      $("status").textContent = e.message;
      document.body.dataset.state = "error";
    }
  }

  $("go").addEventListener("click", () => show($("path").value.trim()));
  $("path").addEventListener("keydown", (ev) => { if (ev.key === "Enter") show($("path").value.trim()); });
  for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => show(b.dataset.path));

  window.acuSession.ready.then(
    (st) => show(st.next && st.next !== "/" ? st.next : "/v1/runs"),
    (err) => {
      $("status").textContent = err.message;
      document.body.dataset.state = "login-failed";
    });
})();
