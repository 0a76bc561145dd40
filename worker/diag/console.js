// vmcpd's console (worker/diag/console.c embeds this file): the page
// works without it; with it, the page refreshes from /status every
// two seconds.  Every text goes in as textContent, never as markup:
// names, descriptions and error texts are backends' and clients'.
'use strict';
(function () {
  const PERIOD = 2000;
  const DASH = '\u2013';
  const STATES = ['healthy', 'degraded', 'unhealthy', 'unauthenticated',
    'unknown', 'closed', 'open', 'half-open', 'disabled'];
  const SVG = 'http://www.w3.org/2000/svg';
  const H = 36;

  const cls = (s) => (STATES.includes(s) ? s : 'unknown');
  const num = (v, unit) => (typeof v !== 'number' ? DASH :
    (Number.isInteger(v) ? String(v) : v.toFixed(1)) + unit);
  const text = (s) => (typeof s === 'string' && s !== '' ? s : DASH);

  function set(root, k, value) {
    const el = root.querySelector(`[data-k="${k}"]`);
    if (el && el.textContent !== value)
      el.textContent = value;
    return el;
  }

  function state(cell, s) {
    const span = cell && cell.querySelector('span.st');
    if (!span)
      return;
    span.className = `st ${cls(s)}`;
    span.textContent = text(s);
  }

  // the chart as console_page.c's cp_chart() draws it
  function chart(cell, series) {
    const req = (series && series.requests) || [];
    const p99 = (series && series.p99Ms) || [];
    const n = req.length;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'chart');
    svg.setAttribute('width', '180');
    svg.setAttribute('height', String(H));
    svg.setAttribute('viewBox', `0 0 ${n || 1} ${H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `requests a second and p99 over the last ${n} s`);
    const maxr = Math.max(0, ...req.filter((v) => typeof v === 'number'));
    const maxp = Math.max(0, ...p99.filter((v) => typeof v === 'number'));
    const title = document.createElementNS(SVG, 'title');
    title.textContent = `peak ${maxr.toFixed(0)} requests/s, p99 up to ${maxp.toFixed(1)} ms`;
    svg.appendChild(title);
    req.forEach((v, i) => {
      if (!(v > 0) || !(maxr > 0))
        return;
      const h = v * (H - 2) / maxr;
      const r = document.createElementNS(SVG, 'rect');
      r.setAttribute('class', 'rq');
      r.setAttribute('x', String(i));
      r.setAttribute('y', (H - h).toFixed(1));
      r.setAttribute('width', '1');
      r.setAttribute('height', h.toFixed(1));
      svg.appendChild(r);
    });
    if (maxp > 0) {
      const pts = [];
      p99.forEach((v, i) => {
        if (typeof v === 'number')
          pts.push(`${i}.5,${(H - 1 - v * (H - 2) / maxp).toFixed(1)}`);
      });
      const l = document.createElementNS(SVG, 'polyline');
      l.setAttribute('class', 'p99');
      l.setAttribute('points', pts.join(' '));
      svg.appendChild(l);
    }
    cell.replaceChildren(svg);
  }

  function backend(row, b) {
    const lm = b.lastMinute || {};
    const ls = b.lists;
    row.className = `h-${cls(b.health)}`;
    set(row, 'transport', text(b.transport));
    set(row, 'mcpRevision', text(b.mcpRevision));
    state(row.querySelector('[data-k="health"]'), b.health);
    state(row.querySelector('[data-k="breaker"]'), b.breaker);
    set(row, 'p50', num(lm.p50Ms, ' ms'));
    set(row, 'p99', num(lm.p99Ms, ' ms'));
    set(row, 'errorRate', typeof lm.errorRate === 'number' ?
      `${(lm.errorRate * 100).toFixed(1)}%` : DASH);
    set(row, 'requests', num(lm.requests, ''));
    set(row, 'lists', ls ? `${num(ls.tools, '')} / ${num(ls.prompts, '')} / ${num(ls.resources, '')}` : DASH);
    set(row, 'lastError', text(b.lastError && b.lastError.message));
    const c = row.querySelector('[data-k="chart"]');
    if (c)
      chart(c, b.series);
  }

  function denials(list) {
    const body = document.querySelector('#denials tbody');
    if (!body)
      return;
    const rows = (list || []).map((d) => {
      const tr = document.createElement('tr');
      [text(d.at), num(d.status, ''), text(d.user), text(d.method),
        text(d.name), text(d.backend)].forEach((t) => {
        const td = document.createElement('td');
        td.textContent = t;
        tr.appendChild(td);
      });
      return tr;
    });
    if (rows.length > 0)
      body.replaceChildren(...rows);
  }

  let pinsSeen = null;

  function apply(st) {
    const gen = document.body.dataset.generation;
    const rows = document.querySelectorAll('#backends tbody tr');
    const bes = st.backends || [];
    // a reload or another set of pending changes: the server's page anew
    // (its forms carry what the script does not have)
    const pins = JSON.stringify(((st.pins && st.pins.changes) || [])
      .map((p) => [p.backend, p.kind, p.name, p.state]));
    if (String(st.generation) !== gen || rows.length !== bes.length ||
        (pinsSeen !== null && pins !== pinsSeen)) {
      location.reload();
      return;
    }
    pinsSeen = pins;
    bes.forEach((b, i) => backend(rows[i], b));
    set(document, 'now', text(st.now));
    set(document, 'sessions', num(st.sessions, ''));
    set(document, 'principals', num(st.principals, ''));
    set(document, 'workers', String((st.workers || []).length));
    if (st.pins)
      set(document, 'pins', num(st.pins.pending, ''));
    denials(st.denials);
  }

  async function tick() {
    const live = document.getElementById('live');
    try {
      const r = await fetch('/status', { cache: 'no-store', credentials: 'same-origin' });
      if (!r.ok)
        throw new Error(`status ${r.status}`);
      apply(await r.json());
      live.textContent = `live, every ${PERIOD / 1000} s`;
      live.className = '';
    } catch (e) {
      live.textContent = `not refreshed: ${e.message}`;
      live.className = 'stale';
    }
    setTimeout(tick, PERIOD);
  }

  tick();
}());
