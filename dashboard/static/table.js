/* The big screen (/): the shell around the table's game. The game's fragment draws the
   game (its `renderTable(root, state)`); the shell draws the alerts in a fixed area, the
   join codes, the banners, and says what changed aloud. */
import {
  BOOT, alertsHtml, announceAlerts, esc, followGame, gameHooks, gameOver, liveSocket, phoneState,
  probeReceived, probeRendered, renderBanners, seatLabel, seatOf, setHtml, t, waitingLines,
} from "./core.js";
/** @typedef {import("../types/wire.js").TableState} TableState */

const GAME = await gameHooks();
let current = null;
let socketUp = false;
let joinKey = null;
/* Join codes are short-lived (dashboard/seats.py): fetched anew every minute. Only the
   table's screen gets them (BOOT.screen: this machine, or a browser the host unlocked). */
let joinRound = 0;
setInterval(() => { joinRound += 1; if (current) renderJoin(current); }, 60000);

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
function render(state) {
  if (GAME.renderTable) GAME.renderTable(document.getElementById("game-root"), state.game ? state.game.view : null, state);
  renderAlerts(state);
  renderJoin(state);
  renderBanners(state.status, socketUp);
  probeRendered(state);
}

/** @param {TableState} state */
function onState(state) {
  if (state.type !== "table" || followGame(state)) return;
  probeReceived(state);
  const previous = current;
  current = state;
  render(state);
  if (GAME.announceChanges) GAME.announceChanges(previous, state);
  announceAlerts(previous, state);
}

liveSocket("/ws/table", onState, (up) => {
  socketUp = up;
  renderBanners(current && current.status, up);
});
