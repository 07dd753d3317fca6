/** Listens on a loopback port, turning a port that is taken into a plain `StartError`. */
import type { Server } from 'node:net';
import { StartError } from './start-error.js';

export function listen(server: Server, port: number, which: 'service' | 'receiver'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        const message = `port ${port} is in use by another program`;
        reject(new StartError('port_in_use', message, { port, server: which }, { cause: error }));
      } else if (error.code === 'EACCES') {
        const message = `port ${port} needs privileges this user does not have`;
        reject(new StartError('port_refused', message, { port, server: which }, { cause: error }));
      } else reject(error);
    };
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });
}
