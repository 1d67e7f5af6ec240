// app.js - the llmstep planner page: reads the form, asks the server's JSON API (llmstep web,
// docs/web.md), draws what it answers. Every number shown comes from the API, which computes it
// with the llmstep library; the exact value is kept in each cell's data-value so a test can
// compare it with the CLI's output for the command shown above the view.
'use strict';

const $ = (id) => document.getElementById(id);
let catalog = null;
const plots = {};

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2',
  '#17becf', '#7f7f7f', '#bcbd22'];

// ---- formatting (display only; data-value keeps the exact number) ----
function fmt(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  switch (unit) {
    case 'ms': return (v * 1e3).toFixed(v * 1e3 < 10 ? 3 : 1) + ' ms';
    case 'us': return (v * 1e6).toFixed(2) + ' us';
    case 'GB': return (v / 1e9).toFixed(2) + ' GB';
    case 'pct': return (v * 100).toFixed(1) + ' %';
    case 'usd': return '$' + v.toFixed(3);
    case 'tok': return Math.round(v).toLocaleString('en-US');
    case 'rate': return v.toFixed(2);
    case 'tflops': return (v / 1e12).toFixed(2);
    default: return String(v);
  }
}

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function cell(tr, value, unit, key) {
  const td = el('td', {}, fmt(value, unit));
  if (key) td.dataset.key = key;
  td.dataset.value = value === null || value === undefined ? '' : String(value);
  tr.appendChild(td);
  return td;
}

function textCell(tr, text, key) {
  const td = el('td', { class: 'text' }, text);
  if (key) td.dataset.key = key;
  td.dataset.value = text;
  tr.appendChild(td);
}

function header(table, names) {
  table.replaceChildren();
  const tr = el('tr');
  names.forEach((n, i) => tr.appendChild(el('th', i < 2 ? { class: 'text' } : {}, n)));
  table.appendChild(tr);
}

// ---- the form ----
function selectedHws() {
  return catalog.hws.filter((h) => $('hw-' + h.id).checked).map((h) => h.id);
}

function tps() {
  return [...document.querySelectorAll('.tp')].filter((c) => c.checked).map((c) => +c.value);
}

function num(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

function deployFields() {
  const q = {};
  const cfg = $('config').value.trim();
  if ($('paste').open && cfg !== '') q.config_json = $('config').value;
  else q.model = $('model').value;
  if ($('engine').value) q.engine = $('engine').value;
  q.calibration = $('calibration').value;
  if ($('dtype').value !== 'auto') q.dtype = $('dtype').value;
  if ($('kv-dtype').value !== 'auto') q.kv_dtype = $('kv-dtype').value;
  const mml = num('max-model-len');
  if (mml) q.max_model_len = mml;
  return q;
}

// A trace the user picked (JSONL: arrival_s, prompt_tokens, output_tokens a line), as text.
let traceText = null;

function servingFields(best) {
  const q = deployFields();
  const hws = selectedHws();
  q.hws = hws;
  q.tps = tps();
  // The SLOs, prices and demand: a sweep and a trace take them alike.
  const ttft = num('slo-ttft');
  const tpot = num('slo-tpot');
  if (ttft) q.slo_ttft_ms = ttft;
  if (tpot) q.slo_tpot_ms = tpot;
  q.slo_percentile = +$('slo-pct').value;
  const prices = hws.map((h) => num('price-' + h));
  if (prices.every((p) => p !== undefined && p > 0)) q.gpu_hour_usd = prices;
  const demand = num('demand');
  if (demand) q.demand_requests_per_s = demand;
  if (traceText !== null && !best) {
    // The trace gives the arrivals and lengths: one run per layout.
    q.trace_jsonl = traceText;
    return q;
  }
  q.arrival = $('arrival').value;
  q.loads = $('loads').value.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  q.prompt_tokens = num('prompt');
  q.output_tokens = num('output');
  const rr = num('range-ratio');
  if (rr !== undefined) q.range_ratio = rr;
  const nr = num('num-requests');
  if (nr) q.num_requests = nr;
  q.best = best;
  return q;
}

// ---- talking to the server ----
function showError(msg) {
  const e = $('error');
  if (msg) {
    e.textContent = msg;
    e.hidden = false;
  } else {
    e.textContent = '';
    e.hidden = true;
  }
}

async function ask(path, body) {
  showError('');
  $('busy').textContent = 'computing...';
  document.body.dataset.state = 'busy';
  try {
    const r = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const j = await r.json();
    if (!r.ok) {
      showError(j.error || ('HTTP ' + r.status));
      return null;
    }
    return j;
  } catch (err) {
    showError('the server did not answer: ' + err);
    return null;
  } finally {
    $('busy').textContent = '';
    document.body.dataset.state = 'idle';
  }
}

function showSection(name, cli) {
  $('sec-' + name).hidden = false;
  $('cli-' + name).textContent = cli;
  document.body.dataset.done = name;
}

// ---- 1. capacity ----
async function runCapacity() {
  const q = deployFields();
  q.hws = selectedHws();
  q.tps = tps();
  q.prompt_tokens = num('prompt');
  q.output_tokens = num('output');
  const j = await ask('/api/capacity', q);
  if (!j) return;
  const t = $('out-capacity');
  header(t, ['GPU', 'TP', 'weights', 'KV dtype', 'starts', 'device', 'usable', 'weights/GPU',
    'activations', 'reserve', 'KV budget', 'KV tokens', 'max seqs at prompt+output']);
  const bars = $('mem-bars');
  bars.replaceChildren();
  const legend = el('div', { class: 'legend' });
  [['weights', '#1f77b4'], ['activations', '#ff7f0e'], ['reserve', '#7f7f7f'], ['KV cache', '#2ca02c']]
    .forEach(([n, c]) => {
      const s = el('span');
      const i = el('i');
      i.style.background = c;
      s.append(i, n);
      legend.appendChild(s);
    });
  bars.appendChild(legend);
  for (const r of j.results) {
    const tr = el('tr');
    tr.dataset.hw = r.hw;
    tr.dataset.tp = r.tp;
    textCell(tr, r.hw, 'hw');
    cell(tr, r.tp, '', 'tp');
    if (r.error) {
      tr.className = 'no';
      const td = el('td', { class: 'text', colspan: 11 }, r.error);
      td.dataset.key = 'error';
      tr.appendChild(td);
      t.appendChild(tr);
      continue;
    }
    textCell(tr, r.weights, 'weights');
    textCell(tr, r.kv_dtype, 'kv_dtype');
    textCell(tr, r.fits ? 'yes' : 'no', 'fits');
    cell(tr, r.capacity_bytes_per_gpu, 'GB', 'capacity_bytes_per_gpu');
    cell(tr, r.usable_bytes_per_gpu, 'GB', 'usable_bytes_per_gpu');
    cell(tr, r.weights_bytes_per_gpu, 'GB', 'weights_bytes_per_gpu');
    cell(tr, r.activation_bytes_per_gpu, 'GB', 'activation_bytes_per_gpu');
    cell(tr, r.reserve_bytes_per_gpu, 'GB', 'reserve_bytes_per_gpu');
    cell(tr, r.kv_budget_bytes_per_gpu, 'GB', 'kv_budget_bytes_per_gpu');
    cell(tr, r.kv_capacity_tokens, 'tok', 'kv_capacity_tokens');
    cell(tr, r.max_seqs_at_context, 'tok', 'max_seqs_at_context');
    if (!r.fits) tr.className = 'no';
    t.appendChild(tr);
    // the memory of one GPU as a bar
    const row = el('div', { class: 'memrow' });
    row.appendChild(el('span', {}, r.hw + ' TP ' + r.tp));
    const bar = el('div', { class: 'bar' });
    const total = r.usable_bytes_per_gpu;
    [[r.weights_bytes_per_gpu, '#1f77b4'], [r.activation_bytes_per_gpu, '#ff7f0e'],
      [r.reserve_bytes_per_gpu, '#7f7f7f'], [Math.max(r.kv_budget_bytes_per_gpu, 0), '#2ca02c']]
      .forEach(([b, c]) => {
        const d = el('div');
        d.style.width = Math.max(0, Math.min(100, 100 * b / total)) + '%';
        d.style.background = c;
        d.title = fmt(b, 'GB');
        bar.appendChild(d);
      });
    row.appendChild(bar);
    bars.appendChild(row);
  }
  showSection('capacity', j.results.map((r) => r.cli).join('\n'));
}

// ---- 2. serving curves ----
function layoutKey(r) { return r.hw + ' TP ' + r.tp; }

function drawCurves(target, title, rows, metric, unitLabel, loadKey, loadLabel) {
  if (plots[target]) plots[target].destroy();
  const loads = [...new Set(rows.map((r) => r[loadKey]))].filter((x) => x !== null).sort((a, b) => a - b);
  const layouts = [...new Set(rows.map(layoutKey))];
  const series = [{ label: loadLabel }];
  const data = [loads];
  layouts.forEach((lk, i) => {
    for (const pct of ['p50', 'p90']) {
      const ys = loads.map((x) => {
        const r = rows.find((rr) => layoutKey(rr) === lk && rr[loadKey] === x);
        const v = r && r.status === 'ok' && r[metric] ? r[metric][pct] : null;
        return v === null || v === undefined ? null : v * 1e3;
      });
      data.push(ys);
      series.push({
        label: lk + ' ' + pct,
        stroke: COLORS[i % COLORS.length],
        dash: pct === 'p90' ? [6, 4] : undefined,
        width: 2,
        points: { show: true },
        spanGaps: false,
      });
    }
  });
  const width = Math.min(900, document.body.clientWidth - 80);
  plots[target] = new uPlot({
    title: title,
    width: width,
    height: 300,
    scales: { x: { time: false, distr: 3, log: 2 }, y: { distr: 3 } },
    axes: [{ label: loadLabel }, { label: unitLabel, size: 70 }],
    series: series,
  }, data, $(target));
}

function servingTable(table, rows, loadKey, best) {
  const loadName = { concurrency: 'clients', request_rate_per_s: 'req/s', trace: 'load' }[loadKey];
  header(table, ['GPU', 'TP', 'GPUs', best ? 'load' : loadName,
    'status', 'TTFT p50', 'TTFT p90', 'TPOT p50', 'TPOT p90', 'req/s', 'tok/s/GPU',
    'USD per M tokens', 'meets SLOs', 'replicas', 'GPUs for the demand']);
  for (const r of rows) {
    const tr = el('tr');
    tr.dataset.hw = r.hw;
    tr.dataset.tp = r.tp === undefined ? '' : r.tp;
    tr.dataset.load = r[loadKey] === undefined ? '' : r[loadKey];
    textCell(tr, r.hw, 'hw');
    if (r.status === 'none_meets_slo') {
      tr.className = 'no';
      const td = el('td', { class: 'text', colspan: 14 }, 'no layout meets the SLOs at these loads');
      td.dataset.key = 'status';
      td.dataset.value = r.status;
      tr.appendChild(td);
      table.appendChild(tr);
      continue;
    }
    cell(tr, r.tp, '', 'tp');
    cell(tr, r.gpus, '', 'gpus');
    if (loadKey === 'trace') textCell(tr, 'trace', 'load');
    else cell(tr, r[loadKey], loadKey === 'concurrency' ? '' : 'rate', loadKey);
    if (r.status === 'error') {
      tr.className = 'no';
      const td = el('td', { class: 'text', colspan: 11 }, r.error);
      td.dataset.key = 'error';
      tr.appendChild(td);
      table.appendChild(tr);
      continue;
    }
    textCell(tr, r.status, 'status');
    const ok = r.status === 'ok';
    cell(tr, ok ? r.ttft_s.p50 : null, 'ms', 'ttft_s.p50');
    cell(tr, ok ? r.ttft_s.p90 : null, 'ms', 'ttft_s.p90');
    cell(tr, ok ? r.tpot_s.p50 : null, 'ms', 'tpot_s.p50');
    cell(tr, ok ? r.tpot_s.p90 : null, 'ms', 'tpot_s.p90');
    cell(tr, ok ? r.requests_per_s : null, 'rate', 'requests_per_s');
    cell(tr, ok ? r.output_tokens_per_s_per_gpu : null, 'rate', 'output_tokens_per_s_per_gpu');
    cell(tr, ok ? r.cost_per_mtok_usd : null, 'usd', 'cost_per_mtok_usd');
    textCell(tr, ok ? (r.meets_slo ? 'yes' : 'no') : '-', 'meets_slo');
    cell(tr, r.replicas_for_demand, 'tok', 'replicas_for_demand');
    cell(tr, r.gpus_for_demand, 'tok', 'gpus_for_demand');
    if (!ok) tr.className = 'no';
    else if (best) tr.className = 'best';
    table.appendChild(tr);
  }
}

async function runServing() {
  const q = servingFields(false);
  const j = await ask('/api/serving', q);
  if (!j) return;
  if (q.trace_jsonl !== undefined) {
    showSection('serving', j.cli);
    for (const id of ['plot-ttft', 'plot-tpot']) {
      if (plots[id]) { plots[id].destroy(); delete plots[id]; }
      $(id).textContent = id === 'plot-ttft' ? 'The trace fixes the load: one run per layout (no curve).' : '';
    }
    servingTable($('out-serving'), j.rows, 'trace', false);
    return;
  }
  $('plot-ttft').textContent = '';
  $('plot-tpot').textContent = '';
  const loadKey = q.arrival === 'closed' ? 'concurrency' : 'request_rate_per_s';
  const loadLabel = q.arrival === 'closed' ? 'concurrent clients' : 'requests/s';
  showSection('serving', j.cli);
  drawCurves('plot-ttft', 'TTFT (solid p50, dashed p90)', j.rows, 'ttft_s', 'TTFT (ms)', loadKey, loadLabel);
  drawCurves('plot-tpot', 'TPOT (solid p50, dashed p90)', j.rows, 'tpot_s', 'TPOT (ms)', loadKey, loadLabel);
  servingTable($('out-serving'), j.rows, loadKey, false);
}

// ---- 3. best layout ----
async function runBest() {
  const q = servingFields(true);
  const j = await ask('/api/serving', q);
  if (!j) return;
  const loadKey = q.arrival === 'closed' ? 'concurrency' : 'request_rate_per_s';
  showSection('best', j.cli);
  servingTable($('out-best'), j.rows, loadKey, true);
}

// ---- 4. the step on the roofline ----
async function runStep() {
  const q = deployFields();
  q.hw = $('step-hw').value;
  q.tp = +$('step-tp').value;
  q.phase = $('step-phase').value;
  q.batch = num('step-batch');
  q.tokens = num('step-tokens');
  const j = await ask('/api/step', q);
  if (!j) return;
  showSection('step', j.cli);
  const t = $('out-step');
  header(t, ['operator', 'bound', 'time', 'GFLOP', 'HBM MB', 'FLOP/B', 'TFLOP/s']);
  const pts = [];
  for (const o of j.ops) {
    const tr = el('tr');
    tr.dataset.op = o.name;
    textCell(tr, o.name, 'name');
    textCell(tr, o.bound, 'bound');
    cell(tr, o.time_s, 'us', 'time_s');
    const tdF = cell(tr, o.flops_per_gpu, '', 'flops_per_gpu');
    tdF.textContent = (o.flops_per_gpu / 1e9).toFixed(3);
    const tdB = cell(tr, o.hbm_bytes_per_gpu, '', 'hbm_bytes_per_gpu');
    tdB.textContent = (o.hbm_bytes_per_gpu / 1e6).toFixed(3);
    const ai = o.hbm_bytes_per_gpu > 0 ? o.flops_per_gpu / o.hbm_bytes_per_gpu : null;
    const rate = o.time_s > 0 ? o.flops_per_gpu / o.time_s : null;
    tr.appendChild(el('td', {}, ai === null ? '-' : ai.toFixed(2)));
    tr.appendChild(el('td', {}, rate === null ? '-' : (rate / 1e12).toFixed(2)));
    t.appendChild(tr);
    if (ai > 0 && rate > 0 && (o.bound === 'compute' || o.bound === 'memory')) pts.push({ name: o.name, ai, rate, bound: o.bound });
  }
  const tr = el('tr');
  tr.dataset.op = 'step';
  textCell(tr, 'step (alpha x roofline + beta, with host time)', 'name');
  textCell(tr, j.bound, 'bound');
  cell(tr, j.step_time_s, 'us', 'step_time_s');
  t.appendChild(tr);
  drawRoofline(j.roofs, pts);
}

function drawRoofline(roofs, pts) {
  if (plots.roof) plots.roof.destroy();
  const bw = roofs.hbm_achievable_bytes_per_s;
  const c16 = roofs.bf16_achievable_flops_per_s;
  const top = roofs.fp8_achievable_flops_per_s || c16;
  const lo = Math.min(0.1, ...pts.map((p) => p.ai / 2));
  const hi = Math.max(top / bw * 4, ...pts.map((p) => p.ai * 2));
  const xs = new Set();
  for (let x = lo; x <= hi * 1.0001; x *= 1.25) xs.add(x);
  xs.add(roofs.ridge_bf16_flops_per_byte);
  pts.forEach((p) => xs.add(p.ai));
  const X = [...xs].sort((a, b) => a - b);
  const data = [X,
    X.map((x) => Math.min(c16, x * bw) / 1e12),
    X.map((x) => x * roofs.hbm_peak_bytes_per_s / 1e12 <= roofs.bf16_peak_flops_per_s / 1e12 ? x * roofs.hbm_peak_bytes_per_s / 1e12 : null),
  ];
  const series = [{ label: 'FLOP/byte' },
    { label: 'bf16 achievable roof', stroke: '#ff7f0e', width: 2.5, points: { show: false } },
    { label: 'HBM datasheet peak', stroke: '#555', dash: [4, 4], width: 1.5, points: { show: false } }];
  if (roofs.fp8_achievable_flops_per_s) {
    data.push(X.map((x) => Math.min(roofs.fp8_achievable_flops_per_s, x * bw) / 1e12));
    series.push({ label: 'fp8 achievable roof', stroke: '#9467bd', width: 2, points: { show: false } });
  }
  for (const b of ['memory', 'compute']) {
    data.push(X.map((x) => {
      const p = pts.find((pp) => pp.ai === x && pp.bound === b);
      return p ? p.rate / 1e12 : null;
    }));
    series.push({ label: 'operators, ' + b + '-bound', stroke: b === 'memory' ? '#2ca02c' : '#d62728',
      paths: () => null, points: { show: true, size: 9, fill: b === 'memory' ? '#2ca02c' : '#d62728' } });
  }
  const width = Math.min(900, document.body.clientWidth - 80);
  plots.roof = new uPlot({
    title: 'Roofline: operators of the step (TFLOP/s achieved against FLOP per HBM byte)',
    width: width,
    height: 360,
    scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
    axes: [{ label: 'arithmetic intensity (FLOP/byte)' }, { label: 'TFLOP/s', size: 60 }],
    series: series,
  }, data, $('plot-roofline'));
}

// ---- start ----
async function init() {
  const r = await fetch('/api/catalog');
  catalog = await r.json();
  $('version').textContent = 'llmstep ' + catalog.version;
  for (const m of catalog.models) {
    const o = el('option', { value: m.id }, m.id + ' (' + (m.params / 1e9).toFixed(1) + 'B)');
    if (m.id === 'llama-3.1-8b') o.selected = true;
    $('model').appendChild(o);
  }
  for (const h of catalog.hws) {
    const d = el('div');
    const l = el('label');
    const c = el('input', { type: 'checkbox', id: 'hw-' + h.id });
    c.checked = h.id === 'h100-sxm';
    l.append(c, ' ' + h.id);
    const p = el('input', { type: 'number', id: 'price-' + h.id, min: '0', step: '0.01', placeholder: 'USD/h' });
    d.append(l, p);
    $('hw-list').appendChild(d);
    $('step-hw').appendChild(el('option', { value: h.id }, h.id));
  }
  $('step-hw').value = 'h100-sxm';
  for (const e of catalog.engines) $('engine').appendChild(el('option', { value: e }, e));
  for (const c of catalog.calibrations) $('calibration').appendChild(el('option', { value: c.id }, c.id + ' (' + c.hw + ')'));
  $('btn-capacity').onclick = runCapacity;
  $('btn-serving').onclick = runServing;
  $('btn-best').onclick = runBest;
  $('btn-step').onclick = runStep;
  $('trace-file').onchange = async () => {
    const f = $('trace-file').files[0];
    if (!f) return;
    if (f.size > catalog.limits.max_body_bytes) {
      showError('the trace is ' + f.size + ' bytes; the server takes requests up to ' + catalog.limits.max_body_bytes);
      return;
    }
    traceText = await f.text();
    $('trace-info').textContent = f.name + ': serving replays it (no load axis); the command lines name it trace.jsonl';
    $('trace-clear').hidden = false;
  };
  $('trace-clear').onclick = () => {
    traceText = null;
    $('trace-file').value = '';
    $('trace-info').textContent = '';
    $('trace-clear').hidden = true;
  };
  for (const b of document.querySelectorAll('.copy')) {
    b.onclick = () => {
      const text = $(b.dataset.for).textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
      b.textContent = 'copied';
      setTimeout(() => { b.textContent = 'copy the CLI command'; }, 1500);
    };
  }
  document.body.dataset.state = 'idle';
}

init().catch((e) => showError('cannot load the catalog: ' + e));
