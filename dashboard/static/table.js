/* The big screen (/): the square, whose turn and what to do, the seats, the pile, the join
   codes; alerts in a fixed area; the podium at the end until the next game. */
import { boardParts } from "./board.js";
import {
  BOOT, CAT, alertsHtml, cardHtml, cardLabel, cellLabel, colourName, esc, gameOver, lineLabel, liveSocket, moveWords, phoneState,
  patchChildren, posLabel, probeReceived, probeRendered, promptText, renderBanners, seatLabel, seatOf, setHtml, t, tn, usesText, waitingLines,
} from "./core.js";
import { announceChanges } from "./announce.js";
import { podiumHtml, winnersText } from "./scoring.js";
/** @typedef {import("../types/wire.js").TableState} TableState */

let current = null;
let socketUp = false;
let joinKey = null;
/* Join codes are short-lived (dashboard/seats.py): fetched anew every minute. Only the
   table's screen gets them (BOOT.screen: this machine, or a browser the host unlocked). */
let joinRound = 0;
setInterval(() => { joinRound += 1; if (current) renderJoin(current); }, 60000);

/* The deal, guided: the colour to set aside (2 players) with its 8 cards, cells read,
   missing or wrong, and what happens next. */
function dealHtml(v) {
  const info = v.table || {};
  const deal = info.dealing || {};
  const cfg = v.config || {};
  let html = `<p class="big">${esc(t("deal_title"))}</p>`;
  const aside = deal.set_aside;
  const removed = aside ? aside.colour : (cfg.colours || []).length === 2 ? cfg.removed_colour : null;
  if (removed) {
    const cards = aside && aside.cards.length ? aside.cards.map((c) => c.card)
      : ["a", "b"].flatMap((f) => [1, 2, 3, 4].map((n) => `${removed}-${f}-${n}`));
    html += `<div class="set-aside" data-set-aside="${esc(removed)}"><p><strong>${esc(t("deal_set_aside", { colour: colourName(removed), n: cards.length }))}</strong></p>` +
      `<ul class="aside-cards">${cards.map((c) => `<li>${cardHtml(c, "small")}</li>`).join("")}</ul></div>`;
  }
  const total = deal.total || 32;
  const counts = deal.counts || {};
  const filled = counts.read != null ? counts.read : deal.filled || 0;
  html += `<p class="deal-count" data-filled="${filled}">${esc(t("deal_progress", { filled, total }))}</p>`;
  const cells = deal.cells || [];
  const wrong = cells.filter((c) => c.state === "wrong");
  const missing = cells.length ? cells.filter((c) => c.state === "missing").map((c) => c.cell) : deal.missing || [];
  if (wrong.length) {
    html += `<p class="deal-wrong"><span aria-hidden="true">⚠</span> ${esc(t("deal_wrong"))} ` +
      wrong.map((w) => esc(`${cellLabel(w.cell)}${w.card ? " (" + cardLabel(w.card) + ")" : ""}`)).join(" · ") + `</p>`;
  }
  if (missing.length && missing.length <= 12) {
    html += `<p class="deal-missing">${esc(t("deal_missing"))} ${missing.map((k) => esc(cellLabel(k))).join(" · ")}</p>`;
  } else if (missing.length) {
    html += `<p class="deal-missing">${esc(tn("deal_missing_n", missing.length))}</p>`;
  }
  const next = deal.next && deal.next.code ? "deal_next_" + deal.next.code : "deal_next_starting";
  const first = cfg.first_seat != null && (cfg.colours || []).length ? " " + t("plays_first", { seat: seatLabel(cfg.first_seat, cfg.colours[cfg.first_seat]) }) : "";
  html += `<p class="deal-next" data-next="${esc(deal.next ? deal.next.code : "")}"><span aria-hidden="true">➜</span> ${esc(t(next) + first)}</p>`;
  return html;
}

/** @param {TableState} state */
function renderTurn(state) {
  const el = document.getElementById("turn");
  const game = state.game;
  if (!game) { setHtml(el, `<p class="big">${esc(t("no_game"))}</p>`); return; }
  const v = game.view;
  const info = v.table;
  if (info && info.status === "dealing") { setHtml(el, dealHtml(v)); return; }
  const prompt = promptText(v);
  const promptHtml = prompt ? `<p class="prompt" data-prompt="${esc(info.prompt.code)}"><span aria-hidden="true">➜</span> ${esc(prompt)}</p>` : "";
  if (gameOver(v)) {
    const end = v.end;
    setHtml(el, `<p class="big">${esc(t("game_over"))}${end && end.scores ? " — " + esc(winnersText(end.scores, v.seats)) : ""}</p>` +
      (v.over ? "" : promptHtml));
    return;
  }
  if (v.turn == null || !v.seats.length || (info && info.status !== "playing")) {
    setHtml(el, promptHtml || `<p class="big">${esc(t("no_game"))}</p>`);
    return;
  }
  const ex = v.expected || {};
  const seat = v.seats[v.turn];
  const who = seatLabel(v.turn, seat && seat.colour);
  let html = `<p class="big"><span class="turn-marker c-${esc(seat.colour)}" aria-hidden="true">${esc(CAT.colours[seat.colour] ? CAT.colours[seat.colour].symbol : "")}</span> ` +
    `<strong>${esc(t("turn_of", { seat: who }))}</strong> — ${esc(moveWords(v.move_value))}</p>`;
  const todo = [`<span class="phase">${esc(t("phase_" + ex.phase))}</span>`];
  if (ex.phase === "take") {
    todo.push(`<span class="where">${esc(posLabel(seat.pawn))} · ${esc(seat.faced_line != null ? t("faces", { line: lineLabel(seat.faced_line) }) : t("at_corner"))}</span>`);
  }
  if (ex.accio && ex.accio.length) todo.push(`<span class="opt accio"><span aria-hidden="true">A</span> ${esc(tn("accio_n", ex.accio.length))}</span>`);
  if (ex.declinatio) todo.push(`<span class="opt decl"><span aria-hidden="true">D</span> ${esc(t("declinatio_option"))}</span>`);
  if (ex.last_card) todo.push(`<span class="opt last">★ ${esc(t("last_card", { card: cardLabel(ex.last_card) }))}</span>`);
  html += `<p class="todo">${todo.join(" ")}</p>` + promptHtml;
  setHtml(el, html);
}

/** @param {TableState} state */
function renderBoard(state) {
  const v = state.game ? state.game.view : null;
  patchChildren(document.getElementById("board"), boardParts(v));
}

/** @param {TableState} state */
function renderSeats(state) {
  const el = document.getElementById("seats");
  const game = state.game;
  if (!game || !game.view.seats.length) { patchChildren(el, []); return; }
  const v = game.view;
  const parts = v.seats.map((s) => {
    const active = !gameOver(v) && v.turn === s.seat;
    const spells = s.spells.map((sp) => `<li class="spell${sp.uses_left > 0 ? "" : " spent"}">✦ ${esc(cardLabel(sp.card))} — ${esc(usesText(sp.uses_left))}</li>`).join("");
    return `<article class="seat c-border-${esc(s.colour)}${active ? " active" : ""}" data-seat="${s.seat}">` +
      `<h2>${active ? `<span class="now">▶ <span class="sr-only">${esc(t("now_playing"))}</span></span>` : ""}<span class="swatch c-${esc(s.colour)}" aria-hidden="true">${esc(CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "")}</span> ${esc(seatLabel(s.seat, s.colour))}</h2>` +
      `<div class="cauldron">${s.top ? cardHtml(s.top, "small") : `<span class="none">${esc(t("empty"))}</span>`}` +
      `<span class="lbl">${esc(t("cauldron"))}: <span class="size">${esc(tn("cards_n", s.cauldron_size))}</span></span></div>` +
      (spells ? `<ul class="spells" aria-label="${esc(t("spells"))}">${spells}</ul>` : "") + `</article>`;
  });
  patchChildren(el, parts);
}

/** @param {TableState} state */
function renderPile(state) {
  const el = document.getElementById("pile");
  const v = state.game && state.game.view;
  setHtml(el, v && v.seats.length ? `<span aria-hidden="true">▤</span> ${esc(t("pile"))}: <strong class="pile-size">${esc(tn("cards_n", v.pile_size))}</strong>` : "");
}

/** @param {TableState} state */
function renderAlerts(state) {
  const el = document.getElementById("alerts");
  const seats = state.game ? state.game.view.seats : [];
  el.classList.toggle("has-alerts", state.alerts.length > 0);
  // The demo's bots say why they wait ("Seat N's bot is waiting: <reason>").
  const waitHtml = waitingLines(state.virtual, seats).map((w) => `<p class="bot-waiting" data-waiting="${esc(w.seat)}">${esc(w.text)}</p>`).join("");
  // A seat a person joined: its move waits for their phone (M5), said even more plainly
  // when the phone's page is not connected.
  const v = state.game && state.game.view;
  const who = v && !v.over && v.table && v.table.status === "playing" ? (v.table.prompt && v.table.prompt.seat != null ? v.table.prompt.seat : v.turn) : null;
  const phone = who != null ? phoneState(state, who) : null;
  const phoneHtml = phone ? `<p class="phone-waiting" data-phone="${who}" data-connected="${phone === "on" ? 1 : 0}">${esc(t(phone === "on" ? "phone_waiting" : "phone_gone", { seat: seatOf(v, who) }))}</p>` : "";
  setHtml(el, phoneHtml + waitHtml + (state.alerts.length ? alertsHtml(state.alerts, seats) : waitHtml || phoneHtml ? "" : `<p class="no-alerts">${esc(t("no_alerts"))}</p>`));
}

/** @param {TableState} state */
function renderJoin(state) {
  const el = document.getElementById("join");
  const game = state.game;
  const key = game ? `${game.game_id}|${game.view.seats.map((s) => phoneState(state, s.seat)).join(",")}|${game.view.players}|${gameOver(game.view)}|${joinRound}` : "none";
  if (key === joinKey) return;
  joinKey = key;
  if (!game || !game.game_id || gameOver(game.view) || !game.view.seats.length) { el.innerHTML = ""; return; }
  // On a loopback address a code would open the phone itself: one line says what to do.
  const phones = BOOT.phones !== false;
  let locked = false;
  let html = (phones ? `<h2>${esc(t("join"))}</h2>` : `<p class="no-phones">${esc(t("phones_cannot_join"))}</p>`) + `<div class="qr-row">`;
  for (const s of game.view.seats) {
    const label = seatLabel(s.seat, s.colour);
    if (!phones && !state.joined[s.seat]) continue;
    if (BOOT.screen === false && !state.joined[s.seat]) { locked = true; continue; }
    const phone = phoneState(state, s.seat);
    if (phone) {  // the same words as the alerts area's, from the same state
      html += `<figure class="qr joined phone-${phone}" data-seat="${s.seat}" data-connected="${phone === "on" ? 1 : 0}"><div class="done" aria-hidden="true">${phone === "on" ? "✓" : "⚠"}</div><figcaption>${esc(label)} — ${esc(t(phone === "on" ? "phone_on" : "phone_off"))}</figcaption></figure>`;
    } else {
      html += `<figure class="qr" data-seat="${s.seat}"><img src="/api/seats/${s.seat}/qr.svg?g=${encodeURIComponent(game.game_id)}&r=${joinRound}" alt="${esc(t("scan_me", { seat: label }))}"><figcaption>${esc(label)}</figcaption></figure>`;
    }
  }
  el.innerHTML = html + `</div>` + (locked ? `<p class="codes-locked">${esc(t("join_codes_locked"))}</p>` : "");
}

/** @param {TableState} state */
function renderPodium(state) {
  const el = document.getElementById("podium");
  const end = state.game && state.game.view.over && state.game.view.end;
  if (!end || !end.scores) { el.hidden = true; setHtml(el, ""); return; }
  setHtml(el, podiumHtml(end.scores, state.game.view.seats, end));
  el.hidden = false;
}

/** @param {TableState} state */
function render(state) {
  renderTurn(state);
  renderBoard(state);
  renderSeats(state);
  renderPile(state);
  renderAlerts(state);
  renderJoin(state);
  renderPodium(state);
  renderBanners(state.status, socketUp);
  probeRendered(state);
}

/** @param {TableState} state */
function onState(state) {
  if (state.type !== "table") return;
  probeReceived(state);
  const previous = current;
  current = state;
  render(state);
  announceChanges(previous, state);
}

liveSocket("/ws/table", onState, (up) => {
  socketUp = up;
  renderBanners(current && current.status, up);
});
