/* Glastonbury on the phone (/seat/N): a seat's controller, drawn by `renderSeat` (the shell,
   seat.js, owns the socket and calls it). Alerts first; "Your action is needed" for every input the
   engine waits for from this seat; one tap per take, refill or Vanesco tap on the virtual
   table (POST /api/seats/{n}/play), the same as instructions at a real table. */
import { boardParts } from "./glastonbury-board.js";
import {
  CAT, GEO, alertsHtml, announce, gameOver, holdsSquare, refusalText, api, cardHtml, cardLabel, cellLabel, colourName, esc, humanise,
  lineLabel, moveWords, patchChildren, posLabel, promptText, seatLabel, seatOf, setHtml, t,
  tn, usesText,
} from "/static/core.js";
/** @typedef {import("/types/wire.js").SeatState} SeatState */
/** @typedef {import("/types/wire.js").HintAnswer} HintAnswer */

const SEAT = Number(location.pathname.split("/").pop());
let last = null;
let turnKey = null;
// Taps run one after the other: a tap made while the previous one is still on its way (the
// refill offered as soon as the take lands) waits its turn instead of being lost; the same
// tap twice in a row (a double tap) is sent once.
let queue = Promise.resolve();
let pending = null;

function q(path) { return path; }  // the seat's HttpOnly cookie (set at /join) proves it

/* Every input the engine waits for from this seat, as a list of
   {kind, text, card?, where?, body?, verb?}: a button when this table can play it. */
function needed(state) {
  const v = state.game && state.game.view;
  if (!v || gameOver(v) || !v.table || v.table.status !== "playing") return [];
  const info = v.table;
  const p = info.prompt || {};
  const ex = v.expected || {};
  const out = [];
  if (p.code === "vanesco_tap" && p.seat === SEAT) {
    const card = info.vanesco_wait.length ? info.vanesco_wait[0].card : null;
    out.push({ kind: "vanesco", text: t("do_vanesco", { card: cardLabel(card) }), card, body: { action: "vanesco" } });
    return out;
  }
  if (p.seat !== SEAT) return out;
  if (p.code === "last_card" || state.can_keep) {
    out.push({ kind: "keep", text: t("do_keep", { card: cardLabel(state.last_card || ex.last_card) }), verb: "keep", id: "keep" });
    out.push({ kind: "discard", text: t("do_discard"), verb: "discard", id: "discard" });
    return out;
  }
  if (p.code === "lay_on_pad" && info.held) {
    out.push({ kind: "take", text: t("do_lay", { card: cardLabel(info.held.card) }), card: info.held.card, where: info.held.cell,
      body: { action: "take", where: info.held.cell } });
    return out;
  }
  if (p.code === "refill" && ex.refill_cell) {
    out.push({ kind: "refill", text: t("do_refill", { cell: cellLabel(ex.refill_cell) }), where: ex.refill_cell,
      body: { action: "refill", where: ex.refill_cell } });
    return out;
  }
  if (p.code === "corner_blocked") {
    out.push({ kind: "declinatio", text: t("declinatio_end"), help: t("declinatio_end_help"), verb: "declinatio", id: "declinatio", danger: true });
  }
  const grid = (key) => { const [r, c] = key.split(",").map(Number); return v.grid[r][c]; };
  for (const key of ex.take || []) out.push({ kind: "take", card: grid(key), where: key, text: t("do_take", { card: cardLabel(grid(key)), cell: cellLabel(key) }), body: { action: "take", where: key } });
  for (const key of ex.declinatio_take || []) out.push({ kind: "take", via: "declinatio", card: grid(key), where: key, text: t("do_take_declinatio", { card: cardLabel(grid(key)), cell: cellLabel(key) }), body: { action: "take", where: key } });
  for (const key of ex.accio || []) out.push({ kind: "take", via: "accio", card: grid(key), where: key, text: t("do_take_accio", { card: cardLabel(grid(key)), cell: cellLabel(key) }), body: { action: "take", where: key } });
  if (ex.can_pass) out.push({ kind: "pass", text: t("do_pass"), body: { action: "pass" } });
  return out;
}

function situation(v) {
  const ex = v.expected || {};
  const s = v.seats[SEAT];
  if (!s) return "";
  if (ex.phase === "take" && s.faced_line != null) {
    if (!v.move_value) return t("you_face_stay", { pos: posLabel(s.pawn), line: lineLabel(s.faced_line) });
    return t("you_face", { pos: posLabel(s.pawn), line: lineLabel(s.faced_line), moves: moveWords(v.move_value) });
  }
  if (ex.declinatio_line != null) return t("you_corner_decl", { pos: posLabel(s.pawn), line: lineLabel(ex.declinatio_line) });
  return "";
}

/** @param {SeatState} state */
function renderAction(state) {
  const el = document.getElementById("seat-action");
  const v = state.game && state.game.view;
  const todo = needed(state);
  const mine = state.alerts.filter((a) => a.seat === SEAT);
  if (!todo.length && !mine.length) { el.hidden = true; setHtml(el, ""); return todo; }
  el.hidden = false;
  const play = state.play;
  const takes = todo.filter((x) => x.kind === "take");
  const others = todo.filter((x) => x.kind !== "take");
  let html = `<h2 class="needed"><span aria-hidden="true">➜</span> ${esc(t("action_needed"))}</h2>`;
  if (mine.length) html += `<p class="fix-first">${esc(t("fix_alert_first"))}</p>`;
  // The square is wrong: a take or refill waits until the alert's steps are done.
  const held = state.alerts.some(holdsSquare) && todo.some((x) => x.kind === "take" || x.kind === "refill");
  if (held) html += `<p class="held" data-held="1" role="status"><span aria-hidden="true">⏸</span> ${esc(t("held_by_alert"))}</p>`;
  if (v && takes.length) html += `<p class="situation">${esc(situation(v))}</p>`;
  if (!play && todo.length) html += `<p class="real-table">${esc(t("real_table_note"))}</p>`;
  // More than a few cards to choose from (a line of 6, Accio): picked on the square itself,
  // just below (its cells are the buttons), so the phone page stays short; a few are listed.
  const many = takes.length > 3;
  const item = (x) => {
    const card = x.card ? cardHtml(x.card, "small") : "";
    // "With Accio/Declinatio" is in the text itself: no chip beside it (it made a 390 px
    // phone scroll sideways).
    const via = "";
    if (x.verb) {
      const help = x.help ? `<p id="${x.id}-help">${esc(x.help)}</p>` : "";
      return `<li>${help}<button type="button" class="btn big${x.danger ? " danger" : ""}" id="${x.id}" data-verb="${x.verb}"${x.help ? ` aria-describedby="${x.id}-help"` : ""}>${esc(x.text)}</button></li>`;
    }
    // A take shows its card: its place is the only words needed on screen (the whole
    // sentence stays for screen readers), so each choice is one short line.
    const brief = x.kind === "take" && x.where && x.card;
    if (!play) return `<li class="instruction" data-kind="${x.kind}"${x.where ? ` data-where="${x.where}"` : ""}>${card}` +
      (brief ? `<span aria-hidden="true">${esc(cellLabel(x.where))}</span><span class="sr-only">${esc(x.text)}</span>` : `<span>${esc(x.text)}</span>`) + `${via}</li>`;
    const short = brief;
    const what = short ? cellLabel(x.where) : x.text;
    const label = short ? ` aria-label="${esc(x.text)}"` : "";
    return `<li><button type="button" class="btn big play" data-play='${esc(JSON.stringify(x.body))}' data-kind="${x.kind}"${x.where ? ` data-where="${x.where}"` : ""}${label}>${card}<span class="what">${esc(what)}</span>${via}</button></li>`;
  };
  if (takes.length && many) {
    html += `<p class="pick-on-square" data-choices="${takes.length}"><span aria-hidden="true">▼</span> ${esc(play ? tn("pick_on_square", takes.length) : tn("take_on_square", takes.length))}</p>`;
  } else if (takes.length) html += `<ul class="choices takes${many ? " many" : ""}">${takes.map(item).join("")}</ul>`;
  if (others.length) html += `<ul class="choices">${others.map(item).join("")}</ul>`;
  html += `<p id="play-msg" class="play-msg" role="status"></p>`;
  // a declinatio that ends the game keeps its id'd wrapper (tests, screen readers)
  if (todo.some((x) => x.kind === "declinatio")) html = `<div id="seat-declinatio">${html}</div>`;
  setHtml(el, html);
  return todo;
}

/** @param {SeatState} state */
function renderMine(state) {
  const pub = document.getElementById("seat-public");
  const v = state.game && state.game.view;
  const s = v && v.seats[SEAT];
  if (!s) { setHtml(pub, ""); return; }
  const spells = s.spells.length ? `<h2>${esc(t("spells"))}</h2><ul class="spells">${s.spells.map((sp) => `<li class="spell${sp.uses_left > 0 ? "" : " spent"}">${cardHtml(sp.card, "small")} <span>${esc(usesText(sp.uses_left))}</span></li>`).join("")}</ul>` : "";
  setHtml(pub, `<h2>${esc(t("your_cauldron_top"))}</h2><div class="mine">${s.top ? cardHtml(s.top, "small") : `<span class="none">${esc(t("empty"))}</span>`}` +
    `<span>${esc(tn("cards_n", s.cauldron_size))} · ${esc(posLabel(s.pawn))}</span></div>${spells}` +
    `<p class="pile">${esc(t("pile"))}: ${esc(tn("cards_n", v.pile_size))}</p>`);
}

/** Draw the seat's state (the shell's SeatState; `view` is its game's view, null before a
    game) into the page (templates/seat.html).
    @param {Element} root @param {any} view @param {{state: SeatState}} ctx */
export function renderSeat(root, view, ctx) {
  const state = ctx.state;
  last = state;
  const v = state.game && state.game.view;
  setHtml(document.getElementById("seat-head"), `<span class="swatch c-${esc(state.colour || "")}" aria-hidden="true">${esc(state.colour && CAT.colours[state.colour] ? CAT.colours[state.colour].symbol : "")}</span> ${esc(seatLabel(SEAT, state.colour))}`);
  setHtml(document.getElementById("seat-alerts"), alertsHtml(state.alerts, v ? v.seats : []));
  const todo = renderAction(state);

  const msg = document.getElementById("seat-msg");
  if (!v) setHtml(msg, `<p>${esc(t("no_game"))}</p>`);
  else if (gameOver(v)) setHtml(msg, `<p class="big">${esc(t("game_over"))} — <a href="/scores">${esc(t("see_scores"))}</a></p>`);
  else if (v.table && v.table.status === "dealing") setHtml(msg, `<p>${esc(t("deal_wait"))}</p>`);
  else if (todo.length) setHtml(msg, "");
  else if (v.turn === SEAT) setHtml(msg, `<p class="big your-turn">▶ ${esc(t("your_turn"))}</p>`);
  else if (v.turn != null) {
    const p = v.table && v.table.prompt;
    const who = p && p.seat != null ? p.seat : v.turn;
    setHtml(msg, `<p>${esc(t("waiting_for", { seat: seatOf(v, who) }))}</p>`);
  }

  // The square, small: the cells this seat may take are buttons (one tap = the take).
  const playable = new Map(todo.filter((x) => x.body && x.where).map((x) => [x.where, x]));
  const board = document.getElementById("seat-board");
  document.getElementById("seat-board-box").hidden = !v || !v.seats.length;
  patchChildren(board, v && v.seats.length ? boardParts(v, { button: (key) => state.play && playable.has(key) }) : []);

  renderMine(state);

  const reveal = document.getElementById("reveal");
  if (state.reveal) {
    reveal.hidden = false;
    setHtml(reveal, `<h2>${esc(t("perluceo"))}</h2><ol class="stack-list">${state.reveal.map((c) => `<li>${cardHtml(c, "small")}</li>`).join("")}</ol>` +
      `<button type="button" class="btn" id="hide-reveal">${esc(t("seen_it"))}</button>`);
  } else { reveal.hidden = true; setHtml(reveal, ""); }

  const stack = document.getElementById("stack");
  if (!v) setHtml(stack, "");
  else if (state.stack) {
    setHtml(stack, `<h2>${esc(t("your_cauldron"))} <small>(${esc(t("memory_aid_on"))})</small></h2>` +
      (state.stack.length ? `<ol class="stack-list" data-stack="1">${state.stack.map((c) => `<li>${cardHtml(c, "small")}</li>`).join("")}</ol>` : `<p>${esc(t("empty"))}</p>`));
  } else setHtml(stack, `<p class="note" data-memory-off="1">${esc(t("memory_aid_off"))}</p>`);

  setHtml(document.getElementById("recipes"), state.recipes.length ? `<h2>${esc(t("your_recipes"))}</h2><ul>${state.recipes.map((r) => {
    const name = CAT.recipes[r];
    return `<li>${esc(r.startsWith("A-") ? "A: " + colourName(name) : "B: " + name)}</li>`;
  }).join("")}</ul>` : "");

  // A hint belongs to one moment of one turn: cleared when the turn or phase changes.
  const key = v ? `${state.game.game_id}|${v.turns}|${v.turn}|${v.phase}` : "";
  if (key !== turnKey) { turnKey = key; setHtml(document.getElementById("hint-text"), ""); playMsg("", false, "board-msg"); }
  document.body.dataset.todo = todo.map((x) => x.kind + (x.where ? ":" + x.where : "")).join(" ");
  document.body.dataset.inputs = v && v.table ? String(v.table.inputs) : "";
}

/** The seat's link is dead (expired, forbidden): say so, and nothing else. */
export function stopSeat(text) {
  setHtml(document.getElementById("seat-msg"), `<p class="big error" role="alert"><span aria-hidden="true">✖</span> ${esc(text)}</p>`);
  for (const id of ["stack", "reveal", "seat-public", "recipes", "seat-alerts", "seat-action"]) setHtml(document.getElementById(id), "");
  document.getElementById("seat-action").hidden = true;
  document.getElementById("seat-board-box").hidden = true;
}

function playMsg(text, isError, id = "play-msg") {
  const el = document.getElementById(id);
  if (el) { el.textContent = text || ""; el.classList.toggle("error", !!isError); }
  if (text && isError) announce(text, true);
}

/* Why a tap on a card of the square does nothing now, in the page's language: whose turn
   it is, the alert to put right, the hole to fill first, or the cards that are offered. */
function whyNot(state, key) {
  const v = state && state.game && state.game.view;
  if (!v || !v.seats.length) return t("no_game");
  if (gameOver(v)) return t("game_over");
  if (v.table && v.table.status === "dealing") return t("deal_wait");
  if (!state.play) return t("tap_real_table");
  if (state.alerts.some(holdsSquare)) return t("held_by_alert");
  const p = (v.table && v.table.prompt) || {};
  const who = p.seat != null ? p.seat : v.turn;
  if (who !== SEAT) return t("tap_not_your_turn", { seat: seatOf(v, who) });
  const ex = v.expected || {};
  if (GEO.corners.includes(key)) return t("tap_corner");
  if (p.code === "refill" && ex.refill_cell) return t("tap_refill_first", { cell: cellLabel(ex.refill_cell) });
  // A card already lifted (a bot's gesture this seat took over): it goes on the pad first.
  if (p.code === "lay_on_pad" && v.table.held) return t("tap_lay_held_first", { card: cardLabel(v.table.held.card) });
  if (ex.phase === "take" && (ex.take || []).length + (ex.accio || []).length + (ex.declinatio_take || []).length) {
    const [r, c] = key.split(",").map(Number);
    if (!v.grid[r][c]) return t("tap_empty");
    const line = ex.declinatio_line != null ? ex.declinatio_line : ex.faced_line;
    return line != null ? t("tap_not_offered_line", { line: lineLabel(line) }) : t("tap_not_offered");
  }
  const now = promptText(v);
  return now ? t("tap_not_now_do", { what: now }) : t("tap_not_offered");
}

function send(body, verb = "play") {
  const key = verb + JSON.stringify(body ?? null);
  if (pending === key) return queue;
  pending = key;
  queue = queue.then(async () => {
    try { await api("POST", q(`/api/seats/${SEAT}/${verb}`), body); playMsg(""); }
    catch (e) { playMsg(refusalText(e, last && last.game ? last.game.view.seats : []), true); }
    finally { if (pending === key) pending = null; }
  });
  return queue;
}

document.addEventListener("click", (ev) => {
  const play = ev.target.closest("[data-play]");
  if (play) { ev.preventDefault(); send(JSON.parse(play.dataset.play)); return; }
  const cell = ev.target.closest("#seat-board [data-act='cell']");
  if (cell) {
    const x = needed(last || {}).find((n) => n.where === cell.dataset.where && n.body);
    if (x) { ev.preventDefault(); playMsg("", false, "board-msg"); send(x.body); }
    return;
  }
  // A card the phone does not offer: say why, by the square (never silence).
  const other = ev.target.closest("#seat-board .cell[data-cell]");
  if (other) { playMsg(whyNot(last, other.dataset.cell), true, "board-msg"); return; }
  const verb = ev.target.closest("[data-verb]");
  if (verb) { ev.preventDefault(); send(undefined, verb.dataset.verb); return; }
  if (ev.target.closest("#hide-reveal")) api("POST", q(`/api/seats/${SEAT}/reveal/dismiss`)).catch(() => {});
});

document.getElementById("hint").addEventListener("click", async () => {
  const out = document.getElementById("hint-text");
  try {
    const res = await api("POST", q(`/api/seats/${SEAT}/hint`));
    /** @type {HintAnswer} */
    const h = res.data;
    setHtml(out, `<h2>${esc(t("hint_title"))}</h2>` +
      (h.card ? `<p>${esc(t("hint_for", { card: cardLabel(h.card) }))}${h.cell ? " — " + esc(cellLabel(h.cell)) : ""}</p>` : "") +
      `<p data-hint-reason="1">${esc(humanise(h.reason, last && last.game ? last.game.view.seats : []))}</p>`);
  } catch (e) { setHtml(out, `<p class="error">${esc(refusalText(e, last && last.game ? last.game.view.seats : []))}</p>`); }
});
