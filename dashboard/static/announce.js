/* Spoken and screen-reader announcements of what changed on the table (big screen and
   virtual table). */
import { alertWords, announce, cardLabel, cellLabel, isNotice, moveWords, seatOf, t, tn } from "./core.js";
import { winnersText } from "./scoring.js";

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
  const before = new Map(((prev && prev.alerts) || []).map((a) => [a.alert_id, a]));
  const seats = next.game ? next.game.view.seats : [];
  for (const a of next.alerts) {
    if (before.has(a.alert_id)) continue;
    const words = alertWords(a, seats);
    const text = words.msg + (words.fix ? " " + t("what_to_do") + " " + words.fix : "");
    announce(isNotice(a) ? text : t("ann_alert", { rule: a.rule, text }), !isNotice(a));
  }
}

