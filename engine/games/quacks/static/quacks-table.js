/* Quacks on the big screen: `renderTable(root, view)` draws one public view
   (engine/games/quacks/table.py `QuacksTable.public_view`) into `root`, in one screen at
   1920x1080 and 1280x720: the round and the fortune card, each seat's pot with its white
   sum against its limit and the exact chance that the next chip explodes it (hidden when
   the memory aid is off), its droplet, rat tails, flask, rubies, VP and scoring space; the
   scoring track; the evaluation step by step; the shop with what each seat can afford. */
import { esc, patchChildren, setHtml, t, tn } from "/static/core.js";
import { askedWords, cardName, chipHtml, evaluationHtml, finalHtml, oddsHtml, potHtml, seatName, shopHtml, statusWord, whiteHtml } from "./quacks-common.js";

const SKELETON = `<div class="q-screen">
  <section class="q-head" aria-live="polite"></section>
  <div class="q-body">
    <div class="q-seats" role="group"></div>
    <aside class="q-side">
      <section class="q-track"></section>
      <section class="q-eval"></section>
      <section class="q-shop-box"></section>
    </aside>
  </div>
</div>`;

function headHtml(v) {
  const dots = [];
  for (let r = 1; r <= v.rounds; r++) dots.push(`<i class="${r < v.round ? "done" : r === v.round ? "now" : ""}">${r}</i>`);
  const card = v.fortune ? `<span class="q-card ${esc(v.cards && v.cards[v.fortune] ? v.cards[v.fortune] : "")}" data-card="${esc(v.fortune)}">${esc(cardName(v.fortune))}</span>` : `<span class="q-card none">${esc(t("q_no_card"))}</span>`;
  const stir = v.round === v.rounds && v.phase === "brew" ? `<span class="q-stir">${esc(t("q_stir"))}</span>` : "";
  const over = v.phase === "over" ? `<span class="q-over">★ ${esc(t("q_winners", { seats: v.winners.map(seatName).join(", ") }))}</span>` : "";
  return `<p class="q-round"><strong>${esc(t("q_round", { n: v.round, total: v.rounds }))}</strong> <span class="q-dots" aria-hidden="true">${dots.join("")}</span></p>` +
    `<p class="q-phase" data-phase="${esc(v.phase)}">${esc(t("q_phase_" + v.phase))}</p>` +
    `<p class="q-fortune">${esc(t("q_fortune_colon"))} ${card}</p>` +
    `<p class="q-start">${esc(t("q_start_player", { seat: seatName(v.start_player) }))}</p>` + stir + over;
}

function seatHtml(v, s) {
  const asked = askedWords(s);
  const basket = (v.baskets && v.baskets[String(s.seat)]) || [];
  const buying = s.asked === "buy";
  return `<article class="q-seat st-${esc(s.status)}${asked ? " asked" : ""}" data-seat="${s.seat}">` +
    `<h2>${esc(seatName(s.seat))} ${statusWord(s, v)}${s.seat === v.start_player ? ` <span class="q-first" title="${esc(t("q_start_player", { seat: seatName(s.seat) }))}">①</span>` : ""}</h2>` +
    (v.over ? finalHtml(v, s) : potHtml(s, v.track || []) + `<div class="q-line">${whiteHtml(s)}${oddsHtml(s)}</div>`) +
    (v.over ? "" : `<ul class="q-facts">` +
    `<li>${esc(tn("q_bag_n", s.bag_size))}</li>` +
    `<li><span class="q-drop inline" aria-hidden="true"></span> ${esc(t("q_droplet_at", { n: s.droplet }))}</li>` +
    (s.rat_tails ? `<li><span class="q-rat inline" aria-hidden="true"></span> ${esc(tn("q_tails_n", s.rat_tails))}</li>` : "") +
    `<li>⚗ ${esc(t(s.flask === "full" ? "q_flask_full" : "q_flask_empty"))}</li>` +
    `<li>♦ ${esc(tn("q_rubies_n", s.rubies))}</li>` +
    `<li class="q-vp">★ ${esc(tn("q_vp_n", s.vp))}</li>` +
    `</ul>`) +
    (v.over ? "" : `<p class="q-scoring">${esc(t("q_space", { coins: s.space.coins, vp: s.space.vp }))}${s.space.ruby ? ` <span class="q-ruby">♦ ${esc(t("q_ruby_space"))}</span>` : ""}</p>`) +
    (buying && basket.length ? `<p class="q-basket">${esc(t("q_buying"))} ${basket.map((c) => chipHtml(c, "small")).join(" ")}</p>` : "") +
    (asked ? `<p class="q-asked">➜ ${esc(asked)}</p>` : "") +
    `</article>`;
}

/* The scoring track 0–50: each seat's marker, the rat tails between (Q5), the leader. */
function trackHtml(v) {
  const tails = v.rat_tails_after || [];
  const max = 50;
  // Markers a few points apart (all at 0 at the start) would hide each other: each chain
  // of them is laid side by side from its first (in the track's right half, from its last
  // leftwards). A marker at P% is shifted by P% of its width, so none leaves the track.
  const GAP = 1.7; // em: a marker ("4+") and a little space
  const CLOSE = 4; // points: closer than a marker's width on a narrow screen
  const sorted = v.seats.map((s) => ({ s, at: s.vp % max })).sort((a, b) => a.at - b.at || a.s.seat - b.s.seat);
  const chains = [];
  for (const m of sorted) {
    const chain = chains[chains.length - 1];
    if (chain && m.at - chain[chain.length - 1].at <= CLOSE) chain.push(m); else chains.push([m]);
  }
  const marks = chains.flatMap((chain) => chain.map((m, i) => {
    const leftwards = chain[0].at > max / 2;
    const pct = ((leftwards ? chain[chain.length - 1].at : chain[0].at) / max) * 100;
    const k = leftwards ? i - (chain.length - 1) : i;
    const lap = Math.floor(m.s.vp / max);
    return `<span class="q-marker" style="left:calc(${pct}% + ${k * GAP}em);transform:translateX(-${pct}%)" title="${esc(t("q_seat_has", { seat: seatName(m.s.seat), what: tn("q_vp_n", m.s.vp) }))}">${m.s.seat + 1}${lap ? "+" : ""}</span>`;
  })).join("");
  const tailMarks = tails.map((t0) => `<i class="q-tail" style="left:${((t0 + 0.5) / max) * 100}%"></i>`).join("");
  const ticks = [0, 10, 20, 30, 40, 50].map((n) => `<b style="left:${(n / max) * 100}%">${n}</b>`).join("");
  const list = [...v.seats].sort((a, b) => b.vp - a.vp).map((s) => `<li>${esc(t("q_seat_has", { seat: seatName(s.seat), what: "" }))}<strong>${esc(tn("q_vp_n", s.vp))}</strong>${s.rat_tails ? ` · ${esc(tn("q_tails_n", s.rat_tails))}` : ""}</li>`).join("");
  return `<h2>${esc(t("q_scoring_track"))}</h2><div class="q-line-track" aria-hidden="true">${tailMarks}${ticks}${marks}</div><ol class="q-ranking">${list}</ol>`;
}

function shopBox(v) {
  if (!["buy", "spend", "vp", "rubies"].includes(v.phase)) return "";
  return shopHtml(v, v.seats);
}

/** Draw `view` into `root` (a keyed patch: only what changed is redrawn). */
export function renderTable(root, view) {
  if (!view) { setHtml(root, `<p class="big q-no-game">${esc(t("no_game"))}</p>`); return; }  // (the shell's words)
  if (!root.querySelector(".q-screen")) { root._html = undefined; root.innerHTML = SKELETON; }
  const v = view;
  setHtml(root.querySelector(".q-head"), headHtml(v));
  patchChildren(root.querySelector(".q-seats"), v.seats.map((s) => seatHtml(v, s)));
  root.querySelector(".q-seats").dataset.count = String(v.seats.length);
  setHtml(root.querySelector(".q-track"), trackHtml(v));
  const evalEvents = v.evaluation || [];
  setHtml(root.querySelector(".q-eval"), `<h2>${esc(t("q_evaluation"))}</h2>` + evaluationHtml(evalEvents, 40));
  setHtml(root.querySelector(".q-shop-box"), shopBox(v));
  root.querySelector(".q-screen").dataset.odds = v.show_odds ? "on" : "off";
}
