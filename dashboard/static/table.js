/* The table view (big screen) and, on /virtual, the playable virtual table. */
"use strict";
const PLAY = BOOT.page === "virtual";
/* The board comes from the rules engine (BOOT.board, engine/rules/observer.py): corner cards,
   corner positions, the line each position faces, each line's cells. Never repeated here. */
const BOARD = BOOT.board;
const CORNERS = new Map(Object.entries(BOARD.corners));
const perf = (window.__cauldron = {
  renders: 0, latencies: [], received: [], lastTs: null, waiters: [],
  /* Resolves once the table view shows the update published at `ts` (benchmark, tests). */
  waitFor(ts) {
    if (perf.lastTs === ts) return Promise.resolve(true);
    return new Promise((resolve) => perf.waiters.push([ts, resolve]));
  },
});
let current = null;       // the latest TableState
let previous = null;      // the TableState before it (for announcements)
let socketUp = false;
let joinKey = null;

/* Perimeter position (G3) -> slot of the 8x8 layout (row, column; the square is 1..6). */
function posSlot(p) {
  if (p === 0) return [0, 0];
  if (p < 5) return [0, p + 1];
  if (p === 5) return [0, 7];
  if (p < 10) return [p - 5 + 1, 7];
  if (p === 10) return [7, 7];
  if (p < 15) return [7, 15 - p + 1];
  if (p === 15) return [7, 0];
  return [20 - p + 1, 0];
}

/* The line a pawn at perimeter position p faces (G3); null at a corner. */
function facedLine(p) {
  return BOARD.faced_lines[p];
}

function lineCells(line) {
  return BOARD.lines[line];
}

/* What the table waits for, from the engine service's prompt (translated here). */
function promptText(v) {
  const info = v.table;
  if (!info || !info.prompt) return "";
  const p = info.prompt;
  const seat = p.seat != null ? seatLabel(p.seat, v.seats[p.seat] && v.seats[p.seat].colour) : "";
  const ex = v.expected || {};
  const params = { seat, filled: info.dealing ? info.dealing.filled : 0 };
  if (p.code === "lay_on_pad" || p.code === "last_card") params.card = info.held ? cardLabel(info.held.card) : "";
  if (p.code === "vanesco_tap") params.card = info.vanesco_wait.length ? cardLabel(info.vanesco_wait[0].card) : "";
  if (p.code === "refill") params.cell = ex.refill_cell || "";
  if (p.code === "corner_blocked" && p.seat != null && v.seats[p.seat]) {
    // The line Declinatio would face: only Vanesco/Perluceo there, using it ends the game (G7).
    const line = facedLine((v.seats[p.seat].pawn + v.move_value) % 20);
    params.line = line != null ? lineLabel(line) : "";
  }
  if (p.code === "take" && p.seat != null && v.seats[p.seat]) {
    params.pos = v.seats[p.seat].pawn;
    params.line = v.seats[p.seat].faced_line != null ? lineLabel(v.seats[p.seat].faced_line) : "";
  }
  const key = "prompt_" + p.code;
  return T[key] !== undefined ? t(key, params) : p.text;
}

function renderTurn(state) {
  const el = document.getElementById("turn");
  const game = state.game;
  if (!game) { setHtml(el, `<p>${esc(t("no_game"))}</p>`); return; }
  const v = game.view;
  const ex = v.expected || {};
  const prompt = promptText(v);
  const promptHtml = prompt ? `<p class="prompt" data-prompt="${esc(v.table.prompt.code)}">➜ ${esc(prompt)}</p>` : "";
  if (v.over) { setHtml(el, `<p class="big">${esc(t("game_over"))}</p>`); return; }
  if (v.turn == null || !v.seats.length || (v.table && v.table.status !== "playing")) {
    setHtml(el, promptHtml || `<p>${esc(t("no_game"))}</p>`);
    return;
  }
  const seat = v.seats[v.turn];
  const who = seatLabel(v.turn, seat && seat.colour);
  let html = `<p class="big"><span class="turn-marker c-${esc(seat.colour)}" aria-hidden="true">${esc(CAT.colours[seat.colour] ? CAT.colours[seat.colour].symbol : "")}</span> ` +
    `<strong>${esc(t("turn_of", { seat: who }))}</strong> — ${esc(t("move_value", { n: v.move_value }))}</p>`;
  if (ex.phase === "take") {
    const from = (seat.pawn - v.move_value + 20) % 20;
    html += `<p class="pawn-move">${esc(t("pawn_move", { seat: who, from, to: seat.pawn, n: v.move_value }))}` +
      (seat.faced_line != null ? ` · ${esc(t("faces", { line: lineLabel(seat.faced_line) }))}` : ` · ${esc(t("at_corner"))}`) + `</p>`;
  }
  const todo = [];
  todo.push(`<span class="phase">${esc(t("phase_" + ex.phase))}</span>`);
  if (ex.take && ex.take.length) todo.push(`<span class="opt take">✓ ${esc(t("may_take"))}: ${ex.take.map(esc).join(" · ")}</span>`);
  if (ex.accio && ex.accio.length) todo.push(`<span class="opt accio">A ${esc(t("accio_options"))}: ${ex.accio.length}</span>`);
  if (ex.declinatio) todo.push(`<span class="opt decl">D ${esc(t("declinatio_option"))}</span>`);
  if (ex.refill_cell) todo.push(`<span class="opt refill">⟳ ${esc(t("refill", { cell: ex.refill_cell }))}</span>`);
  if (ex.last_card) todo.push(`<span class="opt last">★ ${esc(t("last_card", { card: cardLabel(ex.last_card) }))}</span>`);
  html += `<p class="todo">${todo.join(" ")}</p>` + promptHtml;
  setHtml(el, html);
}

function renderBoard(state) {
  const board = document.getElementById("board");
  const game = state.game;
  const v = game ? game.view : null;
  const virtual = state.virtual;
  const ex = v && !v.over ? v.expected || {} : {};
  const take = new Set(ex.take || []);
  const accio = new Set(ex.accio || []);
  const faced = new Set(ex.faced_line != null && !v.over ? lineCells(ex.faced_line) : []);
  const hole = ex.refill_cell;
  // At a corner with Declinatio: the line the pawn would face after moving again (G7).
  const declLine = ex.declinatio && v.seats[v.turn] ? facedLine((v.seats[v.turn].pawn + v.move_value) % 20) : null;
  const decl = new Set(declLine != null ? lineCells(declLine) : []);
  const parts = [];
  for (let r = 0; r < 6; r++) {
    for (let c = 0; c < 6; c++) {
      const key = `${r},${c}`;
      const corner = CORNERS.has(key);
      let card = v ? v.grid[r][c] : null;
      if (PLAY && virtual && !corner) card = virtual.cells[key] || null;
      if (corner && !card) card = CORNERS.get(key);
      const cls = ["cell"];
      let badge = "";
      let hint = "";
      if (corner) cls.push("corner");
      if (!card) cls.push("empty");
      if (faced.has(key)) cls.push("faced");
      if (take.has(key)) { cls.push("may-take"); badge = `<span class="badge" aria-hidden="true">✓</span>`; hint = t("may_take"); }
      if (accio.has(key)) { cls.push("accio"); badge = `<span class="badge" aria-hidden="true">A</span>`; hint = t("accio_options"); }
      if (decl.has(key) && card && !/^(vanesco|perluceo)-/.test(card)) { cls.push("decl"); badge = `<span class="badge" aria-hidden="true">D</span>`; hint = t("declinatio_option"); }
      if (hole === key) { cls.push("hole"); badge = `<span class="badge" aria-hidden="true">⟳</span>`; hint = t("phase_refill"); }
      const label = `${cellLabel(key)}: ${card ? cardLabel(card) : t("empty")}${hint ? " — " + hint : ""}`;
      const inner = `${card ? cardHtml(card) : ""}<span class="coord" aria-hidden="true">${key}</span>${badge}`;
      const style = `grid-row:${r + 2};grid-column:${c + 2}`;
      if (PLAY && !corner) {
        parts.push(`<button type="button" class="${cls.join(" ")}" style="${style}" data-act="cell" data-where="${key}" data-focus="cell-${key}" aria-label="${esc(label)}">${inner}</button>`);
      } else {
        parts.push(`<div class="${cls.join(" ")}" style="${style}" data-cell="${key}" role="img" aria-label="${esc(label)}">${inner}</div>`);
      }
    }
  }
  const pawnsAt = {};
  if (v) for (const s of v.seats) (pawnsAt[s.pawn] = pawnsAt[s.pawn] || []).push(s);
  const active = v && !v.over && v.seats.length ? v.turn : null;
  const fromPos = v && !v.over && ex.phase === "take" && v.seats[v.turn] ? (v.seats[v.turn].pawn - v.move_value + 20) % 20 : null;
  for (let p = 0; p < 20; p++) {
    const [row, col] = posSlot(p);
    const pawns = (pawnsAt[p] || []).map((s) => {
      const sym = CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "";
      return `<span class="pawn c-${esc(s.colour)}${s.seat === active ? " active" : ""}" data-pawn="${s.seat}" title="${esc(seatLabel(s.seat, s.colour))}">${esc(sym)}${s.seat + 1}</span>`;
    }).join("");
    const cls = ["pos", BOARD.corner_positions.includes(p) ? "pos-corner" : "pos-edge"];
    if (fromPos === p && v.move_value) cls.push("from");
    const names = (pawnsAt[p] || []).map((s) => seatLabel(s.seat, s.colour)).join(", ");
    parts.push(`<div class="${cls.join(" ")}" style="grid-row:${row + 1};grid-column:${col + 1}" data-pos="${p}" aria-label="${p}${names ? ": " + esc(names) : ""}">` +
      `<span class="num" aria-hidden="true">${p}</span>${pawns}</div>`);
  }
  patchChildren(board, parts);
}

function renderSeats(state) {
  const el = document.getElementById("seats");
  const game = state.game;
  if (!game) { patchChildren(el, []); return; }
  const v = game.view;
  const virtual = state.virtual;
  const parts = [];
  for (const s of v.seats) {
    let html = "";
    const active = !v.over && v.turn === s.seat;
    const spells = s.spells.map((sp) => {
      const info = cardInfo(sp.card);
      const uses = sp.uses_left > 0 ? t("uses_left", { n: sp.uses_left }) : t("spent");
      return `<li class="spell${sp.uses_left > 0 ? "" : " spent"}">✦ ${esc(info.label)} — ${esc(uses)}</li>`;
    }).join("");
    html += `<article class="seat c-border-${esc(s.colour)}${active ? " active" : ""}" data-seat="${s.seat}">` +
      `<h2>${active ? '<span class="now" aria-hidden="true">▶</span> ' : ""}<span class="swatch c-${esc(s.colour)}" aria-hidden="true">${esc(CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "")}</span> ${esc(seatLabel(s.seat, s.colour))}</h2>` +
      `<p class="where">${esc(t("pawn_at", { pos: s.pawn }))}${s.faced_line != null ? " · " + esc(t("faces", { line: lineLabel(s.faced_line) })) : " · " + esc(t("at_corner"))}</p>` +
      `<div class="cauldron"><span class="lbl">${esc(t("cauldron"))}: <span class="size">${esc(t("cards_n", { n: s.cauldron_size }))}</span></span>` +
      `<div class="top">${s.top ? cardHtml(s.top, "small") : `<span class="none">${esc(t("empty"))}</span>`}</div></div>` +
      (spells ? `<ul class="spells" aria-label="${esc(t("spells"))}">${spells}</ul>` : "");
    if (PLAY && virtual) {
      const pad = virtual.pads[String(s.seat)];
      const padLabel = `${t("pad", { seat: seatLabel(s.seat, s.colour) })}: ${pad ? cardLabel(pad) : t("pad_empty")}`;
      html += `<div class="pad-zone"><button type="button" class="pad${pad ? " full" : ""}" data-act="pad" data-seat="${s.seat}" data-focus="pad-${s.seat}" aria-label="${esc(padLabel)}">` +
        `<span class="pad-name">${esc(t("pad", { seat: s.seat + 1 }))}</span>${pad ? cardHtml(pad, "small") : `<span class="none">${esc(t("lay_here"))}</span>`}</button>`;
      if (pad) html += `<button type="button" class="btn small" data-act="slide" data-seat="${s.seat}" data-focus="slide-${s.seat}">${esc(t("slide"))}</button>` +
        `<button type="button" class="btn small" data-act="pickpad" data-seat="${s.seat}" data-focus="pick-${s.seat}">${esc(t("pick_up"))}</button>`;
      if ((virtual.sizes[String(s.seat)] || 0) > 0) html += `<button type="button" class="btn small" data-act="tap" data-seat="${s.seat}" data-focus="tap-${s.seat}">${esc(t("tap"))}</button>`;
      html += `</div>`;
    }
    html += `</article>`;
    parts.push(html);
  }
  parts.push(`<p class="pile"><span aria-hidden="true">▤</span> ${esc(t("pile"))}: <strong class="pile-size">${esc(t("cards_n", { n: v.pile_size }))}</strong></p>`);
  patchChildren(el, parts);
}

function seatsOf(state) { return state.game ? state.game.view.seats : []; }

function renderAlerts(state) {
  const el = document.getElementById("alerts");
  if (!state.alerts.length) { setHtml(el, ""); return; }
  setHtml(el, `<h2>${esc(t("alerts"))}</h2>` + state.alerts.map((a) =>
    `<div class="alert sev-${esc(a.severity)}" data-alert="${esc(a.alert_id)}" data-rule="${esc(a.rule)}">` +
    `<span class="rule">⚠ ${esc(t("rule", { rule: a.rule }))}</span>` +
    (a.seat != null && state.game && state.game.view.seats[a.seat] ? ` <span class="who">${esc(seatLabel(a.seat, state.game.view.seats[a.seat].colour))}</span>` : "") +
    `<p class="msg">${esc(humaniseSeats(a.message, seatsOf(state)))}</p><p class="fix"><strong>${esc(t("what_to_do"))}</strong> ${esc(humaniseSeats(a.instruction, seatsOf(state)))}</p></div>`).join(""));
}

function renderJoin(state) {
  const el = document.getElementById("join");
  const game = state.game;
  const key = game ? `${game.game_id}|${state.joined.join(",")}|${game.view.players}|${game.view.over}` : "none";
  if (key === joinKey) return;
  joinKey = key;
  if (!game || !game.game_id || game.view.over) { el.innerHTML = ""; return; }
  let html = `<h2>${esc(t("join"))}</h2><div class="qr-row">`;
  for (const s of game.view.seats) {
    const label = seatLabel(s.seat, s.colour);
    if (state.joined[s.seat]) {
      html += `<figure class="qr joined" data-seat="${s.seat}"><div class="done" aria-hidden="true">✓</div><figcaption>${esc(label)} — ${esc(t("joined"))}</figcaption></figure>`;
    } else {
      html += `<figure class="qr" data-seat="${s.seat}"><img src="/api/seats/${s.seat}/qr.svg?g=${encodeURIComponent(game.game_id)}" alt="${esc(t("scan_me", { n: s.seat + 1 }))}" width="150" height="150"><figcaption>${esc(label)}</figcaption></figure>`;
    }
  }
  el.innerHTML = html + `</div>`;
}

function renderScoresInline(state) {
  const el = document.getElementById("scores-inline");
  const end = state.game && state.game.view.end;
  if (!end || !end.scores) { el.hidden = true; el.innerHTML = ""; return; }
  renderScores(el, end.scores, state.game.view.seats, end);
  el.insertAdjacentHTML("beforeend", `<p><a href="/scores">${esc(t("see_scores"))}</a></p>`);
  el.hidden = false;
}

function renderHand(state) {
  if (!PLAY) return;
  const virtual = state.virtual;
  const el = document.getElementById("hand");
  if (!virtual) { el.textContent = ""; return; }
  el.innerHTML = virtual.hand
    ? `<p>${esc(t("hand"))}: ${cardHtml(virtual.hand)}</p>`
    : `<p>${esc(virtual.restoring ? t("restoring") : virtual.dealt ? t("hand_empty") : t("not_dealt"))}</p>`;
  const v = state.game && state.game.view;
  const last = v && !v.over && v.phase === "last_card";
  document.getElementById("pass-btn").hidden = !(v && !v.over && v.expected && v.expected.can_pass);
  const prompt = v && v.table && v.table.prompt;
  document.getElementById("declinatio-btn").hidden = !(v && !v.over && prompt && prompt.code === "corner_blocked");
  document.getElementById("keep-btn").hidden = !last;
  document.getElementById("discard-btn").hidden = !last;
  document.getElementById("drop-btn").disabled = !virtual.hand;
  document.getElementById("draw-btn").disabled = !!virtual.hand || !virtual.pile_size;
  document.getElementById("draw-btn").textContent = `${t("draw")} (${virtual.pile_size})`;
}

/* Announce what changed since the previous state (ARIA live region, optional speech). */
function announceChanges(prev, next) {
  const g0 = prev && prev.game, g1 = next.game;
  const lines = [];
  if (g1 && (!g0 || g0.game_id !== g1.game_id)) {
    if (g0) lines.push(t("ann_new_game", { n: g1.view.players }));
  } else if (g0 && g1) {
    const a = g0.view, b = g1.view;
    for (let r = 0; r < 6; r++) for (let c = 0; c < 6; c++) {
      const was = a.grid[r][c], now = b.grid[r][c];
      if (was && was !== now) {
        const s = a.seats[a.turn];
        lines.push(t("ann_take", { seat: seatLabel(a.turn, s && s.colour), card: cardLabel(was), cell: cellLabel(`${r},${c}`) }));
      }
      if (now && was !== now) lines.push(t("ann_refill", { card: cardLabel(now), cell: cellLabel(`${r},${c}`) }));
    }
    if (!b.over && (a.turns !== b.turns || a.turn !== b.turn)) {
      const s = b.seats[b.turn];
      lines.push(t("ann_turn", { seat: seatLabel(b.turn, s && s.colour), n: b.move_value }));
    }
    if (b.over && !a.over && b.end && b.end.scores) {
      const names = b.end.scores.winners.map((w) => seatLabel(w, b.seats[w].colour)).join(", ");
      lines.push(t("ann_over", { winners: t("winners", { names }) }));
    }
  }
  if (lines.length) announce(lines.join(" "));
  const before = new Map(((prev && prev.alerts) || []).map((a) => [a.alert_id, a]));
  const after = new Set(next.alerts.map((a) => a.alert_id));
  const seats = seatsOf(next);
  for (const a of next.alerts) if (!before.has(a.alert_id)) announce(t("ann_alert", { rule: a.rule, message: humaniseSeats(a.message, seats), instruction: humaniseSeats(a.instruction, seats) }), true);
  for (const [id, a] of before) if (!after.has(id)) announce(t("ann_alert_cleared", { message: humaniseSeats(a.message, seats) }));
}

function render(state) {
  keepFocus(() => {
    renderTurn(state);
    renderBoard(state);
    renderSeats(state);
    renderHand(state);
  });
  renderAlerts(state);
  renderJoin(state);
  renderScoresInline(state);
  renderBanners(state.status, socketUp);
  const g = state.game;
  perf.renders += 1;
  if (g && g.ts != null && g.ts !== perf.lastTs) {
    perf.lastTs = g.ts;
    perf.latencies.push(performance.timeOrigin + performance.now() - g.ts * 1000);
    if (perf.latencies.length > 1000) perf.latencies.shift();
    const ready = perf.waiters.filter(([ts]) => ts === g.ts);
    perf.waiters = perf.waiters.filter(([ts]) => ts !== g.ts);
    for (const [, resolve] of ready) resolve(true);
  }
  document.body.dataset.gameTs = g && g.ts != null ? String(g.ts) : "";
  document.body.dataset.inputs = g && g.view.table ? String(g.view.table.inputs) : "";
  document.body.dataset.hand = state.virtual && state.virtual.hand ? state.virtual.hand : "";
  const vt = state.virtual;
  document.body.dataset.virtual = vt ? [vt.hand || "", Object.keys(vt.pads).sort().map((k) => `${k}:${vt.pads[k]}`).join(","),
    vt.pile_size, Object.keys(vt.cells).length,
    Object.keys(vt.sizes).sort().map((k) => `${k}:${vt.sizes[k]}`).join(",")].join("|") : "";
  document.body.dataset.renders = String(perf.renders);
}

function onState(state) {
  if (state.type !== "table") return;
  const g = state.game;
  if (g && g.ts != null && g.ts !== perf.lastTs) {
    perf.received.push(performance.timeOrigin + performance.now() - g.ts * 1000);
    if (perf.received.length > 1000) perf.received.shift();
  }
  previous = current;
  current = state;
  render(state);
  announceChanges(previous, state);
}

/* ---- virtual table gestures ---- */
function playMsg(text, isError) {
  const el = document.getElementById("play-msg");
  if (!el) return;
  el.textContent = text || "";
  el.classList.toggle("error", !!isError);
  if (text && isError) announce(text, true);
}

async function gesture(body) {
  try {
    await api("POST", "/api/virtual/gesture", body);
    playMsg("");
    return true;
  } catch (e) {
    playMsg(t("error", { message: e.message }), true);
    return false;
  }
}

async function onAct(btn) {
  const act = btn.dataset.act;
  const virtual = current && current.virtual;
  if (!virtual) return;
  const seat = btn.dataset.seat != null ? Number(btn.dataset.seat) : null;
  if (act === "cell") {
    const where = btn.dataset.where;
    const card = virtual.cells[where];
    if (card && !virtual.hand) return gesture({ action: "lift", where });
    if (!card && virtual.hand) return gesture({ action: "lay", where });
    if (!card && !virtual.hand && virtual.pile_size) {
      if (await gesture({ action: "draw" })) return gesture({ action: "lay", where });
      return;
    }
    return playMsg(card ? t("error", { message: cardLabel(virtual.hand) }) : t("hand_empty"), true);
  }
  if (act === "pad") {
    if (virtual.hand) return gesture({ action: "lay", where: `pad:${seat}` });
    if (virtual.pads[String(seat)]) return gesture({ action: "slide", seat });
    return playMsg(t("hand_empty"), true);
  }
  if (act === "slide") return gesture({ action: "slide", seat });
  if (act === "pickpad") return gesture({ action: "lift", where: `pad:${seat}` });
  if (act === "tap") return gesture({ action: "tap", seat });
}

document.addEventListener("DOMContentLoaded", () => {
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest("[data-act]");
    if (btn && PLAY) { ev.preventDefault(); onAct(btn); }
  });
  if (PLAY) {
    document.getElementById("draw-btn").addEventListener("click", () => gesture({ action: "draw" }));
    document.getElementById("drop-btn").addEventListener("click", () => gesture({ action: "drop" }));
    for (const verb of ["keep", "discard", "pass", "declinatio"]) {
      document.getElementById(`${verb}-btn`).addEventListener("click", async () => {
        try { await api("POST", `/api/virtual/${verb}`); playMsg(t("done")); }
        catch (e) { playMsg(t("error", { message: e.message }), true); }
      });
    }
  }
  liveSocket("/ws/table", onState, (up) => {
    socketUp = up;
    renderBanners(current && current.status, up);
  });
});
