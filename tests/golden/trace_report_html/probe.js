// Appended to a copy of report.html by run.sh (never part of the report): records the layout
// that check_page.py asserts on, as JSON in <pre id="probe">.
(function () {
  function box(el) {
    if (!el) return null;
    var r = el.getBoundingClientRect();
    return {x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
  }
  var out = {
    "stage-split": box(document.getElementById("stage-split")),
    "top-kernels": box(document.getElementById("top-kernels")),
    "input-problems": box(document.getElementById("input-problems")),
    ceilings: Array.prototype.map.call(document.querySelectorAll("text.ceiling"), box),
    legend: Array.prototype.map.call(document.querySelectorAll("circle.legend"), function (c) { return c.getAttribute("fill"); }),
    points: Array.prototype.map.call(document.querySelectorAll("#roofline circle:not(.legend)"), function (c) { return c.getAttribute("fill"); }),
    timeline: box(document.getElementById("timeline")),
    lane_labels: Array.prototype.map.call(document.querySelectorAll("#timeline text"), function (t) { return t.textContent; }),
    ticks: Array.prototype.map.call(document.querySelectorAll("#timeline text.tick"), function (t) { return t.textContent; }),
    idle_gaps: document.querySelectorAll("#timeline rect.idle-gap").length,
    gap_histogram_rows: document.querySelectorAll("#gap-histogram tr").length - 1,
    gap_rows: document.querySelectorAll("#gap-table tr").length - 1,
    cells: Array.prototype.map.call(document.querySelectorAll("td, #roofline text"), function (el) { return el.textContent; }),
    names: Array.prototype.map.call(document.querySelectorAll("td.nm"), function (td) {
      return {text: td.textContent, title: td.getAttribute("title"), h: td.getBoundingClientRect().height};
    }),
    rows: Array.prototype.map.call(document.querySelectorAll("tr"), function (tr) {
      return {h: tr.getBoundingClientRect().height, text: tr.textContent.slice(0, 60)};
    })
  };
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
