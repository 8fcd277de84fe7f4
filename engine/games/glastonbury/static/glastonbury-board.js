/* The square and its 20 pawn positions, drawn from the engine's view and its geometry
   (GEO, from engine.games.glastonbury.rules.board): the big screen, the virtual table and the phone. */
import { GEO, cardHtml, cardLabel, cellLabel, colourSymbol, esc, gameOver, posLabel, seatLabel, t } from "/static/core.js";

const CORNERS = new Set(GEO.corners);
const CORNER_CARD = GEO.corner_cards;  // cell -> corner card, from engine.games.glastonbury.rules.board

/* What the active seat may do on each cell, from the engine's `expected`. */
export function marks(v) {
  const ex = v && !v.over ? v.expected || {} : {};
  return {
    faced: new Set(ex.faced_line != null ? GEO.lines[ex.faced_line] : []),
    take: new Set(ex.take || []),
    accio: new Set(ex.accio || []),
    decl: new Set(ex.declinatio_take || []),
    declLine: new Set(ex.declinatio_line != null ? GEO.lines[ex.declinatio_line] : []),
    hole: ex.refill_cell || null,
  };
}

/* The HTML of every cell and position (for patchChildren). `opts.cells` replaces the grid
   (the virtual table's own cards); `opts.button(key, card, mark)` says which cells are
   buttons (data-act="cell"); `opts.pos(p, sensed)` which positions are buttons
   (data-act="pos": the virtual table moves sensed pawns): null, or { picked, hint }. */
export function boardParts(v, opts) {
  const o = opts || {};
  const m = marks(v);
  const parts = [];
  for (let r = 0; r < GEO.size; r++) {
    for (let c = 0; c < GEO.size; c++) {
      const key = `${r},${c}`;
      const corner = CORNERS.has(key);
      let card = v ? v.grid[r][c] : null;
      if (o.cells && !corner) card = o.cells[key] || null;
      if (corner && !card) card = CORNER_CARD[key];
      const cls = ["cell"];
      let badge = "";
      let hint = "";
      let mark = null;
      if (corner) cls.push("corner");
      if (!card) cls.push("empty");
      if (m.faced.has(key) || m.declLine.has(key)) cls.push("faced");
      if (m.take.has(key)) { cls.push("may-take"); badge = "✓"; hint = t("may_take"); mark = "take"; }
      if (m.accio.has(key)) { cls.push("accio"); badge = "A"; hint = t("accio_options"); mark = "accio"; }
      if (m.decl.has(key)) { cls.push("decl"); badge = "D"; hint = t("declinatio_option"); mark = "decl"; }
      if (m.hole === key) { cls.push("hole"); badge = "⟳"; hint = t("phase_refill"); mark = "refill"; }
      const label = `${cellLabel(key)}: ${card ? cardLabel(card) : t("empty")}${hint ? " — " + hint : ""}`;
      const inner = `${card ? cardHtml(card) : ""}<span class="coord" aria-hidden="true">${esc(t("cell_short", { r: r + 1, c: c + 1 }))}</span>` +
        (badge ? `<span class="badge" aria-hidden="true">${badge}</span>` : "");
      const style = `grid-row:${r + 2};grid-column:${c + 2}`;
      const button = !corner && o.button ? o.button(key, card, mark) : false;
      if (button) {
        parts.push(`<button type="button" class="${cls.join(" ")}" style="${style}" data-act="cell" data-cell="${key}" data-where="${key}" data-mark="${mark || ""}" data-focus="cell-${key}" aria-label="${esc(label)}">${inner}</button>`);
      } else {
        parts.push(`<div class="${cls.join(" ")}" style="${style}" data-cell="${key}" role="img" aria-label="${esc(label)}">${inner}</div>`);
      }
    }
  }
  const pawnsAt = {};
  if (v) for (const s of v.seats) (pawnsAt[s.pawn] = pawnsAt[s.pawn] || []).push(s);
  const active = v && !gameOver(v) && v.seats.length ? v.turn : null;
  const sensed = v && v.table && v.table.pawns_sensed ? new Set(v.table.pawns_sensed) : null;  // Hall switches
  for (let p = 0; p < GEO.slots.length; p++) {
    const [row, col] = GEO.slots[p];
    const here = pawnsAt[p] || [];
    const pawns = here.map((s) => `<span class="pawn c-${esc(s.colour)}${s.seat === active ? " active" : ""}" data-pawn="${s.seat}" aria-hidden="true">` +
      `${esc(colourSymbol(s.colour))}${s.seat + 1}</span>`).join("");
    const cls = ["pos", GEO.faced[p] == null ? "pos-corner" : "pos-edge"];
    if (sensed && sensed.has(p)) cls.push("pawn-sensed");
    const names = here.map((s) => seatLabel(s.seat, s.colour)).join(", ");
    const label = posLabel(p) + (names ? ": " + names : "");
    const inner = `<span class="num" aria-hidden="true">${p + 1}</span>${pawns}`;
    const style = `grid-row:${row + 1};grid-column:${col + 1}`;
    const button = o.pos ? o.pos(p, !!(sensed && sensed.has(p))) : null;
    if (button) {
      if (button.picked) cls.push("pawn-picked");
      parts.push(`<button type="button" class="${cls.join(" ")}" style="${style}" data-act="pos" data-pos="${p}" data-focus="pos-${p}" aria-pressed="${button.picked ? "true" : "false"}" aria-label="${esc(label + (button.hint ? " — " + button.hint : ""))}">${inner}</button>`);
    } else {
      parts.push(`<div class="${cls.join(" ")}" style="${style}" data-pos="${p}" role="img" aria-label="${esc(label)}">${inner}</div>`);
    }
  }
  return parts;
}
