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
    return new Date(t).toLocaleDateString();
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
        el.textContent = new Date(t).toLocaleString(undefined, {
          year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit"
        });
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

  document.addEventListener("DOMContentLoaded", function () {
    refreshTimes();
    localTimes();
    copyButtons();
    autosubmit();
    toggleDetails();
    openTarget();
    slashToSearch();
    window.addEventListener("hashchange", openTarget);
    setInterval(refreshTimes, 60000);
  });
})();
