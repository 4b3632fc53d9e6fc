// Takebacks and export in the browser, as docs/protocol.md documents them: the Takeback button
// of a casual room (its summary's `takebacks`), the other seat's Accept / Decline, the move list
// marking what a takeback undid, and the replay's Download of a stored game as a file.

import { h } from "./dom.js";

// The room's takeback controls for a seated player while the game goes on, or null.
export function takebackControls(room, update, send, seatName) {
  const seated = room.seat !== null && room.seat !== undefined;
  if (!seated || !update || update.status !== "playing" || !room.summary.takebacks) return null;
  const offer = update.takeback_offer;
  if (offer !== null && offer !== undefined && offer !== room.seat) {
    return h(
      "div.controls.takeback",
      { id: "takeback-controls" },
      h("span.offer", { id: "takeback-offer" }, `${seatName(offer)} asks to take back a move: `),
      h("button.primary", { type: "button", id: "accept-takeback", onclick: () => send("takeback_accept") }, "Accept"),
      h("button", { type: "button", id: "decline-takeback", onclick: () => send("takeback_decline") }, "Decline"),
    );
  }
  if (offer === room.seat) return h("div.controls.takeback", { id: "takeback-controls" }, h("span.muted", { id: "takeback-asked" }, "You asked to take back your move."));
  return h("div.controls.takeback", { id: "takeback-controls" }, h("button", { type: "button", id: "takeback", onclick: () => send("takeback_offer") }, "Takeback"));
}

// The words of a `last` (or a replay's log entry) that is a takeback, after the asker's name.
export function isTakeback(last) {
  return !!last && (last.takeback !== undefined || last.seat === -1);
}

// A takeback in words, after its asker's name (a live game's log holds only its action).
export function takebackWords(entry) {
  if (entry.text) return entry.text;
  const count = (entry.action && entry.action.takeback) || entry.takeback || 1;
  return count === 1 ? "takes back a move" : `takes back ${count} moves`;
}

// The positions in a stored game's `log` of the moves a later takeback undid: marked by the
// server in a finished game's log (`taken_back`), worked out here from a live game's actions.
export function takenBackIndexes(log) {
  const undone = new Set();
  const standing = [];
  log.forEach((entry, i) => {
    if (entry.taken_back) undone.add(i);
    if (!isTakeback(entry)) return standing.push(i);
    const count = (entry.action && entry.action.takeback) || 0;
    for (const position of standing.splice(Math.max(0, standing.length - count))) undone.add(position);
  });
  return undone;
}

// Ask the server for a stored game as a file and hand it to the browser as a download.
export async function download(conn, gameId, format) {
  const reply = await conn.request("export", { game_id: gameId, format });
  const type = format === "json" ? "application/json" : "text/plain";
  const url = URL.createObjectURL(new Blob([reply.content], { type: `${type};charset=utf-8` }));
  const link = h("a", { href: url, download: reply.filename, hidden: true });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// The replay's Download buttons: the game's text record (Othello: GGF) and the replay's JSON.
export function downloadButtons(conn, gameId, say) {
  const button = (format, id, label) =>
    h("button", { type: "button", id, onclick: () => download(conn, gameId, format).catch((error) => say(error.message)) }, label);
  return h("span.downloads", {}, button("text", "download-text", "Download"), button("json", "download-json", "JSON"));
}
