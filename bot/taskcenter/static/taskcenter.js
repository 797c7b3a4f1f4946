// Stepwise task center: open the batch a deep link names, and while the job is active and the
// tab is visible, reload when its record changes (the pages work without this script).
(function () {
  "use strict";
  function openTarget() {
    var el = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (el) { el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  document.addEventListener("DOMContentLoaded", openTarget);

  var body = document.body;
  var every = Number(body.getAttribute("data-refresh-seconds") || 0);
  var url = body.getAttribute("data-refresh-url");
  var version = body.getAttribute("data-version");
  if (!every || !url) { return; }
  function check() {
    if (document.visibilityState !== "visible") { return; }
    fetch(url, { headers: { "If-None-Match": '"' + version + '"' }, cache: "no-store",
                 credentials: "same-origin" })
      .then(function (r) { if (r.status === 200 || r.status === 401) { location.reload(); } })
      .catch(function () { /* offline for a moment: try again next time */ });
  }
  setInterval(check, every * 1000);
  document.addEventListener("visibilitychange", check);
})();
