// acu's shim for a panel page of the user's own (ACU_AGENT_PANEL_FILE, such
// as the origin engine's panel.html, unchanged): the page's own fetch calls
// to this listener carry the page's session (session.js), so it works
// behind acu's token without a cookie. Requests to other origins go out as
// the page wrote them.
"use strict";
(function () {
  const plain = window.fetch.bind(window);
  window.fetch = function (input, init) {
    const url = new URL(typeof input === "string" ? input : input.url, location.href);
    if (url.origin !== location.origin || !window.acuSession) return plain(input, init);
    return window.acuSession.fetch(url.pathname + url.search, init);
  };
})();
