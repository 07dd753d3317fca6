/**
 * The service's routes as the reference app serves them: the sample receiver's switches (for the
 * command line's keys and the dashboard) beside the sender's own management API and dashboard.
 */
import type { Sender } from '@linkhooks/sender';
import { createServiceApp, errorResponse } from '@linkhooks/sender/api';
import express, { type Express } from 'express';
import { RECEIVER_MODES, type ReceiverMode, type SampleReceiver } from './sample-receiver.js';

export function createReferenceRoutes(options: {
  sender: Sender;
  receiver: SampleReceiver;
  setReceiverMode: (mode: ReceiverMode) => void;
  serviceToken?: string | undefined;
}): Express {
  const { sender, receiver } = options;
  const app = express();
  app.get('/reference/receiver', (_req, res) => {
    res.json({
      url: receiver.url,
      mode: receiver.mode,
      modes: RECEIVER_MODES,
      received: receiver.received.length,
    });
  });
  // A body the parser refuses answers as the service's routes do (their errorResponse), not with
  // Express's page and stack.
  const parse = express.json();
  const json = (req: express.Request, res: express.Response, next: express.NextFunction) =>
    parse(req, res, (error?: unknown) => {
      if (error === undefined) return next();
      const answer = errorResponse(error);
      res.status(answer.status).json(answer.body);
    });
  app.post('/reference/receiver', json, (req, res) => {
    const mode = (req.body as { mode?: unknown } | undefined)?.mode;
    if (!RECEIVER_MODES.includes(mode as ReceiverMode)) {
      const message = `mode must be one of: ${RECEIVER_MODES.join(', ')}`;
      res.status(400).json({ error: { code: 'invalid_request', message } });
      return;
    }
    options.setReceiverMode(mode as ReceiverMode);
    res.json({ mode });
  });
  app.use(
    createServiceApp({ sender, ...(options.serviceToken ? { serviceToken: options.serviceToken } : {}) }),
  );
  return app;
}
