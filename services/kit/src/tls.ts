// TLS on a process's listeners, from mounted certificate files (cert-manager's tls.crt/tls.key, a
// platform's own), and the authority the process trusts when it calls services at https URLs.
// Where a service mesh (Istio, Linkerd) already wraps every connection in mutual TLS, leave these
// unset: the mesh's sidecars encrypt and authenticate the hop, and TLS here would be done twice.
import { readFileSync, statSync } from "node:fs";
import { ConfigError, envOptional, type Env } from "./config.ts";

export interface ListenerTls {
  cert: string;
  key: string;
  /** Whether the files changed since they were read (a renewed certificate), and their new contents. */
  renewed(): { cert: string; key: string } | undefined;
}

/** TLS_CERT_FILE and TLS_KEY_FILE, both or neither: the certificate and key the listeners serve. */
export function loadListenerTls(env: Env = process.env): ListenerTls | undefined {
  const certFile = envOptional(env, "TLS_CERT_FILE");
  const keyFile = envOptional(env, "TLS_KEY_FILE");
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined) throw new ConfigError("TLS_CERT_FILE", "required with TLS_KEY_FILE (the certificate the listeners serve)");
  if (keyFile === undefined) throw new ConfigError("TLS_KEY_FILE", "required with TLS_CERT_FILE (the certificate's private key)");
  const read = (file: string, variable: string) => {
    try {
      return { text: readFileSync(file, "utf8"), modified: statSync(file).mtimeMs };
    } catch (error) {
      throw new ConfigError(variable, `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  };
  let cert = read(certFile, "TLS_CERT_FILE");
  let key = read(keyFile, "TLS_KEY_FILE");
  return {
    cert: cert.text,
    key: key.text,
    renewed() {
      try {
        if (statSync(certFile).mtimeMs === cert.modified && statSync(keyFile).mtimeMs === key.modified) return undefined;
        [cert, key] = [read(certFile, "TLS_CERT_FILE"), read(keyFile, "TLS_KEY_FILE")];
        return { cert: cert.text, key: key.text };
      } catch {
        // Being replaced: the current certificate serves until the next look.
        return undefined;
      }
    },
  };
}

let serviceCa: string | undefined;

/** TLS_CA_FILE: the authority of the services' certificates, trusted by this process's calls to https service URLs. */
export function trustServiceCa(env: Env = process.env): void {
  const file = envOptional(env, "TLS_CA_FILE");
  if (file === undefined) return;
  try {
    serviceCa = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError("TLS_CA_FILE", `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The fetch option that trusts TLS_CA_FILE, when it is set. */
export const serviceTlsOption = (): { tls?: { ca: string } } => (serviceCa === undefined ? {} : { tls: { ca: serviceCa } });
