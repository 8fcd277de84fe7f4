/* The score page: running state during a game, the last game's result afterwards. */
import { esc, liveSocket, renderBanners, setHtml, t } from "./core.js";
import { runningHtml, scoresHtml } from "./scoring.js";

let up = false;
document.getElementById("print").addEventListener("click", () => window.print());
liveSocket("/ws/table", (state) => {
  if (state.type !== "table") return;
  const el = document.getElementById("scores");
  const g = state.game;
  const v = g && g.view;
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
  setHtml(el, html);
  renderBanners(state.status, up);
}, (ok) => { up = ok; renderBanners(null, ok); });
