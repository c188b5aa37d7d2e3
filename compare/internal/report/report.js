// Draws the charts of an idkit compare report from the JSON embedded in
// the page, as SVG, with no external resources. Each chart's svg gets
// data-drawn="true" and data-bars (the number of bars drawn), or
// data-error with the message if drawing failed. Bars are to scale (no
// logarithmic axis, which makes a 34-fold difference look small); charts
// with ratio set label each bar with its multiple of the lowest figure
// of its series.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#3b6fd8", "#9cb6ee", "#d8793b", "#eebf9c", "#3ba86b", "#9cd9b5", "#8a5cc7", "#c8b2e8"];
  var report = JSON.parse(document.getElementById("report-data").textContent);
  var schemes = report.schemes || [];
  var fills = report.config.fills;

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function text(parent, x, y, s, anchor) {
    var t = el("text", { x: x, y: y, "text-anchor": anchor || "start", "dominant-baseline": "middle" }, parent);
    t.textContent = s;
    return t;
  }

  function fmt(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 100) return Math.round(v).toLocaleString("en-US");
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(2);
  }

  function writersLabel(w) { return w === 1 ? "1 writer" : w + " writers"; }

  // Series over each writer run and each load of it.
  function loadSeries(pick, unit) {
    var out = [];
    var runs = schemes.length ? schemes[0].runs : [];
    runs.forEach(function (run, ri) {
      fills.forEach(function (fill, li) {
        out.push({
          label: writersLabel(run.writers) + ", fill " + fill,
          value: function (s) { return pick(s.runs[ri].loads[li]); },
          unit: unit
        });
      });
    });
    return out;
  }

  // Series over each writer run.
  function runSeries(label, pick) {
    var runs = schemes.length ? schemes[0].runs : [];
    return runs.map(function (run, ri) {
      return { label: label + ", " + writersLabel(run.writers), value: function (s) { return pick(s.runs[ri]); } };
    });
  }

  // negLog returns -log10 of a randomness test's p-value, capped at 20;
  // 0 when the keys were too few to test.
  function negLog(r, key) {
    if (!r || !r.tested) return 0;
    var p = r[key];
    if (!(p > 1e-20)) return 20;
    return Math.min(20, -Math.log10(p));
  }

  var charts = {
    pages: { ratio: true, series: loadSeries(function (l) { return l.pages_written_per_1000; }) },
    splits: { series: loadSeries(function (l) { return l.splits_per_1000; }) },
    fill: { max: 100, suffix: "%", series: loadSeries(function (l) { return 100 * l.leaf_fill; }) },
    rate: { series: loadSeries(function (l) { return l.inserts_per_second; }) },
    speed: {
      ratio: true, suffix: " ns",
      series: [
        { label: "1 goroutine", value: function (s) { return s.speed.ns_per_id; } },
        { label: "parallel", value: function (s) { return s.speed.parallel_ns_per_id; } }
      ]
    },
    order: {
      max: 1,
      series: runSeries("append", function (r) { return r.order.append_fraction; })
        .concat(runSeries("inversions", function (r) { return r.order.inversion_fraction; }))
    },
    randomness: {
      max: 20,
      series: [
        { label: "monobit", value: function (s) { return negLog(s.runs[0].randomness, "monobit_p"); } },
        { label: "runs", value: function (s) { return negLog(s.runs[0].randomness, "runs_p"); } },
        { label: "chi-square", value: function (s) { return negLog(s.runs[0].randomness, "chi_square_p"); } }
      ]
    },
    size: {
      suffix: " B",
      series: [{ label: "key", value: function (s) { return s.runs[0].size.key_bytes; } }]
        .concat(runSeries("packed", function (r) { return r.size.packed_bytes_per_id; }))
    }
  };

  // The headline chart of a database engine: its figure for each writer
  // run, read from the loads' metrics.
  function engineChart(engine, key) {
    var runs = schemes.length ? schemes[0].runs : [];
    return {
      ratio: true,
      series: runs.map(function (run, ri) {
        return {
          label: writersLabel(run.writers),
          value: function (s) {
            var loads = s.runs[ri].engines || [];
            for (var i = 0; i < loads.length; i++) {
              if (loads[i].engine === engine) return loads[i].metrics[key] || 0;
            }
            throw new Error(s.name + " has no " + engine + " load");
          }
        };
      })
    };
  }

  // A chart of chosen figures of one engine in one writer run, from the
  // svg's data attributes; with a baseline, each figure over its own.
  function figureChart(svg) {
    var engine = svg.getAttribute("data-figures");
    var keys = svg.getAttribute("data-keys").split(",");
    var labels = svg.getAttribute("data-labels").split("|");
    var ri = Number(svg.getAttribute("data-run"));
    var baseline = svg.getAttribute("data-baseline");
    function raw(s, key) {
      var run = s.runs[ri];
      if (engine === "bbolt") {
        if (!run.loads.length || run.loads[0][key] === undefined) throw new Error(s.name + " has no bbolt " + key);
        return run.loads[0][key];
      }
      var loads = run.engines || [];
      for (var i = 0; i < loads.length; i++) {
        if (loads[i].engine !== engine) continue;
        if (loads[i].metrics[key] === undefined) throw new Error(s.name + " has no " + engine + " " + key);
        return loads[i].metrics[key];
      }
      throw new Error(s.name + " has no " + engine + " load");
    }
    var base = null;
    if (baseline) {
      base = schemes.filter(function (s) { return s.name === baseline; })[0];
      if (!base) throw new Error("no baseline " + baseline);
    }
    return {
      ratio: !base,
      suffix: base ? "×" : "",
      series: keys.map(function (key, i) {
        return { label: labels[i], value: function (s) { var v = raw(s, key); return base ? v / raw(base, key) : v; } };
      })
    };
  }

  function draw(svg, spec) {
    var width = 1000, labelW = 150, valueW = 120, top = 8, barH = 11, gap = 10;
    var series = spec.series;
    var legendRows = Math.ceil(series.length / 4);
    var legendH = legendRows * 18 + 6;
    var rowH = series.length * barH + gap;
    var plotW = width - labelW - valueW;
    var height = top + legendH + schemes.length * rowH + 24;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);

    var values = [];
    schemes.forEach(function (s) { series.forEach(function (se) { values.push(se.value(s)); }); });
    var max = spec.max || Math.max.apply(null, values.concat([1e-9]));
    var hi = max, step = 0;
    if (!spec.max) {
      // A round step of 1, 2 or 5 times a power of ten, about 4 ticks.
      var raw = max / 4, p = Math.pow(10, Math.floor(Math.log10(raw)));
      step = [1, 2, 5, 10].map(function (m) { return m * p; }).filter(function (s) { return s >= raw; })[0];
      hi = Math.ceil(max / step) * step;
    }
    function x(v) { return plotW * Math.max(0, v) / hi; }

    // The lowest positive figure of each series, for the ratio labels.
    var lowest = series.map(function (se) {
      var pos = schemes.map(function (s) { return se.value(s); }).filter(function (v) { return v > 0; });
      return pos.length ? Math.min.apply(null, pos) : 0;
    });
    function label(v, i) {
      var s = fmt(v) + (spec.suffix || "");
      if (spec.ratio && lowest[i] > 0 && v / lowest[i] >= 1.5) s += "  ×" + fmt(v / lowest[i]);
      return s;
    }

    series.forEach(function (se, i) {
      var lx = labelW + (i % 4) * 200, ly = top + Math.floor(i / 4) * 18 + 6;
      el("rect", { x: lx, y: ly - 5, width: 10, height: 10, fill: COLORS[i % COLORS.length] }, svg);
      text(svg, lx + 14, ly, se.label);
    });

    var y0 = top + legendH;
    var bars = 0;
    schemes.forEach(function (s, si) {
      var y = y0 + si * rowH;
      text(svg, labelW - 8, y + series.length * barH / 2, s.name, "end");
      series.forEach(function (se, i) {
        var v = se.value(s);
        var w = Math.max(x(v), 0.5);
        el("rect", {
          "class": "bar", x: labelW, y: y + i * barH, width: w, height: barH - 2,
          fill: COLORS[i % COLORS.length], "data-value": v
        }, svg);
        text(svg, labelW + w + 4, y + i * barH + (barH - 2) / 2, label(v, i));
        bars++;
      });
    });

    var axisY = y0 + schemes.length * rowH;
    el("line", { "class": "axis", x1: labelW, y1: axisY, x2: labelW + plotW, y2: axisY }, svg);
    var ticks = [];
    if (!step) step = hi / 4;
    for (var t = 0; t <= hi + step / 2; t += step) ticks.push(t);
    ticks.forEach(function (t) {
      var tx = labelW + x(t);
      el("line", { "class": "axis", x1: tx, y1: y0 - 4, x2: tx, y2: axisY + 4 }, svg);
      text(svg, tx, axisY + 14, fmt(t), "middle");
    });
    return bars;
  }

  var drawn = 0;
  Array.prototype.forEach.call(document.querySelectorAll("svg[data-chart]"), function (svg) {
    try {
      var spec = charts[svg.getAttribute("data-chart")];
      if (svg.getAttribute("data-engine")) spec = engineChart(svg.getAttribute("data-engine"), svg.getAttribute("data-key"));
      if (svg.getAttribute("data-figures")) spec = figureChart(svg);
      if (!spec) throw new Error("no chart called " + svg.getAttribute("data-chart"));
      svg.setAttribute("data-bars", draw(svg, spec));
      svg.setAttribute("data-drawn", "true");
      drawn++;
    } catch (err) {
      svg.setAttribute("data-error", String(err));
    }
  });
  document.body.setAttribute("data-charts-drawn", drawn);
})();
