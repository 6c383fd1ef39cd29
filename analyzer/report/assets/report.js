// streamhaz HTML report: draws the timeline from the JSON block #timeline-data.
// Trace-given text only ever reaches the page through textContent and setAttribute.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('timeline-data').textContent);
  var svg = document.getElementById('timeline');
  var NS = 'http://www.w3.org/2000/svg';
  var LABEL = 230, ROW = 20, RANK_ROW = 20, AXIS = 22, PAD = 3;
  var S = data.strings;

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function tip(e, text) { el('title', {}, e).textContent = text; }
  function kindClass(kind) {
    if (kind === 'kernel') return 'k';
    if (kind.indexOf('memcpy') === 0) return 'c';
    if (kind === 'memset') return 's';
    if (kind.indexOf('nccl') === 0) return 'n';
    return 'o';
  }
  function fmtTime(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
    return Math.round(ns) + ' ns';
  }

  // Decode the flat arrays: ops (8 per op) and aggregated bins (4 per bin), per stream.
  var rows = [], y = AXIS, tMin = Infinity, tMax = -Infinity;
  data.ranks.forEach(function (r, ri) {
    r.y = y; y += RANK_ROW;
    r.ops2 = [];
    for (var i = 0; i < r.ops.length; i += 8) {
      var o = { ri: ri, s: r.ops[i], seq: r.ops[i + 1], t: r.ops[i + 2], d: r.ops[i + 3], kind: S[r.ops[i + 4]],
                name: S[r.ops[i + 5]], nvtx: S[r.ops[i + 6]], timed: r.ops[i + 7] === 1 };
      o.cls = kindClass(o.kind);
      r.ops2.push(o);
    }
    r.rows = r.streams.map(function (s, si) {
      var row = { ri: ri, si: si, stream: s, ops: [], agg: [], maxDur: 0 };
      return row;
    });
    r.ops2.forEach(function (o) { r.rows[o.s].ops.push(o); });
    for (var j = 0; j < r.agg.length; j += 4)
      r.rows[r.agg[j]].agg.push({ t: r.agg[j + 1], e: r.agg[j + 2], n: r.agg[j + 3] });
    r.rows.forEach(function (row) {
      if (!row.ops.length && !row.agg.length) return;  // streams without operations get no row
      row.ops.sort(function (a, b) { return a.t - b.t; });
      row.ops.forEach(function (o) { row.maxDur = Math.max(row.maxDur, o.d); tMin = Math.min(tMin, o.t); tMax = Math.max(tMax, o.t + o.d); });
      row.agg.forEach(function (b) { row.maxDur = Math.max(row.maxDur, b.e - b.t); tMin = Math.min(tMin, b.t); tMax = Math.max(tMax, b.e); });
      row.y = y; y += ROW;
      rows.push(row);
    });
    r.yEnd = y;
    y += 6;
  });
  if (!isFinite(tMin)) { tMin = 0; tMax = 1; }
  if (tMax <= tMin) tMax = tMin + 1;
  var height = y + 4;
  svg.setAttribute('height', height);

  var view = { t0: tMin, t1: tMax };
  var width = 800;
  function px(t) { return LABEL + (t - view.t0) / (view.t1 - view.t0) * (width - LABEL - 10); }
  function timeAt(x) { return view.t0 + (x - LABEL) / (width - LABEL - 10) * (view.t1 - view.t0); }
  function rowOf(o) { return data.ranks[o.ri].rows[o.s]; }

  function firstVisible(list, t0) {
    var lo = 0, hi = list.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (list[m].t < t0) lo = m + 1; else hi = m; }
    return lo;
  }

  function opTip(o) {
    var r = data.ranks[o.ri];
    return 'rank ' + r.rank + ', ' + r.streams[o.s].name + '\n' + o.kind + (o.name && o.name !== o.kind ? ': ' + o.name : '') +
      '\nseq ' + o.seq + (o.nvtx ? '\nNVTX: ' + o.nvtx : '') +
      (o.timed ? '\nGPU ' + fmtTime(o.t) + ' + ' + fmtTime(o.d) : '\nno GPU time: placed by API order');
  }

  var findingOps = {};  // "ri:index" -> finding numbers
  data.findings.forEach(function (f, fi) {
    f.ops.forEach(function (ref) {
      if (ref[1] < 0) return;
      var k = ref[0] + ':' + ref[1];
      (findingOps[k] = findingOps[k] || []).push(fi);
    });
  });
  function opAt(ref) { return ref[1] < 0 ? null : data.ranks[ref[0]].ops2[ref[1]]; }

  function drawRow(g, row) {
    var t0 = view.t0 - row.maxDur, t1 = view.t1;
    // Aggregated bins (operations beyond the detail budget).
    row.agg.forEach(function (b) {
      if (b.e < view.t0 || b.t > t1) return;
      var x0 = px(b.t), x1 = Math.max(px(b.e), x0 + 1);
      tip(el('rect', { class: 'agg', x: x0, y: row.y + PAD, width: x1 - x0, height: ROW - 2 * PAD }, g),
          b.n + ' operations, aggregated (beyond the report\'s detail budget)');
    });
    // Operations; those closer than a pixel are merged into one grey bar.
    var run = null;
    function flush() {
      if (!run) return;
      var o = run.first, attrs = { x: run.x0, y: row.y + PAD, width: Math.max(run.x1 - run.x0, 1.5), height: ROW - 2 * PAD };
      if (run.n === 1) {
        attrs['class'] = 'op ' + o.cls + (o.timed ? '' : ' untimed');
        attrs['data-op'] = data.ranks[o.ri].rank + ':' + o.seq;
        tip(el('rect', attrs, g), opTip(o));
      } else {
        attrs['class'] = 'op merged';
        tip(el('rect', attrs, g), run.n + ' operations (zoom in to see them)');
      }
      run = null;
    }
    for (var i = firstVisible(row.ops, t0); i < row.ops.length && row.ops[i].t <= t1; ++i) {
      var o = row.ops[i];
      if (o.t + o.d < view.t0) continue;
      var x0 = px(o.t), x1 = px(o.t + o.d);
      if (run && x0 <= run.x1 + 1) { run.x1 = Math.max(run.x1, x1); run.n++; continue; }
      flush();
      run = { x0: x0, x1: x1, n: 1, first: o };
    }
    flush();
  }

  function arrow(g, cls, a, b, label) {
    var ra = rowOf(a), rb = rowOf(b);
    var x1 = px(a.t + a.d), y1 = ra.y + ROW / 2, x2 = px(b.t), y2 = rb.y + ROW / 2;
    var mx = (x1 + x2) / 2;
    var d = 'M' + x1 + ',' + y1 + ' C' + mx + ',' + y1 + ' ' + mx + ',' + y2 + ' ' + x2 + ',' + y2;
    var p = el('path', { class: cls, d: d, 'marker-end': 'url(#head-' + cls + ')' }, g);
    if (label) tip(p, label);
    return p;
  }

  function render() {
    width = Math.max(svg.clientWidth || svg.parentNode.clientWidth || 800, LABEL + 100);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var defs = el('defs', {}, svg);
    var hatch = el('pattern', { id: 'hatch', width: 4, height: 4, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    el('rect', { width: 4, height: 4, fill: '#fff' }, hatch);
    el('line', { x1: 0, y1: 0, x2: 0, y2: 4, stroke: '#888', 'stroke-width': 2 }, hatch);
    ['wait', 'missing'].forEach(function (c) {
      var m = el('marker', { id: 'head-' + c, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }, defs);
      el('path', { d: 'M0,0 L10,5 L0,10 z', fill: c === 'missing' ? '#d62728' : '#555' }, m);
    });
    el('clipPath', { id: 'plot-clip' }, defs).appendChild(el('rect', { x: LABEL, y: 0, width: width - LABEL, height: height }));

    rows.forEach(function (row, i) { el('rect', { class: 'row-bg' + (i % 2 ? ' odd' : ''), x: 0, y: row.y, width: width, height: ROW }, svg); });
    var plot = el('g', { 'clip-path': 'url(#plot-clip)' }, svg);
    // GPU-times windows behind everything.
    data.ranks.forEach(function (r) {
      for (var i = 0; i < r.windows.length; i += 2) {
        if (r.windows[i + 1] < view.t0 || r.windows[i] > view.t1) continue;
        var x0 = px(r.windows[i]), x1 = Math.max(px(r.windows[i + 1]), x0 + 1);
        tip(el('rect', { class: 'window', x: x0, y: r.y + RANK_ROW, width: x1 - x0, height: r.yEnd - r.y - RANK_ROW }, plot),
            'GPU times recorded ' + fmtTime(r.windows[i]) + ' to ' + fmtTime(r.windows[i + 1]));
      }
    });
    // Axis.
    var axis = el('g', { class: 'axis' }, svg);
    var span = view.t1 - view.t0, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      var x = px(t);
      el('line', { x1: x, y1: AXIS - 4, x2: x, y2: height }, axis);
      el('text', { x: x + 2, y: AXIS - 8 }, axis).textContent = fmtTime(t);
    }
    rows.forEach(function (row) { drawRow(el('g', {}, plot), row); });

    // Event waits, when few enough are in view to read.
    var waits = el('g', {}, plot), shown = 0, hidden = 0;
    data.ranks.forEach(function (r) {
      for (var i = 0; i < r.waits.length; i += 2) {
        var a = r.ops2[r.waits[i]], b = r.ops2[r.waits[i + 1]];
        if (Math.max(a.t + a.d, b.t) < view.t0 || Math.min(a.t + a.d, b.t) > view.t1) continue;
        if (shown >= 400) { hidden++; continue; }
        arrow(waits, 'wait', a, b, 'cudaStreamWaitEvent: ' + r.streams[b.s].name + ' waits for ' + r.streams[a.s].name +
              ' after seq ' + a.seq);
        shown++;
      }
    });
    // Findings: their operations outlined on top, and the missing order as the arrow that would fix it.
    var top = el('g', {}, plot);
    data.findings.forEach(function (f, fi) {
      var a = opAt(f.ops[0]), b = opAt(f.ops[1]);
      [a, b].forEach(function (o) {
        if (!o) return;
        var row = rowOf(o), x0 = px(o.t), x1 = px(o.t + o.d);
        if (x1 < LABEL - 5 || x0 > width) return;
        var r = el('rect', { class: 'op race ' + o.cls + (o.timed ? '' : ' untimed'), x: x0, y: row.y + 1,
                             width: Math.max(x1 - x0, 3), height: ROW - 2, 'data-op': data.ranks[o.ri].rank + ':' + o.seq,
                             'data-finding': fi }, top);
        tip(r, 'finding ' + (fi + 1) + ': ' + f.title + '\n' + opTip(o));
        r.addEventListener('click', function () { focusFinding(fi, true); });
      });
      if (a && b) {
        var p = arrow(top, 'missing', a, b, 'missing order: ' + f.missing_order);
        p.setAttribute('data-finding', fi);
        if (fi !== focused) return;  // one label: arrows of several findings often share ops
        var lx = Math.min(Math.max((px(a.t + a.d) + px(b.t)) / 2, LABEL + 4), width - 90);
        var ly = Math.min(rowOf(a).y, rowOf(b).y) + (rowOf(a) === rowOf(b) ? -2 : ROW + 2);
        el('text', { class: 'missing-label', x: lx, y: Math.max(ly, AXIS + 10) }, top).textContent = 'missing wait (finding ' + (fi + 1) + ')';
      }
    });
    // Labels last, over anything drawn left of the plot.
    var labels = el('g', {}, svg);
    el('rect', { class: 'label-bg', x: 0, y: AXIS, width: LABEL - 4, height: height - AXIS }, labels);
    data.ranks.forEach(function (r) {
      var t = el('text', { class: 'rank-label', x: 4, y: r.y + 14 }, labels);
      t.textContent = 'rank ' + r.rank + ' (GPU times ' + r.gpu_times + (r.order_only ? ', none recorded: API order' : '') + ')';
    });
    rows.forEach(function (row) {
      var name = row.stream.name, label = name.length > 30 ? name.slice(0, 29) + '…' : name;
      var t = el('text', { x: 14, y: row.y + 14 }, labels);
      t.textContent = label + ' (id ' + row.stream.id + ')';
      tip(t, name);
    });
    if (hidden) el('text', { class: 'note-text', x: LABEL + 4, y: height - 4 }, svg).textContent =
      hidden + ' more event waits in view: zoom in to see them';
    document.getElementById('view-range').textContent = fmtTime(view.t0) + ' to ' + fmtTime(view.t1) + ' (' + fmtTime(view.t1 - view.t0) + ' shown)';
    document.body.setAttribute('data-timeline', 'drawn');
  }

  function setView(t0, t1) {
    var minSpan = 50;  // ns
    if (t1 - t0 < minSpan) { var c = (t0 + t1) / 2; t0 = c - minSpan / 2; t1 = c + minSpan / 2; }
    view.t0 = t0; view.t1 = t1;
    render();
  }
  function zoom(factor, at) {
    var c = at === undefined ? (view.t0 + view.t1) / 2 : at;
    setView(c - (c - view.t0) * factor, c + (view.t1 - c) * factor);
  }

  var focused = -1;
  function focusFinding(fi, scroll) {
    focused = fi;
    var f = data.findings[fi], a = opAt(f.ops[0]), b = opAt(f.ops[1]);
    document.querySelectorAll('.focused').forEach(function (e) { e.classList.remove('focused'); });
    var sec = document.getElementById('finding-' + fi);
    if (sec) sec.classList.add('focused');
    var ops = [a, b].filter(function (o) { return o; });
    if (ops.length) {
      var t0 = Math.min.apply(null, ops.map(function (o) { return o.t; }));
      var t1 = Math.max.apply(null, ops.map(function (o) { return o.t + o.d; }));
      var pad = Math.max((t1 - t0) * 0.4, 2000);
      setView(t0 - pad, t1 + pad);
    }
    if (scroll) document.getElementById('timeline-section').scrollIntoView();
  }

  // Zoom with the wheel around the pointer, pan by dragging.
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    var rect = svg.getBoundingClientRect();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, timeAt(e.clientX - rect.left));
  }, { passive: false });
  var drag = null;
  svg.addEventListener('mousedown', function (e) { drag = { x: e.clientX, t0: view.t0, t1: view.t1 }; svg.classList.add('dragging'); });
  window.addEventListener('mouseup', function () { drag = null; svg.classList.remove('dragging'); });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var dt = (e.clientX - drag.x) / (width - LABEL - 10) * (drag.t1 - drag.t0);
    view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt;
    render();
  });
  document.getElementById('zoom-fit').addEventListener('click', function () { setView(tMin, tMax); });
  document.getElementById('zoom-in').addEventListener('click', function () { zoom(0.5); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom(2); });
  document.querySelectorAll('button.show').forEach(function (b) {
    b.addEventListener('click', function () { focusFinding(Number(b.getAttribute('data-focus')), true); });
  });
  window.addEventListener('resize', render);

  // Start on the first finding whose operations are drawn, else on the whole run.
  var first = -1;
  data.findings.forEach(function (f, fi) { if (first < 0 && (f.ops[0][1] >= 0 || f.ops[1][1] >= 0)) first = fi; });
  if (first >= 0) focusFinding(first, false); else render();
})();
