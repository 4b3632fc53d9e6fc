// The Partida protocol (docs/protocol.md) over a browser websocket, as JSON text frames.
//
// Only documented messages are sent. Seeds exceed 2^53, so a `seed` number is read from the
// frame's own text (never through a float): a seed always reaches the page as a decimal string,
// whether the server sends it as a number or as a string.

import { sha256Hex } from "./sha256.js";

const BIG_SEED = /"seed"\s*:\s*(-?\d+)/g;

export function parseFrame(text) {
  return JSON.parse(text.replace(BIG_SEED, '"seed":"$1"'));
}

export class Connection {
  constructor(url) {
    this.url = url;
    this.ws = null;
    this.nextId = 1;
    this.waiting = new Map(); // request id -> {resolve, reject}
    this.onPush = () => {}; // messages without an id (updates, room changes, game_over)
    this.onState = () => {}; // "open" | "closed"
  }

  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this.onState("open");
        resolve();
      };
      ws.onmessage = (event) => this.receive(event.data);
      ws.onclose = () => {
        for (const { reject: fail } of this.waiting.values()) fail(new ProtocolError("closed", "the connection closed"));
        this.waiting.clear();
        if (this.ws === ws) this.ws = null;
        if (!opened) reject(new ProtocolError("closed", "could not connect"));
        else this.onState("closed");
      };
    });
  }

  close() {
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.onclose = null;
      ws.close();
    }
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  receive(text) {
    let message;
    try {
      message = parseFrame(text);
    } catch {
      return;
    }
    const pending = message.id !== undefined ? this.waiting.get(message.id) : undefined;
    if (pending) {
      this.waiting.delete(message.id);
      if (message.type === "error") pending.reject(new ProtocolError(message.code, message.message, message));
      else pending.resolve(message);
      return;
    }
    this.onPush(message);
  }

  // Send a request and wait for its reply (or its error, as a rejected ProtocolError).
  request(type, fields = {}) {
    if (!this.connected) return Promise.reject(new ProtocolError("closed", "not connected"));
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.ws.send(JSON.stringify({ type, id, ...fields }));
    return promise;
  }
}

export class ProtocolError extends Error {
  constructor(code, message, details = {}) {
    const wait = typeof details.retry_after === "number" && details.retry_after >= 0 ? details.retry_after : null;
    super(wait === null ? message : `${message} (try again in ${Math.ceil(wait)} s)`);
    this.code = code;
    this.url = details.url; // `moved`: the node that has the room
    this.retryAfter = wait; // seconds until the same request is let through (a rate limit), or null
  }
}

// The hash every room publishes: hex SHA-256 of "partida-seed:" + the decimal seed. The
// browser's own SHA-256 where it offers one (https, localhost), the bundled one elsewhere.
export async function seedHash(seed) {
  const digits = BigInt(String(seed)).toString(); // exact for any size of seed
  const bytes = new TextEncoder().encode(`partida-seed:${digits}`);
  if (!globalThis.crypto || !crypto.subtle) return sha256Hex(bytes);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
