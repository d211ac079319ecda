// evlog web: small progressive enhancements. Every page works without this script.
(function () {
  "use strict";

  function ago(iso) {
    var t = Date.parse(iso);
    if (isNaN(t)) return null;
    var s = (Date.now() - t) / 1000;
    if (s < 0) return null;
    if (s < 60) return "just now";
    if (s < 3600) return Math.floor(s / 60) + " min ago";
    if (s < 86400) return Math.floor(s / 3600) + " h ago";
    if (s < 86400 * 60) return Math.floor(s / 86400) + " d ago";
    return stamp(t);
  }

  // One date format everywhere: YYYY-MM-DD HH:MM (the server writes it in UTC; here in the reader's zone).
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function stamp(t) {
    var d = new Date(t);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" +
      pad(d.getMinutes());
  }

  function refreshTimes() {
    document.querySelectorAll("time[data-ago]").forEach(function (el) {
      var text = ago(el.getAttribute("datetime"));
      if (text) el.textContent = text;
    });
  }

  function localTimes() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (!isNaN(t)) {
        el.textContent = stamp(t);
        var age = ago(el.getAttribute("datetime"));
        if (age) el.setAttribute("title", age);
      }
    });
  }

  function copyButtons() {
    document.querySelectorAll("[data-copy]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var text = btn.getAttribute("data-copy");
        var done = function () {
          var before = btn.textContent;
          btn.textContent = "Copied";
          setTimeout(function () { btn.textContent = before; }, 1500);
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(text).then(done, function () {});
        }
      });
    });
  }

  function autosubmit() {
    document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
      sel.addEventListener("change", function () { if (sel.form) sel.form.submit(); });
    });
  }

  function toggleDetails() {
    document.querySelectorAll("[data-toggle-details]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var all = document.querySelectorAll(".transcript details");
        var open = btn.getAttribute("aria-pressed") !== "true";
        all.forEach(function (d) { d.open = open; });
        btn.setAttribute("aria-pressed", open ? "true" : "false");
        btn.textContent = open ? "Fold all" : "Unfold all";
      });
    });
  }

  function openTarget() {
    if (!location.hash) return;
    var el = document.getElementById(location.hash.slice(1));
    if (el) el.querySelectorAll("details").forEach(function (d) { d.open = true; });
  }

  function slashToSearch() {
    document.addEventListener("keydown", function (e) {
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
      var tag = (document.activeElement && document.activeElement.tagName) || "";
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      var box = document.getElementById("search");
      if (box) { e.preventDefault(); box.focus(); box.select(); }
    });
  }

  // Live pages: a region marked data-live is fetched again when /live says the log moved (polled every
  // LIVE_MS while the tab is visible; one small JSON answer per poll, the page only when something changed).
  var LIVE_MS = 4000;
  function live() {
    var regions = document.querySelectorAll("[data-live][id]");
    if (!regions.length || !window.fetch || !window.DOMParser) return;
    var seen = null, busy = false, polls = 0;
    function swap(html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      regions.forEach(function (el) {
        var fresh = doc.getElementById(el.id);
        if (fresh && fresh.innerHTML !== el.innerHTML) el.innerHTML = fresh.innerHTML;
      });
      refreshTimes();
      localTimes();
      document.documentElement.setAttribute("data-live-at", String(Date.now()));
    }
    function poll() {
      if (busy || document.visibilityState === "hidden") return;
      busy = true;
      fetch("/live", { credentials: "same-origin", cache: "no-store" }).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (j) {
        var v = j && typeof j.v === "string" ? j.v : null;
        if (v === null) return null;
        polls += 1;  // no cheap version (gateway mode): the page itself, every 8th poll
        var changed = seen !== null && (v === "" ? polls % 8 === 0 : v !== seen);
        seen = v;
        if (!changed) return null;
        return fetch(location.href, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
          return r.ok ? r.text() : null;
        }).then(function (html) { if (html) swap(html); });
      }).catch(function () {}).then(function () { busy = false; });
    }
    poll();
    setInterval(poll, LIVE_MS);
  }

  document.addEventListener("DOMContentLoaded", function () {
    refreshTimes();
    localTimes();
    copyButtons();
    autosubmit();
    toggleDetails();
    openTarget();
    slashToSearch();
    live();
    window.addEventListener("hashchange", openTarget);
    setInterval(function () { refreshTimes(); localTimes(); }, 60000);
  });
})();
