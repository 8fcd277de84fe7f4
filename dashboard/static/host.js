/* Host controls: PIN, new game, undo / confirm / end, reader health, enrolment, seat links. */
import { BOOT, GEO, api, cardLabel, colourName, esc, gameOver, humanise, liveSocket, phoneState, posLabel, promptText, refusalText, renderBanners, seatOf, seatLabel, t, undoStepWords, undoneWords } from "./core.js";
/** @typedef {import("../types/wire.js").TableState} TableState */

const PIN_KEY = "cauldron-host-pin";
const PLAYER_COLOURS = ["yellow", "red", "green", "blue"];
let pin = sessionStorage.getItem(PIN_KEY) || "";
let timer = null;

function hostApi(method, path, body) { return api(method, path, body, { "X-Host-Pin": pin }); }

/* What the last command did. It stands long enough to be read (bots move every second),
   then until the game moves on (the command's own updates, in its first seconds, do not
   count), and at most a few minutes, so an old error does not linger. A message may carry
   one button (the way out of a refusal: "End and start"). */
const MSG_GRACE_MS = 3000;
const MSG_READ_MS = 15000;
const MSG_KEEP_MS = 180000;
let msgAt = 0;
let msgKey = null;
let msgTimer = null;

/** @param {TableState} state */
function gameKey(state) {
  const g = state && state.game;
  const v = g && g.view;
  return JSON.stringify([g && g.game_id, v && v.turn, v && v.phase, v && v.pile_size, v && v.table && v.table.status]);
}

function msg(text, isError, action) {
  const el = document.getElementById("host-msg");
  el.textContent = text;
  el.classList.toggle("error", !!isError);
  el.dataset.said = text;
  const box = document.getElementById("host-msg-action");  // the way out, beside the words
  box.replaceChildren();
  box.hidden = !action;
  if (action) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn";
    b.id = action.id;
    b.textContent = action.label;
    b.addEventListener("click", action.run);
    box.append(b);
  }
  msgAt = Date.now();
  msgKey = gameKey(lastState);
  clearTimeout(msgTimer);
  if (text && text !== "…") msgTimer = setTimeout(() => { if (el.dataset.said === text) msg(""); }, MSG_KEEP_MS);
}

/** @param {TableState} state */
function clearWhenMoved(state) {
  const el = document.getElementById("host-msg");
  if (!el.textContent || el.dataset.said === "…") return;
  const key = gameKey(state);
  const age = Date.now() - msgAt;
  if (age < MSG_GRACE_MS) msgKey = key;
  else if (age >= MSG_READ_MS && key !== msgKey) msg("");
}

/* Waits for a table state that `pred` holds for (the end of a game seen by this page). */
const stateWaiters = [];
function untilState(pred, ms) {
  if (lastState && pred(lastState)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const w = { pred, resolve };
    stateWaiters.push(w);
    setTimeout(() => { const i = stateWaiters.indexOf(w); if (i >= 0) { stateWaiters.splice(i, 1); resolve(false); } }, ms);
  });
}
function wakeWaiters(state) {
  for (const w of [...stateWaiters]) if (w.pred(state)) { stateWaiters.splice(stateWaiters.indexOf(w), 1); w.resolve(true); }
}

function seatsNow() { return lastState && lastState.game ? lastState.game.view.seats : []; }

/* The engine's undo answer: what was taken back, then the steps to put the cards back. */
function undoneText(data) {
  const d = data || {};
  const seats = seatsNow();
  // Codes with ids (the engine's `steps`, `undone_codes`); its English only from an old engine.
  const steps = Array.isArray(d.steps) && d.steps.length ? d.steps.map((s) => undoStepWords(s, seats))
    : (Array.isArray(d.instructions) ? d.instructions : []).map((s) => humanise(s, seats));
  const what = Array.isArray(d.undone_codes) && d.undone_codes.length ? t("al_undone", { undone: undoneWords(d.undone_codes, seats) })
    : d.undone ? humanise(d.undone, seats) : t("done");
  return steps.length
    ? `${what} ${t("host_undone_steps")} ${steps.map((s, i) => `${i + 1}. ${s}`).join(" ")}`
    : `${what} ${t("host_nothing_back")}`;
}

/* A refusal in the host's words (its code in the page's language; no raw game ids). */
function refused(e) { return t("error", { message: refusalText(e, seatsNow()) }); }

function colourOptions(selected) {
  return PLAYER_COLOURS.map((c) => `<option value="${c}"${c === selected ? " selected" : ""}>${esc(colourName(c))}</option>`).join("");
}

function buildForm() {
  const n = Number(document.getElementById("players").value);
  const fields = document.getElementById("colour-fields");
  const keep = [...fields.querySelectorAll("select.colour")].map((s) => s.value);
  const starts = [...fields.querySelectorAll("select.start")].map((s) => Number(s.value));
  let html = "";
  const used = keep.slice(0, n);
  for (let i = 0; i < n; i++) {
    // A seat added to the form gets a colour no kept seat has (G2: one colour per seat).
    const colour = keep[i] || PLAYER_COLOURS.find((c) => !used.includes(c));
    if (!keep[i]) used.push(colour);
    html += `<label for="colour-${i}">${esc(t("colour_of_seat", { n: i + 1 }))}</label><select id="colour-${i}" class="colour">${colourOptions(colour)}</select>`;
    // Where the seat's pawn starts: beside a corner only (G2), seat i by corner i by default.
    const start = starts[i] !== undefined ? starts[i] : GEO.default_starts[i];
    html += `<label for="start-${i}">${esc(t("start_of_seat", { n: i + 1 }))}</label><select id="start-${i}" class="start">` +
      GEO.start_corners.map((p) => `<option value="${p}"${p === start ? " selected" : ""}>${esc(t("start_corner_" + p, { pos: posLabel(p) }))}</option>`).join("") + `</select>`;
  }
  fields.innerHTML = html;
  document.getElementById("first").innerHTML = Array.from({ length: n }, (_, i) => `<option value="${i}">${esc(t("seat_n", { n: i + 1 }))}</option>`).join("");
  document.getElementById("removed-field").hidden = n !== 2;
  buildRemoved();
  checkColours();
}

/* 2 players: only a colour not in play can be left out (G2). */
function buildRemoved() {
  const select = document.getElementById("removed");
  const chosen = [...document.querySelectorAll("#colour-fields select.colour")].map((s) => s.value);
  const keep = chosen.includes(select.value) ? "" : select.value;
  select.innerHTML = `<option value="">${esc(t("deal_auto"))}</option>` + PLAYER_COLOURS.filter((c) => !chosen.includes(c))
    .map((c) => `<option value="${c}"${c === keep ? " selected" : ""}>${esc(colourName(c))}</option>`).join("");
}

/* Readers laid out like the table: cells in their 6×6 place, then the pads, then pawns. */
function readerSlot(place) {
  let m = /^cell (\d),(\d)$/.exec(place);
  if (m) return `grid-row:${Number(m[1]) + 1};grid-column:${Number(m[2]) + 1}`;
  m = /^pad (\d)$/.exec(place);
  if (m) return `grid-row:7;grid-column:${Number(m[1]) + 1}`;
  m = /^pos (\d+)$/.exec(place);
  if (m) return `grid-row:${8 + Math.floor(Number(m[1]) / 6)};grid-column:${(Number(m[1]) % 6) + 1}`;
  return "";
}

/* A reader's place for people: "row 2, column 3", "pad of Seat 1", "position 7". */
function placeLabel(place) {
  let m = /^cell (\d),(\d)$/.exec(place);
  if (m) return t("cell", { r: Number(m[1]) + 1, c: Number(m[2]) + 1 });
  m = /^pad (\d)$/.exec(place);
  if (m) return t("pad", { seat: t("seat_n", { n: Number(m[1]) + 1 }) });
  m = /^pos (\d+)$/.exec(place);
  if (m) return t("position", { n: Number(m[1]) + 1 });
  return place;
}

let lastState = null;

/* A link on a loopback address opens the phone itself, not this table: its host, else "". */
function loopbackHost(url) {
  let host = "";
  try { host = new URL(url, location.href).hostname; } catch (e) { return ""; }
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare.endsWith(".localhost") || /^127\./.test(bare) || bare === "::1" ? host : "";
}

async function refreshPanels() {
  try {
    const readers = await hostApi("GET", "/api/host/readers");
    const el = document.getElementById("readers");
    el.innerHTML = readers.readers.length ? `<p>${esc(Object.entries(readers.counts).map(([h, n]) => `${t("health_" + h)}: ${n}`).join(" · "))}</p><div class="reader-grid">` +
      readers.readers.map((r) => `<span class="reader h-${esc(r.health)}" data-reader="${r.reader}" style="${readerSlot(r.place)}">${esc(placeLabel(r.place))}<br><strong>${r.health === "ok" ? "✓" : "⚠"} ${esc(t("health_" + r.health))}</strong>${r.occupied ? " ▣" : ""}</span>`).join("") + `</div>`
      : `<p>${esc(t("readers_none"))}</p>`;
    if (readers.board && readers.board.state === "hung") {  // hub/health: the Pico stopped answering PING
      el.insertAdjacentHTML("afterbegin", `<p class="notice board-hung" role="alert">${esc(t("board_hung", { resets: readers.board.resets }))}</p>`);
    }
    const en = await hostApi("GET", "/api/host/enrolment");
    document.getElementById("enrolment").textContent = en.active
      ? t("enrol_progress", { done: en.done ?? "?", total: en.total ?? "?", next: (en.next && cardLabel(en.next)) || "—" }) : t("enrol_none");
    const links = await hostApi("GET", "/api/host/seats");
    const box = document.getElementById("links");
    const key = links.map((l) => l.url + l.joined).join("|");
    if (box.dataset.key !== key) {
      box.dataset.key = key;
      const view = lastState && lastState.game ? lastState.game.view : null;
      const local = links.find((l) => loopbackHost(l.url));
      const warn = local ? `<p class="notice links-loopback" role="note">⚠ ${esc(t("links_loopback", { host: loopbackHost(local.url) }))}</p>` : "";
      box.innerHTML = warn + links.map((l) => {
        const name = view ? seatOf(view, l.seat) : seatLabel(l.seat);
        const off = loopbackHost(l.url);
        return `<figure class="qr${off ? " unusable" : ""}" data-seat="${l.seat}"${off ? ` data-unusable="loopback"` : ""}>${off ? `<span class="qr-off">${esc(t("link_loopback_short"))}</span>` : ""}<div class="qr-img" id="qr-${l.seat}" role="img" aria-label="${esc(t("scan_me", { seat: name }))}"></div><figcaption><span class="link-phone" data-link-phone="${l.seat}"></span>` +
          `<a href="${esc(l.url)}">${esc(t("open_seat", { seat: name }))}</a> ${l.joined ? `<button type="button" class="btn small" data-free="${l.seat}">${esc(t("free_seat", { seat: name }))}</button>` : `<button type="button" class="btn small" data-reissue="${l.seat}" title="${esc(t("reissue_help"))}">${esc(t("reissue"))}</button>`}</figcaption></figure>`;
      }).join("");
      renderLinkPhones(lastState);
      for (const l of links) {
        const res = await fetch(`/api/seats/${l.seat}/qr.svg`, { headers: { "X-Host-Pin": pin } });
        if (res.ok) document.getElementById(`qr-${l.seat}`).innerHTML = await res.text();
      }
    }
  } catch (e) {
    if (e.status === 403 || e.status === 401) { logout(); }
  }
}

/* The status line, in every state (no game, dealing, playing, over): never throws. */
/** @param {TableState} state */
function renderStatus(state) {
  const g = state.game;
  const v = g ? g.view : null;
  const st = document.getElementById("host-status");
  let text = t("no_game");
  if (gameOver(v)) text = t("game_over");
  else if (v && v.table && v.table.status === "dealing") text = promptText(v) || t("deal_title");
  else if (v && v.turn != null && v.seats[v.turn]) text = `${t("turn_of", { seat: seatOf(v, v.turn) })} · ${t("phase_" + v.phase)}`;
  else if (v) text = promptText(v) || t("no_game");
  // The move waits for a joined seat's phone (M5): said here too, next to its "Give back".
  const who = v && !v.over && v.table && v.table.status === "playing" ? (v.table.prompt && v.table.prompt.seat != null ? v.table.prompt.seat : v.turn) : null;
  const phone = who != null ? phoneState(state, who) : null;
  if (phone) text += ` · ${t(phone === "on" ? "phone_waiting" : "phone_gone_short", { seat: seatOf(v, who) })}`;
  st.textContent = text;
  document.body.dataset.inputs = v && v.table ? String(v.table.inputs) : "";  // tests: what the page has seen
  renderOptions(v);
  // Mid-game the new-game form folds away (it stays one click away).
  const playing = !!(v && !v.over && v.table && v.table.status === "playing");
  const details = document.getElementById("new-game-box");
  if (details && details.dataset.auto !== String(playing)) {
    details.dataset.auto = String(playing);
    details.open = !playing;
  }
}

/* Each seat link's phone, from the same state as the status line (never a stale tick). */
function renderLinkPhones(state) {
  for (const el of document.querySelectorAll("[data-link-phone]")) {
    const phone = phoneState(state, Number(el.dataset.linkPhone));
    const text = phone ? `${phone === "on" ? "✓" : "⚠"} ${t(phone === "on" ? "phone_on" : "phone_off")} · ` : "";
    if (el.textContent !== text) { el.textContent = text; el.dataset.connected = phone === "on" ? "1" : phone ? "0" : ""; }
  }
}

/* The running game's set-up (G2, G11, variants), so the host sees what was chosen. */
function renderOptions(v) {
  const el = document.getElementById("host-options");
  const c = v && !gameOver(v) ? v.config : null;
  el.hidden = !c;
  if (!c) { el.innerHTML = ""; el.dataset.html = ""; return; }
  const onOff = (on) => t(on ? "opt_on" : "opt_off");
  const items = [
    [`opt_players`, t("opt_players", { n: c.colours.length, colours: c.colours.map((col, i) => seatLabel(i, col)).join(", ") })],
    [`opt_first`, t("opt_first", { seat: seatLabel(c.first_seat, c.colours[c.first_seat]) })],
    ...(c.removed_colour ? [["opt_removed", t("opt_removed", { colour: colourName(c.removed_colour) })]] : []),
    ["opt_recipes", t("opt_value", { name: t("variant_recipes"), value: onOff(c.recipes) })],
    ["opt_bonus", t("opt_value", { name: t("variant_bonus"), value: onOff(c.second_player_bonus) })],
    ["opt_memory", t("opt_value", { name: t("variant_memory_short"), value: onOff(c.memory_aid) })],
  ];
  const html = items.map(([k, text]) => `<li data-opt="${k}">${esc(text)}</li>`).join("");
  if (el.dataset.html !== html) { el.innerHTML = html; el.dataset.html = html; }
}

/* A new hub waits for the host (engine/state): shown only then, with both hub ids. */
function renderHubChange(status) {
  const change = status ? status.hub_change : null;
  const box = document.getElementById("hub-change");
  box.hidden = !change;
  if (!change) return;
  box.dataset.hub = change.new_hub;
  const text = t("hub_change_text", { new: change.new_hub, old: change.old_hub || t("hub_unknown") });
  const el = document.getElementById("hub-change-text");
  if (el.textContent !== text) el.textContent = text;
}

function showHost(on) {
  document.getElementById("login").hidden = on;
  document.getElementById("host").hidden = !on;
  clearInterval(timer);
  if (on) { refreshPanels(); timer = setInterval(refreshPanels, 2000); }
}

function logout() { pin = ""; sessionStorage.removeItem(PIN_KEY); showHost(false); }

/* `said(data)`: what the command did, from its answer (data: the engine's reply). */
async function command(path, body, said) {
  msg("…");
  try {
    const res = await hostApi("POST", path, body);
    msg(said ? said((res && res.data) || {}) : t("done"));
    return true;
  } catch (e) { msg(refused(e), true); return false; }
}

/* New game. While one runs the engine refuses it: the message says so and offers "End and
   start" (the running game ends uncounted, then this one starts), in one click. */
async function startGame(body, started) {
  msg("…");
  try {
    await hostApi("POST", "/api/host/new_game", body);
    msg(started());
  } catch (e) {
    msg(refused(e), true, e.code === "game_in_progress"
      ? { id: "end-and-start", label: t("end_and_start"), run: () => endAndStart(body, started) } : null);
  }
}

async function endAndStart(body, started) {
  if (!confirm(t("end_sure"))) return;
  msg("…");
  try { await hostApi("POST", "/api/host/end"); } catch (e) {
    if (e.code !== "no_game") { msg(refused(e), true); return; }
  }
  // The ended game must be seen (by the dashboard too) before the new deal is laid.
  await untilState((s) => !s.game || gameOver(s.game.view), 15000);
  for (let tries = 0; ; tries++) {
    try {
      await hostApi("POST", "/api/host/new_game", body);
      msg(t("host_ended_started", { started: started() }));
      return;
    } catch (e) {
      if (e.code !== "game_in_progress" || tries >= 10) { msg(`${t("host_ended")} ${refused(e)}`, true); return; }
      await untilState(() => false, 500);
    }
  }
}

/* G2: one colour per seat, said next to the form as soon as two seats share one. */
function checkColours() {
  const colours = [...document.querySelectorAll("#colour-fields select.colour")].map((s) => s.value);
  const twice = colours.find((c, i) => colours.indexOf(c) !== i);
  const el = document.getElementById("form-msg");
  el.textContent = twice ? t("host_same_colour", { colour: colourName(twice) }) : "";
  el.hidden = !twice;
  document.getElementById("start").disabled = !!twice;
  return !twice;
}

{
  if (!BOOT.virtual) for (const o of document.querySelectorAll("#deal option[value='virtual'], #deal option[value='auto']")) o.remove();
  buildForm();
  document.getElementById("players").addEventListener("change", buildForm);
  document.getElementById("colour-fields").addEventListener("change", () => { buildRemoved(); checkColours(); });
  document.getElementById("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    pin = document.getElementById("pin").value;
    try {
      await hostApi("POST", "/api/host/login");
      sessionStorage.setItem(PIN_KEY, pin);
      document.getElementById("login-msg").textContent = "";
      showHost(true);
    } catch (e) {
      document.getElementById("login-msg").textContent = t("wrong_pin");
      pin = "";
    }
  });
  document.getElementById("new-game").addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!checkColours()) return;
    const colours = [...document.querySelectorAll("#colour-fields select.colour")].map((s) => s.value);
    const removed = document.getElementById("removed").value || null;
    const started = () => t("host_started", { n: colours.length, colours: colours.map(colourName).join(", ") });
    startGame({
      colours, first_seat: Number(document.getElementById("first").value),
      start_positions: [...document.querySelectorAll("#colour-fields select.start")].map((s) => Number(s.value)),
      removed_colour: colours.length === 2 ? removed : null,
      recipes: document.getElementById("recipes").checked,
      second_player_bonus: document.getElementById("bonus").checked,
      memory_aid: document.getElementById("memory").checked,
      deal: document.getElementById("deal").value,
    }, started);
  });
  document.getElementById("undo").addEventListener("click", () => command("/api/host/undo", undefined, undoneText));
  document.getElementById("confirm").addEventListener("click", () => command("/api/host/confirm", undefined, () => t("host_confirmed")));
  document.getElementById("end").addEventListener("click", () => { if (confirm(t("end_sure"))) command("/api/host/end", undefined, () => t("host_ended")); });
  document.getElementById("logout").addEventListener("click", logout);
  document.getElementById("accept-hub").addEventListener("click", async () => {
    const hub = document.getElementById("hub-change").dataset.hub;
    msg("…");
    try {
      await hostApi("POST", "/api/host/hub/confirm", { hub_id: hub });
      msg(t("hub_accepted", { hub }));
    } catch (e) { msg(refused(e), true); }
  });
  document.getElementById("links").addEventListener("click", async (ev) => {
    const b = ev.target.closest("[data-reissue], [data-free]");
    if (b) {
      const free = b.dataset.free !== undefined;
      const seat = Number(free ? b.dataset.free : b.dataset.reissue);
      const name = seatsNow()[seat] ? seatOf(lastState.game.view, seat) : seatLabel(seat);
      await command(`/api/host/seats/${seat}/${free ? "free" : "reissue"}`, undefined, () => t(free ? "host_freed" : "host_reissued", { seat: name }));
      document.getElementById("links").dataset.key = "";
      refreshPanels();
    }
  });
  liveSocket("/ws/table", (state) => {
    if (state.type !== "table") return;
    lastState = state;
    wakeWaiters(state);
    clearWhenMoved(state);
    renderStatus(state);
    renderLinkPhones(state);
    renderHubChange(state.status);
    renderBanners(state.status, true);
  }, (up) => renderBanners(null, up));
  if (pin) hostApi("POST", "/api/host/login").then(() => showHost(true)).catch(() => logout());
}
