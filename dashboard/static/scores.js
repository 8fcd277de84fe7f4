/* The printable score screen. */
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  let up = false;
  liveSocket("/ws/table", (state) => {
    if (state.type !== "table") return;
    const el = document.getElementById("scores");
    const end = state.game && state.game.view.end;
    if (end && end.scores) renderScores(el, end.scores, state.game.view.seats, end);
    else el.innerHTML = `<p>${esc(t("no_game"))}</p>`;
    renderBanners(state.status, up);
  }, (ok) => { up = ok; renderBanners(null, ok); });
});
