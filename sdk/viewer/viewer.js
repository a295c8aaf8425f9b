// viewer.js — the polis viewer page: opens a recording (file picker, drag and drop, ?file=URL),
// plays it, and shows the map, the agents, the social graph, events, messages and returns.
// window.polisViewer is the hook the browser tests read (tests/browser/).
import { readRecording, sceneAt, facingName, started, hiddenFrom } from './recording.js';
import { agentColor, setPalette, cellSize, viewport, drawMap, drawGraph, drawCurves, drawKind, EMPTY_COLOR } from './draw.js';
import { startPlay } from './play.js';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

const st = {
    rec: null, ep: null, scene: null, tick: 0, playing: false, timer: null,
    focus: null, seat: null, seatName: null, seatHides: false, selected: 0, placed: [], cell: 0, vp: null, status: 'empty', events: [], social: null,
};

// ---- loading -----------------------------------------------------------------------------

function setBanner(kind, text) {
    const b = $('banner');
    b.className = kind || '';
    b.textContent = text || '';
    b.hidden = !text;
}

async function openStream(stream, name, live) {
    pause();
    st.status = 'loading';
    st.rec = null;
    st.ep = null;
    setBanner('', '');
    $('title').textContent = `reading ${name}…`;
    let rec;
    let pending = null;
    try {
        rec = await readRecording(stream, name, (bytes, lines, r) => {
            if (!live) {
                $('title').textContent = `reading ${name}… ${lines} lines`;
                return;
            }
            // Following a recording being written: show it from its first keyframe on,
            // then keep up with it.
            if (!st.rec && r.header && r.episodes.length && started(r.episodes[0])) {
                r.refresh();
                st.rec = r;
                st.status = 'live';
                setBanner('live', `Live: following ${name} as it is written`);
                setupRecording();
                // a live page starts at the newest tick of the newest episode
                const newest = r.episodes.length - 1;
                if (newest > 0 && started(r.episodes[newest])) selectEpisode(newest);
                seek(st.ep.lastTick);
            } else if (st.rec === r && !pending) {
                // at most one update every 150 ms, and always one after the last chunk
                pending = setTimeout(() => {
                    pending = null;
                    if (st.rec === r) liveUpdate();
                }, 150);
            }
        }, { join: live });
    } catch (e) {
        fail(`${name}: ${e.message || e}`);
        return;
    }
    const wasLive = st.rec === rec;
    st.rec = rec;
    if (rec.error) setBanner('error', `${name}: ${rec.error}` + (rec.episodes.length ? ' — showing the lines before it' : ''));
    else if (rec.truncated) setBanner('truncated', `Truncated recording: ${rec.truncated.why} (the file ends at line ${rec.truncated.line}) — showing what is there`);
    if (!rec.header || rec.episodes.length === 0 || !started(rec.episodes[0])) {
        $('title').textContent = name;
        st.status = rec.error ? 'error' : 'truncated';
        if (!rec.error && !rec.truncated) setBanner('error', `${name}: no episode to show`);
        return;
    }
    st.status = rec.error ? 'error' : rec.truncated ? 'truncated' : 'ok';
    if (wasLive) liveUpdate();
    else setupRecording();
}

// A recording without social nodes or edges has its empty graph folded away; one that gets
// some later (followed live) unfolds it once.
function noteSocial() {
    if (st.social) return;
    const social = st.rec.episodes.some((e) => [...e.keys.values()].some((k) => (k.nodes || []).length || (k.edges || []).length) ||
                                               e.steps.some((s) => s.nodes || s.edges));
    if (social === st.social) return;
    st.social = social;
    $('socialbox').open = social;
    $('socialnote').textContent = social ? '' : ' (none recorded)';
}

// New lines arrived (--follow): more episodes, a longer scrub range, the new events; a page
// at the last tick moves on to the new last tick.
function liveUpdate() {
    const { rec } = st;
    rec.refresh();
    const eps = $('episode');
    if (eps.options.length !== rec.episodes.length) {
        const cur = st.ep ? st.ep.index : 0;
        eps.innerHTML = rec.episodes.map((e) => `<option value="${e.index}">episode ${e.number}</option>`).join('');
        eps.value = String(cur);
    }
    if (!st.ep) return;
    // a live page that watched an episode to its end moves on to the next one (`polis serve
    // --http` plays episode after episode)
    // (it follows the new one to its last tick however much of it arrived at once)
    const next = rec.episodes[st.ep.index + 1];
    const moved = st.status === 'live' && st.ep.end && next && started(next) && !st.playing
        && st.tick >= st.ep.lastTick;
    if (moved) selectEpisode(next.index);
    const atEnd = moved || st.tick >= Number($('scrub').max);
    $('scrub').max = st.ep.lastTick;
    collectEvents(st.ep);
    noteSocial();
    if (st.status === 'live') {
        const last = rec.episodes[rec.episodes.length - 1];
        if (last.end) setBanner('live', `Live: following ${rec.name} — episode ${last.number} ended at tick ${last.lastTick}`);
    }
    if (atEnd && !st.playing) seek(st.ep.lastTick);
    else render();
}

// A stream of the bytes the server sends over the "polis-follow" WebSocket (polis view
// --follow): the recording from its start, then whatever is appended to it.
function followStream(url) {
    return new ReadableStream({
        start(controller) {
            const ws = new WebSocket(url, 'polis-follow');
            ws.binaryType = 'arraybuffer';
            ws.onmessage = (ev) => controller.enqueue(new Uint8Array(ev.data));
            ws.onclose = () => { try { controller.close(); } catch (_) { /* closed already */ } };
            ws.onerror = () => { try { controller.error(new Error('the WebSocket failed')); } catch (_) { /* closed already */ } };
        },
    });
}

function fail(text) {
    st.status = 'error';
    setBanner('error', text);
    $('title').textContent = 'no recording';
}

async function openURL(url) {
    let resp;
    try {
        resp = await fetch(url);
    } catch (e) {
        fail(`${url}: cannot fetch (${e.message})`);
        return;
    }
    if (!resp.ok) {
        fail(`${url}: HTTP ${resp.status} ${resp.statusText}`);
        return;
    }
    const name = decodeURIComponent(url.split('?')[0].split('/').pop() || url);
    await openStream(resp.body, name);
}

function setupRecording() {
    const { rec } = st;
    const h = rec.header;
    $('title').textContent = `${rec.name} — ${h.scenario_path || h.name || (h.scenario && h.scenario.name) || 'scenario'}, seed ${h.seed}, ${h.agents.length} agents, ${rec.episodes.length} episode(s)`;
    const eps = $('episode');
    eps.innerHTML = rec.episodes.map((e) => `<option value="${e.index}">episode ${e.number}${e.end ? '' : ' (truncated)'}</option>`).join('');
    const vo = $('viewof');
    vo.innerHTML = '<option value="">whole map</option>' +
        (h.view ? h.agents.map((a, i) => `<option value="${i}">${esc(a)}'s view</option>`).join('') : '');
    vo.disabled = !h.view;
    if (st.seat !== null) {
        vo.value = String(st.seat);
        vo.disabled = true;
    }
    setPalette(h);
    const legend = h.kinds.map((k, i) => `<span title="${esc(k.shape || 'square')}${k.plugin ? ', from ' + esc(k.plugin) : ''}"><canvas class="swatch" data-kind="${i}" width="14" height="14"></canvas>${esc(k.glyph || '')} ${esc(k.name)}</span>`);
    h.agents.forEach((a, i) => legend.push(`<span data-agent="${i}"><i style="background:${agentColor(i)};border-radius:50%"></i>${esc(a)}</span>`));
    if (h.map.width === 0 || h.map.height === 0) {
        legend.unshift('<div class="stat">no map: the game registered no looks (docs/recording.md); agents, events and the social graph are shown</div>');
    }
    $('legend').innerHTML = legend.join('');
    for (const cv of $('legend').querySelectorAll('canvas.swatch')) {
        // each kind as the map draws it, on an empty cell
        const ctx = cv.getContext('2d');
        ctx.fillStyle = EMPTY_COLOR;
        ctx.fillRect(0, 0, 14, 14);
        drawKind(ctx, h.kinds[Number(cv.dataset.kind)], 0, 0, 14, false);
    }
    $('evagent').innerHTML = '<option value="">all agents</option>' + h.agents.map((a, i) => `<option value="${i}">${esc(a)}</option>`).join('');
    const meta = {
        scenario_path: h.scenario_path, scenario_hash: h.scenario_hash, seed: h.seed, polis: h.polis,
        abi: h.abi, source: h.source, plugins: h.plugins, keyframe_every: h.keyframe_every,
        map: h.map, view: h.view, policies: h.policies, lines: rec.lineCount,
    };
    $('meta').textContent = JSON.stringify(meta, null, 1);
    st.social = null;
    noteSocial();
    selectEpisode(0);
}

function selectEpisode(i) {
    const ep = st.rec.episodes[i];
    st.ep = ep;
    st.scene = null;
    collectEvents(ep);
    const sc = $('scrub');
    sc.min = ep.firstTick;
    sc.max = ep.lastTick;
    $('episode').value = String(i);
    seek(ep.firstTick);
}

// Every event of the episode, once, with its tick; the type filter lists their types.
function collectEvents(ep) {
    st.events = [];
    const types = new Set();
    for (const s of ep.steps) {
        for (const e of s.events || []) {
            st.events.push({ tick: s.tick, ev: e });
            types.add(e.type);
        }
    }
    const list = [...types].sort();
    const sel = $('evtype');
    if (sel.options.length !== list.length + 1) {
        const cur = sel.value;
        sel.innerHTML = '<option value="">all types</option>' + list.map((t) => `<option>${esc(t)}</option>`).join('');
        sel.value = list.includes(cur) ? cur : '';
    }
}

// ---- playing -----------------------------------------------------------------------------

function seek(t) {
    if (!st.ep) return;
    t = Math.max(st.ep.firstTick, Math.min(t | 0, st.ep.lastTick));
    st.scene = sceneAt(st.rec.header, st.ep, t, st.scene && st.scene.tick <= t ? st.scene : null);
    st.tick = t;
    render();
}

function play() {
    if (!st.ep || st.playing) return;
    if (st.tick >= st.ep.lastTick) seek(st.ep.firstTick);
    st.playing = true;
    $('play').textContent = '❚❚';
    const tickOnce = () => {
        if (!st.playing) return;
        if (st.tick >= st.ep.lastTick) { pause(); return; }
        seek(st.tick + 1);
        st.timer = setTimeout(tickOnce, 1000 / Number($('speed').value));
    };
    st.timer = setTimeout(tickOnce, 1000 / Number($('speed').value));
}

function pause() {
    st.playing = false;
    if (st.timer) clearTimeout(st.timer);
    st.timer = null;
    $('play').textContent = '▶︎';
}

// ---- drawing -----------------------------------------------------------------------------

function render() {
    applySeat();
    const { rec, ep, scene } = st;
    const h = rec.header;
    $('scrub').value = String(st.tick);
    $('tick').textContent = `tick ${st.tick} / ${ep.lastTick}`;
    const vp = viewport(h, scene, st.focus);
    // the map and its legend fit in the window's height, below the controls
    const maxW = Math.max(240, Math.min(window.innerWidth * 0.45, 900));
    const maxH = Math.max(240, window.innerHeight - $('map').offsetTop - $('legend').offsetHeight - 40);
    const c = cellSize(vp.w, vp.h, maxW, maxH);
    st.hidden = st.focus === null ? null : hiddenFrom(h, rec.episodes, ep, st.tick, st.focus);
    // a person in a seat whose agent may not see some agents sees what it sees: the map and
    // the panels leave them out (docs/visibility.md)
    st.secret = st.seat !== null && st.focus === st.seat && st.hidden && st.hidden.size ? st.hidden : null;
    st.placed = drawMap($('map'), h, scene, vp, c, $('glyphs').checked, st.hidden);
    st.cell = c;
    st.vp = vp;
    renderAgents();
    renderActions();
    fitWidth($('curves'));
    fitWidth($('graph'));
    drawCurves($('curves'), h, ep, st.tick, st.secret);
    drawGraph($('graph'), h, scene);
    renderEdges();
    renderEvents();
    renderMsgs();
    renderLLM();
}

// A side canvas takes its panel's width (its drawing is redone at every render anyway).
function fitWidth(canvas) {
    const w = Math.max(200, Math.floor(canvas.parentElement.clientWidth) - 4);
    if (canvas.width !== w) canvas.width = w;
}

function statHTML(h, a) {
    const groups = new Map();
    h.stats.forEach((s, i) => {
        const g = s.group || 'stats';
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g).push([s, a.stats[i]]);
    });
    let out = '';
    for (const [g, list] of groups) {
        const items = list.filter(([, v]) => g === 'vitals' || (v !== 0 && v !== undefined))
            .map(([s, v]) => {
                const bar = g === 'vitals' && s.max ? `<span class="bar"><i style="width:${Math.max(0, Math.min(100, 100 * (v || 0) / s.max))}%"></i></span>` : '';
                return `<span class="stat">${esc(s.name)} <b>${esc(v ?? '?')}</b>${bar}</span>`;
            });
        out += `<div><span class="stat">${esc(g)}:</span>${items.join('') || '<span class="stat">—</span>'}</div>`;
    }
    return out;
}

function renderAgents() {
    const { rec, scene } = st;
    const h = rec.header;
    $('agents').innerHTML = scene.agents.map((a, i) => st.secret && st.secret.has(i) ? '' : `
      <div class="agent${a.alive ? '' : ' dead'}${st.selected === i ? ' selected' : ''}" data-i="${i}" style="border-color:${agentColor(i)}">
        <span class="name">${esc(h.agents[i])}</span> <span class="stat">(${a.x}, ${a.y}) ${facingName(a.facing)}${a.alive ? '' : ', dead'}</span>
        <span class="ret" title="return">${Number(a.return).toFixed(3)}</span>
        ${statHTML(h, a)}
      </div>`).join('');
}

function actionName(h, id) {
    const a = h.actions[id];
    return a ? a.name : `#${id}`;
}

function renderActions() {
    const { rec, scene } = st;
    const h = rec.header;
    const s = scene.step;
    if (!s) {
        $('actions').innerHTML = '<div class="stat">tick 0: the episode starts</div>';
        return;
    }
    const msgs = s.msgs || [];
    $('actions').innerHTML = `<table><tr><th>agent</th><th>action</th><th>reward</th><th>messages</th></tr>${
        h.agents.map((name, i) => {
            if (st.secret && st.secret.has(i)) return '';
            const act = s.actions[i];
            const doc = h.actions[act] ? h.actions[act].doc || '' : '';
            const illegal = s.illegal && s.illegal[i] ? ' <span class="illegal">(illegal)</span>' : '';
            const term = (s.term && s.term[i]) ? ' term' : (s.trunc && s.trunc[i]) ? ' trunc' : '';
            const m = msgs.filter((x) => x.agent === i).map((x) => `<div class="msg">[${esc(x.kind)}] ${esc(msgSummary(x))}</div>`).join('');
            return `<tr><td style="color:${agentColor(i)}">${esc(name)}</td><td title="${esc(doc)}">${esc(actionName(h, act))}${illegal}${term}</td><td>${esc(s.rewards[i])}</td><td>${m}</td></tr>`;
        }).join('')}</table>`;
}

function edgeList() {
    return [...st.scene.edges.values()].map((e) => ({ from: e.from, to: e.to, kind: e.kind, weight: e.weight }))
        .sort((a, b) => (a.from + a.to + a.kind < b.from + b.to + b.kind ? -1 : 1));
}

function renderEdges() {
    const edges = edgeList();
    $('edges').querySelector('tbody').innerHTML = edges.map((e) =>
        `<tr class="edge"><td>${esc(e.from)}</td><td>${esc(e.to)}</td><td>${esc(e.kind)}</td><td>${esc(e.weight)}</td></tr>`).join('');
    const nodes = [...st.scene.nodes.values()];
    $('nodes').innerHTML = (nodes.length ? 'nodes: ' + nodes.map((n) => `<span class="stat">${esc(n.label)} <b>${esc(n.kind)}</b></span>`).join('') : '') +
        (edges.length ? '' : '<div class="stat">no social edges at this tick</div>');
}

function eventText(h, e) {
    const parts = [];
    for (const [k, v] of Object.entries(e)) {
        if (k === 'type') continue;
        if (k === 'agent' && h.agents[v] !== undefined) parts.push(`agent=${h.agents[v]}`);
        else parts.push(`${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`);
    }
    return parts.join(' ');
}

// Whether an event field names an agent the seat's agent may not see: "agent", "victim",
// "target" ... as an agent index (an event naming a hidden agent would betray it).
function secretAgent(key, v) {
    return Number.isInteger(v) && /^(agent|victim|target|other|partner|from|to|attacker)(_\d+)?$/.test(key)
        && st.secret.has(v);
}

// The events the filters let through, up to the current tick (or at it only).
function filteredEvents() {
    const type = $('evtype').value, agent = $('evagent').value, now = $('evnow').checked;
    const out = [];
    for (const x of st.events) {
        if (x.tick > st.tick) break;
        if (now && x.tick !== st.tick) continue;
        if (type && x.ev.type !== type) continue;
        if (agent !== '' && x.ev.agent !== Number(agent)) continue;
        if (st.secret && Object.entries(x.ev).some(([k, v]) => k !== 'type' && secretAgent(k, v))) continue;
        out.push(x);
    }
    return out;
}

function renderEvents() {
    const h = st.rec.header;
    const list = filteredEvents();
    const shown = list.slice(-300).reverse();
    $('events').innerHTML = shown.map((x) => `<li class="event${x.tick === st.tick ? ' now' : ''}" data-tick="${x.tick}"><span class="t">${x.tick}</span><b>${esc(x.ev.type)}</b> ${esc(eventText(h, x.ev))}</li>`).join('') +
        (list.length > shown.length ? `<li class="stat">… ${list.length - shown.length} earlier</li>` : '');
}

function renderMsgs() {
    const h = st.rec.header;
    const out = [];
    for (const s of st.ep.steps) {
        if (s.tick > st.tick) break;
        for (const m of s.msgs || []) if (!st.secret || !st.secret.has(m.agent)) out.push({ tick: s.tick, m });
    }
    $('msgs').innerHTML = out.slice(-200).reverse().map(({ tick, m }) =>
        `<li class="${tick === st.tick ? 'now' : ''}"><span class="t">${tick}</span><span style="color:${agentColor(m.agent)}">${esc(h.agents[m.agent] ?? m.agent)}</span> [${esc(m.kind)}] <span class="msg">${esc(msgSummary(m))}</span></li>`).join('');
}

// ---- LLM agents (python3 -m polis.llm, docs/llm.md) ----------------------------------------
// Their recordings carry, per agent and tick, every model call as a message of kind "llm"
// (JSON: module, prompt, answer, usage, error) and every memory, plan, reflection, refusal
// and fallback as kind "note" (JSON: type, text); the commands they played are "plan" and
// "action" messages. The panel adds them up to the current tick.

// The JSON of an "llm" or "note" message, parsed once; null for other kinds or bad JSON.
function msgJSON(m) {
    if (m.kind !== 'llm' && m.kind !== 'note') return null;
    if (m._j === undefined) {
        try { m._j = JSON.parse(m.text); } catch (e) { m._j = null; }
    }
    return m._j;
}

const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

// One line for a message in the tick's table and the message list.
function msgSummary(m) {
    const j = msgJSON(m);
    if (!j) return m.text;
    if (m.kind === 'note') return `${j.type}: ${cut(String(j.text || ''), 160)}`;
    const ans = j.error ? `error: ${j.error}` : String(j.answer ?? '');
    return `${j.module}${j.attempt ? ` (re-ask ${j.attempt})` : ''}: ${cut(ans.replace(/\s+/g, ' '), 160)}`;
}

// Per agent, up to the current tick: {calls, cached, errors, prompt, completion, latency,
// cost (null once a call had no price), plan, goals, memory, reflections[], log[]}.
function llmState() {
    const h = st.rec.header;
    const out = h.agents.map(() => ({ calls: 0, cached: 0, errors: 0, prompt: 0, completion: 0, latency: 0, cost: 0, priced: true,
        plan: null, goals: null, memory: null, reflections: [], log: [] }));
    let any = false;
    for (const s of st.ep.steps) {
        if (s.tick > st.tick) break;
        for (const m of s.msgs || []) {
            const j = msgJSON(m);
            const a = out[m.agent];
            if (!j || !a) continue;
            any = true;
            if (m.kind === 'llm') {
                a.log.push({ tick: s.tick, j });
                if (j.error && !j.usage) { a.errors++; continue; }
                const u = j.usage || {};
                a.calls++;
                if (u.cached) a.cached++;
                if (j.error) a.errors++;
                a.prompt += u.prompt_tokens || 0;
                a.completion += u.completion_tokens || 0;
                if (!u.cached) a.latency += u.latency || 0;
                if (typeof u.cost === 'number') a.cost += u.cost;
                else if (!u.cached) a.priced = false;
            } else if (j.type === 'plan') {
                a.plan = j.text; a.goals = j.goals || null;
            } else if (j.type === 'memory') {
                a.memory = { tick: s.tick, text: j.text };
            } else if (j.type === 'reflection') {
                a.reflections.push({ tick: s.tick, text: j.text, questions: j.questions || [] });
            } else {
                a.log.push({ tick: s.tick, note: j });
            }
        }
    }
    return any ? out : null;
}

// Whether the episode has LLM messages at all.
function episodeHasLLM() {
    const ep = st.ep;
    // only the steps not looked at yet (a followed recording grows)
    for (let i = ep._llmScanned || 0; i < ep.steps.length && !ep._hasLLM; i++) {
        ep._hasLLM = (ep.steps[i].msgs || []).some((m) => m.kind === 'llm' || m.kind === 'note');
    }
    ep._llmScanned = ep.steps.length;
    return !!ep._hasLLM;
}

// What LLM seats of polis eval, sweep or serve reported of the episode (its end line's
// metrics.reported: llm.calls, llm.prompt_tokens, ..., llm.cost, each seat's as NAME.AGENT;
// docs/recording.md): per agent and in total, in llmState's shape; null without them.
function reportedLLM() {
    const rep = st.ep.end && st.ep.end.metrics && st.ep.end.metrics.reported;
    if (!rep || typeof rep['llm.calls'] !== 'number') return null;
    const num = (k) => (typeof rep[k] === 'number' ? rep[k] : 0);
    const of = (sfx) => ({ calls: num(`llm.calls${sfx}`), cached: num(`llm.cached${sfx}`), errors: num(`llm.errors${sfx}`),
        prompt: num(`llm.prompt_tokens${sfx}`), completion: num(`llm.completion_tokens${sfx}`), latency: num(`llm.latency_s${sfx}`),
        cost: num(`llm.cost${sfx}`), priced: typeof rep[`llm.cost${sfx}`] === 'number', has: `llm.calls${sfx}` in rep });
    return { agents: st.rec.header.agents.map((name) => of(`.${name}`)), total: of('') };
}

const llmRow = (name, a, color) => `<tr><td style="color:${color}">${esc(name)}</td><td>${a.calls}</td><td>${a.cached}</td><td>${a.errors}</td><td>${a.prompt}</td><td>${a.completion}</td><td>${a.latency.toFixed(2)}</td><td>${a.priced ? `$${a.cost.toFixed(4)}` : 'n/a'}</td></tr>`;
const llmHead = '<tr><th>agent</th><th>calls</th><th>cached</th><th>errors</th><th title="prompt tokens">tok in</th><th title="completion tokens">tok out</th><th title="seconds waiting for the model">secs</th><th>cost</th></tr>';

function renderLLM() {
    const box = $('llmbox');
    const msgs = episodeHasLLM();
    const rep = msgs ? null : reportedLLM();
    box.hidden = !msgs && !rep;
    if (box.hidden) return;
    if (rep) { // the figures of the whole episode, from its end line: no prompts recorded
        const h = st.rec.header;
        $('llmcosts').innerHTML = `<table>${llmHead}${rep.agents.map((a, i) => (a.has ? llmRow(h.agents[i], a, agentColor(i)) : '')).join('')}${
            llmRow('total', rep.total, 'inherit')}</table>`;
        $('llmagent').innerHTML = '<div class="dim" id="llmreported">What the LLM seats reported of the whole episode (its end line). Their prompts and answers are not in this recording: <code>python3 -m polis.llm run</code> records them.</div>';
        return;
    }
    const data = llmState() || st.rec.header.agents.map(() => ({ calls: 0, cached: 0, errors: 0, prompt: 0, completion: 0, latency: 0,
        cost: 0, priced: true, plan: null, goals: null, memory: null, reflections: [], log: [] }));
    const h = st.rec.header;
    const tot = data.reduce((t, a) => ({ calls: t.calls + a.calls, cached: t.cached + a.cached, errors: t.errors + a.errors,
        prompt: t.prompt + a.prompt, completion: t.completion + a.completion, latency: t.latency + a.latency,
        cost: t.cost + a.cost, priced: t.priced && a.priced }), { calls: 0, cached: 0, errors: 0, prompt: 0, completion: 0, latency: 0, cost: 0, priced: true });
    $('llmcosts').innerHTML = `<table>${llmHead}${
        data.map((a, i) => (a.calls || a.errors ? llmRow(h.agents[i], a, agentColor(i)) : '')).join('')}${llmRow('total', tot, 'inherit')}</table>`;
    const i = st.selected ?? 0;
    const a = data[i] || data[0];
    const refl = a.reflections.slice(-3).reverse().map((r) => `<li><span class="t">${r.tick}</span><span class="msg">${esc(r.text)}</span></li>`).join('');
    const log = a.log.slice(-40).reverse().map((x) => {
        if (x.note) return `<li class="${x.tick === st.tick ? 'now' : ''}"><span class="t">${x.tick}</span><b>${esc(x.note.type)}</b> <span class="msg">${esc(x.note.text)}</span></li>`;
        const j = x.j;
        const ans = j.error ? `error: ${j.error}` + (j.answer ? `\n${j.answer}` : '') : String(j.answer ?? '');
        return `<li class="${x.tick === st.tick ? 'now' : ''}"><span class="t">${x.tick}</span><b>${esc(j.module)}</b>${j.attempt ? ` re-ask ${j.attempt}` : ''}
          <details><summary class="msg">${esc(cut(ans.replace(/\s+/g, ' '), 140))}</summary><div class="llmhead">prompt</div><pre class="llmtext">${esc(j.prompt || '')}</pre><div class="llmhead">answer</div><pre class="llmtext">${esc(ans)}</pre></details></li>`;
    }).join('');
    $('llmagent').innerHTML = `<div><b style="color:${agentColor(i)}">${esc(h.agents[i])}</b> <span class="dim">(click an agent to choose)</span></div>
      <div><span class="stat">plan</span><span class="msg" id="llmplan">${esc(a.plan ?? '—')}</span></div>
      <div><span class="stat">goals</span><span class="msg" id="llmgoals">${esc(a.goals ?? '—')}</span></div>
      <details><summary class="stat">last memory${a.memory ? ` (tick ${a.memory.tick})` : ''}</summary><pre class="llmtext" id="llmmemory">${esc(a.memory ? a.memory.text : '—')}</pre></details>
      <div class="stat">reflections (${a.reflections.length})</div><ol id="llmreflections">${refl}</ol>
      <div class="stat">calls and notes (newest first)</div><ol id="llmlog">${log}</ol>`;
}

// ---- wiring ------------------------------------------------------------------------------

function wire() {
    $('file').addEventListener('change', (ev) => {
        const f = ev.target.files[0];
        if (f) openStream(f.stream(), f.name);
    });
    window.addEventListener('dragover', (ev) => { ev.preventDefault(); document.body.classList.add('dragging'); });
    window.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
    window.addEventListener('drop', (ev) => {
        ev.preventDefault();
        document.body.classList.remove('dragging');
        const f = ev.dataTransfer.files[0];
        if (f) openStream(f.stream(), f.name);
    });
    $('play').addEventListener('click', () => (st.playing ? pause() : play()));
    $('back').addEventListener('click', () => { pause(); seek(st.tick - 1); });
    $('fwd').addEventListener('click', () => { pause(); seek(st.tick + 1); });
    $('scrub').addEventListener('input', (ev) => seek(Number(ev.target.value)));
    $('episode').addEventListener('change', (ev) => { pause(); selectEpisode(Number(ev.target.value)); });
    $('viewof').addEventListener('change', (ev) => {
        st.focus = ev.target.value === '' ? null : Number(ev.target.value);
        if (st.focus !== null) st.selected = st.focus;
        if (st.ep) render();
    });
    $('glyphs').addEventListener('change', () => st.ep && render());
    for (const id of ['evtype', 'evagent', 'evnow']) $(id).addEventListener('change', () => st.ep && renderEvents());
    $('events').addEventListener('click', (ev) => {
        const li = ev.target.closest('li[data-tick]');
        if (li) { pause(); seek(Number(li.dataset.tick)); }
    });
    $('agents').addEventListener('click', (ev) => {
        const d = ev.target.closest('.agent');
        if (!d) return;
        st.selected = Number(d.dataset.i);
        $('evagent').value = String(st.selected);
        if (st.ep) render();
    });
    window.addEventListener('keydown', (ev) => {
        if (!st.ep || ev.target.tagName === 'SELECT' || ev.target.tagName === 'INPUT' && ev.target.type !== 'range') return;
        if (ev.key === ' ') { ev.preventDefault(); st.playing ? pause() : play(); }
        else if (ev.key === 'ArrowRight') { ev.preventDefault(); pause(); seek(st.tick + 1); }
        else if (ev.key === 'ArrowLeft') { ev.preventDefault(); pause(); seek(st.tick - 1); }
        else if (ev.key === 'Home') { pause(); seek(st.ep ? st.ep.firstTick : 0); }
        else if (ev.key === 'End') { pause(); seek(st.ep.lastTick); }
    });
    window.addEventListener('resize', () => st.ep && render());
}

// The test hook: read-only views of what the page shows, and the same controls a person uses.
window.polisViewer = {
    get status() { return st.status; },            // empty | loading | live | ok | truncated | error
    get tick() { return st.tick; },
    get lastTick() { return st.ep ? st.ep.lastTick : 0; },
    get episode() { return st.ep ? st.ep.number : -1; },
    get banner() { const b = $('banner'); return b.hidden ? '' : b.textContent; },
    get cell() { return st.cell; },
    get viewport() { return st.vp; },
    agents() {
        return st.placed.map((p) => {
            const a = st.scene.agents[p.index];
            return { index: p.index, name: st.rec.header.agents[p.index], x: p.x, y: p.y, px: p.px, py: p.py,
                     facing: a.facing, alive: a.alive, stats: a.stats.slice(), return: a.return, color: agentColor(p.index) };
        });
    },
    edges() { return st.scene ? edgeList() : []; },
    listedEdges() {
        return [...document.querySelectorAll('#edges tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent));
    },
    listedEvents() {
        return [...document.querySelectorAll('#events li.event')].map((li) => ({ tick: Number(li.dataset.tick), text: li.textContent }));
    },
    things() { return st.scene ? [...st.scene.things.values()].map((t) => ({ ...t })) : []; },
    pixel(px, py) {
        const d = $('map').getContext('2d').getImageData(Math.floor(px), Math.floor(py), 1, 1).data;
        return [d[0], d[1], d[2]];
    },
    seek(t) { pause(); seek(t); return st.tick; },
    // the agents the agent whose view is shown may not see now (docs/visibility.md)
    hidden() { return st.hidden ? [...st.hidden] : []; },
    // the LLM panel: its cost table as text rows, and the selected agent's plan and counts
    llmRows() { return [...document.querySelectorAll('#llmcosts tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent)); },
    get llmShown() { return !$('llmbox').hidden; },
    select(i) { st.selected = i; render(); },
    play, pause,
    view(i) { st.focus = i === null || i === undefined ? null : i; $('viewof').value = st.focus === null ? '' : String(i); render(); },
    // the seat a person holds here (play.js): its agent's view, the view menu locked on it
    get seat() { return st.seat; },
    open: openURL,
};

// A person took (name) or left (null) a seat of the live game; `hidden`: the agents its turn
// says it may not see now. While it holds one in a game that hides agents (the scenario has
// "visibility" rules, or the turn names hidden agents), the page shows that agent's view — the
// map as the agent sees it, the agents it may not see left out of the map and the panels
// (docs/visibility.md) — and the view menu stays on it.
function holdSeat(name, hidden) {
    const hides = Array.isArray(hidden) && hidden.length > 0;
    if (name === st.seatName && hides === st.seatHides) return;
    st.seatName = name;
    st.seatHides = hides;
    if (st.ep) render();
}

// The held seat's agent as the view (once the stream's header names the agents), or back to
// the menu's choice when no seat is held or nothing is hidden in the game.
function applySeat() {
    if (!st.rec) return;
    const h = st.rec.header;
    const i = st.seatName === null ? -1 : h.agents.indexOf(st.seatName);
    if (i >= 0 && ((h.visibility && h.visibility.length > 0) || st.seatHides)) {
        if (st.seat !== i) {
            st.seat = i;
            st.focus = i;
            st.selected = i;
        }
        $('viewof').value = String(i);
        $('viewof').disabled = true;
    } else if (st.seat !== null) {
        st.seat = null;
        $('viewof').disabled = !h.view;
    }
}

wire();
const params = new URLSearchParams(location.search);
const param = params.get('file');
if (params.get('live') === '1') {
    // `polis serve SCENARIO --http`: the episode as it is played, and its seats
    openStream(followStream(`ws://${location.host}/`), 'the live episode', true);
    // a human seat's link carries its token (polis serve prints one per seat)
    window.polisViewer.play = startPlay(`ws://${location.host}/`, params.get('token'), holdSeat);
} else if (param && params.get('follow') === '1') {
    const name = decodeURIComponent(param.split('/').pop());
    openStream(followStream(`ws://${location.host}/`), name, true);
} else if (param) {
    openURL(param);
}
