/* Enrolment from the host page: asks the running hub to enrol (POST /api/host/enrol) and
   shows what it says. Kept apart from host.js; it only reads the PIN the host page stored. */
"use strict";
(function () {
  const box = document.getElementById("enrol-controls");
  if (!box) return;
  const pinNow = () => sessionStorage.getItem("cauldron-host-pin") || "";
  box.innerHTML =
    `<label for="enrol-seat">${esc(t("enrol_pad"))}</label>` +
    `<select id="enrol-seat">${[1, 2, 3, 4].map((n) => `<option value="${n}">${esc(t("seat_n", { n }))}</option>`).join("")}</select>` +
    [["start", t("enrol_start")], ["undo", t("enrol_undo")], ["skip", t("enrol_skip")], ["stop", t("enrol_stop")]]
      // Undo / skip / stop mean something only while an enrolment runs.
      .map(([a, label]) => `<button type="button" class="btn" data-enrol="${a}"${a === "start" ? "" : " disabled"}>${esc(label)}</button>`).join("") +
    `<p id="enrol-said" role="status"></p>`;
  const said = document.getElementById("enrol-said");
  box.addEventListener("click", async (ev) => {
    const action = ev.target instanceof Element ? ev.target.getAttribute("data-enrol") : null;
    if (!action) return;
    const body = { action };
    if (action === "start") body.seat = Number(document.getElementById("enrol-seat").value);
    try {
      const res = await api("POST", "/api/host/enrol", body, { "X-Host-Pin": pinNow() });
      said.textContent = res && res.data ? enrolWords(res.data.said, res.data.message) : "";
      said.classList.remove("error");
    } catch (e) {
      said.textContent = refusalText(e);
      said.classList.add("error");
    }
  });
  async function follow() {
    if (pinNow()) {
      try {
        const en = await api("GET", "/api/host/enrolment", undefined, { "X-Host-Pin": pinNow() });
        if (en && en.message && !said.classList.contains("error")) said.textContent = enrolWords(en.said, en.message);
        for (const b of box.querySelectorAll("[data-enrol]")) if (b.dataset.enrol !== "start") b.disabled = !(en && en.active);
      } catch (e) { /* the host page shows the connection problems */ }
    }
    setTimeout(follow, 1000);
  }
  follow();
})();
