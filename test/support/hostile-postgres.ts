// A hostile "PostgreSQL server" on loopback that speaks just enough of the protocol: it
// records each startup message and password, then either closes right after authentication
// (the endless-reconnect case) or fails the login. Connections are counted.
import net from "node:net";
import { listening } from "./tcp";

export type HostileMode = "close-after-auth" | "ask-password" | "accept-and-close" | "silent";

export interface HostilePostgres {
  port: number;
  connections: number;
  startups: Array<Record<string, string>>;
  passwords: string[];
  close(): Promise<void>;
}

const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const fields = (pairs: Record<string, string>) =>
  Buffer.concat([...Object.entries(pairs).map(([k, v]) => Buffer.from(`${k}${v}\0`)), Buffer.from([0])]);

function parseStartup(body: Buffer): Record<string, string> {
  const parts = body.subarray(4).toString("utf8").split("\0");
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) out[parts[i]!] = parts[i + 1]!;
  return out;
}

export async function hostilePostgres(mode: HostileMode, host = "127.0.0.1", port = 0): Promise<HostilePostgres> {
  const state = { connections: 0, startups: [] as Array<Record<string, string>>, passwords: [] as string[] };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    if (mode === "accept-and-close") return void socket.end();
    if (mode === "silent") return; // accepts, never answers
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 4) return;
          const length = buffer.readUInt32BE(0);
          if (buffer.length < length) return;
          const body = buffer.subarray(4, length);
          buffer = buffer.subarray(length);
          started = true;
          state.startups.push(parseStartup(body));
          if (mode === "close-after-auth") {
            socket.end(message("R", int32(0))); // AuthenticationOk, then gone
            return;
          }
          socket.write(message("R", int32(3))); // AuthenticationCleartextPassword
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readUInt32BE(1);
        if (buffer.length < length + 1) return;
        const type = String.fromCharCode(buffer[0]!);
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === "p") {
          state.passwords.push(body.toString("utf8").replace(/\0$/, ""));
          socket.end(message("E", fields({ S: "FATAL", V: "FATAL", C: "28P01", M: "password authentication failed" })));
          return;
        }
      }
    });
  });
  const listener = await listening(server, sockets, () => state.connections, host, port);
  return Object.assign(listener, { startups: state.startups, passwords: state.passwords });
}
