import type { McpAuthResult } from '../../interfaces/principal.interface';
import { normalizePrincipal } from './principal-normalizer';

describe('normalizePrincipal', () => {
  it('uses a string as key and label', () => {
    expect(normalizePrincipal('alice')).toEqual({ key: 'alice', label: 'alice', raw: 'alice', scopes: [], roles: [] });
  });

  it('uses a number as key and label, as a string', () => {
    expect(normalizePrincipal(42)).toEqual({ key: '42', label: '42', raw: 42, scopes: [], roles: [] });
  });

  it('takes key and label from an object and keeps the object as raw', () => {
    const result = { key: 'u-1', label: 'Alice Liddell', roles: ['admin'] };
    expect(normalizePrincipal(result)).toEqual({
      key: 'u-1',
      label: 'Alice Liddell',
      raw: result,
      scopes: [],
      roles: ['admin'],
    });
  });

  it('uses the key as label when the object has no label (or an empty one)', () => {
    expect(normalizePrincipal({ key: 'u-2' })).toEqual({
      key: 'u-2',
      label: 'u-2',
      raw: { key: 'u-2' },
      scopes: [],
      roles: [],
    });
    expect(normalizePrincipal({ key: 'u-3', label: '' })).toMatchObject({ key: 'u-3', label: 'u-3' });
  });

  it('takes scopes from an array or an OAuth space-separated string, and keeps only names', () => {
    expect(normalizePrincipal({ key: 'a', scopes: ['mcp:read', 'mcp:write'] })).toMatchObject({
      scopes: ['mcp:read', 'mcp:write'],
    });
    expect(normalizePrincipal({ key: 'a', scopes: 'mcp:read  mcp:write' })).toMatchObject({
      scopes: ['mcp:read', 'mcp:write'],
    });
    expect(normalizePrincipal({ key: 'a', scopes: ['ok', 3, '', null] as unknown as string[] })).toMatchObject({
      scopes: ['ok'],
    });
    expect(normalizePrincipal({ key: 'a', roles: 'admin' as unknown as string[] })).toMatchObject({ roles: ['admin'] });
    expect(normalizePrincipal({ key: 'a', scopes: { read: true } as unknown as string[] })).toMatchObject({
      scopes: [],
    });
  });

  it('stringifies a numeric key, zero included', () => {
    expect(normalizePrincipal({ key: 7 })).toMatchObject({ key: '7', label: '7' });
    expect(normalizePrincipal({ key: 0 })).toMatchObject({ key: '0', label: '0' });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['false', false],
    ['the empty string', ''],
    ['zero', 0],
  ])('rejects %s', (_label, value) => {
    expect(normalizePrincipal(value as McpAuthResult)).toBeNull();
  });

  it.each([
    ['an object without key', { label: 'Alice' }],
    ['an empty key', { key: '' }],
    ['a null key', { key: null }],
    ['an object key', { key: { id: 1 } }],
    ['a boolean key', { key: true }],
    ['true itself', true],
  ])('rejects %s', (_label, value) => {
    expect(normalizePrincipal(value as unknown as McpAuthResult)).toBeNull();
  });
});
