// A TCP connection to an address that was already checked (src/net/pin.ts): resolves once
// connected, rejects on error or after `timeoutMs`, so a refused or silent port is one error.
import net from "node:net";
import type { Pinned } from "./pin";

export class ConnectTimeout extends Error {
  readonly code = "CONNECT_TIMEOUT";
}

export function connectPinned(pinned: Pinned, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: pinned.address, port, family: pinned.family });
    const timer = setTimeout(() => fail(new ConnectTimeout(`no connection within ${timeoutMs / 1000} s`)), timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      socket.removeListener("connect", done);
      socket.destroy();
      reject(error);
    }
    function done() {
      clearTimeout(timer);
      socket.removeListener("error", fail);
      resolve(socket);
    }
    socket.once("error", fail);
    socket.once("connect", done);
  });
}
