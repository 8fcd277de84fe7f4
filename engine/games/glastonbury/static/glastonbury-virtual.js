/* The virtual table (/virtual): every fine-grained gesture (lift, lay, pad, slide, tap,
   draw), for practising faults. The phone's seat page makes whole takes in one tap. */
import { announceChanges } from "./glastonbury-announce.js";
import { boardParts } from "./glastonbury-board.js";
import {
  CAT, alertsHtml, announce, announceAlerts, api, cardHtml, cardLabel, esc, keepFocus, liveSocket, moveWords,
  patchChildren, posLabel, probeRendered, promptText, refusalText, renderBanners, seatLabel, setHtml, t, tn,
  usesText, waitingLines,
} from "/static/core.js";
/** @typedef {import("/types/wire.js").TableState} TableState */

let current = null;
let socketUp = false;
let pawnFrom = null;  // the position whose pawn the host has lifted (pawn sensors only)

/* Who plays here: a seat (?seat=, its own hand, proven by the seat's cookie from /join) or
   the host (the PIN the host page keeps for this tab). Without either the page only looks:
   every gesture needs one. */
const PLAY_QS = new URLSearchParams(location.search);
const PLAY_SEAT = PLAY_QS.get("seat");
const PLAY_OWNER = PLAY_SEAT != null ? PLAY_SEAT : "host";
const PIN_KEY = "cauldron-host-pin";  // the host page's key: one unlock serves both pages
function myHand(virtual) {
  const h = virtual && virtual.hands && virtual.hands[PLAY_OWNER];
  return h ? h.card : null;
}
function vapi(method, path, body) {
  if (PLAY_OWNER !== "host") {
    const q = `seat=${encodeURIComponent(PLAY_SEAT)}`;
    return api(method, path + (path.includes("?") ? "&" : "?") + q, body);
  }
  return api(method, path, body, { "X-Host-Pin": sessionStorage.getItem(PIN_KEY) || "" });
}
function hasCredential() { return PLAY_OWNER !== "host" || !!sessionStorage.getItem(PIN_KEY); }
function showUnlock(on) {
  document.getElementById("unlock-form").hidden = !on;
  if (on) playMsg(t("virtual_need_pin"), false);
}
/* A refusal for want of a credential says what a person can do (never header names). */
function failed(e, text) {
  if (e.status === 401 || e.status === 403) {
    if (PLAY_OWNER === "host") sessionStorage.removeItem(PIN_KEY);
    document.getElementById("unlock-form").hidden = false;
    playMsg(t("virtual_need_pin"), true);
    document.getElementById("unlock-pin").focus();
    return;
  }
  playMsg(text || refusalText(e, current && current.game ? current.game.view.seats : []), true);
}
/* The positions the pawn sensors see a pawn on; null when the table has none (then pawns
   are not the table's to move: the engine infers them from the line taken from). */
/** @param {TableState} state */
function sensedPawns(state) {
  const v = state && state.game && state.game.view;
  const sensed = v && v.table && v.table.pawns_sensed;
  return Array.isArray(sensed) ? new Set(sensed) : null;
}
/* Which positions are buttons: all 20, for the host, on a virtual table with pawn sensors. */
/** @param {TableState} state */
function posButtons(state) {
  const sensed = sensedPawns(state);
  if (!state.virtual || !sensed || PLAY_OWNER !== "host") { pawnFrom = null; return undefined; }
  if (pawnFrom != null && !sensed.has(pawnFrom)) pawnFrom = null;  // moved meanwhile
  return (p, here) => ({
    picked: p === pawnFrom,
    hint: p === pawnFrom ? t("pawn_lifted_hint") : pawnFrom != null ? t("pawn_put_hint")
      : here ? t("pawn_lift_hint") : "",
  });
}
/* "Seat N's bot is waiting: <reason>" (the demo's bots say why they stopped). */
function waitingHtml(virtual, seats) {
  return waitingLines(virtual, seats).map((w) => `<p class="bot-waiting" data-waiting="${esc(w.seat)}">${esc(w.text)}</p>`).join("");
}

/** @param {TableState} state */
function renderTurn(state) {
  const el = document.getElementById("turn");
  const v = state.game && state.game.view;
  if (!v) { setHtml(el, `<p>${esc(t("no_game"))}</p>`); return; }
  const prompt = promptText(v);
  const who = v.turn != null && v.seats[v.turn] ? `<strong>${esc(t("turn_of", { seat: seatLabel(v.turn, v.seats[v.turn].colour) }))}</strong> — ${esc(moveWords(v.move_value))}` : "";
  setHtml(el, (v.over ? `<p class="big">${esc(t("game_over"))}</p>` : who ? `<p class="big">${who}</p>` : "") +
    (prompt ? `<p class="prompt" data-prompt="${esc(v.table.prompt.code)}"><span aria-hidden="true">➜</span> ${esc(prompt)}</p>` : ""));
}

/** @param {TableState} state */
function renderSeats(state) {
  const el = document.getElementById("seats");
  const game = state.game;
  if (!game) { patchChildren(el, []); return; }
  const v = game.view;
  const virtual = state.virtual;
  const parts = [];
  for (const s of v.seats) {
    const active = !v.over && v.turn === s.seat;
    const spells = s.spells.map((sp) => `<li class="spell${sp.uses_left > 0 ? "" : " spent"}">✦ ${esc(cardLabel(sp.card))} — ${esc(usesText(sp.uses_left))}</li>`).join("");
    let html = `<article class="seat c-border-${esc(s.colour)}${active ? " active" : ""}" data-seat="${s.seat}">` +
      `<h2>${active ? '<span class="now" aria-hidden="true">▶</span> ' : ""}<span class="swatch c-${esc(s.colour)}" aria-hidden="true">${esc(CAT.colours[s.colour] ? CAT.colours[s.colour].symbol : "")}</span> ${esc(seatLabel(s.seat, s.colour))}</h2>` +
      `<div class="cauldron">${s.top ? cardHtml(s.top, "small") : `<span class="none">${esc(t("empty"))}</span>`}` +
      `<span class="lbl">${esc(t("cauldron"))}: <span class="size">${esc(tn("cards_n", s.cauldron_size))}</span></span></div>` +
      (spells ? `<ul class="spells" aria-label="${esc(t("spells"))}">${spells}</ul>` : "");
    if (virtual) {
      const pad = virtual.pads[String(s.seat)];
      const who = seatLabel(s.seat, s.colour);
      const padLabel = `${t("pad", { seat: who })}: ${pad ? cardLabel(pad) : t("pad_empty")}`;
      html += `<div class="pad-zone"><button type="button" class="pad${pad ? " full" : ""}" data-act="pad" data-seat="${s.seat}" data-focus="pad-${s.seat}" aria-label="${esc(padLabel)}">` +
        `<span class="pad-name">${esc(t("pad", { seat: who }))}</span>${pad ? cardHtml(pad, "small") : `<span class="none">${esc(t("lay_here"))}</span>`}</button>`;
      if (pad) html += `<button type="button" class="btn small" data-act="slide" data-seat="${s.seat}" data-focus="slide-${s.seat}">${esc(t("slide"))}</button>` +
        `<button type="button" class="btn small" data-act="pickpad" data-seat="${s.seat}" data-focus="pick-${s.seat}">${esc(t("pick_up"))}</button>`;
      if ((virtual.sizes[String(s.seat)] || 0) > 0) html += `<button type="button" class="btn small" data-act="tap" data-seat="${s.seat}" data-focus="tap-${s.seat}">${esc(t("tap"))}</button>`;
      html += `</div>`;
    }
    parts.push(html + `</article>`);
  }
  parts.push(`<p class="pile"><span aria-hidden="true">▤</span> ${esc(t("pile"))}: <strong class="pile-size">${esc(tn("cards_n", v.pile_size))}</strong></p>`);
  patchChildren(el, parts);
}

/** @param {TableState} state */
function renderHand(state) {
  const virtual = state.virtual;
  const el = document.getElementById("hand");
  if (!virtual) { el.textContent = t("virtual_off"); return; }
  const hand = myHand(virtual);
  setHtml(el, hand
    ? `<p>${esc(t("hand"))}: ${cardHtml(hand, "small")}</p>`
    : `<p>${esc(virtual.dealt ? t("hand_empty") : t("not_dealt"))}</p>`);
  const v = state.game && state.game.view;
  const last = v && !v.over && v.phase === "last_card";
  document.getElementById("pass-btn").hidden = !(v && !v.over && v.expected && v.expected.can_pass);
  const prompt = v && v.table && v.table.prompt;
  document.getElementById("declinatio-btn").hidden = !(v && !v.over && prompt && prompt.code === "corner_blocked");
  document.getElementById("keep-btn").hidden = !last;
  document.getElementById("discard-btn").hidden = !last;
  document.getElementById("drop-btn").disabled = !hand;
  document.getElementById("draw-btn").disabled = !!hand || !virtual.pile_size;
  document.getElementById("draw-btn").textContent = `${t("draw")} (${tn("cards_n", virtual.pile_size)})`;
}

/** @param {TableState} state */
function render(state) {
  const v = state.game ? state.game.view : null;
  keepFocus(() => {
    renderTurn(state);
    patchChildren(document.getElementById("board"), boardParts(v, {
      cells: state.virtual ? state.virtual.cells : null,
      button: () => true,
      pos: posButtons(state),
    }));
    renderSeats(state);
    renderHand(state);
  });
  setHtml(document.getElementById("alerts"),
    waitingHtml(state.virtual, v ? v.seats : []) + alertsHtml(state.alerts, v ? v.seats : []));
  renderBanners(state.status, socketUp);
  document.body.dataset.hand = myHand(state.virtual) || "";
  const vt = state.virtual;
  document.body.dataset.virtual = vt ? [vt.hand || "", Object.keys(vt.pads).sort().map((k) => `${k}:${vt.pads[k]}`).join(","),
    vt.pile_size, Object.keys(vt.cells).length,
    Object.keys(vt.sizes).sort().map((k) => `${k}:${vt.sizes[k]}`).join(",")].join("|") : "";
  probeRendered(state);
}

/* ---- gestures ---- */
function playMsg(text, isError) {
  const el = document.getElementById("play-msg");
  el.textContent = text || "";
  el.classList.toggle("error", !!isError);
  if (text && isError) announce(text, true);
}

async function gesture(body) {
  try {
    await vapi("POST", "/api/virtual/gesture", body);
    playMsg("");
    return true;
  } catch (e) {
    failed(e);
    return false;
  }
}

async function onAct(btn) {
  const act = btn.dataset.act;
  const virtual = current && current.virtual;
  if (!virtual) return;
  const seat = btn.dataset.seat != null ? Number(btn.dataset.seat) : null;
  if (act === "cell") {
    const where = btn.dataset.where;
    const card = virtual.cells[where];
    const hand = myHand(virtual);
    if (card && !hand) return gesture({ action: "lift", where });
    if (!card && hand) return gesture({ action: "lay", where });
    if (!card && !hand && virtual.pile_size) return gesture({ action: "refill", where });
    return playMsg(card ? t("hand_full", { card: cardLabel(hand) }) : t("hand_empty"), true);
  }
  if (act === "pad") {
    if (myHand(virtual)) return gesture({ action: "lay", where: `pad:${seat}` });
    if (virtual.pads[String(seat)]) return gesture({ action: "slide", seat });
    return playMsg(t("hand_empty"), true);
  }
  if (act === "slide") return gesture({ action: "slide", seat });
  if (act === "pickpad") return gesture({ action: "lift", where: `pad:${seat}` });
  if (act === "tap") return gesture({ action: "tap", seat });
  if (act === "pos") return onPos(Number(btn.dataset.pos));
}

/* A pawn moved by the host: its position, then where it goes (the pawn sensors see it). */
async function onPos(p) {
  const sensed = sensedPawns(current);
  if (!sensed) return;
  if (pawnFrom == null) {
    if (!sensed.has(p)) return playMsg(t("pawn_none", { pos: posLabel(p) }), true);
    pawnFrom = p;
    render(current);
    return playMsg(t("pawn_lifted", { pos: posLabel(p) }));
  }
  const from = pawnFrom;
  pawnFrom = null;
  render(current);
  if (p === from) return playMsg(t("pawn_put_back", { pos: posLabel(p) }));
  try {
    await vapi("POST", "/api/virtual/pawn", { from, to: p });
    playMsg(t("pawn_moved", { from: posLabel(from), to: posLabel(p) }));
  } catch (e) {
    failed(e, t("pawn_move_failed", { from: posLabel(from), to: posLabel(p), message: refusalText(e) }));
  }
}

document.addEventListener("click", (ev) => {
  const btn = ev.target.closest("[data-act]");
  if (btn) { ev.preventDefault(); onAct(btn); }
});
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && pawnFrom != null && current) {
    const at = pawnFrom;
    pawnFrom = null;
    render(current);
    playMsg(t("pawn_put_back", { pos: posLabel(at) }));
  }
});
document.getElementById("draw-btn").addEventListener("click", () => gesture({ action: "draw" }));
document.getElementById("drop-btn").addEventListener("click", () => gesture({ action: "drop" }));
for (const verb of ["keep", "discard", "pass", "declinatio"]) {
  document.getElementById(`${verb}-btn`).addEventListener("click", async () => {
    try { await vapi("POST", `/api/virtual/${verb}`); playMsg(t("done")); }
    catch (e) { failed(e); }
  });
}
document.getElementById("unlock-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const pin = document.getElementById("unlock-pin").value;
  try {
    await api("POST", "/api/host/login", undefined, { "X-Host-Pin": pin });
    sessionStorage.setItem(PIN_KEY, pin);
    document.getElementById("unlock-form").hidden = true;
    document.getElementById("unlock-pin").value = "";
    playMsg(t("virtual_unlocked"));
  } catch (e) {
    playMsg(e.status === 403 || e.status === 401 ? t("wrong_pin") : refusalText(e), true);
  }
});
if (!hasCredential()) showUnlock(true);
/* The shell's /virtual page starts the virtual table (its alerts included). */
export function startVirtual() {
  liveSocket("/ws/table", (state) => {
    if (state.type !== "table") return;
    const previous = current;
    current = state;
    render(state);
    announceChanges(previous, state);
    announceAlerts(previous, state);
  }, (up) => {
    socketUp = up;
    renderBanners(current && current.status, up);
  });
}
