/* Quacks' page fragments, shared by the big screen, the phone and the score page: chips,
   the pot, the white sum against the limit, the exact explosion chance, the evaluation's
   steps in words, the shop. Words come from the page's strings (the shell merges Quacks'
   `q_…` keys, engine/games/quacks/i18n); no id is ever shown raw. */
import { esc, t, tn } from "/static/core.js";

/* The words come with the game's page catalogue (`QuacksDefinition.page_catalogue`), in
   the boot JSON's `catalogue`: core.js merges them into the page's strings. */

/* A glyph per colour: colour is never the only signal. */
export const GLYPH = { white: "○", orange: "◆", green: "✚", blue: "▲", red: "●", yellow: "★", purple: "☁", black: "✖" };

export const kindOf = (chip) => String(chip).split("-").slice(0, 2).join("-");
export const colourOf = (chip) => String(chip).split("-")[0];
export const valueOf = (chip) => Number(String(chip).split("-")[1]);

/* "toadstool 2", by the catalogue's names in the page's language. */
export function chipName(chip) {
  return t("q_chip", { name: t("q_colour_" + colourOf(chip)), value: valueOf(chip) });
}
export function cardName(card) { return card ? t("q_card_" + card) : t("q_no_card"); }
export function seatName(seat) { return t("q_seat_n", { n: seat + 1 }); }

/** One chip as a disc: glyph + value, named for screen readers. */
export function chipHtml(chip, extra) {
  const c = colourOf(chip);
  return `<span class="q-chip q-${esc(c)}${extra ? " " + extra : ""}" title="${esc(chipName(chip))}" role="img" aria-label="${esc(chipName(chip))}">` +
    `<span class="q-glyph" aria-hidden="true">${GLYPH[c] || "?"}</span><span class="q-val" aria-hidden="true">${valueOf(chip)}</span></span>`;
}

/** The pot as the 53 spaces of its spiral, unrolled: chips where they lie, the droplet and
    the rat stone, the scoring space with its coins, VP and ruby. */
export function potHtml(seat, track, compact) {
  const byIndex = new Map(seat.pot.map((p) => [p.index, p.chip]));
  const last = seat.pot.length ? seat.pot[seat.pot.length - 1].index : seat.start;
  const upto = Math.min(track.length - 1, Math.max(last + 6, compact ? 20 : 26));
  const cells = [];
  for (let i = 0; i <= upto; i++) {
    const sp = track[i];
    const chip = byIndex.get(i);
    const marks = [];
    if (i === seat.droplet) marks.push(`<span class="q-drop" title="${esc(t("q_droplet"))}" aria-hidden="true"></span>`);
    if (seat.start !== seat.droplet && i === seat.start) marks.push(`<span class="q-rat" title="${esc(t("q_rat_stone"))}" aria-hidden="true"></span>`);
    const cls = ["q-space"];
    if (sp.ruby) cls.push("ruby");
    if (i === seat.scoring_space) cls.push("scoring");
    cells.push(`<li class="${cls.join(" ")}" data-index="${i}">` +
      (chip ? chipHtml(chip) : `<span class="q-coins" aria-hidden="true">${sp.coins}</span>`) + marks.join("") + `</li>`);
  }
  return `<ol class="q-pot${compact ? " compact" : ""}" aria-label="${esc(t("q_pot_label", { n: seat.pot.length }))}">${cells.join("")}</ol>`;
}

/** White sum against the limit, as words and a bar of the limit's steps. */
export function whiteHtml(seat) {
  const steps = [];
  for (let i = 1; i <= seat.limit; i++) steps.push(`<i class="${i <= seat.white_sum ? "on" : ""}"></i>`);
  const over = seat.white_sum > seat.limit;
  return `<p class="q-whites${over ? " over" : ""}"><span>${esc(t("q_white_sum", { sum: seat.white_sum, limit: seat.limit }))}</span>` +
    `<span class="q-meter" aria-hidden="true">${steps.join("")}</span></p>`;
}

/** The exact chance that the next chip explodes the pot (N23), as a fraction and a percent;
    none when the memory aid is off (the view then carries no odds at all). */
export function oddsHtml(seat) {
  const odds = seat.explosion_chance;
  if (!odds) return "";
  if (seat.status !== "brewing") return "";
  const pct = Math.round(odds.p * 1000) / 10;
  if (odds.num === 0) return `<p class="q-odds safe" data-num="0"><span aria-hidden="true">✓</span> ${esc(t("q_odds_safe"))}</p>`;
  const level = odds.p >= 0.5 ? "high" : odds.p >= 0.2 ? "mid" : "low";
  return `<p class="q-odds ${level}" data-num="${odds.num}" data-den="${odds.den}"><span aria-hidden="true">⚠</span> ` +
    `${esc(t("q_odds", { num: odds.num, den: odds.den, pct: pct.toLocaleString() }))}</p>`;
}

/** A seat's state in a word, following the game: its result once the game is over (winner,
    or its rank: `view.scores`), "game ended" when the host ended it, exploded or stopped
    this round, brewing while the round brews (before the brewing: no word). */
export function statusWord(seat, view) {
  if (view && view.over) {
    const mine = view.scores ? view.scores.seats.find((s) => s.seat === seat.seat) : null;
    if (view.winners.includes(seat.seat)) return `<span class="q-status winner">★ ${esc(t("q_status_winner"))}</span>`;
    return `<span class="q-status ranked">${esc(mine ? t("q_rank", { n: mine.rank }) : t("q_phase_over"))}</span>`;
  }
  if (view && view.table && view.table.status === "ended") return `<span class="q-status ended">■ ${esc(t("q_status_ended"))}</span>`;
  if (seat.status === "exploded") return `<span class="q-status exploded">✸ ${esc(t("q_status_exploded"))}</span>`;
  if (seat.status === "stopped") return `<span class="q-status stopped">■ ${esc(t("q_status_stopped"))}</span>`;
  if (view && view.phase !== "brew") return "";
  return `<span class="q-status brewing">▶ ${esc(t("q_status_brewing"))}</span>`;
}

/* Once the game is over the pots are empty (G): a seat shows its result instead (`view.
   scores`): its VP and rubies, for a tie how far its pot got in round 9 (Q25, D21), and
   its rounds, each one's VP gained and the VP after it. */
export function finalHtml(v, s) {
  const mine = v.scores ? v.scores.seats.find((x) => x.seat === s.seat) : null;
  if (!mine) return "";
  const tied = v.scores.tie_break && v.scores.tied.includes(s.seat) && mine.final_space != null;
  const cells = (f) => mine.rounds.map((r) => `<td>${f(r)}</td>`).join("");
  return `<p class="q-final"><strong>★ ${esc(tn("q_vp_n", mine.vp))}</strong> · ♦ ${esc(tn("q_rubies_n", mine.rubies))}` +
    (tied ? ` · ${esc(t("q_final_space", { n: mine.final_space }))}` : "") + `</p>` +
    `<div class="q-final-wrap"><table class="q-final-rounds"><tr><th scope="row">${esc(t("q_col_round"))}</th>${cells((r) => r.round)}</tr>` +
    `<tr><th scope="row">${esc(t("q_col_gained"))}</th>${cells((r) => (r.exploded ? `<span title="${esc(t("q_status_exploded"))}">✸</span>` : "") + (r.exploded && !r.vp_gained ? "" : `+${r.vp_gained}`))}</tr>` +
    `<tr><th scope="row">${esc(t("q_col_total"))}</th>${cells((r) => `<strong>${r.vp}</strong>`)}</tr></table></div>`;
}

/** One event of the round in words ("Seat 2 rolls: 2 VP"). */
export function eventWords(e) {
  const who = e.seat != null ? seatName(e.seat) : "";
  const p = Object.assign({}, e, { seat: who });
  if (e.chip) p.chip = chipName(e.chip);
  if (e.kind) p.kind = chipName(e.kind);
  if (e.card) p.card = cardName(e.card);
  if (e.phase) p.phase = t("q_phase_" + e.phase);
  if (e.result) p.result = t("q_die_" + e.result);
  if (e.reward) p.reward = t("q_reward_" + e.reward);
  if (e.colour) p.colour = t("q_colour_" + e.colour);
  if (e.code === "rubies") return tn(e.change >= 0 ? "q_ev_rubies_gain" : "q_ev_rubies_spend", Math.abs(e.change), { seat: who, total: e.total });
  if (e.code === "vp") {
    const why = !e.why ? "" : /^F[PB]\d+$/.test(e.why) ? ` (${cardName(e.why)})` : t("q_why_" + String(e.why).replace(/[^a-zA-Z0-9]/g, "_"));
    return tn("q_ev_vp", e.gain, { seat: who, why });
  }
  if (e.code === "bought" && !e.chip) return t("q_ev_bought_nothing", { seat: who });
  if (e.code === "auto_choice") return t(e.ask === "buy" ? "q_ev_auto_buy" : "q_ev_auto", p);
  if (e.code === "game_over") return t("q_ev_game_over", { seats: (e.winners || []).map(seatName).join(", ") });
  return t("q_ev_" + e.code, p);
}

/** The evaluation so far, step by step: the steps A–F opened, and what each gave. */
export function evaluationHtml(events, limit) {
  const shown = events.filter((e) => e.code !== "round_started" && e.code !== "fortune_revealed" && !(e.code === "step" && (e.phase === "fortune" || e.phase === "cleanup")));
  // A step that gave nothing is not listed, unless it is the step now open (the last).
  const kept = shown.filter((e, i) => e.code !== "step" || i === shown.length - 1 || shown[i + 1].code !== "step");
  const tail = limit ? kept.slice(-limit) : kept;
  return `<ul class="q-steps" aria-label="${esc(t("q_evaluation"))}">` + tail.map((e) =>
    e.code === "step" ? `<li class="q-step-head" data-phase="${esc(e.phase)}">${esc(t("q_phase_" + e.phase))}</li>` : `<li data-code="${esc(e.code)}">${esc(eventWords(e))}</li>`).join("") + `</ul>`;
}

/** The shop: each kind's price and supply, and which seats can afford it now. */
export function shopHtml(view, seats) {
  const kinds = Object.keys(view.prices).filter((k) => view.books_out.includes(colourOf(k)));
  const rows = kinds.map((k) => {
    const who = seats.filter((s) => s.affordable.includes(k)).map((s) => `<span class="q-who">${esc(String(s.seat + 1))}</span>`).join("");
    const left = view.supply[k] || 0;
    return `<tr data-kind="${esc(k)}" class="${left ? "" : "empty"}"><th scope="row">${chipHtml(k, "small")} ${esc(chipName(k))}</th>` +
      `<td class="num">${esc(t("q_coins_n", { n: view.prices[k] }))}</td><td class="num">${esc(tn("q_left_n", left))}</td><td class="q-whocan">${who}</td></tr>`;
  });
  return `<table class="q-shop"><caption>${esc(t("q_shop"))}</caption><thead><tr><th scope="col">${esc(t("q_ingredient"))}</th><th scope="col">${esc(t("q_price"))}</th>` +
    `<th scope="col">${esc(t("q_supply"))}</th><th scope="col">${esc(t("q_who_can"))}</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** What a seat is asked now, in words (for the screen and the phone). */
export function askedWords(seat) {
  if (seat.question) return t("q_question_" + seat.question);
  if (seat.asked) return t("q_asked_" + seat.asked);
  return "";
}
