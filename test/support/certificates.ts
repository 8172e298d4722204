// Self-signed certificates made by openssl for the TLS tests and benchmark: an EC P-256 key
// and a certificate for `names` (subjectAltName entries such as "DNS:localhost", "IP:127.0.0.1"),
// written as <dir>/<cn>.crt and <dir>/<cn>.key.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const OPENSSL = Bun.which("openssl");

export interface Certificate {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

export function selfSigned(dir: string, cn: string, names: string[]): Certificate {
  if (!OPENSSL) throw new Error("openssl is needed for the TLS tests (Debian package openssl)");
  const certFile = join(dir, `${cn}.crt`);
  const keyFile = join(dir, `${cn}.key`);
  const made = Bun.spawnSync(
    [
      OPENSSL,
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${cn}`,
      "-addext",
      `subjectAltName=${names.join(",")}`,
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), certFile, keyFile };
}
