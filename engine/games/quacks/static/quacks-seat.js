/* Quacks on a seat's phone: `renderSeat(root, view, ctx)` draws one seat view
   (`QuacksTable.seat_view`) and wires its buttons to `ctx.send(verb, args)` (the shell
   posts them to the table: engine/games/quacks/table.py `PHONE_VERBS`). `ctx.virtual`
   says the table has a virtual bag (the table draws at random and the player takes that
   chip; purchases are picked here) rather than draw pads (chips are tapped).

   What the phone offers: draw (virtual) or "tap the chip on your pad", stop drawing, use
   the flask, the open question (blue offer, red bonus, yellow, FB10, FB3), exploded: VP or
   buying, buy up to 2 chips (with what the coins afford), rubies, the fortune card's and
   purple chips' choices, the die; and always "I drew a chip I did not tap" and "undo my
   last draw" while brewing. */
import { esc, setHtml, t, tn } from "/static/core.js";
import { askedWords, chipHtml, chipName, colourOf, finalHtml, oddsHtml, potHtml, seatName, statusWord, whiteHtml } from "./quacks-common.js";

const b = (verb, args, label, cls) =>
  `<button type="button" class="btn big q-act${cls ? " " + cls : ""}" data-verb="${esc(verb)}" data-args="${esc(JSON.stringify(args || {}))}">${esc(label)}</button>`;

function optionLabel(view, o) {
  const ask = view.ask ? view.ask.kind : null;
  if (ask === "reward") return t("q_reward_" + o.option);
  if (ask === "purple") return t("q_purple_tier_" + o.option);
  if (ask === "tails") return tn("q_tails_for_rubies", Number(o.option));
  if (/^[a-z]+-[124]$/.test(o.option)) return t("q_take_chip", { chip: chipName(o.option) });
  if (/^[a-z]+-[124]-\d+$/.test(o.option)) return t("q_place_chip", { chip: chipName(o.option) });
  return t("q_option_" + o.option);
}

/* The shop on the phone: picked chips (virtual) or tapped ones (pads), then buy/done. */
function shopHtml(view, ctx, picked) {
  const me = view.seats[view.me];
  const coins = me.space.coins;
  const spent = picked.reduce((n, k) => n + view.prices[k], 0);
  const colours = picked.map(colourOf);
  const rows = me.affordable.map((k) => {
    const fits = picked.includes(k) || (picked.length < 2 && !colours.includes(colourOf(k)) && view.prices[k] <= coins - spent);
    return `<li><label class="q-pick${fits ? "" : " off"}"><input type="checkbox" data-kind="${esc(k)}"${picked.includes(k) ? " checked" : ""}${fits ? "" : " disabled"}> ` +
      `${chipHtml(k, "small")} ${esc(chipName(k))} — ${esc(t("q_coins_n", { n: view.prices[k] }))}</label></li>`;
  }).join("");
  const head = `<p class="q-coins-line">${esc(t("q_you_have_coins", { n: coins, left: coins - spent }))}</p>`;
  if (!ctx.virtual) {
    const basket = view.basket || [];
    return head + `<p>${esc(t("q_tap_to_buy"))}</p>` +
      (basket.length ? `<p class="q-basket">${esc(t("q_tapped"))} ${basket.map((c) => chipHtml(c, "small")).join(" ")}</p>` : "") +
      `<ul class="q-afford">${me.affordable.map((k) => `<li>${chipHtml(k, "small")} ${esc(chipName(k))} — ${esc(t("q_coins_n", { n: view.prices[k] }))}</li>`).join("")}</ul>` +
      b("done_buying", {}, basket.length ? t("q_done_buying") : t("q_buy_nothing"));
  }
  return head + `<ul class="q-afford">${rows}</ul>` +
    b("buy", { chips: picked }, picked.length ? t("q_buy_these", { chips: picked.map(chipName).join(" + ") }) : t("q_buy_nothing"));
}

function spendHtml(view) {
  const opts = view.options.filter((o) => o.type === "spend");
  return opts.map((o) => {
    let label;
    if (o.coins_vp) label = tn("q_coins_to_vp", o.coins_vp, { coins: o.coins_vp * 5 });
    else if (o.vp) label = tn("q_rubies_to_vp", o.vp, { rubies: o.vp * 2 });
    else if (o.droplet || o.refill) {
      const parts = [];
      if (o.droplet) parts.push(tn("q_droplet_steps", o.droplet));
      if (o.refill) parts.push(t("q_refill"));
      label = parts.join(" + ") + " — " + tn("q_rubies_n", 2 * (o.droplet + (o.refill ? 1 : 0)));
    } else label = t("q_spend_nothing");
    return b("spend", { droplet: o.droplet, refill: o.refill, vp: o.vp, coins_vp: o.coins_vp }, label);
  }).join("");
}

function actionsHtml(view, ctx, picked) {
  const me = view.seats[view.me];
  const has = (type) => view.options.some((o) => o.type === type);
  const out = [];
  const q = me.question;
  if (q === "offer" && view.options.some((o) => o.type === "offer")) {
    out.push(`<p>${esc(t("q_question_offer"))}</p>`);
    for (const o of view.options.filter((o) => o.type === "offer")) {
      out.push(o.chip ? b("offer", { chip: o.chip }, t("q_place_chip", { chip: chipName(o.chip) })) : b("offer", { chip: null }, t("q_offer_none")));
    }
  } else if (has("answer")) {
    out.push(`<p>${esc(t("q_question_" + q))}</p>`);
    out.push(b("answer", { question: q, yes: true }, t("q_yes_" + q)), b("answer", { question: q, yes: false }, t("q_no_" + q)));
  } else if (has("choose")) {
    out.push(`<p>${esc(askedWords(me))}</p>`);
    for (const o of view.options.filter((o) => o.type === "choose")) out.push(b("choose", { option: o.option }, optionLabel(view, o)));
  } else if (has("roll")) {
    out.push(b("roll", {}, t("q_roll")));
  } else if (view.ask && view.ask.kind === "buy") {
    out.push(`<h3>${esc(t("q_shop"))}</h3>` + shopHtml(view, ctx, picked));
  } else if (has("spend")) {
    out.push(`<p>${esc(askedWords(me))}</p>` + spendHtml(view));
  }
  if (view.phase === "brew" || me.question === "strong" || me.question === "flea" || me.question === "less") {
    if (has("draw")) {
      out.push(ctx.virtual ? b("draw", {}, me.question ? t("q_draw_more") : t("q_draw"), "primary") : `<p class="q-tap">${esc(t("q_tap_on_pad"))}</p>`);
    }
    if (has("flask")) out.push(b("flask", {}, t("q_use_flask")));
    if (has("stop")) out.push(b("stop", {}, t("q_stop")));
  }
  return out.join("");
}

/* "I drew a chip I did not tap" (pads only) and "undo my last draw", while the round brews. */
function repairHtml(view, ctx) {
  if (view.phase !== "brew") return "";
  const me = view.seats[view.me];
  let html = "";
  if (!ctx.virtual && me.status === "brewing" && view.options.some((o) => o.type === "draw") && view.bag) {
    const kinds = Object.keys(view.bag).filter((k) => view.bag[k] > 0);
    html += `<details class="q-untapped"><summary>${esc(t("q_untapped"))}</summary><p>${esc(t("q_untapped_which"))}</p>` +
      kinds.map((k) => `<button type="button" class="btn q-act" data-verb="untapped" data-args="${esc(JSON.stringify({ kind: k }))}">${chipHtml(k, "small")} ${esc(chipName(k))}</button>`).join(" ") + `</details>`;
  }
  if (me.pot.length) html += b("undo_draw", {}, t("q_undo_draw"), "small");
  return html;
}

function bagHtml(view) {
  if (!view.bag) return "";
  const items = Object.entries(view.bag).map(([k, n]) => `<li>${chipHtml(k, "small")} × ${n}</li>`).join("");
  return `<details class="q-bag"><summary>${esc(t("q_my_bag"))} (${esc(tn("q_chips_n", view.seats[view.me].bag_size))})</summary><ul>${items}</ul></details>`;
}

const picks = new WeakMap();

/** Draw `view` into `root`; `ctx = {send(verb, args) -> Promise<{status, error}>, virtual}`. */
export function renderSeat(root, view, ctx) {
  // No game yet, or not this seat's view yet (the shell's words)
  if (!view || view.me == null) { root.innerHTML = `<p class="q-no-game">${esc(t("no_game"))}</p>`; return; }
  root._view = view;
  root._ctx = ctx;
  const me = view.seats[view.me];
  let picked = (picks.get(root) || []).filter((k) => me.affordable.includes(k));
  if (!(view.ask && view.ask.kind === "buy")) picked = [];
  picks.set(root, picked);
  const hand = view.hand && view.hand.length ? `<p class="q-hand">${esc(t("q_in_hand"))} ${view.hand.map((c) => chipHtml(c)).join(" ")}</p>` : "";
  // The table's state (a game the host ended) comes with the public view, not the seat's.
  const table = view.table || (ctx.state && ctx.state.game && ctx.state.game.view ? ctx.state.game.view.table : null);
  const title = `${esc(seatName(view.me))} ${statusWord(me, Object.assign({}, view, { table }))}`;
  // The shell's page names the seat already (#seat-head): the state goes there, said once.
  const head = document.getElementById("seat-head");
  if (head) setHtml(head, title);
  const html = `<section class="q-phone" data-seat="${view.me}" data-phase="${esc(view.phase)}">` +
    (head ? "" : `<h2>${title}</h2>`) +
    `<p class="q-round-line">${esc(t("q_round", { n: view.round, total: view.rounds }))} · ${esc(t("q_phase_" + view.phase))}</p>` +
    `<div class="q-actions" aria-live="polite">${actionsHtml(view, ctx, picked)}</div>` +
    `<p class="q-refusal" role="alert">${esc(root._refusal || "")}</p>` + hand +
    (view.over ? finalHtml(view, me) : `<div class="q-line">${whiteHtml(me)}${oddsHtml(me)}</div>` + potHtml(me, view.track || [], true)) +
    (view.over ? "" : `<p class="q-mine">★ ${esc(tn("q_vp_n", me.vp))} · ♦ ${esc(tn("q_rubies_n", me.rubies))} · ⚗ ${esc(t(me.flask === "full" ? "q_flask_full" : "q_flask_empty"))} · ${esc(t("q_space", { coins: me.space.coins, vp: me.space.vp }))}</p>`) +
    `<div class="q-repair">${repairHtml(view, ctx)}</div>` + bagHtml(view) + `</section>`;
  setHtml(root, html);
  if (root._wired) return;
  root._wired = true;
  root.addEventListener("change", (ev) => {
    const box = ev.target.closest("input[data-kind]");
    if (!box) return;
    const cur = picks.get(root) || [];
    picks.set(root, box.checked ? [...cur, box.dataset.kind] : cur.filter((k) => k !== box.dataset.kind));
    renderSeat(root, root._view, root._ctx);
  });
  root.addEventListener("click", async (ev) => {
    const btn = ev.target.closest("button[data-verb]");
    if (!btn) return;
    btn.disabled = true;
    const answer = await root._ctx.send(btn.dataset.verb, JSON.parse(btn.dataset.args || "{}"));
    root._refusal = answer && answer.error ? refusalWords(answer.error) : "";
    if (!answer || !answer.error) picks.set(root, []);
    btn.disabled = false;
    renderSeat(root, root._view, root._ctx);
  });
}

/** A refusal in the page's language, from its code and parameters (`q_refuse_<code>`). */
export function refusalWords(error) {
  const p = Object.assign({ n: error.seat != null ? error.seat + 1 : "" }, error.params || {});
  if (p.kind) p.chip_name = p.kind_name = chipName(p.kind);
  if (p.colour) p.colour = t("q_colour_" + p.colour);
  const key = "q_refuse_" + error.code;
  const words = t(key, p);
  return (words === key ? error.message : words) + (error.rule ? ` (${error.rule})` : "");
}

