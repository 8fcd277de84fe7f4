/* Shared by every page: words (plurals, names of cells, lines, seats, positions), the one
   place that draws a card, alerts, the live socket, banners and announcements. */
export const BOOT = JSON.parse(document.getElementById("boot").textContent);
export const T = BOOT.t;
export const CAT = BOOT.catalogue;
/* The table's game's own words (its page catalogue's `t`) join the shell's; the shell's win. */
if (CAT && CAT.t) for (const [key, text] of Object.entries(CAT.t)) if (T[key] === undefined) T[key] = text;
/* The shell's texts the page's game words its own way (its page catalogue's `words`:
   Quacks' enrolment speaks of chips, not cards); SHELL keeps the shell's own. */
const SHELL = Object.assign({}, T);
Object.assign(T, CAT.words || {});
export const GEO = CAT.geometry; // Glastonbury's board geometry (its page catalogue)
/* The table's game as the shell serves it (dashboard/game.py `page_game`): its id, title and
   the fragment scripts of this page, served under /games/<id>/static/. */
export const GAME = BOOT.game || { id: null, title: "", scripts: [], styles: [] };
/* The host page's spares of the table's game (its BOOT.games entry: no other page lists
   every piece). */
{
  const own = (BOOT.games || []).find((g) => g.id === GAME.id);
  if (own && own.catalogue && own.catalogue.spares) CAT.spares = own.catalogue.spares;
}

/* This page's game fragments, their exports merged: the hooks the shell calls
   (renderTable, renderSeat, renderScores, startVirtual, hostOptions, ...). */
export async function gameHooks() {
  const mods = await Promise.all((GAME.scripts || []).map((url) => import(url)));
  return Object.assign({}, ...mods);
}

/* The table now plays another game than the one this page was served for: load the page
   again, so the server gives it that game's fragments (state.table_game, dashboard/bridge.py).
   True while the page is for another game. `hold()`, if given, may put the reload off (true:
   not yet; the host page waits for its requests' answers). */
let reloading = false;
export function followGame(state, hold) {
  const id = state && state.table_game;
  if (!id || !GAME.id || id === GAME.id) return false;
  if (!reloading && !(hold && hold())) { reloading = true; location.reload(); }
  return true;
}
const PLURAL = new Intl.PluralRules(BOOT.lang);

/* The render probe the benchmark and the browser tests read (window.__cauldron): renders,
   publish -> received and publish -> rendered latencies, `log` ([ts, inputs, received,
   rendered, drawn] per update, page clock in ms: a bench that timed the hub's event, not
   the engine's publish, matches it by `inputs`), waitFor(ts), waitForInputs(n), and
   `drawn`, a promise of the frame after the last update. */
const perf = (window.__cauldron = {
  renders: 0, latencies: [], received: [], log: [], lastTs: null, lastInputs: -1, waiters: [],
  drawn: Promise.resolve(true),
  /* Resolves once the page shows the update published at `ts`. */
  waitFor(ts) {
    if (perf.lastTs === ts) return Promise.resolve(true);
    return new Promise((resolve) => perf.waiters.push([(g) => g.ts === ts, resolve]));
  },
  /* Resolves once the page shows a game with at least `n` table inputs. */
  waitForInputs(n) {
    if (perf.lastInputs >= n) return Promise.resolve(true);
    return new Promise((resolve) => perf.waiters.push([(g) => inputsOf(g) >= n, resolve]));
  },
});
const now = () => performance.timeOrigin + performance.now();
const since = (ts) => now() - ts * 1000;
const inputsOf = (g) => (g && g.view.table ? g.view.table.inputs : -1);
function keep(list, value) { list.push(value); if (list.length > 1000) list.shift(); }
let receivedAt = null;

/* A table state arrived (before its render). */
export function probeReceived(state) {
  const g = state.game;
  receivedAt = now();
  if (g && g.ts != null && g.ts !== perf.lastTs) keep(perf.received, receivedAt - g.ts * 1000);
}

/* A table state is on the page: count it, time it, wake whoever waits for it. */
export function probeRendered(state) {
  const g = state.game;
  perf.renders += 1;
  if (g && g.ts != null && g.ts !== perf.lastTs) {
    perf.lastTs = g.ts;
    perf.lastInputs = inputsOf(g);
    const rendered = now();
    keep(perf.latencies, rendered - g.ts * 1000);
    const entry = [g.ts, perf.lastInputs, receivedAt, rendered, null];
    keep(perf.log, entry);
    // drawn: after the next frame's callbacks, style, layout and paint
    perf.drawn = new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
      entry[4] = now();
      resolve(true);
    }, 0)));
    const ready = perf.waiters.filter(([test]) => test(g));
    perf.waiters = perf.waiters.filter(([test]) => !test(g));
    for (const [, resolve] of ready) resolve(true);
  }
  document.body.dataset.gameTs = g && g.ts != null ? String(g.ts) : "";
  document.body.dataset.inputs = g && g.view.table ? String(g.view.table.inputs) : "";
  document.body.dataset.renders = String(perf.renders);
}

/* A translated string; {name} placeholders filled from params. */
export function t(key, params) { return format(T[key] !== undefined ? T[key] : key, params); }
function format(text, params) {
  if (params) for (const [k, v] of Object.entries(params)) text = text.split("{" + k + "}").join(String(v));
  return text;
}

/* A translated string with a count: "<key>#one", "<key>#other"… by the language's plural rules. */
export function tn(key, n, params) {
  const form = PLURAL.select(n);
  const full = T[`${key}#${form}`] !== undefined ? `${key}#${form}` : `${key}#other`;
  return t(full, Object.assign({ n }, params || {}));
}

export function esc(value) {
  return String(value == null ? "" : value).replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

/* ---- names people read: 1-based, never a raw id (CONTRACTS.md "Human-readable names") ---- */
export function cellLabel(key) {
  const [r, c] = String(key).split(",").map(Number);
  return t("cell", { r: r + 1, c: c + 1 });
}
export function lineLabel(line) { return line < 6 ? t("row", { n: line + 1 }) : t("column", { n: line - 5 }); }
export function posLabel(p) { return t("position", { n: p + 1 }); }
export function colourName(colour) { const c = CAT.colours[colour]; return c ? `${c.name} ${c.symbol}` : ""; }
export function colourSymbol(colour) { const c = CAT.colours[colour]; return c ? c.symbol : ""; }
export function seatLabel(seat, colour) {
  if (seat == null) return "";
  return colour ? t("seat_colour", { n: seat + 1, colour: colourName(colour) }) : t("seat_n", { n: seat + 1 });
}
export function seatOf(view, seat) {
  const s = view && view.seats ? view.seats[seat] : null;
  return seatLabel(seat, s ? s.colour : view && view.config && view.config.colours ? view.config.colours[seat] : null);
}

/* Texts made by the engine and the server are worded for people already, 1-based
   (engine/games/glastonbury/rules/names.py: "Seat 1 (yellow)", "row 3, column 4", "row 2", "position 5"):
   nothing is renumbered here. A seat gets the page's word and its colour symbol. */
export function humanise(text, seats) {
  return String(text || "").replace(/\bSeat ([1-4])(?: \(([a-z]+)\))?/g, (m, n, colour) => {
    const seat = Number(n) - 1;
    const s = seats && seats[seat];
    const known = (s && s.colour) || (colour && CAT.colours[colour] ? colour : null);
    return seatLabel(seat, known);
  });
}

/* ---- cards ---- */
export function cardInfo(id) {
  if (!id) return null;
  const parts = id.split("-");
  if (!CAT.colours) return { id, kind: "piece", family: pieceName(id, CAT), symbol: "?", label: pieceName(id, CAT) };
  if (parts.length === 3 && CAT.colours[parts[0]]) {
    const colour = CAT.colours[parts[0]];
    const family = CAT.families[parts[0] + "-" + parts[1]] || "";
    const value = Number(parts[2]);
    return { id, kind: "ingredient", colour: parts[0], colourName: colour.name, symbol: colour.symbol,
      pattern: colour.pattern, family, value, label: t("card_ingredient", { family, value, colour: `${colour.name} ${colour.symbol}` }) };
  }
  if (parts[0] === "immuto") return { id, kind: "immuto", family: CAT.immuto.split(" (")[0], symbol: "∞", value: 0, label: CAT.immuto };
  if (parts[0] === "corner") return { id, kind: "corner", family: CAT.corner, symbol: "◣", label: CAT.corner };
  const spell = CAT.spells[parts[0]];
  if (spell) return { id, kind: "spell", spell: parts[0], family: spell.name, rule: spell.rule, symbol: "✦", label: spell.name };
  return { id, kind: "unknown", family: t("unknown_card"), symbol: "?", label: t("unknown_card") };
}

/* A piece's name for people. `cat`: another game's page catalogue (the host page names the
   pieces of the hub's game): its `piece_names` (dashboard/i18n.py `catalogue_for`). */
export function cardLabel(id, cat) {
  if (cat && cat !== CAT) return id ? pieceName(id, cat) : "";
  const c = cardInfo(id);
  return c ? c.label : "";
}
function pieceName(id, cat) { return (cat.piece_names && cat.piece_names[id]) || t("unknown_card"); }

/* A long word shrinks to fit its cell first (--len, app.css); where it still does not fit
   it breaks at a soft hyphen and shows it, never at an arbitrary letter. Words of more than
   8 letters get one: the catalogue's where a reader expects (BREAKS), any other (a venue's
   own names) before a consonant that starts a syllable, near its middle. */
const BREAKS = new Map([
  // en
  "Mush-rooms", "Moon-stones", "De-cli-na-tio", "Metamor-phosis",
  // fr
  "Pha-langes", "d'as-ticot", "Cham-pignons", "Ci-trouilles", "Bou-teilles", "d'arai-gnée",
  "Méta-morphose",
  // de
  "Schwefel-duft", "Wachs-puppe", "Finger-knochen", "Maden-saft", "Augen-glas", "Schach-teln",
  "Fleder-mäuse", "Ein-horn-haar", "Mond-steine", "Spinnen-beine", "Katzen-haare",
  "Ratten-schwänze", "Spinn-weben", "Verwand-lung",
].map((w) => [w.replaceAll("-", "").toLowerCase(), w.replaceAll("-", "\u00ad")]));
const VOWEL = /[aeiouyàâäéèêëîïôöùûüœæ]/i;
function softHyphens(word) {
  if (word.length <= 8) return word;
  const known = BREAKS.get(word.toLowerCase());
  if (known) return word[0] + known.slice(1);  // the word's own first letter (its case)
  let best = -1;
  for (let i = 3; i <= word.length - 3; i++) {
    if (!VOWEL.test(word[i]) && /\p{L}/u.test(word[i]) && VOWEL.test(word[i + 1] || "") &&
        (best < 0 || Math.abs(i - word.length / 2) < Math.abs(best - word.length / 2))) best = i;
  }
  if (best < 0) return word;
  return softHyphens(word.slice(0, best)) + "\u00ad" + softHyphens(word.slice(best));
}
function familyText(text) { return String(text).split(/(\s+|-)/).map(softHyphens).join(""); }
function fit(text) {
  const longest = Math.max(...String(text).split(/[\s-]+/).map((w) => w.length));
  const piece = Math.max(...familyText(text).split(/[\s\u00ad-]+/).map((w) => w.length));
  return longest > 5 ? ` style="--len:${longest};--seg:${piece}"` : "";
}

/* The one place a card is drawn. Colour is never the only signal: family name, value,
   colour name and symbol, and a pattern per colour. A card's HTML never changes on a page
   (its words are the page's language): made once, not on every update (the soft hyphens'
   search was most of the board's render time). */
const CARD_HTML = new Map();
export function cardHtml(id, extraClass) {
  const key = `${id}|${extraClass || ""}`;
  let html = CARD_HTML.get(key);
  if (html === undefined) { html = makeCardHtml(id, extraClass); CARD_HTML.set(key, html); }
  return html;
}

function makeCardHtml(id, extraClass) {
  const c = cardInfo(id);
  if (!c) return "";
  const cls = ["card", "k-" + c.kind, extraClass || ""];
  const data = `data-card="${esc(id)}"`;
  if (c.kind === "ingredient") {
    cls.push("c-" + c.colour, "p-" + c.pattern);
    return `<span class="${cls.join(" ")}" ${data}>` +
      `<span class="band" aria-hidden="true">${esc(c.symbol)}</span>` +
      `<span class="val">${c.value}</span>` +
      `<span class="fam"${fit(c.family)}>${esc(familyText(c.family))}</span>` +
      `<span class="col">${esc(c.colourName)}</span></span>`;
  }
  if (c.kind === "spell") {
    cls.push("s-" + c.spell);
    return `<span class="${cls.join(" ")}" ${data}><span class="band" aria-hidden="true">✦</span>` +
      `<span class="abbr" aria-hidden="true">${esc(c.family.slice(0, 3))}</span>` +
      `<span class="fam"${fit(c.family)}>${esc(familyText(c.family))}</span><span class="col">${esc(t("spell"))}</span></span>`;
  }
  if (c.kind === "immuto") {
    return `<span class="${cls.join(" ")}" ${data}><span class="band" aria-hidden="true">∞</span>` +
      `<span class="val">0</span><span class="fam"${fit(c.family)}>${esc(familyText(c.family))}</span></span>`;
  }
  return `<span class="${cls.join(" ")}" ${data}><span class="band" aria-hidden="true">${esc(c.symbol)}</span><span class="fam">${esc(c.family)}</span></span>`;
}

/* A joined seat's phone, from one source (the table state's `joined` and `phones`): "on"
   (its page is connected), "off" (joined, but the page is gone), null (nobody joined). */
export function phoneState(state, seat) {
  if (!state || !state.joined || !state.joined[seat]) return null;
  return state.phones && state.phones[seat] ? "on" : "off";
}

/* How far the pawn of the seat to play moves: an Immuto on top (G5) moves it 0 steps, said
   as "the pawn stays". */
export function moveWords(n) { return n ? tn("move_value", n) : t("move_stays"); }

export function usesText(uses) { return uses > 0 ? tn("uses_left", uses) : t("spent"); }

/* ---- what the table waits for (the engine service's prompt, translated) ---- */
/* Nobody plays any more: ended by the rules (view.over) or by the host's End (the ended
   game's last board stays on the wire, with the turn it had). */
export function gameOver(v) { return !!v && (v.over || (!!v.table && v.table.status === "ended")); }
export function promptText(v) {
  const info = v.table;
  if (!info || !info.prompt) return "";
  const p = info.prompt;
  const seat = p.seat != null ? seatOf(v, p.seat) : "";
  const ex = v.expected || {};
  const params = { seat, filled: info.dealing ? info.dealing.filled : 0, round: v.round };
  if (p.code === "lay_on_pad" || p.code === "last_card") params.card = info.held ? cardLabel(info.held.card) : "";
  if (p.code === "vanesco_tap") params.card = info.vanesco_wait.length ? cardLabel(info.vanesco_wait[0].card) : "";
  if (p.code === "refill") params.cell = ex.refill_cell ? cellLabel(ex.refill_cell) : "";
  if (p.code === "corner_blocked" || p.code === "corner") params.line = ex.declinatio_line != null ? lineLabel(ex.declinatio_line) : "";
  if (p.code === "take" && p.seat != null && v.seats[p.seat]) {
    params.pos = v.seats[p.seat].pawn + 1;
    params.line = v.seats[p.seat].faced_line != null ? lineLabel(v.seats[p.seat].faced_line) : "";
  }
  const key = "prompt_" + p.code + (p.code === "take" && !v.move_value ? "_stay" : "");
  return T[key] !== undefined ? t(key, params) : humanise(p.text, v.seats);
}

/* ---- alerts: one place, used by the big screen and the phone ---- */
const NOTICE_RULES = new Set(["undo", "info", "notice"]);
export function isNotice(a) { return a.kind === "notice" || a.severity === "info" || NOTICE_RULES.has(a.rule); }

/* A refusal in the page's language (refusal_<code> with its ids as words, and the rule it
   names); the server's own words only for a code this page does not know. */
export function refusalText(e, seats) {
  const said = e && e.code ? filled("refusal_" + e.code, codeParams(e.params, seats)) : null;
  if (said) return e.rule && !said.includes(e.rule) ? `${said} (${t("rule", { rule: e.rule })})` : said;
  return t("error", { message: e ? e.message : "" });
}

/* An alert that holds a seat's gestures on the square until it is put right (the server
   refuses them: dashboard/virtual.py `_held_by_alert`). */
export function holdsSquare(a) {
  return !isNotice(a) && a.severity === "error" && !!(a.params && a.params.cell);
}

/* ---- texts the engine sends as codes with parameters (ids), said in the page's language ---- */
const CARD_PARAMS = new Set(["card", "held_card", "top", "owed", "expected", "seen"]);
const CELL_PARAMS = new Set(["cell", "held_cell", "hole", "other", "from"]);
const SEAT_PARAMS = new Set(["seat", "victim", "turn", "pad"]);
const POS_PARAMS = new Set(["at", "to", "position"]);

function tagOrCard(id) {
  const s = String(id);
  return s.startsWith("uid:") ? `${t("unknown_tag_word")} ${s.slice(4)}` : cardLabel(s);
}

/* A code's parameters (card ids, "r,c" cells, seat and position numbers) as words. */
export function codeParams(p, seats) {
  const out = {};
  for (const [k, v] of Object.entries(p || {})) {
    if (v == null || k === "code") continue;
    if (CARD_PARAMS.has(k)) out[k] = tagOrCard(v);
    else if (CELL_PARAMS.has(k)) out[k] = cellLabel(v);
    else if (SEAT_PARAMS.has(k)) out[k] = seatLabel(Number(v), seats && seats[v] ? seats[v].colour : null);
    else if (POS_PARAMS.has(k)) out[k] = posLabel(Number(v));
    else if (k === "line") out[k] = lineLabel(Number(v));
    else if (typeof v !== "object") out[k] = String(v);
  }
  return out;
}

/* `key` filled in, or null when the key is unknown or a parameter is missing. */
function filled(key, params) {
  if (T[key] === undefined) return null;
  const text = t(key, params);
  return /\{[a-z_]+\}/.test(text) ? null : text;
}

/* What an undo took back, from its codes ({code, cell?, card?}). */
export function undoneWords(list, seats) {
  return (list || []).map((u) => filled("undone_" + u.code, codeParams(u, seats)) || t("undone_other")).join("; ");
}

/* One step of the way back after an undo. */
export function undoStepWords(step, seats) {
  return (step.code && filled("undo_step_" + step.code, codeParams(step, seats))) || humanise(step.text, seats);
}

/* A game's page catalogue by its id, from the host page's offered games (BOOT.games); the
   page's own (CAT) for the table's game. */
export function catalogueOf(id) {
  const game = id && id !== GAME.id ? (BOOT.games || []).find((g) => g.id === id) : null;
  return game && game.catalogue ? game.catalogue : CAT;
}

/* A shell text as game catalogue `cat` words it (its `words`, else the shell's own); the
   page's (T) without one. */
export function gameWord(key, cat) {
  if (!cat || cat === CAT) return T[key];
  const own = cat.words ? cat.words[key] : undefined;
  return own !== undefined ? own : SHELL[key];
}
/* `t` and `tn` as game catalogue `cat` words them. */
export function gameT(key, params, cat) {
  const text = gameWord(key, cat);
  return text === undefined ? key : format(text, params);
}
export function gameTn(key, n, params, cat) {
  const form = `${key}#${PLURAL.select(n)}`;
  return gameT(gameWord(form, cat) !== undefined ? form : `${key}#other`, Object.assign({ n }, params || {}), cat);
}

/* What enrolment says (hub/enroll.py WORDS: [{code, params}]) in the page's language:
   card ids by the card's name ("<name> (copy 2 of 3)" for identical cards), a plural by
   ``n``; the hub's English ``fallback`` when a code is unknown here. `cat`: the catalogue
   of the hub's game (its piece names and its own words), else the page's. */
export function enrolWords(said, fallback, cat) {
  const word = (key, params) => {
    const text = gameWord(key, cat);
    if (text === undefined) return null;
    const out = format(text, params);
    return /\{[a-z_]+\}/.test(out) ? null : out;
  };
  const lines = (said || []).map(({ code, params }) => {
    const p = Object.assign({}, params || {});
    for (const k of ["card", "before"]) {
      if (p[k] == null) continue;
      p[k] = cardLabel(String(p[k]), cat);
      if (p[k + "_copy"]) p[k] = word("enrol_copy", { name: p[k], copy: p[k + "_copy"], of: p[k + "_copies"] });
    }
    if (p.total != null) p.progress = word("enrol_done_of", { done: p.done, total: p.total }) + (p.skipped ? gameTn("enrol_skipped_n", Number(p.skipped), {}, cat) : "");
    const base = "enrol_" + code;
    if (p.n == null || gameWord(`${base}#other`, cat) === undefined) return word(base, p);
    const form = `${base}#${PLURAL.select(Number(p.n))}`;
    return word(gameWord(form, cat) !== undefined ? form : `${base}#other`, p);
  });
  return lines.length && lines.every(Boolean) ? lines.join(" ") : fallback || "";
}

/* "Seat N's bot is waiting: <why>" for each waiting bot, in the page's language (the
   demo's bots send a code with ids; their English words only for an unknown code). */
export function waitingLines(virtual, seats) {
  const waiting = virtual && virtual.waiting ? virtual.waiting : {};
  const codes = virtual && virtual.waiting_codes ? virtual.waiting_codes : {};
  return Object.keys(waiting).sort().map((s) => {
    const c = codes[s] || {};
    const p = codeParams(Object.fromEntries(Object.entries(c).filter(([k]) => k !== "who" && k !== "origin")), seats);
    if (c.who != null) p.who = c.who === "host" ? t("the_host") : seatLabel(Number(c.who), seats && seats[c.who] ? seats[c.who].colour : null);
    if (c.origin != null) p.origin = String(c.origin).startsWith("pad:") ? t("pad", { seat: seatLabel(Number(String(c.origin).slice(4))) }) : String(c.origin).includes(",") ? cellLabel(c.origin) : t("pile");
    if (c.card == null) p.card = t("a_card");
    const why = (c.code && filled("wait_" + c.code, p)) || waiting[s];
    const seat = Number(s);
    return { seat: s, text: t("bot_waiting", { seat: seatLabel(seat, seats && seats[seat] ? seats[seat].colour : null), reason: why }) };
  });
}

/* An alert's message and what to do, in the page's language (al_<code>, al_<code>_do);
   the engine's English words only for a code this page does not know yet. */
export function alertWords(a, seats) {
  const p = Object.assign({}, a.params || {});
  if (p.seat == null && a.seat != null) p.seat = a.seat;
  const params = codeParams(p, seats);
  params.rule = t("rule", { rule: a.rule });
  const tag = [p.seen, p.card].find((x) => typeof x === "string" && x.startsWith("uid:"));
  if (tag) params.uid = tag.slice(4);
  params.where = p.pad != null ? t("pad", { seat: params.pad }) : p.cell ? cellLabel(p.cell) : "";
  if (p.code === "undone") params.undone = undoneWords(p.undone, seats);
  const msg = p.code ? filled("al_" + p.code, params) : null;
  const fix = p.code && a.instruction ? filled("al_" + p.code + "_do", params) : null;
  return { msg: msg || humanise(a.message, seats), fix: fix || humanise(a.instruction || "", seats) };
}

/* One alert per fault: the same breach said twice (e.g. by two checks) shows once. */
export function distinctAlerts(alerts) {
  const seen = new Set();
  const out = [];
  for (const a of [...alerts].reverse()) { // the newest of each kind wins
    const p = a.params || {};
    const keys = [`m|${a.seat}|${a.message}`, p.code ? `c|${a.seat}|${p.code}|${p.cell || ""}|${p.card || ""}` : null].filter(Boolean);
    if (keys.some((k) => seen.has(k))) continue;
    for (const k of keys) seen.add(k);
    out.unshift(a);
  }
  return out;
}

export function alertHtml(a, seats, brief) {
  const notice = isNotice(a);
  const sev = notice ? "info" : a.severity === "warning" ? "warning" : "error";
  const icon = { info: "ℹ", warning: "⚠", error: "✖" }[sev];
  const kind = t("sev_" + sev);
  const rule = !notice && /^G\d/.test(a.rule) ? ` · ${t("rule", { rule: a.rule })}` : "";
  const who = a.seat != null && seats && seats[a.seat] ? ` · ${seatLabel(a.seat, seats[a.seat].colour)}` : "";
  const head = `<p class="alert-head"><span class="icon" aria-hidden="true">${icon}</span> <strong>${esc(kind)}</strong>${esc(rule + who)}</p>`;
  const words = alertWords(a, seats);
  const msg = `<p class="msg">${esc(words.msg)}</p>`;
  // An undo's steps as a list (one line each, ticked when done), so each can be read apart.
  const steps = a.params && Array.isArray(a.params.steps) ? a.params.steps : [];
  const fix = steps.length ? `<div class="fix"><p><strong>${esc(t("what_to_do"))}</strong></p><ol class="steps">` +
      steps.map((s) => `<li class="step${s.done ? " done" : ""}" data-step="${Number(s.n)}">${s.done ? "✓ " : ""}${esc(undoStepWords(s, seats))}</li>`).join("") + `</ol></div>`
    : words.fix ? `<p class="fix"><strong>${esc(t("what_to_do"))}</strong> ${esc(words.fix)}</p>` : "";
  return `<div class="alert sev-${sev}" data-alert="${esc(a.alert_id)}" data-rule="${esc(a.rule)}" data-sev="${sev}">${head}${brief ? "" : msg + fix}${brief ? msg : ""}</div>`;
}

/* The newest alert in full, the others collapsed under a count. */
export function alertsHtml(alerts, seats) {
  if (!alerts.length) return "";
  const list = distinctAlerts(alerts).reverse(); // newest first
  let html = alertHtml(list[0], seats, false);
  if (list.length > 1) {
    html += `<details class="more-alerts"><summary>${esc(tn("more_alerts", list.length - 1))}</summary>` +
      list.slice(1).map((a) => alertHtml(a, seats, false)).join("") + `</details>`;
  }
  return html;
}

/* ---- announcements (ARIA live regions + optional speech) ---- */
const SPEECH_KEY = "cauldron-speech";
function speechOn() { return localStorage.getItem(SPEECH_KEY) === "1"; }
export function announce(text, assertive) {
  if (!text) return;
  const region = document.getElementById(assertive ? "announce-alert" : "announce");
  if (region) {
    region.textContent = "";
    setTimeout(() => { region.textContent = text; }, 30);
  }
  if (speechOn() && "speechSynthesis" in window) {
    const u = new SpeechSynthesisUtterance(text);
    u.lang = { fr: "fr-FR", en: "en-GB", de: "de-DE" }[BOOT.lang] || BOOT.lang;
    window.speechSynthesis.speak(u);
  }
}

/* Each new alert said aloud (the big screen and the virtual table, whatever the game). */
export function announceAlerts(prev, next) {
  const before = new Map(((prev && prev.alerts) || []).map((a) => [a.alert_id, a]));
  const seats = next.game ? next.game.view.seats : [];
  for (const a of next.alerts) {
    if (before.has(a.alert_id)) continue;
    const words = alertWords(a, seats);
    const text = words.msg + (words.fix ? " " + t("what_to_do") + " " + words.fix : "");
    announce(isNotice(a) ? text : t("ann_alert", { rule: a.rule, text }), !isNotice(a));
  }
}

function setupPage() {
  const box = document.getElementById("speech-toggle");
  if (box) {
    box.checked = speechOn();
    box.addEventListener("change", () => localStorage.setItem(SPEECH_KEY, box.checked ? "1" : "0"));
  }
  // Keep the rest of the URL (e.g. the virtual table's ?seat=) when switching language.
  for (const a of document.querySelectorAll("a.lang-switch")) {
    const url = new URL(window.location.href);
    url.searchParams.set("lang", a.dataset.lang);
    a.href = url.pathname + url.search;
  }
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupPage);
else setupPage();

/* ---- banners: hub/engine/broker offline, socket lost ---- */
export function renderBanners(status, socketUp) {
  const el = document.getElementById("banners");
  if (!el) return;
  const items = [];
  if (!socketUp) items.push(["socket", t("connection_lost")]);
  if (status) {
    if (!status.broker) items.push(["broker", t("offline_broker")]);
    else {
      if (status.hub === "offline") items.push(["hub", t("offline_hub")]);
      if (status.hub_degraded) items.push(["hub-degraded", t("hub_degraded") + " " + status.hub_degraded]);
      if (status.engine === "offline") items.push(["engine", t("offline_engine")]);
      else if (status.engine_degraded) items.push(["degraded", t("engine_degraded") + " " + status.engine_degraded]);
    }
  }
  const html = items.map(([k, text]) => `<p class="banner" data-banner="${k}"><span aria-hidden="true">⚠</span> ${esc(text)}</p>`).join("");
  if (el.innerHTML !== html) el.innerHTML = html;
}

/* ---- a WebSocket that reconnects by itself ---- */
export function liveSocket(path, onMessage, onState) {
  let delay = 250;
  let stopped = false;
  function open() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(proto + "//" + location.host + path);
    ws.onopen = () => { delay = 250; onState && onState(true, null); };
    ws.onmessage = (ev) => { try { onMessage(JSON.parse(ev.data)); } catch (e) { console.error(e); } };
    ws.onclose = (ev) => {
      onState && onState(false, ev.code);
      if (ev.code === 4403) stopped = true;
      if (!stopped) setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    };
  }
  open();
  return { stop() { stopped = true; } };
}

/* ---- cheap updates: replace only the children whose HTML changed (less layout work);
   the changed ones are parsed together (one HTML parser run per update, not one per cell:
   the parser's start-up was most of the table view's render time) ---- */
export function patchChildren(container, htmlList) {
  const kids = container.children;
  if (kids.length !== htmlList.length) {
    container.innerHTML = htmlList.join("");
    for (let i = 0; i < htmlList.length; i++) container.children[i]._html = htmlList[i];
    return;
  }
  const changed = [];
  for (let i = 0; i < htmlList.length; i++) if (kids[i]._html !== htmlList[i]) changed.push(i);
  if (!changed.length) return;
  const tpl = document.createElement("template");
  tpl.innerHTML = changed.map((i) => htmlList[i]).join("");
  const nodes = Array.from(tpl.content.children);
  if (nodes.length !== changed.length) {  // a part that is not one element: all again
    container.innerHTML = htmlList.join("");
    for (let i = 0; i < htmlList.length; i++) container.children[i]._html = htmlList[i];
    return;
  }
  const old = changed.map((i) => kids[i]);  // `kids` is live: take them before replacing
  for (let k = 0; k < changed.length; k++) {
    nodes[k]._html = htmlList[changed[k]];
    old[k].replaceWith(nodes[k]);
  }
}

export function setHtml(el, html) {
  if (el && el._html !== html) { el.innerHTML = html; el._html = html; }
}

/* ---- focus survives re-rendering (keyboard play) ---- */
export function keepFocus(render) {
  const active = document.activeElement;
  const key = active && active.dataset ? active.dataset.focus : null;
  render();
  if (key) {
    const again = document.querySelector(`[data-focus="${CSS.escape(key)}"]`);
    if (again && again !== document.activeElement) again.focus();
  }
}

/* ---- JSON API helper: errors carry the server's sentence (it says what to do) ---- */
export async function api(method, path, body, headers) {
  const init = { method, headers: Object.assign({ "Accept": "application/json" }, headers || {}) };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok || (data && data.status === "error")) {
    let detail = data && data.detail !== undefined ? data.detail
      : data && data.error ? (data.error.message || data.error) : res.statusText;
    if (detail && typeof detail === "object" && !Array.isArray(detail)) detail = detail.message || JSON.stringify(detail);
    if (Array.isArray(detail)) detail = detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    const err = new Error(humanise(String(detail))); err.status = res.status;
    const coded = data && data.error && typeof data.error === "object" ? data.error : {};
    err.code = coded.code || undefined;  // a refusal's stable id, its rule and its ids
    err.rule = coded.rule || undefined;
    err.params = coded.params || {};
    throw err;
  }
  return data;
}
