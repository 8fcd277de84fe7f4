/* Shared by every page: strings, card drawing, live socket with reconnect, announcements. */
"use strict";
const BOOT = JSON.parse(document.getElementById("boot").textContent);
const T = BOOT.t;
const CAT = BOOT.catalogue;

function t(key, params) {
  let text = T[key] !== undefined ? T[key] : key;
  if (params) for (const [k, v] of Object.entries(params)) text = text.split("{" + k + "}").join(String(v));
  return text;
}

function esc(value) {
  return String(value == null ? "" : value).replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

/* What a card id means: ingredients "<colour>-<a|b>-<value>", spells, Immuto, corners. */
function cardInfo(id) {
  if (!id) return null;
  const parts = id.split("-");
  if (parts.length === 3 && CAT.colours[parts[0]]) {
    const colour = CAT.colours[parts[0]];
    const family = CAT.families[parts[0] + "-" + parts[1]] || id;
    const value = Number(parts[2]);
    return { id, kind: "ingredient", colour: parts[0], colourName: colour.name, symbol: colour.symbol,
      pattern: colour.pattern, family, value, label: `${family} ${value} (${colour.name} ${colour.symbol})` };
  }
  if (parts[0] === "immuto") return { id, kind: "immuto", family: CAT.immuto, symbol: "∞", value: 0, label: CAT.immuto };
  if (parts[0] === "corner") return { id, kind: "corner", family: `${CAT.corner} ${parts[1]}`, symbol: "◣", label: `${CAT.corner} ${parts[1]}` };
  const spell = CAT.spells[parts[0]];
  if (spell) return { id, kind: "spell", spell: parts[0], family: spell.name, rule: spell.rule, symbol: "✦", label: spell.name };
  return { id, kind: "unknown", family: id, symbol: "?", label: id };
}

function cardLabel(id) { const c = cardInfo(id); return c ? c.label : ""; }

/* A card drawn so colour is never the only signal: family name, value, colour name + symbol. */
function cardHtml(id, extraClass) {
  const c = cardInfo(id);
  if (!c) return "";
  const cls = ["card", "k-" + c.kind, extraClass || ""];
  if (c.kind === "ingredient") {
    cls.push("c-" + c.colour, "p-" + c.pattern);
    return `<span class="${cls.join(" ")}" data-card="${esc(id)}">` +
      `<span class="band" aria-hidden="true">${esc(c.symbol)}</span>` +
      `<span class="val" aria-hidden="true">${c.value}</span>` +
      `<span class="fam">${esc(c.family)}</span>` +
      `<span class="col">${esc(c.symbol)} ${esc(c.colourName)}</span></span>`;
  }
  if (c.kind === "spell") {
    cls.push("s-" + c.spell);
    return `<span class="${cls.join(" ")}" data-card="${esc(id)}"><span class="band" aria-hidden="true">✦</span>` +
      `<span class="fam">${esc(c.family)}</span><span class="col">${esc(c.rule)}</span></span>`;
  }
  if (c.kind === "immuto") {
    return `<span class="${cls.join(" ")}" data-card="${esc(id)}"><span class="band" aria-hidden="true">∞</span>` +
      `<span class="val" aria-hidden="true">0</span><span class="fam">${esc(c.family)}</span></span>`;
  }
  return `<span class="${cls.join(" ")}" data-card="${esc(id)}"><span class="fam">${esc(c.family)}</span></span>`;
}

function colourName(colour) { const c = CAT.colours[colour]; return c ? `${c.name} ${c.symbol}` : colour; }

function seatLabel(seat, colour) {
  return colour ? t("seat_colour", { n: seat + 1, colour: colourName(colour) }) : t("seat_n", { n: seat + 1 });
}

/* The engine's texts number seats from 0 ("seat 0"); people see "Seat 1 (yellow ☀)". */
function humaniseSeats(text, seats) {
  return String(text || "").replace(/\b[Ss]eat (\d)\b/g, (m, n) => {
    const s = seats && seats[Number(n)];
    return seatLabel(Number(n), s && s.colour);
  });
}

function cellLabel(key) { const [r, c] = key.split(","); return t("cell", { r, c }); }

function lineLabel(line) { return line < 6 ? t("row", { n: line }) : t("column", { n: line - 6 }); }

/* ---- announcements (ARIA live regions + optional speech) ---- */
const SPEECH_KEY = "cauldron-speech";
function speechOn() { return localStorage.getItem(SPEECH_KEY) === "1"; }
function announce(text, assertive) {
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

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("speech-toggle");
  if (box) {
    box.checked = speechOn();
    box.addEventListener("change", () => localStorage.setItem(SPEECH_KEY, box.checked ? "1" : "0"));
  }
  // Keep the rest of the URL (e.g. a seat secret) when switching language.
  for (const a of document.querySelectorAll("a.lang-switch")) {
    const url = new URL(window.location.href);
    url.searchParams.set("lang", a.dataset.lang);
    a.href = url.pathname + url.search;
  }
});

/* ---- banners: hub/engine/broker offline, socket lost ---- */
function renderBanners(status, socketUp) {
  const el = document.getElementById("banners");
  if (!el) return;
  const items = [];
  if (!socketUp) items.push(["socket", t("connection_lost")]);
  if (status) {
    if (!status.broker) items.push(["broker", t("offline_broker")]);
    else {
      if (status.hub === "offline") items.push(["hub", t("offline_hub")]);
      if (status.engine === "offline") items.push(["engine", t("offline_engine")]);
      else if (status.engine_degraded) items.push(["degraded", t("engine_degraded") + " " + status.engine_degraded]);
    }
  }
  const html = items.map(([k, text]) => `<p class="banner" data-banner="${k}"><span aria-hidden="true">⚠</span> ${esc(text)}</p>`).join("");
  if (el.innerHTML !== html) el.innerHTML = html;
}

/* ---- a WebSocket that reconnects by itself ---- */
function liveSocket(path, onMessage, onState) {
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

/* ---- cheap updates: replace only the children whose HTML changed (less layout work) ---- */
function patchChildren(container, htmlList) {
  const kids = container.children;
  if (kids.length !== htmlList.length) {
    container.innerHTML = htmlList.join("");
    for (let i = 0; i < htmlList.length; i++) container.children[i]._html = htmlList[i];
    return;
  }
  for (let i = 0; i < htmlList.length; i++) {
    const html = htmlList[i];
    const kid = kids[i];
    if (kid._html === html) continue;
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    const node = tpl.content.firstElementChild;
    node._html = html;
    kid.replaceWith(node);
  }
}

function setHtml(el, html) {
  if (el._html !== html) { el.innerHTML = html; el._html = html; }
}

/* ---- focus survives re-rendering (keyboard play) ---- */
function keepFocus(render) {
  const active = document.activeElement;
  const key = active && active.dataset ? active.dataset.focus : null;
  render();
  if (key) {
    const again = document.querySelector(`[data-focus="${CSS.escape(key)}"]`);
    if (again && again !== document.activeElement) again.focus();
  }
}

/* ---- JSON API helper ---- */
async function api(method, path, body, headers) {
  const init = { method, headers: Object.assign({ "Accept": "application/json" }, headers || {}) };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    let detail = data && data.detail !== undefined ? data.detail : res.statusText;
    if (Array.isArray(detail)) detail = detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    const err = new Error(String(detail)); err.status = res.status; throw err;
  }
  return data;
}

/* ---- the score breakdown (score screen and table view) ---- */
function renderScores(container, scores, seats, end) {
  const winners = scores.winners.map((s) => seatLabel(s, seats[s] && seats[s].colour)).join(", ");
  let html = `<h2>${esc(t("game_over"))}</h2><p class="winners">★ ${esc(t("winners", { names: winners }))}</p>`;
  if (end && end.reason) html += `<p class="reason">${esc(t("end_reason_" + end.reason))}</p>`;
  html += `<div class="score-grid">`;
  const sorted = [...scores.seats].sort((a, b) => b.total - a.total);
  for (const s of sorted) {
    const win = scores.winners.includes(s.seat);
    html += `<article class="score-seat${win ? " winner" : ""}" data-seat="${s.seat}">` +
      `<h3>${win ? "★ " : ""}${esc(seatLabel(s.seat, s.colour))} — ${esc(t("total"))}: <span class="total">${s.total}</span></h3>` +
      `<table><thead><tr><th scope="col">${esc(t("family"))}</th><th scope="col">${esc(t("cards"))}</th><th scope="col">${esc(t("points"))}</th></tr></thead><tbody>`;
    const fams = [...s.families].sort((a, b) => b.points - a.points || a.family.localeCompare(b.family));
    for (const f of fams) {
      const cards = f.cards.map((c) => `<span class="mini">${esc(cardLabel(c))}</span>`).join(" ") +
        f.immutos.map((c) => ` <span class="mini immuto">${esc(CAT.immuto)} (0)</span>`).join("");
      const notes = [];
      if (f.doubled) notes.push(t("doubled"));
      if (f.bonus) notes.push(t("bonus5"));
      const colour = CAT.colours[f.colour];
      let how = `${t("cards_n", { n: f.counted })}: ${f.base}`;
      if (f.doubled) how += ` × 2`;
      if (f.bonus) how += ` + ${f.bonus}`;
      how += ` = ${f.points}`;
      html += `<tr><th scope="row"><span class="swatch c-${esc(f.colour)}" aria-hidden="true">${esc(colour ? colour.symbol : "")}</span> ${esc(CAT.families[f.family] || f.family)}<br><small>${esc(colourName(f.colour))}</small></th>` +
        `<td>${cards}<br><small>${esc(how)}${notes.length ? " (" + esc(notes.join(" · ")) + ")" : ""}</small></td><td class="pts">${f.points}</td></tr>`;
    }
    html += `</tbody><tfoot><tr><th scope="row">${esc(t("ingredients"))}</th><td></td><td class="pts">${s.ingredient_points}</td></tr>`;
    for (const [imm, fam] of Object.entries(s.immuto_assignment || {})) {
      html += `<tr><td colspan="3">${esc(t("immuto_to", { immuto: CAT.immuto, family: CAT.families[fam] || fam }))}</td></tr>`;
    }
    for (const r of s.recipes || []) {
      const name = CAT.recipes[r.recipe];
      const label = r.recipe.startsWith("A-") ? `${t("recipes")} A: ${colourName(name)}` : `${t("recipes")} B: ${name}`;
      html += `<tr><th scope="row">${esc(label)}</th><td>${esc(r.achieved ? t("recipe_yes") : t("recipe_no"))} — ${esc(r.reason)}</td><td class="pts">${r.points}</td></tr>`;
    }
    if (s.second_player_bonus) html += `<tr><th scope="row">${esc(t("second_bonus"))}</th><td></td><td class="pts">${s.second_player_bonus}</td></tr>`;
    html += `<tr class="grand"><th scope="row">${esc(t("total"))}</th><td></td><td class="pts">${s.total}</td></tr></tfoot></table></article>`;
  }
  html += `</div>`;
  container.innerHTML = html;
}
