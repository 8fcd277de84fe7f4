/* For the pages still written as plain scripts (score-only mode, enrolment): the shared
   helpers of core.js and scoring.js as globals. Load it as a module before them. */
import * as core from "./core.js";
import { scoresHtml } from "/games/glastonbury/static/glastonbury-scoring.js";

Object.assign(globalThis, core, {
  renderScores(container, scores, seats, end) { container.innerHTML = scoresHtml(scores, seats, end); },
});
