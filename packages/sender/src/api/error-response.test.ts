import { describe, expect, it } from 'vitest';
import { SENDER_ERROR_STATUS, SenderError, type SenderErrorCode } from '../errors.js';
import { errorResponse, notJson } from './error-response.js';

const codes = Object.keys(SENDER_ERROR_STATUS) as SenderErrorCode[];

describe('errorResponse', () => {
  it("answers a caller's error with its own code and message, unlogged", () => {
    const answered = codes.filter((code) => SENDER_ERROR_STATUS[code] < 500);
    expect(answered.length).toBeGreaterThan(10);
    for (const code of answered) {
      const answer = errorResponse(new SenderError(code, `message of ${code}`));
      expect(answer, code).toMatchObject({
        status: SENDER_ERROR_STATUS[code],
        body: { error: { code, message: `message of ${code}` } },
      });
      expect(answer.logged, code).toBeUndefined();
    }
  });

  it('answers every 503 as itself, with when to try again; an unreachable database is logged too', () => {
    const unavailable = codes.filter((code) => SENDER_ERROR_STATUS[code] === 503);
    expect(unavailable).toEqual(
      expect.arrayContaining(['overloaded', 'store_unavailable', 'storage_failed']),
    );
    for (const code of unavailable) {
      const answer = errorResponse(new SenderError(code, `message of ${code}`, { retryAfterSeconds: 2 }));
      expect(answer, code).toEqual({
        status: 503,
        body: { error: { code, message: `message of ${code}` } },
        retryAfterSeconds: 2,
        ...(code === 'store_unavailable' ? { logged: true } : {}),
      });
    }
  });

  // The secrets-at-rest errors name the operator's settings (store/secret-cipher.ts), as an
  // invalid option names a setting: the runbook tells the operator to find their code in the log.
  it("answers the operator's 500s as internal, without their words, and logs them", () => {
    const operators = codes.filter((code) => SENDER_ERROR_STATUS[code] === 500 && code !== 'internal');
    expect(operators).toEqual(
      expect.arrayContaining(['secret_not_encrypted', 'master_key_mismatch', 'master_key_missing']),
    );
    for (const code of operators) {
      const answer = errorResponse(new SenderError(code, 'set LINKHOOKS_MASTER_KEY to the key'));
      expect(answer, code).toEqual({
        status: 500,
        body: { error: { code: 'internal', message: 'an internal error occurred; it has been logged' } },
        logged: true,
      });
    }
  });

  it('says where a body stops being JSON without repeating what it held', () => {
    for (const body of [
      '{"api_key": lhk_0123456789abcdef}',
      `{"a": 1, ${'"b": 2, '.repeat(20)}"api_key": lhk_0123456789abcdef}`,
    ]) {
      let parserMessage = '';
      try {
        JSON.parse(body);
      } catch (error) {
        parserMessage = (error as Error).message;
      }
      expect(parserMessage).toContain('lhk_');
      const answer = errorResponse(notJson(body, parserMessage));
      expect(answer.status).toBe(400);
      expect(answer.body.error.message).toBe("the request body is not valid JSON: Unexpected token 'l'");
    }
  });

  it("answers anything else as internal, without the error's message, and logs it", () => {
    const answer = errorResponse(new TypeError('secret detail of a bug'));
    expect(answer.status).toBe(500);
    expect(JSON.stringify(answer.body)).not.toContain('secret detail');
    expect(answer.logged).toBe(true);
  });
});
