// acu HUD: shows the relay's feed live. Newest line large, older lines
// fading; priorities styled. Reconnects by itself (EventSource retries; a
// relay restart, seen as a new epoch, restarts the stream from the top).
(function () {
  "use strict";
  var MAX_LINES = 6;
  var list = document.getElementById("lines");
  var status = document.getElementById("status");
  var epoch = null;
  var es = null;
  var retryTimer = null;

  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function render(item) {
    var li = document.createElement("li");
    li.textContent = item.text;
    li.dataset.id = String(item.id);
    var p = String(item.priority || "normal").toLowerCase();
    li.className = "p-" + p.replace(/[^a-z]/g, "");
    if (item.source === "agent") li.classList.add("agent");
    list.appendChild(li);
    while (list.children.length > MAX_LINES) list.removeChild(list.firstChild);
    var n = list.children.length;
    for (var i = 0; i < n; i++) {
      var el = list.children[i];
      var age = n - 1 - i;
      el.classList.toggle("newest", age === 0);
      el.style.opacity = String(Math.max(0.15, 1 - age * 0.2));
    }
  }

  function connect(url) {
    if (es) es.close();
    es = new EventSource(url);
    es.addEventListener("hello", function (ev) {
      var e = JSON.parse(ev.data).epoch;
      if (epoch !== null && e !== epoch) {
        // The relay restarted: its ids start again, so start from the top.
        epoch = e;
        connect("/feed/stream?after=0");
        return;
      }
      epoch = e;
      setStatus("live", "live");
    });
    es.addEventListener("feed", function (ev) {
      try { render(JSON.parse(ev.data)); } catch (err) { /* skip a bad item */ }
    });
    es.onerror = function () {
      setStatus("down", "reconnecting");
      if (es.readyState === EventSource.CLOSED) {
        clearTimeout(retryTimer);
        retryTimer = setTimeout(function () { connect("/feed/stream"); }, 2000);
      }
    };
  }

  connect("/feed/stream");
})();
