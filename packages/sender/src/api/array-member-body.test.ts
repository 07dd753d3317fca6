import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseArrayMemberBody } from './array-member-body.js';

const parse = (text: string, maxItems = 1_000) => parseArrayMemberBody(Buffer.from(text), 'events', maxItems);
/** What parsing the whole body's bytes gives, or `error` where JSON.parse throws. */
const whole = (text: string) => {
  try {
    return JSON.parse(Buffer.from(text).toString('utf8')) as unknown;
  } catch {
    return 'error';
  }
};

/** JSON values whose strings hold any code point, beyond ASCII. */
const anyJson = fc.jsonValue({ stringUnit: 'binary' });

describe('parseArrayMemberBody', () => {
  it('gives what JSON.parse gives, items cut only outside strings and nesting', () => {
    const bodies = [
      '{"events":[1,"two",{"three":[3,{"x":",]}"}]},null,true,-1.5e3,[]]}',
      ' \t\r\n{ \n"events" :\t[ {"a":"\\""} , "\\\\" ,"\\\\\\"],{" , "é✓😀\\u0022\\n" ] \r\n} \n',
      '{"events":[{"s":"\\\\\\\\"},{"s":"a\\"b,c]d}"},"[{"]}',
      '{"events":[{"events":[1]}]}',
    ];
    for (const body of bodies) {
      expect(parse(body), body).toEqual(whole(body));
      expect(whole(body), body).not.toBe('error');
    }
  });

  it('answers null for any other form, so the body is parsed whole', () => {
    for (const body of [
      '\uFEFF{"events":[1]}', // a byte order mark
      '{"event":[1]}',
      '{"\\u0065vents":[1]}', // the same name, escaped
      '{"events":[1],"more":2}',
      '{"events":[1],"events":[2]}',
      '{"events":[1]} x',
      '{"events":[1]',
      '{"events":{"a":1}}',
      '{"events":[]}',
      '{"events":[1,]}',
      '{"events":[,1]}',
      '{"events":[{"a":1,}]}',
      '{"events":[{"a":[1}]]}',
      '{"events":["open]}',
      '{"events":[1 2]}',
      '[{"events":[1]}]',
      '',
    ]) {
      expect(parse(body), body).toBeNull();
    }
  });

  it('keeps invalid UTF-8 as decoding the whole body does', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"events":["a'),
      Buffer.from([0xff, 0xc3]),
      Buffer.from('",{"b":"'),
      Buffer.from([0xe2, 0x82]),
      Buffer.from('"}]}'),
    ]);
    expect(parseArrayMemberBody(bytes, 'events', 10)).toEqual(JSON.parse(bytes.toString('utf8')));
  });

  it('answers null past maxItems items, so the route answers the whole body as it would', () => {
    expect(parse('{"events":[1,2]}', 2)).toEqual({ events: [1, 2] });
    expect(parse('{"events":[1,2,3]}', 2)).toBeNull();
    expect(parse('{"events":[[1,2,3]]}', 1)).toEqual({ events: [[1, 2, 3]] });
  });

  it('gives JSON.parse’s value for any array of JSON values, spaced any way', () => {
    const space = fc.stringMatching(/^[ \t\n\r]{0,3}$/);
    fc.assert(
      fc.property(fc.array(anyJson, { minLength: 1, maxLength: 8 }), space, space, (items, a, b) => {
        const body = `${a}{${b}"events"${a}:${b}[${items.map((i) => b + JSON.stringify(i) + a).join(',')}]${a}}${b}`;
        expect(parse(body)).toEqual(JSON.parse(body));
      }),
    );
  });

  it('never gives a value where the whole body is not that value, however a body is broken', () => {
    const pieces = ['"', '\\', ',', '[', ']', '{', '}', ':', ' ', 'a', '1'];
    const valid = fc
      .array(anyJson, { minLength: 1, maxLength: 6 })
      .map((items) => JSON.stringify({ events: items }));
    fc.assert(
      fc.property(
        valid,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...pieces), fc.boolean()), {
          minLength: 1,
          maxLength: 3,
        }),
        (body, edits) => {
          let text = body;
          for (const [n, piece, insert] of edits) {
            const at = n % (text.length + 1);
            text = text.slice(0, at) + piece + text.slice(at + (insert ? 0 : 1));
          }
          const value = parse(text);
          if (value !== null) expect(value).toEqual(whole(text));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
