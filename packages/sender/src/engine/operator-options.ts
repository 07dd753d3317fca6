/** The operator notifications' settings (design D50), checked once at start-up. */
import { checkUrl } from '../delivery/address-guard.js';
import { DEFAULT_FAILING_SHARE, type NoticeRules, noticeRules } from '../domain/notice-rules.js';
import { SenderError } from '../errors.js';

export interface OperatorNotifications {
  /** Where notices are POSTed: an HTTPS URL the platform runs. */
  url: string;
  /** The HMAC key of their X-Service-Signature; a `whsec_` secret also signs the Standard Webhooks headers. */
  secret: string;
  /** The share of the disable threshold at which `endpoint.failing` is sent. Default 0.5. */
  failingShare?: number;
}

/** The shortest operator secret taken: 128 bits as hex. */
const MIN_SECRET_LENGTH = 32;

export interface OperatorSettings {
  url: string;
  secret: string;
  rules: NoticeRules;
}

/** The setting a refusal is about: `details.option` of the SenderError, for a caller to name its source. */
export type OperatorOption = keyof OperatorNotifications;

const refused = (option: OperatorOption, message: string) =>
  new SenderError('invalid_option', message, { details: { option } });

/**
 * HTTPS and no credentials, as endpoints (design R2, D17); private addresses are the platform's to
 * choose, so only the cloud metadata addresses stay refused, at connect time.
 */
export function operatorSettings(
  options: OperatorNotifications | undefined,
  threshold: number,
): OperatorSettings | null {
  if (!options) return null;
  const checked = checkUrl(options.url, { allowPrivateNetworks: true });
  if (!checked.ok) throw refused('url', `the operator notification URL is not allowed: ${checked.reason}`);
  if (typeof options.secret !== 'string' || options.secret.length < MIN_SECRET_LENGTH) {
    throw refused(
      'secret',
      `the operator notification secret must be at least ${MIN_SECRET_LENGTH} characters`,
    );
  }
  try {
    const rules = noticeRules(options.failingShare ?? DEFAULT_FAILING_SHARE, threshold);
    return { url: checked.url.toString(), secret: options.secret, rules };
  } catch (error) {
    throw refused('failingShare', (error as Error).message);
  }
}
