// Chat: a room's channels, a tournament's, and a replay's lines (docs/protocol.md, "Chat").
//
// Every line is other people's text: it goes into the page as text nodes only (dom.js `h`),
// never as HTML. Muting is this browser's: the muted names are kept in localStorage, their lines
// hidden in every view here (a guest can mute too, and the muted person is told nothing).

import { h, clear } from "./dom.js";

export const MAX_CHARS = 300; // the server's cap (partida/room/chat.py)
const MUTED_KEY = "partida.muted";
const CHANNEL_WORDS = { players: "players", spectators: "spectators", tournament: "" };

export function mutedNames() {
  try {
    const names = JSON.parse(localStorage.getItem(MUTED_KEY) || "[]");
    return new Set(Array.isArray(names) ? names.filter((n) => typeof n === "string") : []);
  } catch {
    return new Set();
  }
}

function saveMuted(names) {
  localStorage.setItem(MUTED_KEY, JSON.stringify([...names].slice(-500)));
}

// One chat box. `place`: {room: CODE} or {tournament: NAME}; `you`: this browser's name (its own
// lines offer no mute); `post`: whether this view may say anything (a replay may not); `note`: who
// reads what, in words; `say(text, kind)`: the page's status line.
export class ChatPanel {
  constructor({ conn, place, you, post = true, note = "", say = () => {} }) {
    this.conn = conn;
    this.place = place;
    this.you = you;
    this.say = say;
    this.lines = new Map(); // id -> line, in the order said
    this.muted = mutedNames();
    this.list = h("ol.chat-lines", { id: "chat-lines", "aria-live": "polite" });
    this.mutedNote = h("p.chat-muted.muted", { id: "chat-muted" });
    this.noteEl = h("p.chat-note.muted", { id: "chat-note" }, note);
    this.counter = h("small.chat-count.muted", {}, `0/${MAX_CHARS}`);
    this.input = h("input", {
      id: "chat-input",
      type: "text",
      maxlength: MAX_CHARS,
      autocomplete: "off",
      placeholder: "Say something…",
      "aria-label": "Chat message",
      oninput: () => (this.counter.textContent = `${this.input.value.length}/${MAX_CHARS}`),
    });
    this.form = post
      ? h(
          "form.chat-form",
          { id: "chat-form", onsubmit: (event) => (event.preventDefault(), this.send()) },
          this.input,
          h("button", { type: "submit", id: "chat-send" }, "Send"),
          this.counter,
        )
      : null;
    this.element = h("section.chat", { id: "chat" }, h("h3", {}, "Chat"), this.noteEl, this.list, this.mutedNote, this.form);
    this.hadFocus = false;
    this.input.addEventListener("focus", () => (this.hadFocus = true));
    this.input.addEventListener("blur", () => {
      if (this.input.isConnected) this.hadFocus = false; // a blur by a redraw keeps it
    });
  }

  setNote(text) {
    this.noteEl.textContent = text;
  }

  // Put the box into a freshly drawn view; the line being typed, and the focus, stay.
  mount(parent) {
    parent.append(this.element);
    if (this.hadFocus && document.activeElement !== this.input) {
      this.input.focus();
      const end = this.input.value.length;
      this.input.setSelectionRange(end, end);
    }
    this.list.scrollTop = this.list.scrollHeight;
  }

  mine(message) {
    if (this.place.room) return message.room === this.place.room;
    return this.place.tournament !== undefined && message.tournament === this.place.tournament;
  }

  // A `chat`, `chat_history` or `chat_removed` push: true when it was this box's.
  onPush(message) {
    if (!this.mine(message)) return false;
    if (message.type === "chat") this.add([message.message]);
    else if (message.type === "chat_history") this.add(message.messages || []);
    else if (message.type === "chat_removed") {
      this.lines.delete(message.id);
      this.draw();
    }
    return true;
  }

  add(lines) {
    for (const line of lines) if (line && typeof line.id === "number") this.lines.set(line.id, line);
    if (lines.length) {
      const sorted = [...this.lines.values()].sort((a, b) => a.id - b.id).slice(-200);
      this.lines = new Map(sorted.map((line) => [line.id, line]));
    }
    this.draw();
  }

  async send() {
    const text = this.input.value.trim();
    if (!text) return;
    try {
      const reply = await this.conn.request("chat", { ...this.place, text });
      this.input.value = "";
      this.counter.textContent = `0/${MAX_CHARS}`;
      this.add([reply.message]);
    } catch (error) {
      this.say(error.message, "error"); // a rate limit's says how long to wait
    }
  }

  toggleMute(name) {
    this.muted = mutedNames(); // another tab may have changed it
    if (this.muted.has(name)) this.muted.delete(name);
    else this.muted.add(name);
    saveMuted(this.muted);
    this.draw();
  }

  draw() {
    const both = new Set([...this.lines.values()].map((line) => line.channel)).size > 1;
    const shown = [...this.lines.values()].filter((line) => !this.muted.has(line.name));
    clear(
      this.list,
      shown.length ? null : h("li.muted.chat-empty", {}, "No messages yet."),
      shown.map((line) => chatLine(line, { both, you: this.you, mute: (name) => this.toggleMute(name) })),
    );
    const hidden = [...this.muted].filter((name) => [...this.lines.values()].some((line) => line.name === name));
    clear(
      this.mutedNote,
      hidden.length
        ? [
            "Muted here: ",
            hidden.map((name) => h("button.link.unmute", { type: "button", dataset: { name }, onclick: () => this.toggleMute(name) }, `${name} (unmute)`)),
          ]
        : null,
    );
    this.list.scrollTop = this.list.scrollHeight;
  }
}

function chatLine(line, { both, you, mute }) {
  const channel = CHANNEL_WORDS[line.channel] || "";
  return h(
    "li.chat-line",
    { dataset: { id: line.id, channel: line.channel, name: line.name } },
    both && channel ? h("small.chat-channel.muted", {}, `${channel} `) : null,
    h("b.chat-name", { class: line.kind === "bot" ? "bot" : "" }, line.name),
    line.kind === "guest" ? h("small.muted", {}, " (guest)") : null,
    ": ",
    h("span.chat-text", {}, line.text),
    mute && line.name !== you
      ? h("button.link.mute", { type: "button", title: `Hide ${line.name}'s messages in this browser`, onclick: () => mute(line.name) }, "mute")
      : null,
  );
}

// Who reads what in a room, in words (partida/room/chat.py's rule).
export function roomChatNote(player, over) {
  if (over) return "The game is over: players and spectators read both channels.";
  if (player) return "Players' chat: spectators read it too. Theirs opens to you when the game is over.";
  return "You read the players. Your messages reach only the other spectators until the game is over.";
}

// A replay's chat, read only: the record's lines (both channels once the game is over).
export function replayChat(lines, you) {
  const panel = new ChatPanel({ conn: null, place: {}, you, post: false, note: "What was said during the game." });
  panel.add(lines || []);
  return panel;
}
