// The dashboard's federation card: a director's servers by site with
// their health, and its redirects per second and locate latency over
// time. app.js hands it the page's helpers; every string from the
// snapshot goes in through textContent or an attribute, never markup.
'use strict';
window.siteboxFederation = function (h) {
  const { el, add, svg, fill, empty, fmtBytes, fmtPct, fmtAgo, clock, niceMax, COLORS } = h;
  function serverNode(s) {
    const li = el('li', 'server ' + s.state);
    const line = add(el('div', 'srv'), el('span', 'dot ' + s.state), el('span', 'srv-name', s.name), el('span', 'role', s.role));
    let state = s.state;
    if (s.state === 'downtime' || s.state === 'degraded') state += ': ' + s.health;
    add(line, el('span', 'state ' + s.state, state));
    add(line, el('span', 'muted', s.static ? 'static, probed' : 'last ad ' + fmtAgo(s.seconds_ago)));
    if (s.via) add(line, el('span', 'muted', 'via ' + s.via));
    const detail = [s.prefixes.join(', ') || 'no prefixes', s.root || s.https || ''];
    if (s.total > 0) detail.push(fmtPct(s.free / s.total) + ' free of ' + fmtBytes(s.total));
    if (!s.static) detail.push('load ' + s.load.toFixed(2), s.version ? 'version ' + s.version : '');
    return add(li, line, el('div', 'srv-detail', detail.filter(Boolean).join(' · ')));
  }
  function renderFederation(f, b) {
    if (!f) {
      const to = b.advertises_to || [];
      fill('federation-body', empty('Not a director — this box keeps no federation registry.' +
        (to.length ? ' It advertises to ' + to.join(', ') + '.' : ' It advertises to no director.')));
      return;
    }
    const root = add(el('div', 'fed-root'), el('span', 'role', 'director'), el('strong', '', f.name), el('span', 'muted', 'site ' + (f.site || '—')));
    if (f.parents && f.parents.length) add(root, el('span', 'muted', '→ parents ' + f.parents.join(', ')));
    if (f.vos && f.vos.length) add(root, el('span', 'muted', '· VO fallbacks ' + f.vos.join(', ')));
    if (!f.servers.length) { fill('federation-body', root, empty('No servers have advertised to this director yet.')); return; }
    const bySite = {};
    f.servers.forEach(s => { (bySite[s.site || '—'] = bySite[s.site || '—'] || []).push(s); });
    const tree = el('ul', 'tree');
    Object.keys(bySite).sort().forEach(site => {
      const list = bySite[site], bad = list.filter(s => s.state !== 'ok').length;
      const head = add(el('div', 'site'), el('strong', '', 'site ' + site),
        el('span', 'muted', list.length + (list.length === 1 ? ' server' : ' servers') + (bad ? ', ' + bad + ' not ok' : ', all ok')));
      add(tree, add(el('li'), head, add(el('ul'), ...list.map(serverNode))));
    });
    const d = f.decisions || {};
    const kinds = Object.keys(d).filter(k => d[k] > 0);
    const dec = el('p', 'muted small', kinds.length ? 'Redirects so far: ' + kinds.map(k => k.replace('_', ' ') + ' ' + d[k]).join(' · ') : 'No redirects yet.');
    fill('federation-body', root, tree, dec, ...directorCharts(f.rates));
  }

  // directorCharts draws the director's history: decisions per second by
  // kind (answers that are not redirects — wait, not found, down, loop —
  // in red shades) and the mean locate latency per sampling interval.
  const FAILED = { not_found: '#dc2626', down: '#991b1b', loop: '#f97316', wait: '#a16207' };
  function directorCharts(r) {
    if (!r || !r.times || !r.times.length) {
      return [el('p', 'muted small', 'Redirect rates and locate latency appear after the first ' + ((r && r.interval_seconds) || 5) + ' s sample.')];
    }
    const kinds = Object.keys(r.series).filter(k => k.startsWith('decision/')).sort();
    const perKind = {};
    kinds.forEach(k => { perKind[k.slice('decision/'.length)] = r.series[k]; });
    const us = r.series['locate/us'] || [], n = r.series['locate/searches'] || [];
    const latency = n.map((c, i) => c > 0 ? us[i] / c / 1000 : null);
    const redirects = seriesChart('fed-redirects', r, perKind, v => v.toFixed(v < 10 ? 2 : 0) + '/s', 'redirects per second by kind',
      k => FAILED[k]);
    const lat = seriesChart('fed-latency', r, { 'locate latency': latency }, v => v.toFixed(v < 10 ? 1 : 0) + ' ms', 'mean locate latency');
    return [el('h3', '', 'Redirects per second'), redirects, el('h3', '', 'Locate latency (mean per ' + r.interval_seconds + ' s)'), lat];
  }
  // seriesChart draws named series (null: no value, a gap) as steps over
  // r.times, with a value axis formatted by fmt; colorOf may fix a
  // series' colour.
  function seriesChart(id, r, series, fmt, aria, colorOf) {
    const wrap = el('div', 'chart');
    wrap.id = id;
    const names = Object.keys(series).sort();
    const W = Math.max(360, (document.getElementById('federation-body').clientWidth || 600)), H = 170;
    const L = 70, R = 12, T = 10, B = 26, iv = r.interval_seconds * 1000, times = r.times;
    const t0 = times[0] - iv, t1 = times[times.length - 1];
    let max = 0;
    names.forEach(k => series[k].forEach(v => { if (v !== null) max = Math.max(max, v); }));
    const ymax = max > 0 ? niceMax(max) : 1;
    const x = ms => L + (W - L - R) * (ms - t0) / Math.max(1, t1 - t0);
    const y = v => T + (H - T - B) * (1 - v / ymax);
    const s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': aria });
    for (let i = 0; i <= 4; i++) {
      const v = ymax * i / 4;
      s.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? 'gridline' : 'axis' }));
      s.appendChild(svg('text', { x: L - 8, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, fmt(v)));
    }
    [t0, t1].forEach((ms, i) => s.appendChild(svg('text', { x: x(ms), y: H - 6, 'text-anchor': i ? 'end' : 'start', class: 'tick' }, clock(ms))));
    const legend = el('div', 'legend');
    names.forEach((k, i) => {
      const color = (colorOf && colorOf(k)) || COLORS[i % COLORS.length];
      let d = '', prevX = x(t0);
      series[k].forEach((v, j) => {
        const xe = x(times[j]);
        if (v !== null) d += 'M' + prevX.toFixed(1) + ' ' + y(v).toFixed(1) + ' H' + xe.toFixed(1) + ' ';
        prevX = xe;
      });
      if (d) s.appendChild(svg('path', { d, fill: 'none', stroke: color, 'stroke-width': 2, 'data-series': k }));
      const vals = series[k].filter(v => v !== null), now = vals.length ? vals[vals.length - 1] : null;
      const sw = el('span', 'swatch');
      sw.style.borderColor = color;
      add(legend, add(el('span', 'item'), sw, el('span', '', k.replace('_', ' ') + ' ' + (now === null ? '—' : fmt(now)))));
    });
    return add(wrap, s, legend);
  }
  return renderFederation;
};
