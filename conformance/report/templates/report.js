
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll('#filters input[name="outcome"]'));
  var areaSel = document.getElementById("area-select");
  var findings = Array.prototype.slice.call(document.querySelectorAll("article.finding"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.results tr.row"));
  var known = {};
  boxes.forEach(function (b) { known[b.value] = true; });

  function readHash() {
    var state = { outcomes: null, area: "" };
    var h = window.location.hash.replace(/^#/, "");
    if (h.indexOf("=") < 0) { return state; }
    h.split("&").forEach(function (part) {
      var kv = part.split("=");
      var key = decodeURIComponent(kv[0] || ""), val = decodeURIComponent(kv[1] || "");
      if (key === "outcome") {
        state.outcomes = val.split(",").filter(function (o) { return known[o]; });
      } else if (key === "area") {
        state.area = val;
      }
    });
    return state;
  }

  function writeHash(selected, area) {
    var parts = [];
    if (selected.length !== boxes.length) { parts.push("outcome=" + selected.map(encodeURIComponent).join(",")); }
    if (area) { parts.push("area=" + encodeURIComponent(area)); }
    var h = parts.length ? "#" + parts.join("&") : "";
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", h || window.location.pathname + window.location.search);
    }
  }

  function apply() {
    var on = {};
    var selected = boxes.filter(function (b) { return b.checked; }).map(function (b) { on[b.value] = true; return b.value; });
    var area = areaSel ? areaSel.value : "";
    var shownFindings = 0, shownRows = 0, shownResults = 0;
    findings.forEach(function (f) {
      var show = !!on[f.getAttribute("data-outcome")] && (!area || f.getAttribute("data-area") === area);
      f.hidden = !show;
      if (show) { shownFindings++; }
    });
    rows.forEach(function (r) {
      var inArea = !area || r.getAttribute("data-area") === area;
      var any = false;
      Array.prototype.forEach.call(r.querySelectorAll("td[data-outcome]"), function (c) {
        var match = inArea && !!on[c.getAttribute("data-outcome")];
        c.classList.toggle("dim", !match);
        if (match) { any = true; shownResults++; }
      });
      r.hidden = !any;
      if (any) { shownRows++; }
    });
    document.getElementById("shown-findings").textContent = String(shownFindings);
    document.getElementById("shown-rows").textContent = String(shownRows);
    document.getElementById("shown-results").textContent = String(shownResults);
    return { selected: selected, area: area };
  }

  function fromHash() {
    var st = readHash();
    boxes.forEach(function (b) { b.checked = st.outcomes === null || st.outcomes.indexOf(b.value) >= 0; });
    if (areaSel) {
      var ok = Array.prototype.some.call(areaSel.options, function (o) { return o.value === st.area; });
      areaSel.value = ok ? st.area : "";
    }
    apply();
  }

  boxes.forEach(function (b) { b.addEventListener("change", function () { var s = apply(); writeHash(s.selected, s.area); }); });
  if (areaSel) { areaSel.addEventListener("change", function () { var s = apply(); writeHash(s.selected, s.area); }); }
  var reset = document.getElementById("reset");
  if (reset) {
    reset.addEventListener("click", function () {
      boxes.forEach(function (b) { b.checked = true; });
      if (areaSel) { areaSel.value = ""; }
      var s = apply(); writeHash(s.selected, s.area);
    });
  }
  window.addEventListener("hashchange", function () {
    if (window.location.hash.indexOf("=") >= 0) { fromHash(); }
  });

  // counts read back from the rendered page (what the browser test compares with report.json)
  var dom = {};
  Array.prototype.forEach.call(document.querySelectorAll("table.results td[data-outcome]"), function (c) {
    var o = c.getAttribute("data-outcome"); dom[o] = (dom[o] || 0) + 1;
  });
  document.body.setAttribute("data-dom-counts", JSON.stringify(dom));
  fromHash();
  document.body.setAttribute("data-ready", "1");
})();
