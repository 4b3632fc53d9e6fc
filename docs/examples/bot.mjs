// A Partida bot in JavaScript, for Node 20 or later (partida/protocol/README.md, "Quick start").
//
//   npm install ws                      (Node before 22 has no WebSocket of its own)
//   PARTIDA_BOT_TOKEN=TOKEN node bot.mjs
//
// PARTIDA_SERVER says where to connect (default ws://127.0.0.1:8765). `partida match GAME
// --seat-cmd "node bot.mjs" --seat random` sets both and plays it against a built-in bot.
// It answers every decision of every room it is seated in, in any game, with a random answer
// of the prompt's kind, and connects again whenever the connection ends.
import WebSocket from "ws";

const server = process.env.PARTIDA_SERVER ?? "ws://127.0.0.1:8765";
const hello = { type: "hello", version: 2, token: process.env.PARTIDA_BOT_TOKEN, agent: "tiny-js" };

const pick = (list) => list[Math.floor(Math.random() * list.length)];

function shuffled(list) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// One answer to a decision, by the prompt's kind (the guide's "Prompts" table).
function answer(decision) {
  switch (decision.kind) {
    case "choose_one":
      return pick(decision.options);
    case "choose_subset": {
      const size = decision.min + Math.floor(Math.random() * (decision.max - decision.min + 1));
      return shuffled(decision.candidates).slice(0, size);
    }
    case "assign": {
      // targets[i] is the list of the targets sources[i] may take: an answer is [source, target] pairs
      const pairs = [];
      decision.sources.forEach((source, i) => {
        const allowed = decision.targets[i];
        if (allowed.length > 0 && (decision.required || Math.random() < 0.5)) pairs.push([source, pick(allowed)]);
      });
      return pairs;
    }
    case "order":
      return shuffled(decision.items);
    default:
      throw new Error(`a prompt kind this bot does not know: ${decision.kind}`);
  }
}

let nextId = 1;

function play() {
  const ws = new WebSocket(server);
  const asked = new Map(); // the id of each `act` sent -> the update it answers

  const act = (update) => {
    const id = nextId++;
    asked.set(id, update);
    const seat = update.seat; // needed only when one connection holds several seats of a room
    ws.send(JSON.stringify({ type: "act", id, room: update.room, seat, action: answer(update.decision), seq: update.seq }));
  };

  ws.on("open", () => ws.send(JSON.stringify(hello)));
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.type === "update" && msg.decision) {
      act(msg);
    } else if (msg.type === "acted") {
      asked.delete(msg.id);
    } else if (msg.type === "error") {
      const update = asked.get(msg.id);
      asked.delete(msg.id);
      // the rules refused this answer (a prompt's own checks are not all of them): try another
      if (update && msg.code === "illegal_action") act(update);
      else console.error(`server error ${msg.code}: ${msg.message}`);
      if (msg.code === "auth_failed") process.exit(1); // a wrong token stays wrong: do not try again
    }
  });
  ws.on("error", (err) => console.error(`connection: ${err.message}`));
  ws.on("close", (code) => {
    if (code === 1008) console.error("closed by the server (1008): a wrong token, or too many requests");
    setTimeout(play, 2000); // the same hello again: the server seats the bot again in its games
  });
}

if (!hello.token) {
  console.error("set PARTIDA_BOT_TOKEN to a bot account's token (partida db create-bot NAME)");
  process.exit(2);
}
play();
