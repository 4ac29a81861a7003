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
    points: Array.prototype.map.call(document.querySelectorAll("#roofline circle:not(.legend)"), function (c) { return c.getAttribute("fill"); })
  };
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
