// The sitebox dashboard: polls the box's snapshot and redraws each
// section. Every string from the snapshot goes in through textContent or
// an attribute, never markup, since file and user names come from
// clients.
'use strict';
(function () {
  const POLL_MS = 3000;
  const SVGNS = 'http://www.w3.org/2000/svg';
  const COLORS = ['#2563eb', '#0d9488', '#9333ea', '#ea580c', '#be123c', '#4d7c0f'];
  let last = null;

  // --- DOM helpers ---------------------------------------------------
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, ...kids) { kids.forEach(k => k && parent.appendChild(k)); return parent; }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function fill(id, ...kids) {
    const box = document.getElementById(id);
    box.replaceChildren();
    add(box, ...kids);
  }
  function empty(text) { return el('p', 'empty', text); }
  function table(headers, rows, numericFrom) {
    const t = el('table', 'tbl');
    if (headers) add(t, add(el('thead'), add(el('tr'), ...headers.map((h, i) => el('th', i >= numericFrom ? 'num' : '', h)))));
    const tb = el('tbody');
    rows.forEach(r => add(tb, add(el('tr'), ...r.map((c, i) => {
      if (c instanceof Node) return add(el('td', i >= numericFrom ? 'num' : ''), c);
      return el('td', i >= numericFrom ? 'num' : '', c);
    }))));
    return add(t, tb);
  }

  // --- formatting ------------------------------------------------------
  // Decimal units, as transfer rates are quoted in the field (MB/s).
  function fmtBytes(n) {
    const u = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
    let i = 0;
    n = Number(n) || 0;
    while (Math.abs(n) >= 1000 && i < u.length - 1) { n /= 1000; i++; }
    return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)) + ' ' + u[i];
  }
  function fmtRate(n) { return fmtBytes(n) + '/s'; }
  function fmtPct(x) { return (100 * x).toFixed(1) + ' %'; }
  function fmtAgo(s) {
    if (s < 1) return 'just now';
    if (s < 90) return Math.round(s) + ' s ago';
    if (s < 5400) return Math.round(s / 60) + ' min ago';
    return (s / 3600).toFixed(1) + ' h ago';
  }
  function fmtDuration(s) {
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    return d ? d + 'd ' + h + 'h' : h ? h + 'h ' + m + 'm' : m + 'm ' + Math.floor(s % 60) + 's';
  }
  function clock(ms) {
    const d = new Date(ms), p = v => String(v).padStart(2, '0');
    return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
  }
  function label(key) { return key.replace('/', ' '); } // "root/out" → "root out"

  // --- header ----------------------------------------------------------
  function renderHeader(b) {
    document.getElementById('box-name').textContent = b.name || '(unnamed box)';
    document.title = (b.name || 'sitebox') + ' · sitebox dashboard';
    document.getElementById('box-site').textContent = 'site ' + (b.site || '—');
    fill('box-roles', ...(b.roles.length ? b.roles : ['no roles']).map(r => el('span', 'role', r)));
    document.getElementById('box-version').textContent = 'version ' + b.version;
    const up = (Date.parse(b.now) - Date.parse(b.started)) / 1000;
    document.getElementById('box-uptime').textContent = 'up ' + fmtDuration(Math.max(0, up));
  }
  // renderProblems lists each failure (advertising, upstream, cache
  // disk) in red under the header, one line each, besides the status.
  function renderProblems(problems) {
    const box = document.getElementById('problems');
    box.hidden = !problems.length;
    box.replaceChildren(...problems.map(p => el('p', 'banner', p)));
  }
  function status(ok, text) {
    document.getElementById('status').className = 'status ' + (ok ? 'ok' : 'bad');
    document.getElementById('status-text').textContent = text;
  }

  // --- transfers -------------------------------------------------------
  function sumLast(series, dir) {
    let now = 0, peak = 0;
    const keys = Object.keys(series).filter(k => k.endsWith('/' + dir));
    const n = keys.length ? series[keys[0]].length : 0;
    for (let i = 0; i < n; i++) {
      const v = keys.reduce((s, k) => s + series[k][i], 0);
      peak = Math.max(peak, v);
      if (i === n - 1) now = v;
    }
    return { now, peak };
  }
  function tile(id, title, value, note) {
    const t = el('div', 'tile');
    t.id = id;
    return add(t, el('div', 'tile-title', title), el('div', 'tile-value', value), el('div', 'tile-note', note));
  }
  function renderTransfers(t) {
    const totals = t.totals || {};
    const moved = dir => Object.keys(totals).filter(k => k.endsWith('/' + dir)).reduce((s, k) => s + totals[k], 0);
    const r = t.rates, out = sumLast(r.series, 'out'), inn = sumLast(r.series, 'in');
    const totOut = moved('out'), totIn = moved('in');
    if (totOut + totIn === 0) {
      fill('transfers-body', empty('No transfers yet — nothing has been read from or written to this box since it started. ' +
        'The chart fills in as data moves (sampled every ' + r.interval_seconds + ' s).'));
      return;
    }
    const tiles = add(el('div', 'tiles'),
      tile('rate-out', 'Out now', fmtRate(out.now), 'peak ' + fmtRate(out.peak)),
      tile('rate-in', 'In now', fmtRate(inn.now), 'peak ' + fmtRate(inn.peak)),
      tile('moved-out', 'Sent to clients', fmtBytes(totOut), 'since start'),
      tile('moved-in', 'Received from clients', fmtBytes(totIn), 'since start'));
    const chart = r.times.length ? rateChart(r) :
      empty('Rates appear after the first ' + r.interval_seconds + ' s sample.');
    fill('transfers-body', tiles, chart);
  }
  function niceMax(v) {
    if (v <= 0) return 1000;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }
  // rateChart draws each "proto/dir" as steps — a rate holds over its
  // whole sampling interval — in one colour per protocol, out solid and
  // shaded, in dashed; with a time axis and a rate axis.
  function rateChart(r) {
    const wrap = el('div', 'chart');
    const W = Math.max(480, (document.getElementById('transfers-body').clientWidth || 900)), H = 236;
    const L = 76, R = 12, T = 10, B = 26, iv = r.interval_seconds * 1000;
    const times = r.times, keys = Object.keys(r.series).sort();
    const protos = [...new Set(keys.map(k => k.split('/')[0]))].sort();
    const color = k => COLORS[protos.indexOf(k.split('/')[0]) % COLORS.length];
    const t0 = times[0] - iv, t1 = times[times.length - 1];
    let max = 0;
    keys.forEach(k => r.series[k].forEach(v => { max = Math.max(max, v); }));
    const ymax = niceMax(max);
    const x = ms => L + (W - L - R) * (ms - t0) / Math.max(1, t1 - t0);
    const y = v => T + (H - T - B) * (1 - v / ymax);
    const s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'transfer rates over time' });
    for (let i = 0; i <= 4; i++) {
      const v = ymax * i / 4;
      s.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? 'gridline' : 'axis' }));
      s.appendChild(svg('text', { x: L - 8, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, fmtRate(v)));
    }
    const ticks = Math.min(5, times.length + 1);
    for (let i = 0; i < ticks; i++) {
      const ms = t0 + (t1 - t0) * i / (ticks - 1);
      s.appendChild(svg('text', { x: x(ms), y: H - 6, 'text-anchor': i === 0 ? 'start' : i === ticks - 1 ? 'end' : 'middle', class: 'tick' }, clock(ms)));
    }
    keys.forEach(k => {
      const vals = r.series[k], out = k.endsWith('/out');
      let d = 'M' + x(t0).toFixed(1) + ' ' + y(vals[0]).toFixed(1);
      vals.forEach((v, j) => { d += ' V' + y(v).toFixed(1) + ' H' + x(times[j]).toFixed(1); });
      if (out) {
        const area = svg('path', { d: d + ' V' + y(0) + ' H' + x(t0) + ' Z', fill: color(k), 'fill-opacity': 0.08, stroke: 'none' });
        s.appendChild(area);
      }
      const line = svg('path', { d, fill: 'none', stroke: color(k), 'stroke-width': 2, 'stroke-linejoin': 'round' });
      if (!out) line.setAttribute('stroke-dasharray', '6 4');
      s.appendChild(line);
    });
    const legend = el('div', 'legend');
    keys.forEach(k => {
      const sw = el('span', 'swatch' + (k.endsWith('/in') ? ' dashed' : ''));
      sw.style.borderColor = color(k);
      const vals = r.series[k];
      add(legend, add(el('span', 'item'), sw, el('span', '', label(k) + ' ' + fmtRate(vals[vals.length - 1]))));
    });
    add(legend, el('span', 'muted', 'a step per ' + r.interval_seconds + ' s; ' + Math.round(r.window_seconds / 60) + ' min kept'));
    return add(wrap, s, legend);
  }

  // --- who sees names ---------------------------------------------------
  // Anonymous visitors get no file names or user subjects. An operator's
  // token, kept in this tab's sessionStorage only, is sent as an
  // Authorization header; "#token=…" in the address (never sent to the
  // box) is taken into sessionStorage and removed from the address bar.
  const TOKEN_KEY = 'sitebox-dashboard-token';
  let refusal = ''; // why the last token sent showed no names
  function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
  function takeTokenFromAddress() {
    const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (!m) return;
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  function renderAccess(s) {
    const text = document.getElementById('access-text');
    text.replaceChildren();
    if (s.names_hidden) {
      add(text, el('span', '', 'File names and user names are hidden from anonymous visitors. ' +
        'An operator (listed as [[auth.operator]] in the box\'s configuration) sees them: ' +
        'paste an operator\'s token — it stays in this browser tab and is sent to this box only.'));
      if (refusal) add(text, el('span', 'refused', ' ' + refusal));
    } else {
      add(text, el('span', '', 'Names shown to operator ' + (s.operator || '') + '.'));
    }
    document.getElementById('access-form').hidden = !s.names_hidden;
    document.getElementById('access-forget').hidden = s.names_hidden;
  }
  function moved(t) { return Object.values(t.totals || {}).some(v => v > 0); }

  // --- top lists -------------------------------------------------------
  function renderTop(id, list, what, hidden) {
    if (hidden && !(list && list.length) && last && moved(last.transfers)) {
      fill(id, empty(what[0].toUpperCase() + what.slice(1) + ' names are hidden from anonymous visitors — an operator\'s token (above) shows them.'));
      return;
    }
    if (!list || !list.length) { fill(id, empty('No transfers yet — no ' + what + ' to rank.')); return; }
    const max = list[0].bytes || 1;
    const rows = list.map((e, i) => {
      const name = el('div', 'name', e.name);
      name.setAttribute('title', e.name);
      const bar = el('div', 'bar');
      bar.style.width = Math.max(2, 100 * e.bytes / max) + '%';
      return [String(i + 1), add(el('div', 'namecell'), name, add(el('div', 'bartrack'), bar)), fmtBytes(e.bytes)];
    });
    const t = table(['#', what, 'bytes'], rows, 2);
    t.classList.add('toptbl');
    fill(id, t);
  }

  // --- cache -----------------------------------------------------------
  function stacked(parts) {
    const total = parts.reduce((s, p) => s + p.v, 0) || 1;
    const bar = el('div', 'stack');
    const legend = el('div', 'legend small');
    parts.forEach(p => {
      const seg = el('div', 'seg ' + p.cls);
      seg.style.width = (100 * p.v / total) + '%';
      bar.appendChild(seg);
      add(legend, add(el('span', 'item'), el('span', 'swatch solid ' + p.cls), el('span', '', p.label + ' ' + p.text)));
    });
    return [bar, legend];
  }
  function renderCache(c) {
    if (!c) { fill('cache-body', empty('No cache on this box — it has no [cache] routes, so no remote data is kept here.')); return; }
    const ratio = el('div', 'big');
    ratio.id = 'cache-ratio';
    ratio.textContent = c.hit_ratio < 0 ? 'no reads yet' : fmtPct(c.hit_ratio);
    const head = add(el('div', 'ratio'), ratio, el('div', 'muted', 'hit ratio (bytes served from cache disk)'));
    const served = stacked([
      { cls: 'hit', v: c.hit_bytes, label: 'hit', text: fmtBytes(c.hit_bytes) },
      { cls: 'miss', v: c.miss_bytes, label: 'miss', text: fmtBytes(c.miss_bytes) },
      { cls: 'bypass', v: c.bypass_bytes, label: 'bypass', text: fmtBytes(c.bypass_bytes) }]);
    const other = Math.max(0, c.disk_total - c.disk_free - c.used_bytes);
    const disk = stacked([
      { cls: 'cached', v: c.used_bytes, label: 'cached', text: fmtBytes(c.used_bytes) },
      { cls: 'other', v: other, label: 'other use', text: fmtBytes(other) },
      { cls: 'free', v: c.disk_free, label: 'free', text: fmtBytes(c.disk_free) }]);
    const inodes = c.inodes_total ? fmtPct(1 - c.inodes_free / c.inodes_total) + ' of ' + c.inodes_total.toLocaleString('en') : 'n/a';
    const facts = table(null, [
      ['files cached', String(c.files) + (c.open_files ? ' (' + c.open_files + ' open)' : '')],
      ['read from upstreams', fmtBytes(c.upstream_bytes)],
      ['RAM for block buffers', fmtBytes(c.ram_in_use) + ' of ' + fmtBytes(c.ram_limit)],
      ['inodes used', inodes]], 1);
    facts.classList.add('facts');
    const kids = [head, el('h3', '', 'Bytes served'), ...served,
      el('h3', '', 'Cache disk (' + fmtBytes(c.disk_total) + ')'), ...disk, facts];
    if (c.disk_error) kids.unshift(el('p', 'banner', 'Cache disk failing, serving uncached: ' + c.disk_error));
    fill('cache-body', ...kids);
  }

  // --- federation (federation.js) ------------------------------------
  const renderFederation = window.siteboxFederation({ el, add, svg, fill, empty, fmtBytes, fmtPct, fmtAgo, clock, niceMax, COLORS });

  // --- jobs ------------------------------------------------------------
  const STATES = ['idle', 'routed', 'staging', 'running', 'completed', 'failed', 'cancelled', 'lost'];
  function renderJobs(j) {
    if (!j) { fill('jobs-body', empty('No jobs on this box — the job router is not enabled here.')); return; }
    const domains = Object.keys(j.counts).sort();
    const kids = [];
    if (!domains.length) kids.push(empty('No jobs yet — none submitted since the job database was created.'));
    else {
      const seen = STATES.filter(st => domains.some(d => j.counts[d][st]));
      const rows = domains.map(d => [d === 'none' ? 'not placed yet' : d, ...seen.map(st => String(j.counts[d][st] || 0)),
        String(seen.reduce((s, st) => s + (j.counts[d][st] || 0), 0))]);
      kids.push(el('h3', '', 'By domain and state'), table(['domain', ...seen, 'total'], rows, 1));
    }
    const rep = j.report;
    kids.push(el('h3', '', 'Utilization, last 24 h on ' + rep.cores + (rep.cores === 1 ? ' local core' : ' local cores')));
    if (!rep.rows || !rep.rows.length) kids.push(empty('No jobs ended in the last 24 h.'));
    else {
      const u = (row, v) => row.local ? fmtPct(v) : '—';
      kids.push(table(['class', 'jobs', 'failed', 'CPU h', 'core wall h', 'CPU eff', 'wall util', 'CPU util'],
        rep.rows.map(r => [r.class, String(r.jobs), String(r.failed), r.cpu_hours.toFixed(2), r.core_wall_hours.toFixed(2),
          fmtPct(r.cpu_efficiency), u(r, r.wall_utilization), u(r, r.cpu_utilization)]), 1));
    }
    fill('jobs-body', ...kids);
  }

  // --- polling ---------------------------------------------------------
  function render(s) {
    renderHeader(s.box);
    renderAccess(s);
    renderTransfers(s.transfers);
    renderTop('top-files-body', s.transfers.top_files, 'file', s.names_hidden);
    renderTop('top-users-body', s.transfers.top_users, 'user', s.names_hidden);
    renderTop('top-vos-body', s.transfers.top_vos, 'VO');
    renderCache(s.cache);
    renderFederation(s.federation, s.box);
    renderJobs(s.jobs);
  }
  // fetchSnapshot asks with the operator token, if any; a refused token
  // is forgotten (its reason shown) and the snapshot asked for again
  // without it. A valid token that is no operator's gets the anonymous
  // view with the reason: it is forgotten too, as it shows nothing more.
  async function fetchSnapshot() {
    const tok = token();
    const resp = await fetch('api/snapshot', { cache: 'no-store', headers: tok ? { Authorization: 'Bearer ' + tok } : {} });
    if (tok && resp.status === 401) {
      const body = await resp.json().catch(() => ({}));
      refusal = 'Token refused: ' + (body.error || (resp.status + ' ' + resp.statusText));
      sessionStorage.removeItem(TOKEN_KEY);
      return fetchSnapshot();
    }
    if (!resp.ok) throw new Error(resp.status + ' ' + resp.statusText);
    const snap = await resp.json();
    if (tok && snap.names_hidden_why) {
      refusal = 'The token shows no names: ' + snap.names_hidden_why;
      sessionStorage.removeItem(TOKEN_KEY);
    }
    return snap;
  }
  async function update() {
    try {
      last = await fetchSnapshot();
      render(last);
      const problems = (last.box && last.box.problems) || [];
      renderProblems(problems);
      // The status stays short; each failure is listed in full below.
      if (problems.length) status(false, 'failing: ' + problems.length + (problems.length === 1 ? ' problem' : ' problems') + ' below · updated ' + clock(Date.now()));
      else status(true, 'live · updated ' + clock(Date.now()));
    } catch (e) {
      status(false, 'cannot reach the box (' + e.message + ') — retrying');
    }
  }
  async function poll() {
    await update();
    setTimeout(poll, POLL_MS);
  }
  document.getElementById('access-show').addEventListener('click', () => {
    const input = document.getElementById('access-token');
    const tok = input.value.trim().replace(/^Bearer\s+/i, '');
    input.value = '';
    if (!tok) return;
    sessionStorage.setItem(TOKEN_KEY, tok);
    refusal = '';
    update();
  });
  document.getElementById('access-forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    refusal = '';
    update();
  });
  takeTokenFromAddress();
  window.addEventListener('resize', () => { if (last) renderTransfers(last.transfers); });
  poll();
})();
