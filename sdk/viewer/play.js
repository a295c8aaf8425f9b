// play.js — live play on the viewer page (`polis serve SCENARIO --http`): the seats (people's,
// agent-protocol clients' and policies'), taking a free human seat, and playing it — arrow keys / WASD for the game's moves (found by name),
// a menu of the legal actions with their docs, plan commands where the game has macros.
// Talks the "polis-seat" WebSocket protocol (docs/clients.md, "Seats over a WebSocket").
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

// The four directions: an action whose name ends in one of these words moves that way.
const DIRS = {
    up: /(^|[_ -])(north|up)$/i, down: /(^|[_ -])(south|down)$/i,
    left: /(^|[_ -])(west|left)$/i, right: /(^|[_ -])(east|right)$/i,
};
const KEYS = {
    ArrowUp: 'up', ArrowDown: 'down', ArrowLeft: 'left', ArrowRight: 'right',
    w: 'up', s: 'down', a: 'left', d: 'right', W: 'up', S: 'down', A: 'left', D: 'right',
};

// onSeat(agent name | null, hidden agents): called when this page's seat changes and at every
// turn (the viewer shows that agent's view while it is held in a game that hides agents).
export function startPlay(url, token, onSeat = () => {}) {
    const st = { ws: null, seats: [], mode: '', seat: null, turn: null, error: '', last: '', sent: 0 };
    $('playbox').hidden = false;

    function say(text, bad) {
        const m = $('playmsg');
        m.textContent = text;
        m.className = bad ? 'illegal' : '';
    }
    function send(msg) {
        if (st.ws && st.ws.readyState === WebSocket.OPEN) {
            st.ws.send(JSON.stringify(msg));
            st.sent++;
        }
    }
    function renderSeats() {
        const rows = st.seats.map((s) => {
            let what = s.player === 'human' ? (s.yours ? 'you' : s.free ? 'free' : 'taken')
                : s.player === 'client' ? `client (${s.free ? 'none connected' : 'connected'})` : s.player;
            const btn = s.player === 'human' && s.free && !st.seat
                ? ` <button data-take="${esc(s.agent)}">take</button>` : '';
            if (s.yours) what = `<b>you</b> <button data-leave="1">leave</button>`;
            return `<div class="seat">${esc(s.agent)}: ${s.yours ? what : esc(what)}${btn}</div>`;
        });
        $('seats').innerHTML = `<div class="dim">${st.mode === 'wait' ? 'the game waits for every human and client seat'
            : 'the game ticks at a fixed rate'}</div>` + rows.join('');
    }
    function renderTurn() {
        const t = st.turn;
        $('turnbox').hidden = !st.seat;
        if (!t) return;
        $('turninfo').textContent = t.done ? `${t.agent} is finished`
            : `${t.agent} at tick ${t.tick}: ${t.acted ? 'your action is in; waiting for the tick' : 'your move'}`
              + (t.plan ? ` — following plan "${t.plan}"` : '');
        $('legal').innerHTML = t.legal.map((a) => `<option value="${esc(a.name)}" title="${esc(a.doc)}">${esc(a.name)}${a.doc ? ' — ' + esc(a.doc) : ''}</option>`).join('');
        $('planrow').hidden = !t.plans.length;
        $('planlist').innerHTML = t.plans.map((p) => `<option value="${esc(p.usage)}">${esc(p.doc)}</option>`).join('');
    }
    // The legal action that moves dir, if the game has one.
    function moveAction(dir) {
        if (!st.turn) return null;
        const a = st.turn.legal.find((x) => DIRS[dir].test(x.name));
        return a ? a.name : null;
    }
    function act(name) {
        st.last = name;
        send({ op: 'act', action: name });
    }

    function connect() {
        const ws = new WebSocket(url, 'polis-seat');
        st.ws = ws;
        ws.onmessage = (ev) => {
            let m;
            try { m = JSON.parse(ev.data); } catch (_) { return; }
            if (m.type === 'seats') {
                st.seats = m.seats;
                st.mode = m.mode;
                const mine = m.seats.find((s) => s.yours);
                const was = st.seat;
                st.seat = mine ? mine.agent : null;
                if (st.seat !== was) onSeat(st.seat, st.turn ? st.turn.hidden : []);
                if (!st.seat) st.turn = null;
                renderSeats();
                renderTurn();
            } else if (m.type === 'turn') {
                st.turn = m;
                onSeat(m.agent, m.hidden);
                if (st.seat !== m.agent) {
                    st.seat = m.agent;
                    renderSeats();
                    send({ op: 'seats' });
                }
                renderTurn();
            } else if (m.type === 'accepted') {
                say(`${m.agent}: ${m.action || 'plan ' + m.plan} at tick ${m.tick}`);
                if (st.turn) { st.turn.acted = true; renderTurn(); }
            } else if (m.type === 'error') {
                st.error = `${m.code}: ${m.message}`;
                say(st.error, true);
            }
        };
        ws.onclose = () => say('the seat connection closed', true);
    }

    $('seats').addEventListener('click', (ev) => {
        const take = ev.target.dataset.take;
        if (take) send({ op: 'take', agent: take, token: token || '' });
        else if (ev.target.dataset.leave) send({ op: 'leave' });
    });
    $('doact').addEventListener('click', () => $('legal').value && act($('legal').value));
    $('doplan').addEventListener('click', () => $('plancmd').value.trim() && send({ op: 'act', plan: $('plancmd').value.trim() }));
    // While a seat is held, the arrow keys and WASD play it (before the viewer's own keys).
    window.addEventListener('keydown', (ev) => {
        if (!st.seat || !KEYS[ev.key] || ev.target.tagName === 'INPUT' && ev.target.type !== 'range'
            || ev.target.tagName === 'SELECT') return;
        const name = moveAction(KEYS[ev.key]);
        ev.preventDefault();
        ev.stopImmediatePropagation();
        if (name) act(name);
        else say(`no legal move ${KEYS[ev.key]} now`, true);
    }, true);
    connect();

    return {
        get seats() { return st.seats.map((s) => ({ ...s })); },
        get seat() { return st.seat; },
        get turn() { return st.turn; },
        get error() { return st.error; },
        get lastAction() { return st.last; },
        take(agent) { send({ op: 'take', agent, token: token || '' }); },
        act,
        send,
    };
}
