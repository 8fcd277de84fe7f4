/* A seat's private view on a phone. */
"use strict";
const params = new URLSearchParams(location.search);
const SEAT = Number(location.pathname.split("/").pop());
const SECRET = params.get("secret") || "";
let socketUp = false;
let last = null;
let closedForGood = null;

function q(path) { return `${path}?secret=${encodeURIComponent(SECRET)}`; }

function render(state) {
  last = state;
  const head = document.getElementById("seat-head");
  const game = state.game;
  const v = game && game.view;
  head.innerHTML = `<h2><span class="swatch c-${esc(state.colour || "")}" aria-hidden="true">${esc(state.colour && CAT.colours[state.colour] ? CAT.colours[state.colour].symbol : "")}</span> ${esc(seatLabel(SEAT, state.colour))}</h2>`;
  const msg = document.getElementById("seat-msg");
  if (!v) msg.innerHTML = `<p>${esc(t("no_game"))}</p>`;
  else if (v.over) msg.innerHTML = `<p class="big">${esc(t("game_over"))} — <a href="/scores">${esc(t("see_scores"))}</a></p>`;
  else if (v.turn === SEAT) msg.innerHTML = `<p class="big your-turn">▶ ${esc(t("your_turn"))} ${esc(t("move_value", { n: v.move_value }))} — ${esc(t("phase_" + v.phase))}</p>`;
  else msg.innerHTML = `<p>${esc(t("waiting_for", { seat: seatLabel(v.turn, v.seats[v.turn].colour) }))}</p>`;

  const actions = document.getElementById("seat-actions");
  actions.hidden = !state.can_keep;
  // At a corner where Declinatio would face only Vanesco/Perluceo: using it ends the game (G7).
  document.getElementById("seat-declinatio").hidden = !(state.can_declinatio && v && !v.over);
  document.getElementById("last-card").textContent = state.last_card ? t("last_card", { card: cardLabel(state.last_card) }) : "";

  const reveal = document.getElementById("reveal");
  if (state.reveal) {
    reveal.hidden = false;
    reveal.innerHTML = `<h3>${esc(t("perluceo"))}</h3><ol class="stack-list">${state.reveal.map((c) => `<li>${cardHtml(c, "small")}</li>`).join("")}</ol>` +
      `<button type="button" class="btn" id="hide-reveal">${esc(t("seen_it"))}</button>`;
    document.getElementById("hide-reveal").addEventListener("click", () => api("POST", q(`/api/seats/${SEAT}/reveal/dismiss`)).catch(() => {}));
  } else { reveal.hidden = true; reveal.innerHTML = ""; }

  const stack = document.getElementById("stack");
  if (!v) stack.innerHTML = "";
  else if (state.stack) {
    stack.innerHTML = `<h3>${esc(t("your_cauldron"))} <small>(${esc(t("memory_aid_on"))})</small></h3>` +
      (state.stack.length ? `<ol class="stack-list" data-stack="1">${state.stack.map((c) => `<li>${cardHtml(c, "small")}</li>`).join("")}</ol>` : `<p>${esc(t("empty"))}</p>`);
  } else {
    stack.innerHTML = `<p class="note" data-memory-off="1">${esc(t("memory_aid_off"))}</p>`;
  }

  const pub = document.getElementById("seat-public");
  if (v && v.seats[SEAT]) {
    const s = v.seats[SEAT];
    pub.innerHTML = `<p>${esc(t("cauldron"))}: ${esc(t("cards_n", { n: s.cauldron_size }))} · ${esc(t("top"))}: ${s.top ? cardHtml(s.top, "small") : esc(t("empty"))}</p>` +
      (s.spells.length ? `<ul class="spells">${s.spells.map((sp) => `<li>✦ ${esc(cardLabel(sp.card))} — ${esc(sp.uses_left > 0 ? t("uses_left", { n: sp.uses_left }) : t("spent"))}</li>`).join("")}</ul>` : "") +
      `<p>${esc(t("pile"))}: ${esc(t("cards_n", { n: v.pile_size }))}</p>`;
  } else pub.innerHTML = "";

  const rec = document.getElementById("recipes");
  rec.innerHTML = state.recipes.length ? `<h3>${esc(t("your_recipes"))}</h3><ul>${state.recipes.map((r) => {
    const name = CAT.recipes[r];
    return `<li>${esc(r.startsWith("A-") ? "A: " + colourName(name) : "B: " + name)}</li>`;
  }).join("")}</ul>` : "";

  const al = document.getElementById("seat-alerts");
  al.innerHTML = state.alerts.map((a) => `<div class="alert"><span class="rule">⚠ ${esc(t("rule", { rule: a.rule }))}</span><p>${esc(humaniseSeats(a.message, v ? v.seats : []))}</p><p><strong>${esc(t("what_to_do"))}</strong> ${esc(humaniseSeats(a.instruction, v ? v.seats : []))}</p></div>`).join("");
  renderBanners(null, socketUp);
}

function stopWith(text) {
  document.getElementById("seat-msg").innerHTML = `<p class="big error" role="alert">${esc(text)}</p>`;
  for (const id of ["stack", "reveal", "seat-public", "recipes", "seat-alerts"]) document.getElementById(id).innerHTML = "";
  document.getElementById("seat-actions").hidden = true;
  document.getElementById("seat-declinatio").hidden = true;
}

document.addEventListener("DOMContentLoaded", () => {
  for (const verb of ["keep", "discard", "declinatio"]) {
    document.getElementById(verb).addEventListener("click", async () => {
      try { await api("POST", q(`/api/seats/${SEAT}/${verb}`)); }
      catch (e) { announce(t("error", { message: e.message }), true); }
    });
  }
  document.getElementById("hint").addEventListener("click", async () => {
    const out = document.getElementById("hint-text");
    try {
      const res = await api("POST", q(`/api/seats/${SEAT}/hint`));
      const h = res.data;
      out.innerHTML = `<h3>${esc(t("hint_title"))}</h3>` +
        (h.card ? `<p>${esc(t("hint_for", { card: cardLabel(h.card) }))}${h.cell ? " (" + esc(h.cell) + ")" : ""}</p>` : "") +
        `<p data-hint-reason="1">${esc(h.reason)}</p>`;
    } catch (e) { out.innerHTML = `<p class="error">${esc(e.message)}</p>`; }
  });
  const sock = liveSocket(`/ws/seat/${SEAT}?secret=${encodeURIComponent(SECRET)}`, (msg) => {
    if (msg.type === "expired") { closedForGood = "expired"; sock.stop(); stopWith(t("expired")); return; }
    if (msg.type === "seat") render(msg);
  }, (up, code) => {
    socketUp = up || closedForGood !== null;
    if (code === 4403) { closedForGood = "forbidden"; stopWith(t("forbidden")); socketUp = true; }
    renderBanners(null, socketUp);
  });
});
