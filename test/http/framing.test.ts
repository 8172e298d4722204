// Issue 35 item 3 (D31): `Content-Length` given twice with the same value passed the 2 MiB body
// limit: the runtime joins the two into "3000000, 3000000", which read as no number, so the body
// was read whole (60 MB: an RSS of 718 MB) and parsed. Sent over a real socket, as an attacker
// would: ambiguous framing is 400 before any byte of the body is read, and every body is counted
// as it is read, whatever its header said.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { AMBIGUOUS_LENGTH_MESSAGE } from "../../src/http/body-limit";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { testConfig } from "../helpers";

const LIMIT = 2 * 1024 * 1024;
let running: Running;
let port: number;

beforeAll(async () => {
  running = await startServer(testConfig({ CORPUS_PORT: "0" }), createLogger("ERROR", memorySink().sink));
  port = running.server.port!;
});

afterAll(async () => {
  await running?.stop();
});

interface Exchange {
  /** The status of the first response. */
  status: number;
  body: string;
  /** Body bytes the client had written when the response came. */
  sentBeforeAnswer: number;
}

/**
 * Writes `head` raw, then `body` in 64 KiB pieces (as many as `pieces`, each waiting for the
 * socket to drain) until the server answers; resolves with the answer and what was sent by then.
 */
function exchange(head: string, pieces: number, piece: (i: number) => Uint8Array): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let sent = 0;
    let answered = false;
    let text = "";
    socket.on("error", (error) => (answered ? undefined : reject(error)));
    socket.on("data", (data) => {
      text += data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      if (!answered) {
        answered = true;
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(end + 4, end + 4 + length), sentBeforeAnswer: sent });
      }
      socket.destroy();
    });
    socket.on("connect", async () => {
      socket.write(head);
      for (let i = 0; i < pieces && !answered; i++) {
        const bytes = piece(i);
        sent += bytes.length;
        if (!socket.write(bytes)) await new Promise<void>((r) => socket.once("drain", () => r()));
      }
    });
  });
}

const PIECE = 64 * 1024;
const filler = new Uint8Array(PIECE).fill(0x61);

describe("request framing and the body limit (D31)", () => {
  test("Content-Length given twice with the same value (3 MB and 60 MB declared): 400 before any of the body is read", async () => {
    for (const length of [3_000_000, 60_000_000]) {
      const head = `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nContent-Length: ${length}\r\n\r\n`;
      // The client sends no body until it has its answer: the answer cannot have waited for one.
      const r = await exchange(head, 0, () => filler);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ type: "bad_request", message: AMBIGUOUS_LENGTH_MESSAGE });
      expect(r.sentBeforeAnswer).toBe(0);
    }
  });

  test("a chunked body without end is cut off with 413 soon after the limit, not read whole", async () => {
    const head = "POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    const chunk = (i: number) => {
      const data = i === 0 ? new TextEncoder().encode(`{"query":"${"a".repeat(PIECE - 10)}`) : filler;
      const size = new TextEncoder().encode(`${data.length.toString(16)}\r\n`);
      const out = new Uint8Array(size.length + data.length + 2);
      out.set(size);
      out.set(data, size.length);
      out.set([13, 10], size.length + data.length);
      return out;
    };
    // Up to 256 MiB offered: the answer comes once the limit is passed (and whatever the socket
    // buffers hold meanwhile), never after the whole of it.
    const r = await exchange(head, 4096, chunk);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ type: "payload_too_large", message: `request body exceeds the limit of ${LIMIT} bytes` });
    expect(r.sentBeforeAnswer).toBeLessThan(64 * 1024 * 1024);
  });
});
