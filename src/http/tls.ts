// HTTPS served by corpus itself (D27: CORPUS_TLS_CERT_FILE / CORPUS_TLS_KEY_FILE). The files
// are read and checked here, at start and on every reload (SIGHUP): a certificate that cannot
// be used is refused with one line naming the variable and the file, never the key's bytes.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Config } from "../config";
import { ConfigError } from "../config";

/** What Bun.serve's `tls` option takes: the PEM texts. */
export interface TlsFiles {
  cert: string;
  key: string;
}

/** What a log line may say of a certificate (never the key). */
export interface CertificateSummary {
  subject: string;
  not_after: string;
  sha256: string;
}

export interface LoadedTls {
  files: TlsFiles;
  summary: CertificateSummary;
}

function readPem(variable: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(`${variable}=${JSON.stringify(path)} cannot be read (${code})`);
  }
}

/**
 * The configured certificate and key, checked: both PEM, and the key the certificate's.
 * Undefined when HTTPS is not configured (config.ts refuses one variable without the other).
 */
export function loadTls(config: Pick<Config, "CORPUS_TLS_CERT_FILE" | "CORPUS_TLS_KEY_FILE">): LoadedTls | undefined {
  const certPath = config.CORPUS_TLS_CERT_FILE;
  const keyPath = config.CORPUS_TLS_KEY_FILE;
  if (!certPath || !keyPath) return undefined;
  const cert = readPem("CORPUS_TLS_CERT_FILE", certPath);
  const key = readPem("CORPUS_TLS_KEY_FILE", keyPath);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(
      `CORPUS_TLS_CERT_FILE=${JSON.stringify(certPath)} is not allowed: expected a PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`CORPUS_TLS_KEY_FILE=${JSON.stringify(keyPath)} is not allowed: expected an unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `CORPUS_TLS_KEY_FILE=${JSON.stringify(keyPath)} is not allowed: it is not the private key of the certificate in CORPUS_TLS_CERT_FILE`,
    );
  }
  return {
    files: { cert, key },
    summary: { subject: x509.subject.replaceAll("\n", ", "), not_after: new Date(x509.validTo).toISOString(), sha256: x509.fingerprint256 },
  };
}
