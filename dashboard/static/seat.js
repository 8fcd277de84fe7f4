/* The phone (/seat/N): the shell around the table's game. It owns the seat's socket (the
   seat's HttpOnly cookie from /join proves it), says when the link is dead, and hands each
   state to the game's fragment: `renderSeat(root, view, {seat, state, virtual, send})`. */
import { api, esc, followGame, gameHooks, liveSocket, refusalText, renderBanners, setHtml, t } from "./core.js";
/** @typedef {import("../types/wire.js").SeatState} SeatState */

const GAME = await gameHooks();
const SEAT = Number(location.pathname.split("/").pop());
const ROOT = document.getElementById("game-root") || document.getElementById("main");
let socketUp = false;
let closedForGood = null;

/* A move of this seat, by the game's verb (POST /api/seats/N/move, `cmd/play`): the
   answer, or {status: "error", error} with the refusal's code, rule and params. */
async function send(verb, args) {
  try { await api("POST", `/api/seats/${SEAT}/move`, { verb, args: args || {} }); return { status: "ok" }; }
  catch (e) { return { status: "error", error: { code: e.code, rule: e.rule, params: e.params, message: e.message || refusalText(e, []) } }; }
}

/** @param {SeatState} state */
function render(state) {
  window.__seat = state; // tests read what the page was last told
  // The game's own view of this seat where it has one (Quacks), else the public view.
  const view = state.seat_view || (state.game ? state.game.view : null);
  if (GAME.renderSeat) GAME.renderSeat(ROOT, view, { seat: SEAT, state, virtual: !!state.play, send });
  renderBanners(null, socketUp);
}

function stopWith(text) {
  if (GAME.stopSeat) GAME.stopSeat(text);
  else setHtml(ROOT, `<p class="big error" role="alert"><span aria-hidden="true">✖</span> ${esc(text)}</p>`);
}

const sock = liveSocket(`/ws/seat/${SEAT}`, (msg) => {
  if (msg.type === "expired") { closedForGood = "expired"; sock.stop(); stopWith(t("expired")); return; }
  if (msg.type === "seat" && !followGame(msg)) render(msg);
}, (up, code) => {
  socketUp = up || closedForGood !== null;
  if (code === 4403) { closedForGood = "forbidden"; stopWith(t("forbidden")); socketUp = true; }
  renderBanners(null, socketUp);
});
