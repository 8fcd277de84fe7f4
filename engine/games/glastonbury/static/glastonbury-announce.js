/* Spoken and screen-reader announcements of what changed on Glastonbury's square (big
   screen and virtual table); the shell announces the alerts (core.js announceAlerts). */
import { announce, cardLabel, cellLabel, moveWords, seatOf, t, tn } from "/static/core.js";
import { winnersText } from "./glastonbury-scoring.js";

export function announceChanges(prev, next) {
  const g0 = prev && prev.game, g1 = next.game;
  const lines = [];
  if (g1 && (!g0 || g0.game_id !== g1.game_id)) {
    if (g0) lines.push(tn("ann_new_game", g1.view.players));
  } else if (g0 && g1 && g0.view.seats.length && g1.view.seats.length) {
    const a = g0.view, b = g1.view;
    for (let r = 0; r < 6; r++) for (let c = 0; c < 6; c++) {
      const was = a.grid[r][c], now = b.grid[r][c];
      if (was && was !== now) lines.push(t("ann_take", { seat: seatOf(a, a.turn), card: cardLabel(was), cell: cellLabel(`${r},${c}`) }));
      if (now && was !== now) lines.push(t("ann_refill", { card: cardLabel(now), cell: cellLabel(`${r},${c}`) }));
    }
    if (!b.over && (a.turns !== b.turns || a.turn !== b.turn)) lines.push(t("ann_turn", { seat: seatOf(b, b.turn), moves: moveWords(b.move_value) }));
    if (b.over && !a.over && b.end && b.end.scores) lines.push(t("ann_over", { winners: winnersText(b.end.scores, b.seats) }));
  }
  if (lines.length) announce(lines.join(" "));
}
