// The dice-envs game pad. No rules live here: the server sends what is legal and what each box
// would score; this page draws it and sends the person's clicks. Text from others is only ever
// put into the page as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const pad = { options: null, me: null, room: null, held: new Set(), selected: new Set(), turnKey: "",
  ws: null, wsRetry: 0, hint: null, busy: false, review: null, reviewAt: null };
window.padState = pad; // read by the browser tests (and handy in the console)

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (v === true) e.setAttribute(k, "");
    else if (v !== false && v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function showMessage(text) {
  const m = $("message");
  m.textContent = text || "";
  m.hidden = !text;
}

async function api(path, body, token) {
  const init = { method: body === undefined ? "GET" : "POST", headers: {} };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  if (token) init.headers["X-Seat-Token"] = token;
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({ error: `the server answered ${res.status}` }));
  if (!res.ok) throw new Error(data.error || `the server answered ${res.status}`);
  return data;
}

// ------------------------------------------------------------------ lobby
function ruleInput(name, value) {
  if (typeof value === "boolean") return el("input", { type: "checkbox", name, checked: value, dataset: { kind: "bool" } });
  if (value === null) return el("input", { type: "number", name, placeholder: "unlimited", dataset: { kind: "optint" } });
  return el("input", { type: "number", name, value: String(value), dataset: { kind: "int" } });
}

function seatRow(index, value) {
  const game = pad.options.games[$("game-select").value];
  const n = el("input", { type: "number", class: "seat-n", value: "1000", min: "0", hidden: value !== "threshold:N" });
  const sel = el("select", { class: "seat-kind", dataset: { seat: String(index) },
    onchange: () => { n.hidden = sel.value !== "threshold:N"; } },
    el("option", { value: "person", text: "person" }),
    ...game.agents.map((s) => el("option", { value: s, text: s === "threshold:N" ? "threshold:N (bank at N)" : s })));
  sel.value = value;
  const row = el("div", { class: "seat-row" }, el("span", { text: `seat ${index + 1}` }), sel, n,
    el("button", { type: "button", class: "small", text: "×", title: "remove seat", onclick: () => row.remove() }));
  return row;
}

function drawRuleFields() {
  const game = pad.options.games[$("game-select").value];
  const box = $("rule-fields");
  box.replaceChildren(el("legend", { text: "Rule parameters" }));
  for (const [k, v] of Object.entries(game.rules)) box.append(el("label", {}, k, ruleInput(k, v)));
  $("seat-list").replaceChildren(seatRow(0, "person"), seatRow(1, game.agents[0]));
}

function readRules() {
  const game = pad.options.games[$("game-select").value];
  const out = {};
  for (const input of $("rule-fields").querySelectorAll("input")) {
    const k = input.name, d = game.rules[k];
    if (input.dataset.kind === "bool") { if (input.checked !== d) out[k] = input.checked; continue; }
    if (input.value === "") { if (d !== null) out[k] = null; continue; }
    const v = Number(input.value);
    if (v !== d) out[k] = Number.isInteger(v) ? v : input.value;
  }
  return out;
}

function readSeats() {
  return [...$("seat-list").querySelectorAll(".seat-row")].map((row) => {
    const kind = row.querySelector(".seat-kind").value;
    if (kind === "person") return { kind: "person" };
    if (kind === "threshold:N") return { kind: "agent", spec: `threshold:${row.querySelector(".seat-n").value || 0}` };
    return { kind: "agent", spec: kind };
  });
}

async function createRoom() {
  showMessage("");
  const btn = $("create-room");
  btn.disabled = true;
  btn.textContent = "opening…";
  try {
    const body = { game: $("game-select").value, rules: readRules(), seats: readSeats() };
    if ($("create-name").value.trim()) body.name = $("create-name").value.trim();
    const seed = new URLSearchParams(location.search).get("seed"); // ?seed=N replays the same dice
    if (seed !== null && /^[0-9]{1,15}$/.test(seed)) body.seed = Number(seed);
    enterRoom(await api("/api/rooms", body));
  } catch (e) { showMessage(e.message); }
  btn.disabled = false;
  btn.textContent = "Open room";
}

async function joinRoom() {
  showMessage("");
  const code = $("join-code").value.trim().toUpperCase();
  if (!code) { showMessage("enter the room code you were given"); return; }
  try {
    const body = {};
    if ($("join-name").value.trim()) body.name = $("join-name").value.trim();
    enterRoom(await api(`/api/rooms/${encodeURIComponent(code)}/join`, body));
  } catch (e) { showMessage(e.message); }
}

function enterRoom(joined) {
  pad.me = { code: joined.code, token: joined.token, seat: joined.seat, opener: joined.opener };
  sessionStorage.setItem("dice-envs-seat", JSON.stringify(pad.me));
  history.replaceState(null, "", `?room=${joined.code}`);
  $("lobby").hidden = true;
  $("room").hidden = false;
  $("room-bar").hidden = false;
  $("room-code").textContent = joined.code;
  render(joined.room);
  connect();
}

function leave() {
  sessionStorage.removeItem("dice-envs-seat");
  if (pad.ws) { pad.ws.onclose = null; pad.ws.close(); }
  location.href = "/";
}

// ------------------------------------------------------------------ live updates
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}/api/rooms/${encodeURIComponent(pad.me.code)}/ws`);
  pad.ws = ws;
  ws.onmessage = (ev) => {
    const data = JSON.parse(ev.data);
    if (data.error) { showMessage(data.error); ws.onclose = null; return; }
    pad.wsRetry = 0;
    render(data);
  };
  ws.onclose = () => { pad.wsRetry += 1; if (pad.wsRetry < 20) setTimeout(connect, 500 * pad.wsRetry); };
}

// ------------------------------------------------------------------ actions
async function send(path, body) {
  if (pad.busy) return;
  pad.busy = true;
  showMessage("");
  try {
    const view = await api(`/api/rooms/${pad.me.code}/${path}`, body || {}, pad.me.token);
    if (view && view.version !== undefined) render(view);
  } catch (e) { showMessage(e.message); }
  pad.busy = false;
  if (pad.room) render(pad.room);
}

function myTurn() {
  return pad.room && pad.room.status === "playing" && pad.room.current === pad.me.seat && pad.me.seat !== null;
}

function toggleDie(pos) {
  if (!myTurn()) return;
  const set = pad.room.game === "farkle" ? pad.selected : pad.held;
  if (set.has(pos)) set.delete(pos); else set.add(pos);
  pad.hint = null;
  render(pad.room);
}

function farkleSelection(room) {
  const key = [...pad.selected].map((i) => room.farkle.dice[i]).sort((a, b) => a - b).join(",");
  return room.farkle.selections.find((s) => s.faces.join(",") === key) || null;
}

function roll() {
  if (pad.room.game === "farkle") send("move", { type: "roll", take: [...pad.selected].sort() });
  else send("move", { type: "roll", hold: [...pad.held].sort() });
}

async function askHint() {
  const box = $("hint-box");
  box.hidden = false;
  box.textContent = "thinking… (a first solve of new rules takes a few seconds)";
  const version = pad.room.version;
  try {
    const advice = await api(`/api/rooms/${pad.me.code}/hint`, {}, pad.me.token);
    if (pad.room.version !== version) { box.textContent = ""; box.hidden = true; return; } // moved on meanwhile
    pad.hint = { ...advice, version };
  } catch (e) { pad.hint = null; box.textContent = e.message; return; }
  render(pad.room);
}

// ------------------------------------------------------------------ drawing
function seatName(room, i) {
  const s = room.seats[i];
  return s.name + (i === pad.me.seat ? " (you)" : "");
}

function resetTurnState(room) {
  let key;
  if (room.game === "farkle") {
    const f = room.farkle;
    key = [room.current, f.turns.join("."), f.dice.join(""), f.turn_total, f.set_aside.length].join("|");
  } else {
    const s = room.scorecard;
    key = [room.current, s.round, s.throw, s.dice.join("")].join("|");
  }
  if (key === pad.turnKey) return;
  pad.turnKey = key;
  pad.selected = new Set();
  pad.held = new Set();
  if (room.game !== "farkle" && room.scorecard.held_faces.length) {
    // keep the dice held for the last throw marked (the dice are sorted again after a throw)
    const want = [...room.scorecard.held_faces];
    room.scorecard.dice.forEach((f, i) => {
      const j = want.indexOf(f);
      if (j >= 0) { want.splice(j, 1); pad.held.add(i); }
    });
  }
}

function render(room) {
  // the POST answer and the WebSocket race: never draw an older state over a newer one
  if (pad.room && room.code === pad.room.code && room.version < pad.room.version) room = pad.room;
  pad.room = room;
  $("room-status").textContent = room.status === "waiting" ? "waiting for players" :
    room.status === "playing" ? `playing ${room.game}` : "game over";
  $("waiting").hidden = room.status !== "waiting";
  $("pad").hidden = room.status === "waiting";
  drawLog(room);
  if (room.status === "waiting") { drawWaiting(room); return; }
  resetTurnState(room);
  if (pad.hint && pad.hint.version !== room.version) pad.hint = null;
  drawTurnLine(room);
  const row = pad.review && pad.review.rows && pad.reviewAt !== null ? pad.review.rows[pad.reviewAt] : null;
  const shown = row ? { ...room, current: row.seat, [room.game === "farkle" ? "farkle" : "scorecard"]: row.view } : room;
  if (room.game === "farkle") drawFarkle(shown); else drawScorecard(shown);
  if (row) $("turn-line").textContent = `position of decision ${pad.reviewAt + 1}: ${seatName(room, row.seat)} chose ` +
    `${row.choice}` + (row.loss > 0 ? ` — best: ${row.best} (loss ${row.loss.toFixed(3)})` : " — best");
  drawHint(room);
  drawReview(room);
}

// ------------------------------------------------------------------ the review after the game
async function loadReview(code) {
  pad.review = { loading: true };
  try { pad.review = await api(`/api/rooms/${code}/review`); } catch (e) { pad.review = { error: e.message }; }
  if (pad.room) render(pad.room);
}

function drawReview(room) {
  const panel = $("review-panel");
  panel.hidden = room.status !== "over";
  if (panel.hidden) return;
  if (!pad.review) { loadReview(room.code); return; }
  $("download-record").href = `/api/rooms/${room.code}/record`;
  $("review-back").hidden = pad.reviewAt === null;
  const rv = pad.review, summary = $("review-summary"), table = $("review-table");
  if (rv.loading || rv.error || !rv.exact) {
    summary.textContent = rv.loading ? "valuing every decision…" : rv.error || rv.note;
    table.replaceChildren();
    return;
  }
  const s = rv.summary, d = rv.unit.includes("points") ? 2 : 4;
  summary.replaceChildren(
    el("div", { text: `values: ${rv.unit} (exact). ${s.decisions} decisions, ${s.wrong_decisions} lost something: ` +
      `mean loss ${s.mean_per_decision.toFixed(d + 1)} per decision, ${s.mean_per_game.toFixed(d)} per game` }),
    el("div", { text: "loss by kind: " + (Object.entries(s.by_kind).filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v.toFixed(d)}`).join(", ") || "none") }),
    el("div", { text: "worst: " + (s.worst.map((i) => `#${i + 1}`).join(", ") || "none") + " (click a row to see its position)" }));
  const head = el("tr", {}, ...["#", "seat", "turn", "dice", "choice", "best", "value", "best value", "loss", "kind"]
    .map((t) => el("th", { text: t })));
  table.replaceChildren(head, ...rv.rows.map((r, i) => el("tr", {
    class: "review-row" + (r.loss > 0 ? " lost" : "") + (i === pad.reviewAt ? " current" : ""),
    dataset: { index: String(i) }, onclick: () => { pad.reviewAt = i; render(pad.room); } },
    ...[i + 1, seatName(room, r.seat), r.turn, r.dice.join(" "), r.choice, r.loss > 0 ? r.best : "=",
      r.value.toFixed(d), r.best_value.toFixed(d), r.loss.toFixed(d), r.kind || ""].map((t) => el("td", { text: String(t) })))));
}

function drawWaiting(room) {
  $("share-code").textContent = room.code;
  $("seat-status").replaceChildren(...room.seats.map((s) => el("li", {
    text: `seat ${s.index + 1}: ${s.kind === "agent" ? s.spec + " (bot)" : s.taken ? s.name : "free — waiting for someone to join"}` +
      (s.index === pad.me.seat ? " (you)" : "") })));
  const start = $("start-game");
  start.hidden = !pad.me.opener;
  start.disabled = room.seats.some((s) => !s.taken);
}

function drawTurnLine(room) {
  const banner = $("banner");
  banner.className = "";
  banner.hidden = true;
  if (room.status === "over") {
    const names = room.winners.map((w) => seatName(room, w)).join(" and ");
    banner.textContent = `Game over — ${room.winners.length > 1 ? "shared win" : "winner"}: ${names} ` +
      `(${Math.max(...room.totals)})`;
    banner.dataset.winners = room.winners.join(",");
    banner.hidden = false;
  } else if (room.game === "farkle" && room.farkle.final_round_by !== null) {
    banner.className = "final";
    banner.textContent = `Final round: ${seatName(room, room.farkle.final_round_by)} reached the target of ` +
      `${room.farkle.target}; everyone after gets one last turn`;
    banner.hidden = false;
  }
  let line = "";
  if (room.status === "playing") {
    const who = room.current === pad.me.seat ? "your turn" : `${seatName(room, room.current)} to move`;
    if (room.game === "farkle") line = who;
    else {
      const s = room.scorecard;
      line = `round ${s.round} of ${s.rounds} — ${who} — throw ${s.throw} of ${s.num_throws}`;
      if (s.now && s.now.bonus_due) line += ` — ${s.five_kind_label} bonus +${s.five_kind_bonus}!`;
      if (s.now && s.now.joker) line += " (joker)";
    }
  }
  $("turn-line").textContent = line;
  // a farkle or a bankruptcy is announced as it happens (it stays up until two more things happened)
  const recent = room.log.slice(-3).filter((e) => e.kind === "farkle" || e.kind === "bankrupt");
  $("event").hidden = !recent.length || room.status !== "playing";
  $("event").textContent = recent.map((e) => e.text).join(" — ");
}

function drawDice(dice, chosen, mine) {
  return dice.map((f, i) => el("button", {
    type: "button", class: "die" + (chosen.has(i) ? " held" : ""), text: String(f),
    dataset: { pos: String(i), face: String(f) }, disabled: !mine, title: mine ? "click to mark / unmark" : "",
    onclick: () => toggleDie(i) }));
}

function drawScorecard(room) {
  const s = room.scorecard, mine = myTurn();
  $("dice-row").replaceChildren(...drawDice(s.dice, pad.held, mine));
  const rollBtn = $("roll");
  rollBtn.textContent = s.throws_left > 0 ? `roll! (${s.throws_left} left)` : "roll! (no throws left)";
  rollBtn.disabled = !mine || pad.busy || !s.can_roll || pad.held.size === s.dice.length;
  $("bank").hidden = true;
  $("hint").disabled = !mine;
  $("control-note").textContent = mine ? (s.throws_left > 0 ? "mark the dice to keep, then roll! — or enter the throw in a box" :
    "enter the throw in a box") : "";
  $("farkle-turn").hidden = true;
  $("card").replaceChildren(scorecardTable(room));
}

function scorecardTable(room) {
  const s = room.scorecard, seats = [...room.seats.keys()];
  const head = el("tr", {}, el("th", { text: room.game }),
    ...room.seats.map((_, i) => el("th", { class: i === room.current ? "current" : "", text: seatName(room, i) })));
  const rows = [head];
  const cell = (p, b) => {
    const v = s.cards[p].boxes[b];
    if (v !== null) return v === 0 ? el("td", { class: "struck", text: "XXX" }) : el("td", { text: String(v) });
    if (p === room.current && s.now && room.status === "playing") {
      const pts = s.now.points[b], legal = s.now.legal[b] && p === pad.me.seat;
      const name = s.categories[b].name;
      return el("td", {}, el("button", {
        type: "button", class: "box" + (s.now.legal[b] ? " legal" : ""), text: String(pts),
        dataset: { box: name }, disabled: !legal || pad.busy,
        title: pts === 0 ? "strike out this box (XXX)" : `enter ${pts} points`,
        onclick: () => send("move", { type: "score", box: name }) }));
    }
    return el("td", { class: "cell-open", text: "" });
  };
  const sumRow = (label, f, cls) => el("tr", { class: cls || "sum" }, el("td", { text: label }),
    ...seats.map((p) => el("td", { text: String(f(p)), dataset: { seat: String(p) } })));
  const boxRows = (upper) => s.categories.flatMap((c, b) => c.upper !== upper ? [] :
    [el("tr", {}, el("td", { text: c.label }), ...seats.map((p) => cell(p, b)))]);
  rows.push(...boxRows(true));
  rows.push(sumRow("Upper subtotal", (p) => `${s.cards[p].upper_total} / ${s.upper_bonus_threshold}`));
  rows.push(sumRow(`Bonus (${s.upper_bonus} at ${s.upper_bonus_threshold})`, (p) => s.cards[p].upper_bonus ?
    `+${s.cards[p].upper_bonus}` : `${Math.max(0, s.upper_bonus_threshold - s.cards[p].upper_total)} to go`));
  rows.push(...boxRows(false));
  rows.push(sumRow("Lower total", (p) => s.cards[p].lower_total));
  rows.push(sumRow(`${s.five_kind_label} bonus`, (p) => s.cards[p].five_kind_bonuses ?
    `${s.cards[p].five_kind_bonuses} × ${s.five_kind_bonus}` : "—"));
  const total = sumRow("Grand Total", (p) => s.cards[p].total, "total");
  total.id = "grand-total";
  rows.push(total);
  return el("table", { class: "card" }, ...rows);
}

function drawFarkle(room) {
  const f = room.farkle, mine = myTurn();
  $("dice-row").replaceChildren(...drawDice(f.dice, pad.selected, mine));
  const sel = mine ? farkleSelection(room) : null;
  const rollBtn = $("roll"), bank = $("bank");
  bank.hidden = false;
  const left = f.dice.length - pad.selected.size;
  rollBtn.textContent = sel ? `roll ${left || 6} dice` : "roll";
  rollBtn.disabled = !mine || pad.busy || !sel;
  bank.disabled = !mine || pad.busy || !sel || !sel.bank;
  $("hint").disabled = !mine;
  let note = "";
  if (mine) {
    if (!pad.selected.size) note = "select the scoring dice to set aside";
    else if (!sel) note = "that selection does not score: every die set aside must be part of a combination";
    else if (!sel.bank) note = `+${sel.points}: banking needs a turn total over ${f.bank_minimum}`;
    else note = `+${sel.points}: "Next player" banks ${f.turn_total + sel.points}`;
  }
  $("control-note").textContent = note;
  const turn = $("farkle-turn");
  turn.hidden = false;
  turn.replaceChildren(
    el("div", { id: "turn-total", text: `turn total: ${f.turn_total}` + (sel ? ` (+${sel.points} selected)` : "") }),
    el("div", { class: "aside-row" }, el("span", { text: "set aside this turn:" }),
      ...(f.set_aside.length ? f.set_aside.flat().map((d) => el("span", { class: "die aside", text: String(d) })) :
        [el("span", { text: "—" })])));
  const rows = [el("tr", {}, el("th", { text: `target ${f.target}` }), el("th", { text: "banked" }), el("th", { text: "turns" }))];
  room.seats.forEach((_, p) => rows.push(el("tr", {}, el("th", { class: p === room.current ? "current" : "", text: seatName(room, p) }),
    el("td", { text: String(f.banked[p]), dataset: { seat: String(p) } }), el("td", { text: String(f.turns[p]) }))));
  const table = el("table", { class: "card", id: "grand-total" }, ...rows);
  $("card").replaceChildren(table);
}

function drawHint(room) {
  const box = $("hint-box");
  if (!pad.hint) {
    if (!box.textContent.startsWith("thinking")) { box.hidden = true; box.textContent = ""; }
    return;
  }
  const h = pad.hint;
  box.hidden = false;
  box.replaceChildren(
    el("div", { text: `best: ${h.best.label}` }),
    el("div", { text: `(${h.note}; cost = ${h.unit} given up)` }),
    el("table", {}, ...h.options.map((o, i) => el("tr", { class: i === 0 ? "best" : "" },
      el("td", { text: o.label }), el("td", { text: o.value.toFixed(1) }),
      el("td", { text: i === 0 ? "best" : `−${o.cost.toFixed(2)}` })))));
}

function drawLog(room) {
  const log = $("log");
  log.replaceChildren(...room.log.slice().reverse().map((e) => el("li", { class: e.kind, text: e.text })));
}

// ------------------------------------------------------------------ start
async function init() {
  $("create-room").addEventListener("click", createRoom);
  $("join-game").addEventListener("click", joinRoom);
  $("start-game").addEventListener("click", () => send("start"));
  $("roll").addEventListener("click", roll);
  $("bank").addEventListener("click", () => send("move", { type: "bank", take: [...pad.selected].sort() }));
  $("hint").addEventListener("click", askHint);
  $("leave").addEventListener("click", leave);
  $("review-back").addEventListener("click", () => { pad.reviewAt = null; render(pad.room); });
  $("add-seat").addEventListener("click", () => {
    const list = $("seat-list");
    const most = pad.options.games[$("game-select").value].max_players;
    if (list.children.length < most) list.append(seatRow(list.children.length, "person"));
  });
  try { pad.options = await api("/api/options"); } catch (e) { showMessage(e.message); return; }
  const sel = $("game-select");
  sel.replaceChildren(...Object.keys(pad.options.games).map((g) => el("option", { value: g, text: g })));
  sel.addEventListener("change", drawRuleFields);
  drawRuleFields();
  document.body.dataset.ready = "1";
  const params = new URLSearchParams(location.search);
  const code = params.get("room");
  const saved = JSON.parse(sessionStorage.getItem("dice-envs-seat") || "null");
  if (code && saved && saved.code === code.toUpperCase()) {
    try { enterRoom({ ...saved, room: await api(`/api/rooms/${saved.code}`) }); return; }
    catch (e) { sessionStorage.removeItem("dice-envs-seat"); showMessage(e.message); }
  }
  if (code) $("join-code").value = code.toUpperCase();
}

init();
