import { principalFromClaims } from './claims-principal';

describe('principalFromClaims', () => {
  it('uses sub as key, the first usual name claim as label, scope as scopes and roles as roles', () => {
    const claims = { sub: 'u1', email: 'a@example.com', name: 'Alice', scope: 'read write', roles: ['admin'] };
    expect(principalFromClaims(claims, {})).toEqual({
      key: 'u1',
      label: 'Alice',
      scopes: ['read', 'write'],
      roles: ['admin'],
      claims,
    });
  });

  it('falls back to client_id for a token without a subject, and to the key for the label', () => {
    expect(principalFromClaims({ client_id: 'svc', scp: ['a', 'b'] }, {})).toMatchObject({
      key: 'svc',
      label: 'svc',
      scopes: ['a', 'b'],
    });
    expect(principalFromClaims({ sub: 'u2' }, {})).toMatchObject({ key: 'u2', label: 'u2', scopes: [], roles: [] });
  });

  it('reads the configured label claim and a dotted roles path', () => {
    const claims = { sub: 'u3', name: 'Ignored', preferred_username: 'bob', realm_access: { roles: ['x', 'y'] } };
    expect(
      principalFromClaims(claims, { labelClaim: 'preferred_username', rolesClaim: 'realm_access.roles' }),
    ).toMatchObject({ label: 'bob', roles: ['x', 'y'] });
    expect(principalFromClaims(claims, { rolesClaim: 'realm_access.missing.deeper' })).toMatchObject({ roles: [] });
    expect(principalFromClaims({ sub: 'u4' }, { labelClaim: 'nickname' })).toMatchObject({ label: 'u4' });
  });

  it('refuses claims without sub or client_id', () => {
    expect(principalFromClaims({ scope: 'read' }, {})).toBeNull();
    expect(principalFromClaims({ sub: '' }, {})).toBeNull();
  });
});
