/* Quacks' breakdown per round, printable: draws the public view's `scores`
   (engine/games/quacks/scoring.py `QuacksScores`): the final ranking with the tie-break
   (Q25, D21), then per seat each round's fortune card, scoring space (coins, VP, ruby), bonus
   die, rat tails, explosion (and the exploded seat's choice), VP gained, VP, rubies and
   droplet. `renderScores(root, view, state)` is the score page's hook (dashboard/static/
   scores.js: the shell owns the page's print button); `renderBreakdown(root, scores)` draws
   one breakdown with its own print button. */
import { esc, setHtml, t, tn } from "/static/core.js";
import { cardName, seatName } from "./quacks-common.js";

const seats = (list) => list.map(seatName).join(", ");

function roundRow(r) {
  const space = `${esc(t("q_coins_n", { n: r.coins }))} · ${esc(tn("q_vp_n", r.space_vp))}${r.ruby ? ` · <span class="q-ruby">♦</span>` : ""}`;
  const bonus = r.bonus.map((b) => esc(t("q_die_" + b))).join(", ");
  const boom = r.exploded ? `✸ ${esc(t("q_status_exploded"))}${r.reward ? ` → ${esc(t("q_reward_" + r.reward))}` : ""}` : "";
  return `<tr data-round="${r.round}"${r.exploded ? ` class="exploded"` : ""}>` +
    `<th scope="row">${r.round}</th><td>${esc(cardName(r.card))}</td><td>${space}</td><td>${bonus}</td>` +
    `<td class="num">${r.rat_tails || ""}</td><td>${boom}</td>` +
    `<td class="num">+${r.vp_gained}</td><td class="num"><strong>${r.vp}</strong></td><td class="num">${r.rubies}</td><td class="num">${r.droplet}</td></tr>`;
}

function seatTable(s, rounds) {
  const missing = rounds - s.rounds.length;
  const head = ["q_col_round", "q_fortune", "q_col_space", "q_col_bonus", "q_col_tails", "q_col_exploded", "q_col_gained", "q_col_total", "q_col_rubies", "q_col_droplet"]
    .map((k) => `<th scope="col">${esc(t(k))}</th>`).join("");
  return `<table class="q-breakdown" data-seat="${s.seat}"><caption>${esc(seatName(s.seat))} — ${esc(t("q_rank", { n: s.rank }))} — ${esc(tn("q_vp_n", s.vp))}</caption>` +
    `<thead><tr>${head}</tr></thead><tbody>${s.rounds.map(roundRow).join("")}` +
    `${missing > 0 ? `<tr class="todo"><td colspan="10">${esc(tn("q_rounds_left", missing))}</td></tr>` : ""}</tbody></table>`;
}

/* The ranking: rank, seat, VP, rubies; at the end the round-9 pot that breaks a tie. */
function rankingHtml(scores, order) {
  const rows = order.map((s) => `<li data-seat="${s.seat}" data-rank="${s.rank}"><strong>${s.rank}.</strong> ${esc(seatName(s.seat))} — ` +
    `<strong>${esc(tn("q_vp_n", s.vp))}</strong> · ♦ ${esc(tn("q_rubies_n", s.rubies))}` +
    (scores.tie_break && scores.tied.includes(s.seat) && s.final_space != null ? ` · ${esc(t("q_final_space", { n: s.final_space }))}` : "") + `</li>`).join("");
  return `<ol class="q-ranking-final" aria-label="${esc(t("q_ranking"))}">${rows}</ol>`;
}

function breakdownHtml(scores) {
  const order = [...scores.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  let head;
  if (scores.over) {
    const tie = scores.tie_break ? `<p class="q-tie">${esc(t(scores.winners.length > 1 ? "q_tie_shared" : "q_tie_decided", { seats: seats(scores.tied), winners: seats(scores.winners) }))} (Q25)</p>` : "";
    head = `<h2>${esc(t("q_breakdown"))}</h2><p class="q-result">★ ${esc(t("q_winners", { seats: seats(scores.winners) }))}</p>${tie}`;
  } else {
    head = `<h2>${esc(t("q_breakdown_so_far"))}</h2><p class="q-result">${esc(t("q_round", { n: scores.round, total: scores.rounds }))}</p>`;
  }
  return `<section class="q-scores" data-over="${scores.over ? "1" : "0"}">${head}` +
    `<h3>${esc(t(scores.over ? "q_ranking" : "q_ranking_now"))}</h3>${rankingHtml(scores, order)}` +
    order.map((s) => seatTable(s, scores.rounds)).join("") + `</section>`;
}

/** The score page: this game's breakdown (final once over), and the last finished game's
    while another runs. @param {Element} root @param {any} view @param {any} state */
export function renderScores(root, view, state) {
  let html = view && view.scores ? breakdownHtml(view.scores) : "";
  const last = state && state.last_game;
  if (last && last.game === "quacks" && last.view && last.view.scores && !(view && view.over)) {
    html += `<section class="last-game" data-last-game="${esc(last.game_id || "")}"><h2>${esc(t("last_game"))}</h2>${breakdownHtml(last.view.scores)}</section>`;
  }
  setHtml(root, html || `<p>${esc(t("no_game"))}</p>`);
}

/** Draw the breakdown `scores` into `root`, with a print button. */
export function renderBreakdown(root, scores) {
  root.innerHTML = breakdownHtml(scores) + `<p class="q-print"><button type="button" class="btn q-print-btn">${esc(t("q_print"))}</button></p>`;
  root.querySelector(".q-print-btn").addEventListener("click", () => window.print());
}
