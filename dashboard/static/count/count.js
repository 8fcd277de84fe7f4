/* Score-only mode: set-up, each seat's list and running score, podium. Its own module,
   on the shared helpers (core.js) and the score breakdown of the score page (scoring.js). */
import {
  BOOT, CAT, announce, cardHtml, cardLabel, colourName, esc, keepFocus, liveSocket,
  patchChildren, refusalText, renderBanners, seatLabel, setHtml, t, tn,
} from "../core.js";
import { scoresHtml } from "/games/glastonbury/static/glastonbury-scoring.js";

const PIN_KEY = "cauldron-host-pin";
const PLAYER_COLOURS = ["yellow", "red", "green", "blue"];
const SEAT = BOOT.seat;  // a seat's phone: only that seat, no controls
/* The count page's words live in the shared catalogue (dashboard/i18n), prefixed "count_". */
function s(key, params) { return t(`count_${key}`, params); }

let pin = "";
let state = null;
let lastMessage = 0;
let editingSetup = false;
/* On a phone the host's page would be metres long (every seat's every card): a seat's list
   folds to its card count unless it is the seat being counted, or the host opened it. */
const NARROW = matchMedia("(max-width: 700px)");
const opened = new Set();
let breakdownOpen = false;

/* ---- the host PIN: `cauldron count` opens the page with #pin=…; kept for this tab ---- */
function takePinFromUrl() {
  const m = /(?:^|[#&])pin=([A-Za-z0-9]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(PIN_KEY, m[1]);
    history.replaceState(null, "", location.pathname + location.search);
  }
  pin = sessionStorage.getItem(PIN_KEY) || "";
}

async function call(method, path, body) {
  const init = { method, headers: { "Accept": "application/json", "X-Host-Pin": pin } };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    let detail = data && data.detail !== undefined ? data.detail : res.statusText;
    const code = detail && typeof detail === "object" && !Array.isArray(detail) ? detail.code : undefined;
    if (detail && detail.message) detail = detail.message;
    if (Array.isArray(detail)) detail = detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    const err = new Error(String(detail)); err.status = res.status; err.code = code;
    if (res.status === 401 || res.status === 403) { pin = ""; sessionStorage.removeItem(PIN_KEY); render(); }
    throw err;
  }
  return data;
}

function showError(err) {
  const el = document.getElementById("message");
  el.className = "count-message refused";
  const text = err.code ? refusalText(err) : err.message;  // its code in the page's language
  el.textContent = "⛔ " + text;
  announce(text, true);
}

function isHost() { return SEAT === null && !!pin; }

function cardName(id) {
  if (id.startsWith("A-")) return `${t("recipes")} A: ${colourName(CAT.recipes[id])}`;
  if (id.startsWith("B-")) return `${t("recipes")} B: ${CAT.recipes[id]}`;
  return cardLabel(id);
}

function chip(id) {
  if (id.startsWith("A-") || id.startsWith("B-")) {
    return `<span class="card k-recipe" data-card="${esc(id)}"><span class="band" aria-hidden="true">§</span><span class="fam">${esc(cardName(id))}</span></span>`;
  }
  return cardHtml(id);
}

/* ---- every card of the box, for the pickers ---- */
function allCards() {
  const groups = [[s("ingredients_g"), []], [s("spells_g"), []], [s("recipes_g"), []]];
  for (const fam of Object.keys(CAT.families)) for (let v = 1; v <= 4; v++) groups[0][1].push(`${fam}-${v}`);
  groups[1][1].push("immuto-1", "immuto-2");
  const counts = { accio: 2, declinatio: 2, vanesco: 4, perluceo: 2 };
  for (const [spell, n] of Object.entries(counts)) for (let i = 1; i <= n; i++) groups[1][1].push(`${spell}-${i}`);
  groups[2][1].push(...Object.keys(CAT.recipes));
  return groups;
}

/* anyCard: the simulated reader (every card, to try refusals); tagged: only the cards the
   simulated box has tags on (not the recipe cards: a real box's get enrolled on the page). */
function pickerHtml(name, count, label, anyCard, tagged) {
  const owner = {};
  if (count) for (const seat of count.seats) for (const tap of seat.taps) owner[tap.card] = seat.name;
  const removed = count && count.setup.removed;
  let html = `<select name="${name}" aria-label="${esc(label)}"><option value="">—</option>`;
  for (const [group, ids] of allCards()) {
    if (group === s("recipes_g") && (tagged || (count && !count.setup.recipes))) continue;
    html += `<optgroup label="${esc(group)}">`;
    for (const id of ids) {
      if (removed && id.startsWith(removed + "-") && !anyCard) continue;
      const taken = owner[id];
      html += `<option value="${esc(id)}"${taken && !anyCard ? " disabled" : ""}>${esc(cardName(id))}${taken ? " — " + esc(s("in_seat", { seat: taken })) : ""}</option>`;
    }
    html += `</optgroup>`;
  }
  return html + `</select>`;
}

/* ---- rendering ---- */
function renderReader(reader) {
  const el = document.getElementById("reader");
  let text = s("reader_none"), cls = "reader-chip";
  if (reader.kind) {
    const key = reader.health === "absent" ? "reader_absent" : reader.health === "silent" ? "reader_silent" : "reader_ok";
    text = s(key, { label: reader.simulated ? s("sim_label") : reader.label });
    cls += reader.health === "ok" ? " ok" : " bad";
  }
  el.className = cls;
  el.textContent = (reader.health === "ok" ? "● " : "⚠ ") + text;
}

function renderLogin() {
  const el = document.getElementById("login");
  el.hidden = SEAT !== null || !!pin;
  if (el.hidden) return;
  setHtml(el, `<form id="login-form"><label>${esc(s("pin"))} <input id="pin" type="password" inputmode="numeric" autocomplete="current-password" required></label> ` +
    `<button class="btn" type="submit">${esc(s("login"))}</button> <span id="login-msg" class="error" role="alert"></span></form>`);
}

function renderSetup(count) {
  const el = document.getElementById("setup");
  el.hidden = !isHost() || (count && !editingSetup);
  if (el.hidden) return;
  if (el.dataset.drawn === "1") return;  // keep what the host is choosing
  el.dataset.drawn = "1";
  const prev = count ? count.setup : { colours: PLAYER_COLOURS.slice(0, 4), recipes: false, second_player_bonus: false, first_seat: 0, last_card_seat: null };
  const n = prev.colours.length;
  let html = `<h2>${esc(s("setup"))}</h2><form id="setup-form"><fieldset><legend>${esc(s("players"))}</legend>`;
  for (const k of [2, 3, 4]) html += `<label class="opt"><input type="radio" name="players" value="${k}"${k === n ? " checked" : ""}> ${k}</label>`;
  html += `<div class="colours">`;
  for (let i = 0; i < 4; i++) {
    html += `<label class="seat-colour" data-seat="${i}">${esc(s("colour_of", { n: i + 1 }))} <select name="colour-${i}">` +
      PLAYER_COLOURS.map((c) => `<option value="${c}"${(prev.colours[i] || PLAYER_COLOURS[i]) === c ? " selected" : ""}>${esc(colourName(c))}</option>`).join("") + `</select></label>`;
  }
  html += `</div><p class="removed-note" id="removed-note"></p></fieldset><fieldset><legend>${esc(s("options"))}</legend>` +
    `<label><input type="checkbox" name="recipes"${prev.recipes ? " checked" : ""}> ${esc(s("recipes_opt"))}</label><br>` +
    `<label><input type="checkbox" name="bonus"${prev.second_player_bonus ? " checked" : ""}> ${esc(s("bonus_opt"))}</label><br>` +
    `<label>${esc(s("first"))} <select name="first"></select></label> ` +
    `<label>${esc(s("last_card"))} <select name="last"></select></label></fieldset>` +
    `<button class="btn big" type="submit">${esc(s("start"))}</button></form>`;
  el.innerHTML = html;
  const form = el.querySelector("form");
  const refresh = () => {
    const k = Number(form.players.value);
    const colours = [];
    for (let i = 0; i < 4; i++) {
      const label = form.querySelector(`.seat-colour[data-seat="${i}"]`);
      label.hidden = i >= k;
      if (i < k) colours.push(form[`colour-${i}`].value);
    }
    const seatOptions = (sel, withNobody, value) => {
      sel.innerHTML = (withNobody ? `<option value="">${esc(s("nobody"))}</option>` : "") +
        colours.map((c, i) => `<option value="${i}"${String(value) === String(i) ? " selected" : ""}>${esc(seatLabel(i, c))}</option>`).join("");
    };
    seatOptions(form.first, false, form.first.value || prev.first_seat);
    seatOptions(form.last, true, form.last.value !== undefined && form.last.value !== "" ? form.last.value : (prev.last_card_seat ?? ""));
    const unused = PLAYER_COLOURS.find((c) => !colours.includes(c));
    document.getElementById("removed-note").textContent = k === 2 && unused ? s("removed", { colour: colourName(unused) }) : "";
  };
  form.addEventListener("change", refresh);
  refresh();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const k = Number(form.players.value);
    const colours = [];
    for (let i = 0; i < k; i++) colours.push(form[`colour-${i}`].value);
    try {
      await call("POST", "/api/count/setup", {
        colours, recipes: form.recipes.checked, second_player_bonus: form.bonus.checked,
        first_seat: Number(form.first.value || 0), last_card_seat: form.last.value === "" ? null : Number(form.last.value),
      });
      editingSetup = false;
      el.dataset.drawn = "";
    } catch (err) { showError(err); }
  });
}

function seatHtml(count, seat, score) {
  const host = isHost();
  const active = count.active === seat.seat;
  const cls = ["count-seat", active ? "active" : "", seat.done ? "done" : ""].join(" ");
  let html = `<article class="${cls}" data-seat="${seat.seat}" aria-labelledby="seat-h-${seat.seat}">` +
    `<header><h2 id="seat-h-${seat.seat}"><span class="swatch c-${esc(seat.colour)}" aria-hidden="true">${esc((CAT.colours[seat.colour] || {}).symbol || "")}</span> ${esc(seatLabel(seat.seat, seat.colour))}</h2>` +
    `<p class="seat-total">${esc(s("total"))}: <strong class="total" data-total="${score ? score.total : 0}">${score ? score.total : 0}</strong></p>`;
  if (active && !seat.done) html += `<p class="badge-now">▶ ${esc(s("counting"))}</p>`;
  if (seat.done) html += `<p class="badge-done">✓ ${esc(s("seat_done"))}</p>`;
  const open = !NARROW.matches || SEAT !== null || (active && !seat.done) || opened.has(seat.seat);
  html += `</header><details class="taps" data-seat="${seat.seat}"${open ? " open" : ""}><summary class="n-cards">${esc(tn("cards_n", seat.taps.length))}</summary>`;
  if (!seat.taps.length) html += `<p class="hint">${esc(s("no_cards"))}</p>`;
  html += `<ol class="tap-list">`;
  for (const tap of seat.taps) {
    const src = tap.source === "tag" ? s("tag") : tap.source === "sim" ? s("sim_src") : s("manual");
    html += `<li data-card="${esc(tap.card)}">${chip(tap.card)} <small class="src">${esc(src)}</small>` +
      (host ? ` <button class="btn small remove" type="button" data-act="remove" data-seat="${seat.seat}" data-card="${esc(tap.card)}" aria-label="${esc(s("remove", { card: cardName(tap.card) }))}">✕</button>` : "") + `</li>`;
  }
  html += `</ol>`;
  if (host) {
    html += `<form class="manual" data-seat="${seat.seat}"><label>${esc(s("pick"))} ${pickerHtml("card", count, s("pick"))}</label> <button class="btn" type="submit">${esc(s("add"))}</button></form>` +
      `<details class="phone"><summary>${esc(s("phone_link"))}</summary><a href="/count/seat/${seat.seat}">${esc(location.origin)}/count/seat/${seat.seat}</a><br><img alt="" width="140" height="140" loading="lazy" src="/api/count/seats/${seat.seat}/qr.svg"></details>`;
  }
  html += `</details>`;
  if (host) {
    html += `<div class="seat-controls">` +
      (active && !seat.done ? "" : `<button class="btn" type="button" data-act="active" data-seat="${seat.seat}">${esc(s("count_this"))}</button> `) +
      `<button class="btn" type="button" data-act="undo" data-seat="${seat.seat}"${seat.taps.length ? "" : " disabled"}>↶ ${esc(s("undo"))}</button> ` +
      `<button class="btn" type="button" data-act="done" data-seat="${seat.seat}" data-done="${seat.done ? "0" : "1"}">${esc(seat.done ? s("reopen") : s("done"))}</button>` +
      `</div>`;
  }
  return html + `</article>`;
}

function renderPodium(count) {
  const el = document.getElementById("podium");
  const was = el.hidden;
  el.hidden = !(count && count.finished && count.scores);
  if (el.hidden) return;
  // The last Done is pressed far down the page: the podium comes into view.
  if (was) requestAnimationFrame(() => el.scrollIntoView({ block: "start" }));
  const seats = [...count.scores.seats].sort((a, b) => b.total - a.total);
  let place = 0, prev = null, html = `<h2>${esc(s("podium"))}</h2><ol class="podium-list">`;
  seats.forEach((sc, i) => {
    if (sc.total !== prev) { place = i + 1; prev = sc.total; }
    html += `<li class="place-${place}" data-seat="${sc.seat}" data-place="${place}"><span class="place">${esc(s("place", { n: place }))}</span> ${esc(seatLabel(sc.seat, sc.colour))} <strong>${sc.total}</strong></li>`;
  });
  html += `</ol><p class="score-actions"><button class="btn" type="button" onclick="window.print()">${esc(s("print"))}</button></p>`;
  setHtml(el, html);
}

function renderBreakdown(count) {
  const el = document.getElementById("breakdown");
  if (!count || !count.scores) { setHtml(el, count && count.score_error ? `<p class="error">${esc(count.score_error)}</p>` : ""); return; }
  let scores = count.scores;
  if (SEAT !== null) scores = { seats: scores.seats.filter((x) => x.seat === SEAT), winners: scores.winners.filter((w) => w === SEAT) };
  const seats = {};
  for (const seat of count.seats) seats[seat.seat] = { colour: seat.colour };
  el.innerHTML = scoresHtml(scores, seats, null);
  el._html = null;
  const h = el.querySelector("h2");
  if (h) h.textContent = count.finished ? s("final") : s("running");
  const winners = el.querySelector(".winners");
  if (winners && (!count.finished || SEAT !== null)) winners.remove();
  if (NARROW.matches && SEAT === null && h) {  // a phone: the podium says who won; the details fold
    const fold = document.createElement("details");
    fold.className = "breakdown-fold";
    fold.innerHTML = `<summary>${esc(h.textContent)}</summary>`;
    h.remove();
    fold.append(...el.childNodes);
    fold.open = breakdownOpen;
    fold.addEventListener("toggle", () => { breakdownOpen = fold.open; });
    el.append(fold);
  }
  if (!count.finished) {  // nobody has won yet: no stars while counting
    for (const art of el.querySelectorAll(".score-seat.winner")) {
      art.classList.remove("winner");
      const h3 = art.querySelector("h3");
      if (h3 && h3.firstChild && h3.firstChild.nodeType === 3) h3.firstChild.textContent = h3.firstChild.textContent.replace("★ ", "");
    }
  }
}

function renderSim(reader, count) {
  const el = document.getElementById("sim");
  el.hidden = !(isHost() && reader.simulated && count);
  if (el.hidden) return;
  const key = JSON.stringify([count.setup, count.seats.map((x) => x.taps.length)]);
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.innerHTML = `<form id="sim-form"><h2>${esc(s("sim"))}</h2><label>${esc(s("sim_help"))} ${pickerHtml("card", count, s("sim_help"), true, true)}</label> ` +
    `<button class="btn" type="submit">${esc(s("sim_tap"))}</button></form>`;
}

function renderEnrol(data) {
  const el = document.getElementById("enrol");
  const m = data.message;
  el.hidden = !(isHost() && m && m.kind === "unknown_tag");
  if (el.hidden) return;
  if (el.dataset.uid === m.uid) return;
  el.dataset.uid = m.uid;
  let html = `<h2>⚠ ${esc(s("enrol"))}</h2><p>${esc(s("enrol_help"))}</p>`;
  if (data.can_enrol) {
    html += `<form id="enrol-form" data-uid="${esc(m.uid)}"><label>${esc(s("enrol_as", { uid: m.uid.slice(-6) }))} ${pickerHtml("card", data.count, s("enrol_as", { uid: m.uid.slice(-6) }))}</label> <button class="btn" type="submit">${esc(s("enrol_go"))}</button></form>`;
  }
  html += `<p><small>${esc(s("enrol_cli"))}</small></p>`;
  el.innerHTML = html;
}

/* The last tap's outcome in the page's language (the server's English text otherwise). */
function messageText(m, count) {
  const seatOf = (n) => (count && n !== null && n !== undefined && count.seats[n]) ? seatLabel(n, count.seats[n].colour) : "";
  const card = m.card ? cardName(m.card) : "";
  if (m.kind === "counted") return s("msg_counted", { card, seat: seatOf(m.seat) });
  if (m.kind === "unknown_tag") return s("msg_unknown", { uid: m.uid.slice(-6) });
  if (m.kind === "refused" && m.code === "duplicate") return s("msg_duplicate", { card, seat: seatOf(m.other_seat) });
  if (m.kind === "refused" && m.code === "already_here") return s("msg_already", { card, seat: seatOf(m.other_seat) });
  if (m.kind === "refused" && m.code === "impossible" && count) {
    const removed = count.setup.removed;
    if (m.card.startsWith("A-") || m.card.startsWith("B-")) return s("msg_recipes_off", { card });
    if (removed && m.card.startsWith(removed + "-")) return s("msg_removed", { card, colour: colourName(removed) });
  }
  if (m.kind === "info" && m.text.startsWith("New count") && count) return s("msg_new", { seats: count.seats.map((x) => seatLabel(x.seat, x.colour)).join(", ") });
  return m.text;
}

function renderMessage(data) {
  const m = data.message;
  if (!m || m.id === lastMessage) return;
  lastMessage = m.id;
  const el = document.getElementById("message");
  el.className = "count-message " + m.kind;
  const icon = { counted: "✓", refused: "⛔", unknown_tag: "⚠", info: "ℹ" }[m.kind] || "";
  const text = messageText(m, data.count);
  el.innerHTML = `${icon} ${esc(text)}` + (m.link ? ` <a href="${esc(m.link)}">${esc(s("enrol"))} →</a>` : "");
  el.dataset.kind = m.kind;
  announce(text, m.kind === "refused" || m.kind === "unknown_tag");
}

function render() {
  if (!state) return;
  const count = state.count;
  renderReader(state.reader);
  const saveError = document.getElementById("save-error");
  saveError.hidden = !state.save_error;
  saveError.textContent = state.save_error ? "⚠ " + state.save_error : "";
  renderLogin();
  renderSetup(count);
  renderMessage(state);
  const seatsEl = document.getElementById("count-seats");
  if (!count) {
    setHtml(seatsEl, isHost() ? "" : `<p>${esc(s("waiting"))}</p>`);
  } else {
    const scores = {};
    if (count.scores) for (const sc of count.scores.seats) scores[sc.seat] = sc;
    const shown = SEAT === null ? count.seats : count.seats.filter((x) => x.seat === SEAT);
    keepFocus(() => patchChildren(seatsEl, shown.map((seat) => seatHtml(count, seat, scores[seat.seat]))));
  }
  renderSim(state.reader, count);
  renderEnrol(state);
  renderPodium(count);
  renderBreakdown(count);
  const actions = document.getElementById("count-actions");
  setHtml(actions, isHost() && count ? `<button class="btn" type="button" data-act="new">${esc(s("new_count"))}</button>` : "");
}

/* ---- events ---- */
document.addEventListener("click", (ev) => {  // the host opens or folds a seat's list
  const d = ev.target.closest("details.taps > summary") ? ev.target.closest("details.taps") : null;
  if (!d) return;
  const seat = Number(d.dataset.seat);
  if (d.open) opened.delete(seat); else opened.add(seat);  // before the browser toggles it
});

document.addEventListener("click", async (ev) => {
  const btn = ev.target.closest("button[data-act]");
  if (!btn) return;
  const seat = btn.dataset.seat;
  try {
    if (btn.dataset.act === "undo") await call("POST", `/api/count/seats/${seat}/undo`);
    else if (btn.dataset.act === "done") await call("POST", `/api/count/seats/${seat}/done`, { done: btn.dataset.done === "1" });
    else if (btn.dataset.act === "active") await call("POST", `/api/count/seats/${seat}/active`);
    else if (btn.dataset.act === "remove") await call("DELETE", `/api/count/seats/${seat}/cards/${encodeURIComponent(btn.dataset.card)}`);
    else if (btn.dataset.act === "new") { editingSetup = true; document.getElementById("setup").dataset.drawn = ""; render(); document.getElementById("setup").scrollIntoView(); }
  } catch (err) { showError(err); }
});

document.addEventListener("submit", async (ev) => {
  const form = ev.target;
  if (form.id === "login-form") {
    ev.preventDefault();
    pin = document.getElementById("pin").value;
    try {
      await call("POST", "/api/count/login");
    } catch (err) {
      if (err.status === 401 || err.status === 403) { document.getElementById("login-msg").textContent = s("wrong_pin"); return; }
    }
    sessionStorage.setItem(PIN_KEY, pin);
    render();
    return;
  }
  const card = form.card ? form.card.value : "";
  if (!card) return;
  try {
    if (form.classList.contains("manual")) { ev.preventDefault(); await call("POST", `/api/count/seats/${form.dataset.seat}/cards`, { card }); }
    else if (form.id === "sim-form") { ev.preventDefault(); await call("POST", "/api/count/reader/tap", { card }); }
    else if (form.id === "enrol-form") { ev.preventDefault(); await call("POST", "/api/count/enrol", { uid: form.dataset.uid, card }); }
  } catch (err) { showError(err); }
});

takePinFromUrl();
if (SEAT !== null) document.getElementById("count-title").textContent = `${t("count_mode")} · ${seatLabel(SEAT, null)}`;
let up = false;
liveSocket("/ws/count", (data) => { state = data; render(); renderBanners(null, up); },
  (ok) => { up = ok; renderBanners(null, ok); });
