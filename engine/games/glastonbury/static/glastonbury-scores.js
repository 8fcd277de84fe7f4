/* Glastonbury's score page (/scores): the running state during a game, the last game's
   breakdown afterwards. The shell (scores.js) owns the socket and calls `renderScores`. */
import { esc, setHtml, t } from "/static/core.js";
import { runningHtml, scoresHtml } from "./glastonbury-scoring.js";
/** @typedef {import("/types/wire.js").TableState} TableState */

/** @param {Element} root @param {any} view @param {TableState} state */
export function renderScores(root, view, state) {
  const v = view;
  let html = "";
  if (v && v.over && v.end && v.end.scores) html = scoresHtml(v.end.scores, v.seats, v.end);
  else {
    if (v && v.seats.length) html += `<section class="running-box" data-running="1">${runningHtml(v)}<p class="note">${esc(t("running_note"))}</p></section>`;
    const last = state.last_game;
    if (last && last.view.end && last.view.end.scores) {
      html += `<section class="last-game" data-last-game="${esc(last.game_id || "")}"><h2>${esc(t("last_game"))}</h2>${scoresHtml(last.view.end.scores, last.view.seats, last.view.end)}</section>`;
    }
    if (!html) html = `<p>${esc(t("no_game"))}</p>`;
  }
  setHtml(root, html);
}
