// draw.js — the canvases of the viewer: the map (or one agent's view of it), the social graph
// and the return curves. Everything is drawn from the header's look descriptions ("kinds":
// colour, shape, glyph); agents get colours of their own (agentColor), never used by a kind
// in the palette below, so a test can find an agent by the colour at its cell's centre.
// The map is drawn like engine/pixels/raster.c draws a frame (`polis replay --png`), and with
// "glyphs" ticked, an ASCII glyph comes from the same 5 x 7 font (font.js) pixel for pixel.

import { FONT_W, FONT_H, GLYPH_MIN_PX, fontRows } from './font.js';

// Distinct, saturated agent colours. A recording's agents take them in this order, except
// those too close to a colour of the game's own kinds (an agent must never look like an
// apple or a cow): setPalette(header) moves those to the end of the list.
const AGENT_COLORS = ['#ff3b30', '#2f7bff', '#ffd60a', '#ff2fd0', '#00e5ff', '#ff8a00', '#a05bff',
                      '#7dff3b', '#ffffff', '#b36b00', '#00ffa8', '#ff7aa8', '#5d5dff', '#d4ff00',
                      '#00a0a0', '#ffb38a'];
let palette = AGENT_COLORS;
export function agentColor(i) { return palette[i % palette.length]; }

function rgbOf(c) { return [1, 3, 5].map((i) => parseInt(String(c).slice(i, i + 2), 16) || 0); }

// How different two colours look ("redmean" weighted RGB distance: 0 the same, about 765 black
// to white).
export function colorDistance(a, b) {
    const [r1, g1, b1] = rgbOf(a), [r2, g2, b2] = rgbOf(b);
    const rm = (r1 + r2) / 2, dr = r1 - r2, dg = g1 - g2, db = b1 - b2;
    return Math.sqrt((2 + rm / 256) * dr * dr + 4 * dg * dg + (2 + (255 - rm) / 256) * db * db);
}

// Chooses the agents' colours for a recording: the list above in order, without those closer
// than 120 to a kind's colour (they go last, the farthest first).
export function setPalette(header) {
    const kinds = (header.kinds || []).map((k) => k.color || '#888888');
    const far = AGENT_COLORS.map((c) => [c, Math.min(Infinity, ...kinds.map((k) => colorDistance(c, k)))]);
    palette = far.filter(([, d]) => d >= 120).map(([c]) => c)
        .concat(far.filter(([, d]) => d < 120).sort((a, b) => b[1] - a[1]).map(([c]) => c));
    return palette;
}

export const EMPTY_COLOR = '#0e0f12';

// The cell size in pixels for a viewport of vw x vh cells in at most maxW x maxH pixels.
export function cellSize(vw, vh, maxW, maxH) {
    const c = Math.floor(Math.min(maxW / Math.max(vw, 1), maxH / Math.max(vh, 1)));
    return Math.max(6, Math.min(64, c));
}

function shapePath(ctx, shape, x, y, c) {
    const m = c / 2;
    const cx = x + m, cy = y + m;
    ctx.beginPath();
    switch (shape) {
    case 'circle':
    case 'agent':
        ctx.arc(cx, cy, c * 0.38, 0, Math.PI * 2);
        break;
    case 'triangle':
        ctx.moveTo(cx, y + c * 0.12);
        ctx.lineTo(x + c * 0.88, y + c * 0.85);
        ctx.lineTo(x + c * 0.12, y + c * 0.85);
        ctx.closePath();
        break;
    case 'diamond':
        ctx.moveTo(cx, y + c * 0.1);
        ctx.lineTo(x + c * 0.9, cy);
        ctx.lineTo(cx, y + c * 0.9);
        ctx.lineTo(x + c * 0.1, cy);
        ctx.closePath();
        break;
    case 'cross': {
        const a = c * 0.15, b = c * 0.35;
        ctx.rect(cx - a, cy - b, 2 * a, 2 * b);
        ctx.rect(cx - b, cy - a, 2 * b, 2 * a);
        break;
    }
    case 'dot':
        ctx.arc(cx, cy, c * 0.16, 0, Math.PI * 2);
        break;
    default: // square
        ctx.rect(x, y, c, c);
    }
}

// A glyph of the font: font pixels of floor(c / 8) px, the box centred in the cell (rounded
// towards the top left), as engine/pixels/raster.c draws it.
function drawFontGlyph(ctx, rows, x, y, c) {
    const p = Math.floor(c / GLYPH_MIN_PX);
    drawFontRows(ctx, rows, x + Math.floor((c - FONT_W * p) / 2), y + Math.floor((c - FONT_H * p) / 2), p);
}

// The font's pixels of one glyph, p x p each, its box's top left at (x, y).
function drawFontRows(ctx, rows, x, y, p) {
    for (let r = 0; r < FONT_H; r++)
        for (let col = 0; col < FONT_W; col++)
            if ((rows[r] >> (FONT_W - 1 - col)) & 1) ctx.fillRect(x + col * p, y + r * p, p, p);
}

// A kind: its shape, or with `glyphs` its glyph — from the font when it is printable ASCII
// (cells of 8 px and more; smaller cells keep the shape), other characters in the browser's
// monospace font (frames drawn in C keep the shape for those).
export function drawKind(ctx, kind, x, y, c, glyphs) {
    if (!kind) return;
    const color = kind.color || '#888888';
    const rows = glyphs && kind.glyph ? fontRows(kind.glyph) : null;
    if (rows && c >= GLYPH_MIN_PX) {
        ctx.fillStyle = color;
        drawFontGlyph(ctx, rows, x, y, c);
        return;
    }
    if (glyphs && kind.glyph && !rows) {
        ctx.fillStyle = color;
        ctx.font = `${Math.floor(c * 0.8)}px monospace`;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        ctx.fillText(kind.glyph, x + c / 2, y + c / 2 + 1);
        return;
    }
    ctx.fillStyle = color;
    const shape = kind.shape || 'square';
    shapePath(ctx, shape, x, y, c);
    ctx.fill();
    if (shape !== 'square' && c >= (shape === 'dot' ? 20 : 8)) {   // a small dot stays its colour
        // a dark edge sets a thing or an item apart from the ground it stands on
        ctx.strokeStyle = 'rgba(0,0,0,0.55)';
        ctx.lineWidth = Math.max(1, c / 18);
        ctx.stroke();
    }
}

// Draws an agent: a filled circle in its colour inside a white and a black ring (no kind is
// drawn so), a small dark triangle on its edge pointing where it faces (the centre stays the
// agent's colour), an X over a dead one. `stacked` agents on the same cell get a badge with
// their number at the cell's corner.
function drawAgent(ctx, i, facing, alive, x, y, c, stacked) {
    const cx = x + c / 2, cy = y + c / 2;
    const r = c * 0.4;
    // the rings are at least a pixel wide from cells of 8 px on; below, c / 16 and c / 14, so
    // that an agent never covers the centre of the next cell (engine/pixels/raster.c: the same)
    const r1 = r + (c >= 8 ? Math.max(1, c / 16) : c / 16), r2 = r1 + (c >= 8 ? Math.max(1, c / 14) : c / 14);
    ctx.fillStyle = '#000000';
    ctx.beginPath();
    ctx.arc(cx, cy, r2, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = '#ffffff';
    ctx.beginPath();
    ctx.arc(cx, cy, r1, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = agentColor(i);
    ctx.beginPath();
    ctx.arc(cx, cy, r, 0, Math.PI * 2);
    ctx.fill();
    const dirs = { 1: [0, -1], 2: [1, 0], 3: [0, 1], 4: [-1, 0] };
    const d = dirs[facing];
    if (d) {
        const [dx, dy] = d;
        const tip = c * 0.5, base = c * 0.24, half = c * 0.15;
        ctx.fillStyle = '#000000';
        ctx.beginPath();
        ctx.moveTo(cx + dx * tip, cy + dy * tip);
        ctx.lineTo(cx + dx * base - dy * half, cy + dy * base + dx * half);
        ctx.lineTo(cx + dx * base + dy * half, cy + dy * base - dx * half);
        ctx.closePath();
        ctx.fill();
    }
    if (!alive) {
        ctx.strokeStyle = '#000000';
        ctx.lineWidth = Math.max(1, c / 8);
        ctx.beginPath();
        ctx.moveTo(x + c * 0.2, y + c * 0.2); ctx.lineTo(x + c * 0.8, y + c * 0.8);
        ctx.moveTo(x + c * 0.8, y + c * 0.2); ctx.lineTo(x + c * 0.2, y + c * 0.8);
        ctx.stroke();
    }
    if (stacked > 1 && c >= 14) {
        const br = c * 0.2, bx = x + c - br * 0.8, by = y + br * 0.8;
        ctx.fillStyle = '#ffffff';
        ctx.strokeStyle = '#000000';
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.arc(bx, by, br, 0, Math.PI * 2);
        ctx.fill();
        ctx.stroke();
        // the count in the font, pixels of floor(2 br / 9) (none when that is 0), as
        // engine/pixels/raster.c draws it
        const p = Math.floor(2 * br / 9), digits = String(stacked);
        if (p >= 1) {
            ctx.fillStyle = '#000000';
            const ox = Math.floor(bx - (digits.length * (FONT_W + 1) * p - p) / 2);
            const oy = Math.floor(by - FONT_H * p / 2);
            for (let k = 0; k < digits.length; k++)
                drawFontRows(ctx, fontRows(digits[k]), ox + k * (FONT_W + 1) * p, oy, p);
        }
    } else if (stacked > 1) {
        // too small for a number: a white dot in the corner
        ctx.fillStyle = '#ffffff';
        ctx.beginPath();
        ctx.arc(x + c - 2, y + 2, 1.6, 0, Math.PI * 2);
        ctx.fill();
    }
}

// The viewport: the whole map, or (rx, ry) cells around agent `focus` when the header has a
// view. Returns {x0, y0, w, h} in cells (x0/y0 may be negative: off-map cells are drawn dark).
export function viewport(header, scene, focus) {
    const W = header.map.width, H = header.map.height;
    if (focus === null || focus === undefined || !header.view) return { x0: 0, y0: 0, w: W, h: H };
    const a = scene.agents[focus];
    const rx = header.view.rx | 0, ry = header.view.ry | 0;
    const ax = a && a.x >= 0 ? a.x : 0, ay = a && a.y >= 0 ? a.y : 0;
    return { x0: ax - rx, y0: ay - ry, w: 2 * rx + 1, h: 2 * ry + 1 };
}

// Draws the map part vp of the scene into canvas with cell size c, without the agents in
// `hidden` (a Set of indices: those the viewing agent may not see). Returns where each agent
// landed: [{index, x, y, px, py}] (px, py = the centre of its cell on the canvas, or null when
// it is not in the viewport, not on the map or hidden).
export function drawMap(canvas, header, scene, vp, c, glyphs, hidden) {
    // read back by pixel() (the tests): a canvas kept in memory reads fast
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    const W = header.map.width, H = header.map.height;
    canvas.width = vp.w * c;
    canvas.height = vp.h * c;
    ctx.fillStyle = '#05060a';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    const kinds = header.kinds;
    for (let vy = 0; vy < vp.h; vy++) {
        for (let vx = 0; vx < vp.w; vx++) {
            const x = vp.x0 + vx, y = vp.y0 + vy;
            if (x < 0 || y < 0 || x >= W || y >= H) continue;
            ctx.fillStyle = EMPTY_COLOR;
            ctx.fillRect(vx * c, vy * c, c, c);
            for (const layer of scene.tiles) {
                const k = layer[y * W + x];
                if (k >= 0) drawKind(ctx, kinds[k], vx * c, vy * c, c, glyphs);
            }
        }
    }
    if (c >= 10) {
        ctx.strokeStyle = 'rgba(255,255,255,0.06)';
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let vx = 0; vx <= vp.w; vx++) { ctx.moveTo(vx * c + 0.5, 0); ctx.lineTo(vx * c + 0.5, vp.h * c); }
        for (let vy = 0; vy <= vp.h; vy++) { ctx.moveTo(0, vy * c + 0.5); ctx.lineTo(vp.w * c, vy * c + 0.5); }
        ctx.stroke();
    }
    for (const t of scene.things.values()) {
        const vx = t.x - vp.x0, vy = t.y - vp.y0;
        if (vx < 0 || vy < 0 || vx >= vp.w || vy >= vp.h) continue;
        drawKind(ctx, kinds[t.kind], vx * c, vy * c, c, glyphs);
    }
    const placed = [];
    scene.agents.forEach((a, i) => {
        const vx = a.x - vp.x0, vy = a.y - vp.y0;
        // an agent's view leaves out the agents it may not see (hidden: a Set, or none)
        const on = a.x >= 0 && a.y >= 0 && vx >= 0 && vy >= 0 && vx < vp.w && vy < vp.h
            && !(hidden && hidden.has(i));
        placed.push({ index: i, x: a.x, y: a.y, px: on ? vx * c + c / 2 : null, py: on ? vy * c + c / 2 : null });
    });
    // Dead agents first, so a living one on the same cell is drawn on top; the last one drawn
    // on a cell gets a badge counting the agents there.
    const order = placed.filter((p) => p.px !== null)
        .sort((p, q) => (scene.agents[p.index].alive ? 1 : 0) - (scene.agents[q.index].alive ? 1 : 0));
    if (c < 16) {
        // On small cells a wide white ring around each living agent keeps it visible: it reaches
        // into the neighbouring cells, never to their centres.
        ctx.strokeStyle = '#ffffff';
        ctx.lineWidth = 1.5;
        for (const p of order) {
            if (!scene.agents[p.index].alive) continue;
            ctx.beginPath();
            ctx.arc((p.x - vp.x0) * c + c / 2, (p.y - vp.y0) * c + c / 2, c * 0.66, 0, Math.PI * 2);
            ctx.stroke();
        }
    }
    const count = new Map();
    for (const p of order) count.set(`${p.x},${p.y}`, (count.get(`${p.x},${p.y}`) || 0) + 1);
    const drawn = new Map();
    for (const p of order) {
        const a = scene.agents[p.index];
        const key = `${p.x},${p.y}`;
        drawn.set(key, (drawn.get(key) || 0) + 1);
        const last = drawn.get(key) === count.get(key);
        drawAgent(ctx, p.index, a.facing, a.alive, (p.x - vp.x0) * c, (p.y - vp.y0) * c, c, last ? count.get(key) : 1);
    }
    return placed;
}

// The social graph: every node on one circle, agents first (in their colours, circles), then
// the other nodes (groups and anything a game adds, squares), labels outside the circle;
// edges as arrows to their "to" end, coloured by kind (edges of different kinds between the
// same pair side by side), thicker with weight.
const EDGE_COLORS = ['#5fb3ff', '#ffb35f', '#8fe38f', '#ff7ad9', '#c0c0c0', '#ffe066'];
export function drawGraph(canvas, header, scene) {
    const ctx = canvas.getContext('2d');
    const W = canvas.width, H = canvas.height;
    ctx.fillStyle = '#0e0f12';
    ctx.fillRect(0, 0, W, H);
    const ids = header.agents.slice();
    for (const id of scene.nodes.keys()) if (!ids.includes(id)) ids.push(id);
    for (const e of scene.edges.values()) for (const id of [e.from, e.to]) if (!ids.includes(id)) ids.push(id);
    const na = header.agents.length;
    const pos = new Map();
    const cx = W / 2, cy = H / 2 + 6, r = Math.max(20, Math.min(W / 2 - 90, H / 2 - 34));
    ids.forEach((id, i) => {
        const ang = Math.PI * 2 * (i / ids.length) + Math.PI / 2;
        pos.set(id, [cx + r * Math.cos(ang), cy + r * Math.sin(ang), ang]);
    });
    const kinds = [];
    for (const e of scene.edges.values()) if (!kinds.includes(e.kind)) kinds.push(e.kind);
    for (const e of scene.edges.values()) {
        const [x1, y1] = pos.get(e.from), [x2, y2] = pos.get(e.to);
        const ki = kinds.indexOf(e.kind);
        const col = EDGE_COLORS[ki % EDGE_COLORS.length];
        const len = Math.hypot(x2 - x1, y2 - y1) || 1;
        const off = (ki - (kinds.length - 1) / 2) * 3;   // side by side by kind
        const ox = (-(y2 - y1) / len) * off, oy = ((x2 - x1) / len) * off;
        ctx.strokeStyle = col;
        ctx.fillStyle = col;
        ctx.lineWidth = Math.max(1, Math.min(5, Math.abs(Number(e.weight) || 1) * 1.2));
        ctx.beginPath(); ctx.moveTo(x1 + ox, y1 + oy); ctx.lineTo(x2 + ox, y2 + oy); ctx.stroke();
        const ang = Math.atan2(y2 - y1, x2 - x1);
        const tx = x2 + ox - Math.cos(ang) * 11, ty = y2 + oy - Math.sin(ang) * 11;
        ctx.beginPath();
        ctx.moveTo(tx, ty);
        ctx.lineTo(tx - Math.cos(ang - 0.4) * 8, ty - Math.sin(ang - 0.4) * 8);
        ctx.lineTo(tx - Math.cos(ang + 0.4) * 8, ty - Math.sin(ang + 0.4) * 8);
        ctx.closePath(); ctx.fill();
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ids.forEach((id, i) => {
        const [x, y, ang] = pos.get(id);
        ctx.beginPath();
        if (i < na) {
            ctx.fillStyle = agentColor(i);
            ctx.arc(x, y, 8, 0, Math.PI * 2);
        } else {
            ctx.fillStyle = scene.nodes.has(id) ? '#d0d0d0' : '#666666';
            ctx.rect(x - 7, y - 7, 14, 14);
        }
        ctx.fill();
        const nd = scene.nodes.get(id);
        const c = Math.cos(ang), s = Math.sin(ang);
        ctx.fillStyle = '#e6e6e6';
        ctx.textAlign = c > 0.3 ? 'left' : c < -0.3 ? 'right' : 'center';
        ctx.fillText(nd && nd.label ? nd.label : id, x + c * 13, y + s * 15);
    });
    ctx.textBaseline = 'alphabetic';
    kinds.forEach((k, i) => {
        ctx.fillStyle = EDGE_COLORS[i % EDGE_COLORS.length];
        ctx.textAlign = 'left';
        ctx.fillText(`— ${k}`, 6, 14 + 13 * i);
    });
}

// Return curves: one line per agent over the whole episode, a marker at the current tick.
// `secret`: agents whose curves are not drawn (a seat's hidden agents), or null.
export function drawCurves(canvas, header, ep, tick, secret = null) {
    const ctx = canvas.getContext('2d');
    const W = canvas.width, H = canvas.height;
    ctx.fillStyle = '#0e0f12';
    ctx.fillRect(0, 0, W, H);
    const curves = ep.returns;
    const n = ep.lastTick;
    let lo = 0, hi = 0;
    for (const c of curves) for (const v of c) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (hi === lo) hi = lo + 1;
    const pad = 26;
    const X = (t) => pad + (W - pad - 6) * (n > 0 ? t / n : 0);
    const Y = (v) => H - 14 - (H - 24) * ((v - lo) / (hi - lo));
    ctx.strokeStyle = '#3a3f4a';
    ctx.beginPath(); ctx.moveTo(pad, Y(0)); ctx.lineTo(W - 6, Y(0)); ctx.stroke();
    ctx.fillStyle = '#9aa0aa';
    ctx.font = '10px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.fillText(String(+hi.toFixed(2)), pad - 3, 12);
    ctx.fillText(String(+lo.toFixed(2)), pad - 3, H - 12);
    ctx.textAlign = 'left';
    ctx.fillText(`tick ${n}`, W - 48, H - 2);
    curves.forEach((c, a) => {
        if (secret && secret.has(a)) return;
        ctx.strokeStyle = agentColor(a);
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        const stride = Math.max(1, Math.floor(c.length / (W * 2)));
        for (let t = 0; t < c.length; t += stride) {
            if (t === 0) ctx.moveTo(X(t), Y(c[t])); else ctx.lineTo(X(t), Y(c[t]));
        }
        ctx.lineTo(X(c.length - 1), Y(c[c.length - 1]));
        ctx.stroke();
    });
    ctx.strokeStyle = '#e6e6e6';
    ctx.setLineDash([3, 3]);
    ctx.beginPath(); ctx.moveTo(X(tick), 4); ctx.lineTo(X(tick), H - 14); ctx.stroke();
    ctx.setLineDash([]);
}
