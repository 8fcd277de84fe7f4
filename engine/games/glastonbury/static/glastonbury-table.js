/* Glastonbury on the big screen (/): the square, whose turn and what to do, the seats, the
   pile, the deal guided, the podium at the end until the next game. The shell (table.js)
   draws the alerts, the join codes and the banners around it, and calls `renderTable`. */
import { boardParts } from "./glastonbury-board.js";
import {
  CAT, cardHtml, cardLabel, cellLabel, colourName, esc, gameOver, lineLabel, moveWords,
  patchChildren, posLabel, promptText, seatLabel, setHtml, t, tn, usesText,
} from "/static/core.js";
import { podiumHtml, winnersText } from "./glastonbury-scoring.js";
export { announceChanges } from "./glastonbury-announce.js";
/** @typedef {import("/types/wire.js").TableState} TableState */

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
function renderPodium(state) {
  const el = document.getElementById("podium");
  const end = state.game && state.game.view.over && state.game.view.end;
  if (!end || !end.scores) { el.hidden = true; setHtml(el, ""); return; }
  setHtml(el, podiumHtml(end.scores, state.game.view.seats, end));
  el.hidden = false;
}

/** Draw the table's public state on Glastonbury's screen (templates/table.html: #turn,
    #board, #seats, #pile, #podium); `view` is `state.game.view` (null: no game yet).
    @param {Element} root @param {any} view @param {TableState} state */
export function renderTable(root, view, state) {
  renderTurn(state);
  renderBoard(state);
  renderSeats(state);
  renderPile(state);
  renderPodium(state);
}
