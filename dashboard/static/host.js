/* Host controls: PIN, new game, undo / confirm / end, reader health, enrolment, seat links. */
import { BOOT, GAME, api, cardLabel, catalogueOf, esc, followGame, gameOver, gameT, humanise, liveSocket, phoneState, promptText, refusalText, renderBanners, seatOf, seatLabel, t, undoStepWords, undoneWords } from "./core.js";
/** @typedef {import("../types/wire.js").TableState} TableState */

const PIN_KEY = "cauldron-host-pin";
/* Every offered game's host hooks (its "host" fragments: setupOptions, readOptions,
   renderRunningOptions), by id; a game without them gets the fields of its options model. */
const HOOKS = Object.fromEntries(await Promise.all((BOOT.games || []).map(async (g) =>
  [g.id, Object.assign({}, ...(await Promise.all((g.scripts || []).map((url) => import(url)))))])));
let pin = sessionStorage.getItem(PIN_KEY) || "";
let timer = null;

/* Requests still waiting for their answer: the page loads again for another game (core.js
   `followGame`) only once none does, keeping what the last command said. */
let waiting = 0;
async function hostApi(method, path, body) {
  waiting += 1;
  try {
    return await api(method, path, body, { "X-Host-Pin": pin });
  } finally {
    waiting -= 1;
    // After the caller has said what its command did (the next task), not before.
    if (waiting === 0 && lastState) setTimeout(() => followGame(lastState, holdReload), 0);
  }
}
const SAID_KEY = "cauldron-host-said";
function holdReload() {
  if (waiting > 0) return true;
  const el = document.getElementById("host-msg");
  sessionStorage.setItem(SAID_KEY, JSON.stringify({ text: el.textContent, error: el.classList.contains("error"), at: Date.now() }));
  return false;
}

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

/* The same, short, for a reader's box: "R2 C3", "P1" (pad of seat 1), "7" (position 7). */
function placeShort(place) {
  let m = /^cell (\d),(\d)$/.exec(place);
  if (m) return t("cell_short", { r: Number(m[1]) + 1, c: Number(m[2]) + 1 });
  m = /^pad (\d)$/.exec(place);
  if (m) return t("pad_short", { n: Number(m[1]) + 1 });
  m = /^pos (\d+)$/.exec(place);
  if (m) return String(Number(m[1]) + 1);
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
    // A box per reader where it lies, named short ("R1 C2"; in full for screen readers and
    // as its tooltip); the faulty ones are listed under the grid in full words. (The full
    // names and health words did not fit the boxes of a laptop's narrow column.)
    const faulty = readers.readers.filter((r) => r.health !== "ok");
    el.innerHTML = readers.readers.length ? `<p>${esc(Object.entries(readers.counts).map(([h, n]) => `${t("health_" + h)}: ${n}`).join(" · "))}</p><div class="reader-grid">` +
      readers.readers.map((r) => {
        const full = `${placeLabel(r.place)}: ${t("health_" + r.health)}`;
        return `<span class="reader h-${esc(r.health)}" data-reader="${r.reader}" style="${readerSlot(r.place)}" role="img" aria-label="${esc(full)}" title="${esc(full)}">` +
          `<span aria-hidden="true">${esc(placeShort(r.place))}<br><strong>${r.health === "ok" ? "✓" : "⚠"}</strong>${r.occupied ? " ▣" : ""}</span></span>`;
      }).join("") + `</div>` +
      (faulty.length ? `<ul class="reader-faults">${faulty.map((r) => `<li data-reader="${r.reader}">⚠ ${esc(placeLabel(r.place))}: <strong>${esc(t("health_" + r.health))}</strong></li>`).join("")}</ul>` : "")
      : `<p>${esc(t("readers_none"))}</p>`;
    if (readers.board && readers.board.state === "hung") {  // hub/health: the Pico stopped answering PING
      el.insertAdjacentHTML("afterbegin", `<p class="notice board-hung" role="alert">${esc(t("board_hung", { resets: readers.board.resets }))}</p>`);
    }
    const en = await hostApi("GET", "/api/host/enrolment");
    const cat = catalogueOf(en.game);  // the pieces of the hub's game, in its words
    document.getElementById("enrolment").textContent = en.spare ? gameT("enrol_spare_wait", { card: cardLabel(en.spare, cat) }, cat)
      : en.active ? gameT("enrol_progress", { done: en.done ?? "?", total: en.total ?? "?", next: (en.next && cardLabel(en.next, cat)) || "—" }, cat) : t("enrol_none");
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
  const own = HOOKS[GAME.id] || {};
  if (own.renderRunningOptions) own.renderRunningOptions(document.getElementById("host-options"), v);
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

/* The hub serves another game than the table's (status.hub_other_game): said, with both
   games' titles, rather than taps that silently mean nothing. */
function renderHubGame(state) {
  const other = state.status ? state.status.hub_other_game : null;
  const title = (id) => { const g = (BOOT.games || []).find((x) => x.id === id); return g ? g.title : id; };
  const el = document.getElementById("hub-game");
  const text = other ? `⚠ ${t("hub_other_game", { hub: title(other), table: title(state.table_game) })}` : "";
  el.hidden = !other;
  if (el.textContent !== text) el.textContent = text;
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

/* The New game form: one fieldset per offered game (templates/host.html), the chosen one
   shown and sent. */
function chosenFieldset() {
  const chooser = document.getElementById("game");
  const id = chooser ? chooser.value : GAME.id;
  return document.querySelector(`fieldset.game-options[data-game="${CSS.escape(id)}"]`);
}

function showGame() {
  const chosen = chosenFieldset();
  for (const f of document.querySelectorAll("fieldset.game-options")) {
    const on = f === chosen;
    f.hidden = !on;
    f.disabled = !on;
  }
  seatChoices(chosen);
  const hooks = HOOKS[chosen.dataset.game] || {};
  if (hooks.setupOptions) hooks.setupOptions(chosen);
  const msgEl = document.getElementById("form-msg");
  if (!hooks.readOptions) { msgEl.hidden = true; document.getElementById("start").disabled = false; }
  // A game with no virtual table is dealt at the table (its pieces are not on readers).
  const entry = (BOOT.games || []).find((g) => g.id === chosen.dataset.game);
  const deal = /** @type {HTMLSelectElement} */ (document.getElementById("deal"));
  for (const o of deal.querySelectorAll("option[value='virtual']")) {
    o.disabled = !!entry && !entry.virtual;
    if (o.disabled && deal.value === "virtual") deal.value = deal.options[0].value;
  }
  // Each way to deal in the chosen game's words (Quacks' chips wait in bags, not on cells).
  const words = (entry && entry.catalogue && entry.catalogue.words) || {};
  for (const o of deal.options) {
    if (o.dataset.shell === undefined) o.dataset.shell = o.textContent;
    o.textContent = words[`deal_${o.value}`] || o.dataset.shell;
  }
}

/* A seat option (`seat_option`: data-seats-of names the option counting the seats) offers
   only the seats of the game: a chosen seat beyond them falls back to the first. */
function seatChoices(fieldset) {
  for (const el of /** @type {NodeListOf<HTMLSelectElement>} */ (fieldset.querySelectorAll("select[data-seats-of]"))) {
    const count = /** @type {HTMLInputElement | null} */ (fieldset.querySelector(`[data-option="${CSS.escape(el.dataset.seatsOf)}"]`));
    const n = count ? Number(count.value) : Infinity;
    for (const o of el.options) o.hidden = o.disabled = o.value !== "" && Number(o.value) >= n;
    if (el.selectedOptions[0] && el.selectedOptions[0].disabled) el.value = el.options[0].value;
  }
}

/* A game's options from the fields made of its options model (`option_fields`): a number,
   a box, or a choice; an empty number is the option's default (null). */
function readFields(fieldset) {
  const options = {};
  for (const el of fieldset.querySelectorAll("[data-option]")) {
    const name = el.dataset.option;
    if (el.type === "checkbox") options[name] = el.checked;
    else if (el.type === "number" || el.dataset.type === "integer") options[name] = el.value === "" ? null : Number(el.value);
    else options[name] = el.value === "" ? null : el.value;
  }
  const title = fieldset.dataset.title || fieldset.dataset.game;
  return { options, started: () => t("host_started_game", { game: title }) };
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

{
  // No virtual table at all: the cards are dealt at the table (the table's game may have no
  // virtual page while the host starts one that has: BOOT.virtual is the table's game's).
  if (!BOOT.virtual_table) for (const o of document.querySelectorAll("#deal option[value='virtual'], #deal option[value='auto']")) o.remove();
  showGame();
  const chooser = document.getElementById("game");
  if (chooser) chooser.addEventListener("change", showGame);
  document.getElementById("new-game").addEventListener("input", (ev) => {
    const el = /** @type {HTMLElement} */ (ev.target);
    const fieldset = el.closest("fieldset.game-options");
    if (fieldset && el.dataset.option) seatChoices(fieldset);
  });
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
  document.getElementById("login-button").disabled = false;
  document.getElementById("new-game").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const fieldset = chosenFieldset();
    const hooks = HOOKS[fieldset.dataset.game] || {};
    const read = hooks.readOptions ? hooks.readOptions(fieldset) : readFields(fieldset);
    if (!read) return;
    startGame(Object.assign({ game: fieldset.dataset.game, deal: document.getElementById("deal").value }, read.options), read.started);
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
    if (followGame(state, holdReload)) return;
    wakeWaiters(state);
    clearWhenMoved(state);
    renderStatus(state);
    renderLinkPhones(state);
    renderHubChange(state.status);
    renderHubGame(state);
    renderBanners(state.status, true);
  }, (up) => renderBanners(null, up));
  if (pin) hostApi("POST", "/api/host/login").then(() => showHost(true)).catch(() => logout());
  const said = JSON.parse(sessionStorage.getItem(SAID_KEY) || "null");
  sessionStorage.removeItem(SAID_KEY);
  if (said && said.text && Date.now() - said.at < MSG_READ_MS) msg(said.text, said.error);
}
