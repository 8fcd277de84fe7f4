/* The virtual table (/virtual): a game that offers one (its fragment's `startVirtual`)
   plays it here with the simulated hub; the page is served only then (routers/pages.py). */
import { gameHooks } from "./core.js";

const GAME = await gameHooks();
if (GAME.startVirtual) GAME.startVirtual();
