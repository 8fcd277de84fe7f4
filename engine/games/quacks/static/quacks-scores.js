/* Quacks' final breakdown per round, printable: `renderBreakdown(root, scores)` draws
   `engine/games/quacks/scoring.py` `breakdown()`: per seat, each round's scoring space
   (coins, VP, ruby), exploded or not, the fortune card, the VP gained and the totals;
   the ranks, and the tie-break when it was used (Q25, D21). */
import { esc, t, tn } from "/static/core.js";
import { cardName, seatName } from "./quacks-common.js";

function seatTable(s, rounds) {
  const rows = s.rounds.map((r) => `<tr data-round="${r.round}"${r.exploded ? ` class="exploded"` : ""}>` +
    `<th scope="row">${r.round}</th><td>${esc(cardName(r.card))}</td>` +
    `<td class="num">${r.coins}</td><td class="num">${r.space_vp}${r.ruby ? " ♦" : ""}</td>` +
    `<td>${r.exploded ? `✸ ${esc(t("q_status_exploded"))}` : ""}</td>` +
    `<td class="num">+${r.vp_gained}</td><td class="num"><strong>${r.vp}</strong></td><td class="num">${r.rubies}</td><td class="num">${r.droplet}</td></tr>`).join("");
  const missing = rounds - s.rounds.length;
  return `<table class="q-breakdown"><caption>${esc(seatName(s.seat))} — ${esc(t("q_rank", { n: s.rank }))} — ${esc(tn("q_vp_n", s.vp))}</caption>` +
    `<thead><tr><th scope="col">${esc(t("q_col_round"))}</th><th scope="col">${esc(t("q_fortune"))}</th>` +
    `<th scope="col">${esc(t("q_col_coins"))}</th><th scope="col">${esc(t("q_col_space_vp"))}</th><th scope="col">${esc(t("q_col_exploded"))}</th>` +
    `<th scope="col">${esc(t("q_col_gained"))}</th><th scope="col">${esc(t("q_col_total"))}</th><th scope="col">${esc(t("q_col_rubies"))}</th><th scope="col">${esc(t("q_col_droplet"))}</th></tr></thead>` +
    `<tbody>${rows}${missing > 0 ? `<tr class="todo"><td colspan="9">${esc(tn("q_rounds_left", missing))}</td></tr>` : ""}</tbody></table>`;
}

/** Draw the breakdown of `scores` into `root`. */
export function renderBreakdown(root, scores) {
  const winners = scores.winners.map(seatName).join(", ");
  const head = scores.over
    ? `<p class="q-result">★ ${esc(t("q_winners", { seats: winners }))}${scores.tie_break ? ` — ${esc(t("q_tie_break", { seats: scores.tied.map(seatName).join(", ") }))}` : ""}</p>`
    : `<p class="q-result">${esc(t("q_round", { n: scores.round, total: scores.rounds }))}</p>`;
  const order = [...scores.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  root.innerHTML = `<section class="q-scores"><h2>${esc(t("q_breakdown"))}</h2>${head}` +
    order.map((s) => seatTable(s, scores.rounds)).join("") +
    `<p class="q-print"><button type="button" class="btn q-print-btn">${esc(t("q_print"))}</button></p></section>`;
  root.querySelector(".q-print-btn").addEventListener("click", () => window.print());
}
