/* Glastonbury's part of the host page: its New game options (players, each seat's colour
   and start corner, first player, the colour removed at 2 players, variants; the markup in
   templates/host.html) and the running game's set-up. The shell (host.js) calls
   `setupOptions(fieldset)`, `readOptions(fieldset)` and `renderRunningOptions(el, view)`.
   Its words are the shell's; its colours and board from its own page catalogue (the host
   page carries every offered game's: the table may play another game). */
import { BOOT, esc, gameOver, t, seatLabel } from "/static/core.js";

const OWN = ((BOOT.games || []).find((g) => g.id === "glastonbury") || {}).catalogue || BOOT.catalogue;
const GEO = OWN.geometry;
const PLAYER_COLOURS = ["yellow", "red", "green", "blue"];  // G2 (GlastonburyOptions.colours)
function colourName(colour) { const c = OWN.colours[colour]; return c ? `${c.name} ${c.symbol}` : ""; }
function posLabel(p) { return t("position", { n: p + 1 }); }

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

/* The running game's set-up (G2, G11, variants), so the host sees what was chosen. */
export function renderRunningOptions(el, v) {
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


/** The options' fields are in place (templates/host.html): fill and check them as they change. */
export function setupOptions(fieldset) {
  if (fieldset.dataset.ready) return;
  fieldset.dataset.ready = "1";
  buildForm();
  document.getElementById("players").addEventListener("change", buildForm);
  document.getElementById("colour-fields").addEventListener("change", () => { buildRemoved(); checkColours(); });
}

/** The New game body's options and what the host is told once it started; null when the
    form is not right yet (two seats of one colour: said beside the form). */
export function readOptions(fieldset) {
  if (!checkColours()) return null;
  const colours = [...document.querySelectorAll("#colour-fields select.colour")].map((s) => s.value);
  const removed = document.getElementById("removed").value || null;
  return {
    options: {
      colours, first_seat: Number(document.getElementById("first").value),
      start_positions: [...document.querySelectorAll("#colour-fields select.start")].map((s) => Number(s.value)),
      removed_colour: colours.length === 2 ? removed : null,
      recipes: document.getElementById("recipes").checked,
      second_player_bonus: document.getElementById("bonus").checked,
      memory_aid: document.getElementById("memory").checked,
    },
    started: () => t("host_started", { n: colours.length, colours: colours.map(colourName).join(", ") }),
  };
}
