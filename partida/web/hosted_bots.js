// Your hosted bots (/#/bots): the bots the server runs for you (docs/hosted-bots.md). Lists them
// (`bot_list`) with their versions, submits a .zip or .tar(.gz) as the next version
// (`bot_submit`, then the file in chunks with `bot_upload`), activates a version, withdraws a bot,
// and shows its log (`bot_logs`: verdicts with the tail of its stderr). Everything a bot's
// program printed is shown as text, never as HTML.

import { clear, h } from "./dom.js";
import { sha256Hex } from "./sha256.js";

export async function showHostedBots(main, conn, you, games, say) {
  if (!you || you.kind !== "user") {
    clear(main, h("section.card", { id: "hosted-bots" }, h("h2", {}, "Your hosted bots"), h("p.muted", {}, "Enter with an account (a name and a password) to submit bots for the server to run.")));
    return;
  }
  const list = h("div", { id: "hosted-list" });
  const log = h("div", { id: "hosted-log" });
  const refresh = async () => {
    const reply = await conn.request("bot_list");
    drawList(list, reply.bots, { conn, log, refresh, say });
    return reply;
  };
  const reply = await refresh();
  const form = reply.hosting ? submitForm(conn, games, refresh, say) : h("p.muted", { id: "hosted-off" }, "This server takes no submissions (its operator has not turned hosting on).");
  clear(main, h("section.card", { id: "hosted-bots" }, h("h2", {}, "Your hosted bots"), list, form, log));
}

function drawList(container, bots, ctx) {
  if (!bots.length) return clear(container, h("p.muted", {}, "You have no hosted bots yet."));
  clear(
    container,
    h(
      "table.standings",
      {},
      h("thead", {}, h("tr", {}, ["bot", "state", "version", "games", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, bots.map((bot) => botRow(bot, ctx))),
    ),
  );
}

function botRow(bot, ctx) {
  const state = bot.status === "active" ? "active" : `${bot.status}${bot.reason ? `: ${bot.reason}` : ""}`;
  const act = (type, fields) => async () => {
    try {
      await ctx.conn.request(type, { name: bot.name, ...fields });
      await ctx.refresh();
    } catch (error) {
      ctx.say(error.message, "error");
    }
  };
  const versions = h(
    "select",
    { class: "hosted-version" },
    bot.versions.map((v) => h("option", { value: v.version, selected: v.version === bot.active_version }, `v${v.version}: ${v.run} (${v.games.join(", ")})`)),
  );
  return h(
    "tr",
    { dataset: { bot: bot.name, status: bot.status } },
    h("td", {}, bot.name),
    h("td.hosted-state", {}, state),
    h("td", {}, versions),
    h("td", {}, bot.games.join(", ")),
    h(
      "td",
      {},
      h("button.hosted-activate", { onclick: () => act("bot_activate", { version: Number(versions.value) })() }, "Activate"),
      h("button.hosted-withdraw", { onclick: act("bot_withdraw", {}), disabled: bot.status === "withdrawn" }, "Withdraw"),
      h("button.hosted-logs", { onclick: () => showLogs(ctx.log, ctx.conn, bot.name).catch((error) => ctx.say(error.message, "error")) }, "Log"),
    ),
  );
}

async function showLogs(container, conn, name) {
  const reply = await conn.request("bot_logs", { name });
  const entries = reply.logs.map((entry) =>
    h(
      "li",
      { dataset: { verdict: entry.verdict } },
      h("strong", {}, entry.verdict),
      ` v${entry.version ?? "?"}${entry.game_id !== null ? `, game ${entry.game_id}` : ""}: ${entry.detail}`,
      entry.stderr_tail.length ? h("pre.stderr", {}, entry.stderr_tail.join("\n")) : null,
    ),
  );
  const played = reply.games.map((g) =>
    h("li", {}, `game ${g.game_id} (${g.game}), seat ${g.seat}, v${g.version ?? "?"}: ${g.rank !== null ? `place ${g.rank}` : g.status}${g.note ? ` (${g.note})` : ""}`),
  );
  clear(
    container,
    h("h3", {}, `Log of ${name}`),
    entries.length ? h("ul", { id: "hosted-entries" }, entries) : h("p.muted", {}, "Nothing logged: no verdict, nothing on stderr."),
    h("h3", {}, "Latest games"),
    played.length ? h("ul", { id: "hosted-games" }, played) : h("p.muted", {}, "No games yet."),
  );
}

function submitForm(conn, games, refresh, say) {
  const name = h("input", { id: "hosted-name", placeholder: "the bot's name", maxlength: 64, required: true });
  const run = h("input", { id: "hosted-run", placeholder: "python3 bot.py", maxlength: 1000, required: true });
  const which = h("select", { id: "hosted-games", multiple: true, required: true }, [...games.values()].map((g) => h("option", { value: g.name }, g.title || g.name)));
  const file = h("input", { id: "hosted-file", type: "file", accept: ".zip,.tar,.tgz,.tar.gz", required: true });
  const status = h("p.muted", { id: "hosted-status" });
  return h(
    "form",
    {
      id: "hosted-submit",
      onsubmit: async (event) => {
        event.preventDefault();
        const chosen = [...which.selectedOptions].map((o) => o.value);
        if (!file.files.length || !chosen.length) return;
        try {
          const bytes = new Uint8Array(await file.files[0].arrayBuffer());
          status.textContent = "uploading…";
          const done = await submit(conn, name.value.trim(), chosen, run.value.trim(), bytes, (sent) => {
            status.textContent = `uploading… ${Math.round((100 * sent) / bytes.length)}%`;
          });
          status.textContent = `${done.bot.name}: version ${done.version} submitted and playing.`;
          await refresh();
        } catch (error) {
          status.textContent = "";
          say(error.message, "error");
        }
      },
    },
    h("h3", {}, "Submit a version"),
    h("label", { for: "hosted-name" }, "Bot"),
    name,
    h("label", { for: "hosted-run" }, "Command run in its directory"),
    run,
    h("label", { for: "hosted-games" }, "Games it plays"),
    which,
    h("label", { for: "hosted-file" }, "Its files (.zip, .tar, .tar.gz; at most 16 MiB)"),
    file,
    h("button.primary", { type: "submit", id: "hosted-send" }, "Submit"),
    status,
  );
}

async function digest(bytes) {
  if (!globalThis.crypto || !crypto.subtle) return sha256Hex(bytes);
  const hash = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(text);
}

// The upload in the chunks the server asks for; a chunk refused for the rate is sent again
// once the server says.
async function submit(conn, name, games, run, bytes, progress) {
  const ready = await conn.request("bot_submit", { name, games, run, size: bytes.length, sha256: await digest(bytes) });
  let reply = ready;
  for (let offset = 0; offset < bytes.length; offset += ready.chunk) {
    const data = base64(bytes.subarray(offset, offset + ready.chunk));
    for (;;) {
      try {
        reply = await conn.request("bot_upload", { upload: ready.upload, offset, data });
        break;
      } catch (error) {
        if (error.retryAfter === null || error.retryAfter === undefined) throw error;
        await new Promise((resolve) => setTimeout(resolve, error.retryAfter * 1000));
      }
    }
    progress(Math.min(offset + ready.chunk, bytes.length));
  }
  return reply;
}
