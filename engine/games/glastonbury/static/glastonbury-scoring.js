/* Scores in plain words: the breakdown (score page), the podium (big screen at the end) and
   the running totals during a game. */
import { CAT, cardInfo, cardLabel, colourName, esc, lineLabel, seatLabel, t, tn } from "/static/core.js";

/* "Immuto", as the cards on the table are named (the catalogue's long name adds the spell's). */
/* (Asked when drawn, not at import: a page of another game may import this module, the
   count page's helpers, before any Glastonbury card is drawn.) */
const immuto = () => cardInfo("immuto-1").family;

/* "3 Egg cards: 1 + 3 + 4 = 8; own colour, doubled: 16; + 5 for four cards: 21" */
export function familyHow(f) {
  const family = CAT.families[f.family] || "";
  const values = f.cards.map((c) => (cardInfo(c) || {}).value || 0)
    .concat(f.immutos.map(() => 0)).slice(0, f.counted);
  let how = `${tn("family_cards", f.counted, { family })}: `;
  if (f.counted === 1) how += t("score_one", { value: values[0], points: f.base });
  else if (f.counted === 2) how += t("score_two");
  else how += `${values.join(" + ")} = ${f.base}`;
  let points = f.base;
  if (f.doubled) { points *= 2; how += `; ${t("score_doubled", { points })}`; }
  if (f.bonus) { points += f.bonus; how += `; ${t("score_bonus", { bonus: f.bonus, points })}`; }
  if (f.immutos.length) how += ` (${tn("immuto_counted", f.immutos.length, { immuto: immuto() })})`;
  const extra = f.cards.length + f.immutos.length - f.counted;
  if (extra > 0) how += ` (${tn("extra_cards", extra)})`;
  return how;
}

/* Why a recipe scored, in the page's language (engine/games/glastonbury/rules/scoring.py ReasonCode; the
   command line's names.recipe_reason says the same in English). */
export function recipeReason(r) {
  const p = r.reason_params || {};
  if (!r.reason_code) return r.reason || "";
  const colour = p.colour ? colourName(p.colour) : "";
  const what = p.measure ? t("recipe_what_" + p.measure, { colour }) : "";
  const seat = p.seat != null ? seatLabel(p.seat, p.seat_colour) : "";
  let text = t("recipe_reason_" + r.reason_code, { what, own: p.own, other: p.other, colour, seat });
  if (p.rate != null && p.own != null) text += `; ${tn("recipe_points", p.own, { rate: p.rate, points: r.points })}`;
  return text;
}

/* How the game ended: which line was emptied and who took its last card, when known. */
export function endText(end) {
  if (!end || !end.reason) return "";
  if (end.reason === "line_emptied" && end.line != null) {
    const line = lineLabel(end.line);
    if (end.last_card_seat == null) return t("end_line_emptied", { line });
    const s = end.scores && end.scores.seats.find((x) => x.seat === end.last_card_seat);
    return t("end_line_emptied_by", { line, seat: seatLabel(end.last_card_seat, s && s.colour) });
  }
  return t("end_reason_" + end.reason);
}

function ranked(scores) {
  const sorted = [...scores.seats].sort((a, b) => b.total - a.total);
  let rank = 0;
  let prev = null;
  return sorted.map((s, i) => {
    if (s.total !== prev) { rank = i + 1; prev = s.total; }
    return { ...s, rank };
  });
}

export function winnersText(scores, seats) {
  const names = scores.winners.map((s) => seatLabel(s, seats[s] && seats[s].colour));
  return tn("winners", names.length, { names: names.join(", ") });
}

/* The podium banner: winner, ranks and totals, a link to the full breakdown. */
export function podiumHtml(scores, seats, end) {
  const rows = ranked(scores).map((s) => `<li class="rank-${s.rank}${scores.winners.includes(s.seat) ? " winner" : ""}" data-seat="${s.seat}">` +
    `<span class="place">${esc(t("place", { n: s.rank }))}</span> <span class="swatch c-${esc(s.colour)}" aria-hidden="true">${esc(CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "")}</span> ` +
    `<span class="name">${esc(seatLabel(s.seat, s.colour))}</span> <strong class="total">${esc(tn("points_n", s.total))}</strong></li>`).join("");
  return `<h2><span aria-hidden="true">★</span> ${esc(t("game_over"))} — ${esc(winnersText(scores, seats))}</h2>` +
    (end && end.reason ? `<p class="reason">${esc(endText(end))}</p>` : "") +
    `<ol class="podium-list">${rows}</ol><p><a href="/scores">${esc(t("see_scores"))}</a> · ${esc(t("until_next"))}</p>`;
}

/* The full breakdown of a finished game. */
export function scoresHtml(scores, seats, end) {
  let html = `<h2>${esc(t("game_over"))}</h2><p class="winners">★ ${esc(winnersText(scores, seats))}</p>`;
  if (end && end.reason) html += `<p class="reason">${esc(endText(end))}</p>`;
  html += `<div class="score-grid">`;
  for (const s of ranked(scores)) {
    const win = scores.winners.includes(s.seat);
    html += `<article class="score-seat${win ? " winner" : ""}" data-seat="${s.seat}">` +
      `<h3>${esc(t("place", { n: s.rank }))} · ${win ? "★ " : ""}${esc(seatLabel(s.seat, s.colour))} — ${esc(t("total"))}: <span class="total">${s.total}</span></h3>` +
      `<table><thead><tr><th scope="col">${esc(t("family"))}</th><th scope="col">${esc(t("how_counted"))}</th><th scope="col">${esc(t("points"))}</th></tr></thead><tbody>`;
    const fams = [...s.families].sort((a, b) => b.points - a.points || a.family.localeCompare(b.family));
    for (const f of fams) {
      const cards = f.cards.map((c) => `<span class="mini">${esc(cardLabel(c))}</span>`).join(" ") +
        f.immutos.map(() => ` <span class="mini immuto">${esc(immuto())} (0)</span>`).join("");
      const colour = CAT.colours[f.colour];
      html += `<tr><th scope="row"><span class="swatch c-${esc(f.colour)}" aria-hidden="true">${esc(colour ? colour.symbol : "")}</span> ${esc(CAT.families[f.family] || "")}<br><small>${esc(colourName(f.colour))}</small></th>` +
        `<td>${cards}<br><span class="how">${esc(familyHow(f))}</span></td><td class="pts">${f.points}</td></tr>`;
    }
    html += `</tbody><tfoot><tr><th scope="row">${esc(t("ingredients"))}</th><td></td><td class="pts">${s.ingredient_points}</td></tr>`;
    for (const fam of Object.values(s.immuto_assignment || {})) {
      html += `<tr><td colspan="3">${esc(t("immuto_to", { immuto: immuto(), family: CAT.families[fam] || "" }))}</td></tr>`;
    }
    for (const r of s.recipes || []) {
      const name = CAT.recipes[r.recipe];
      const label = r.recipe.startsWith("A-") ? t("recipe_label_a", { name: colourName(name) }) : t("recipe_label_b", { name });
      html += `<tr><th scope="row">${esc(label)}</th><td>${esc(r.achieved ? t("recipe_yes") : t("recipe_no"))} — ${esc(recipeReason(r))}</td><td class="pts">${r.points}</td></tr>`;
    }
    if (s.second_player_bonus) html += `<tr><th scope="row">${esc(t("second_bonus"))}</th><td></td><td class="pts">${s.second_player_bonus}</td></tr>`;
    html += `<tr class="grand"><th scope="row">${esc(t("total"))}</th><td></td><td class="pts">${s.total}</td></tr></tfoot></table></article>`;
  }
  return html + `</div>`;
}

/* During a game: what each seat's visible cards would score (covered cards are hidden, so
   the engine publishes running totals only when it has them; else the public count). */
export function runningHtml(v) {
  const rows = v.seats.map((s) => {
    const total = s.score != null ? tn("points_n", s.score) : t("hidden_score");
    return `<tr data-seat="${s.seat}"><th scope="row"><span class="swatch c-${esc(s.colour)}" aria-hidden="true">${esc(CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "")}</span> ${esc(seatLabel(s.seat, s.colour))}</th>` +
      `<td>${esc(tn("cards_n", s.cauldron_size))}</td><td>${esc(total)}</td></tr>`;
  }).join("");
  return `<h2>${esc(t("running_totals"))}</h2><table class="running"><thead><tr><th scope="col">${esc(t("seat"))}</th><th scope="col">${esc(t("cauldron"))}</th><th scope="col">${esc(t("points"))}</th></tr></thead><tbody>${rows}</tbody></table>`;
}
