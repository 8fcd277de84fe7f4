/* The score page: the shell owns the socket and the print button; the table's game draws
   its scores (`renderScores(root, view, state)`). */
import { esc, followGame, gameHooks, liveSocket, renderBanners, setHtml, t } from "./core.js";

const GAME = await gameHooks();
let up = false;
document.getElementById("print").addEventListener("click", () => window.print());
liveSocket("/ws/table", (state) => {
  if (state.type !== "table" || followGame(state)) return;
  const el = document.getElementById("scores");
  const view = state.game ? state.game.view : null;
  if (GAME.renderScores) GAME.renderScores(el, view, state);
  else setHtml(el, `<p>${esc(t("no_game"))}</p>`);
  renderBanners(state.status, up);
}, (ok) => { up = ok; renderBanners(null, ok); });
