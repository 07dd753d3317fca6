import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on an ephemeral loopback port and resolves the base URL. */
export function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${port}`);
    });
  });
}

export function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.closeAllConnections?.();
    server.close((error) => (error ? reject(error) : resolve()));
  });
}

export interface Answer {
  status: number;
  json: { received?: boolean; duplicate?: boolean; error?: { code: string; message: string; hint?: string } };
}

/** POSTs with fetch and reads the JSON answer. */
export async function post(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers, body: body as BodyInit });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : {} };
}
