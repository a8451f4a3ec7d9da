import { toReadResourceResult } from './resource-contents-mapper';

const URI = 'files://report';

describe('toReadResourceResult', () => {
  it('turns a string into one text entry with the declared MIME type', () => {
    expect(toReadResourceResult('hello', URI, 'text/plain')).toEqual({
      contents: [{ uri: URI, mimeType: 'text/plain', text: 'hello' }],
    });
    expect(toReadResourceResult('hello', URI, undefined)).toEqual({ contents: [{ uri: URI, text: 'hello' }] });
  });

  it('turns a Buffer or a Uint8Array (even a view into a larger buffer) into a base64 blob', () => {
    expect(toReadResourceResult(Buffer.from([1, 2, 255]), URI, 'application/octet-stream')).toEqual({
      contents: [{ uri: URI, mimeType: 'application/octet-stream', blob: 'AQL/' }],
    });
    const view = new Uint8Array([9, 1, 2, 255, 9]).subarray(1, 4);
    expect(toReadResourceResult(view, URI, undefined)).toEqual({ contents: [{ uri: URI, blob: 'AQL/' }] });
  });

  it('completes one contents object and arrays of entries (uri, MIME type, byte blobs)', () => {
    expect(toReadResourceResult({ text: 'a' }, URI, 'text/csv')).toEqual({
      contents: [{ uri: URI, mimeType: 'text/csv', text: 'a' }],
    });
    expect(
      toReadResourceResult(['a', { uri: 'files://other', blob: Buffer.from('b'), mimeType: 'x/y' }], URI, 'text/csv'),
    ).toEqual({
      contents: [
        { uri: URI, mimeType: 'text/csv', text: 'a' },
        { uri: 'files://other', mimeType: 'x/y', blob: 'Yg==' },
      ],
    });
  });

  it('passes a full result through, keeping its other fields', () => {
    const result = { contents: [{ uri: URI, text: 'x' }], _meta: { k: 1 } };
    expect(toReadResourceResult(result, URI, undefined)).toEqual(result);
  });

  it('answers null for null and undefined: the resource does not exist', () => {
    expect(toReadResourceResult(null, URI, undefined)).toBeNull();
    expect(toReadResourceResult(undefined, URI, undefined)).toBeNull();
  });

  it.each([
    ['a number', 42],
    ['an object without text or blob', { uri: URI }],
    ['a non-string text', { text: 3 }],
    ['a blob that is neither text nor bytes', { blob: 3 }],
  ])('throws for %s', (_label, returned) => {
    expect(() => toReadResourceResult(returned, URI, undefined)).toThrow(URI);
  });
});
