// acu login, shared by every acu page. A one-time link carries its code in
// the URL fragment (#code=…), which the browser never sends to a server.
// This script takes the code out of the address bar at once, swaps it at
// POST /auth/session for a session, keeps the session in sessionStorage
// (only this page's own origin, port included, can read it) and sends it
// as the X-Acu-Session header. No cookie is ever used: browsers send
// cookies to every port of a host.
//
// window.acuSession.ready resolves to {session, next} (session "" when the
// page was opened without a link and holds none: a listener without a token
// needs none, any other answers 401) or rejects when the link's code was
// refused; acuSession.fetch(path, opts) is fetch with the session header.
"use strict";
(function () {
  const KEY = "acu_session";
  const HEADER = "X-Acu-Session";
  // The browser's own fetch, kept before any page script can wrap it (a
  // shim that routes the page's fetch through acuSession must not loop).
  const nativeFetch = window.fetch.bind(window);

  async function login() {
    const m = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (m) {
      history.replaceState(null, "", location.pathname + location.search);
      sessionStorage.removeItem(KEY);
      const r = await nativeFetch("/auth/session", {
        method: "POST", cache: "no-store", credentials: "omit",
        headers: {"Content-Type": "application/json"}, body: JSON.stringify({code: m[1]}),
      });
      const j = await r.json().catch(() => ({}));
      if (!r.ok || !j.session) throw new Error((j.error && j.error.message) || ("login failed: " + r.status));
      sessionStorage.setItem(KEY, j.session);
      return {session: j.session, next: j.next || ""};
    }
    return {session: sessionStorage.getItem(KEY) || "", next: ""};
  }

  const ready = login();
  ready.catch(() => {}); // callers handle it; no unhandled-rejection noise

  async function authFetch(path, opts) {
    const st = await ready;
    const o = Object.assign({cache: "no-store"}, opts || {});
    o.credentials = "omit";
    o.headers = Object.assign({}, o.headers || {});
    if (st.session) o.headers[HEADER] = st.session;
    const r = await nativeFetch(path, o);
    if (r.status === 401) sessionStorage.removeItem(KEY);
    return r;
  }

  window.acuSession = {ready: ready, fetch: authFetch};
})();
