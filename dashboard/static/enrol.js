/* Enrolment from the host page: asks the running hub to enrol (POST /api/host/enrol) and
   shows what it says; and a spare at any time, a game running or not: a lost piece's new
   tag, tapped on a pad. Its words and piece names are those of the hub's game (its page
   catalogue among BOOT.games), which may not be the page's. Kept apart from host.js; it
   only reads the PIN the host page stored. */
import { CAT, api, catalogueOf, enrolWords, esc, gameT, gameTn, refusalText, t } from "./core.js";

const box = document.getElementById("enrol-controls");
const pinNow = () => sessionStorage.getItem("cauldron-host-pin") || "";
let cat = null;  // the page catalogue the controls are worded for (the hub's game's)
let said = null;

/* The controls in the words of catalogue `next`, the choices kept. */
function draw(next) {
  cat = next;
  const seat = document.getElementById("enrol-seat");
  const piece = document.getElementById("enrol-spare-piece");
  const spareBox = /** @type {HTMLDetailsElement | null} */ (document.querySelector("#enrol-controls details.enrol-spare"));
  const before = { seat: seat ? seat.value : "1", piece: piece ? piece.value : "", open: !!spareBox && spareBox.open, text: said ? said.textContent : "", error: !!said && said.classList.contains("error") };
  const w = (key) => esc(gameT(key, undefined, cat));
  box.innerHTML =
    `<label for="enrol-seat">${w("enrol_pad")}</label>` +
    `<select id="enrol-seat">${[1, 2, 3, 4].map((n) => `<option value="${n}">${esc(t("seat_n", { n }))}</option>`).join("")}</select>` +
    [["start", "enrol_start"], ["undo", "enrol_undo"], ["skip", "enrol_skip"], ["stop", "enrol_stop"]]
      // Undo / skip / stop mean something only while an enrolment runs.
      .map(([a, key]) => `<button type="button" class="btn" data-enrol="${a}"${a === "start" ? "" : " disabled"}>${w(key)}</button>`).join("") +
    // A spare is now and then: folded, so the host page still fits a 1080p screen.
    `<details class="enrol-spare"${before.open ? " open" : ""}><summary>${w("enrol_spare")}</summary>` +
    `<label for="enrol-spare-piece">${w("enrol_spare_piece")}</label>` +
    `<select id="enrol-spare-piece">${(cat.spares || []).map((s) => `<option value="${esc(s.id)}">${esc(s.name)}</option>`).join("")}</select>` +
    `<button type="button" class="btn" data-enrol="spare">${w("enrol_spare")}</button></details>` +
    `<p id="enrol-spares" role="status"></p><p id="enrol-said" role="status"></p>`;
  document.getElementById("enrol-seat").value = before.seat;
  const pieces = document.getElementById("enrol-spare-piece");
  if ((cat.spares || []).some((s) => s.id === before.piece)) pieces.value = before.piece;
  said = document.getElementById("enrol-said");
  said.textContent = before.text;
  said.classList.toggle("error", before.error);
}

if (box) {
  draw(CAT);
  box.addEventListener("click", async (ev) => {
    const action = ev.target instanceof Element ? ev.target.getAttribute("data-enrol") : null;
    if (!action) return;
    const body = { action };
    if (action === "start" || action === "spare") body.seat = Number(document.getElementById("enrol-seat").value);
    if (action === "spare") body.piece = document.getElementById("enrol-spare-piece").value;
    try {
      const res = await api("POST", "/api/host/enrol", body, { "X-Host-Pin": pinNow() });
      said.textContent = res && res.data ? enrolWords(res.data.said, res.data.message, cat) : "";
      said.classList.remove("error");
    } catch (e) {
      said.textContent = refusalText(e);
      said.classList.add("error");
    }
  });
  follow();
}

async function follow() {
  if (pinNow()) {
    try {
      const en = await api("GET", "/api/host/enrolment", undefined, { "X-Host-Pin": pinNow() });
      const hubs = catalogueOf(en && en.game);
      if (hubs !== cat) draw(hubs);
      if (en && en.message && !said.classList.contains("error")) said.textContent = enrolWords(en.said, en.message, cat);
      const running = !!(en && en.active);
      for (const b of box.querySelectorAll("[data-enrol]")) {
        const a = b.dataset.enrol;
        // A spare waiting: Stop (or another spare); enrolling: no spare (one pad at a time).
        if (a !== "start") b.disabled = a === "spare" ? running && !en.spare : !running || (!!en.spare && a !== "stop");
      }
      const spares = document.getElementById("enrol-spares");
      const text = en && en.spares ? gameTn("enrol_spares_n", en.spares, {}, cat) : "";
      if (spares.textContent !== text) spares.textContent = text;
    } catch (e) { /* the host page shows the connection problems */ }
  }
  setTimeout(follow, 1000);
}
