// Loopback TCP listeners the connector tests count connections with: on a port the OS picks
// (port 0), closed with every socket they accepted.
import net from "node:net";

export interface CountingListener {
  port: number;
  readonly connections: number;
  close(): Promise<void>;
}

/** Listens with `server` on `host`:`port` (0: the OS picks) and gives the counting handle. */
export async function listening(server: net.Server, sockets: Set<net.Socket>, count: () => number, host = "127.0.0.1", port = 0) {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return count();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  } satisfies CountingListener;
}

/** A TCP listener that counts connections and closes each at once (or, `silent`, never answers). */
export function closingListener(host = "127.0.0.1", port = 0, silent = false): Promise<CountingListener> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    s.on("error", () => {});
    sockets.add(s);
    if (!silent) s.end();
  });
  return listening(server, sockets, () => connections, host, port);
}

/** Passes every connection on to `target`, counting them (how many times a client connected) and the bytes the target sent. */
export async function countingProxy(target: {
  host: string;
  port: number;
}): Promise<CountingListener & { readonly bytesFromTarget: number }> {
  let connections = 0;
  let bytesFromTarget = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(target.port, target.host);
    upstream.on("data", (chunk: Buffer) => {
      bytesFromTarget += chunk.length;
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listener = await listening(server, sockets, () => connections);
  return Object.defineProperty(listener, "bytesFromTarget", { get: () => bytesFromTarget }) as typeof listener & {
    readonly bytesFromTarget: number;
  };
}

/**
 * A port the OS has just given out and taken back, for a server that must name its own address
 * before it listens (the OAuth metadata): asked of the OS, never guessed.
 */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}
