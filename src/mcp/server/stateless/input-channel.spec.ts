import { StatelessInputChannel } from './input-channel';

describe('StatelessInputChannel round state', () => {
  it('hands back what the previous round kept, keeps what this round sets, and drops what it unsets', () => {
    const channel = new StatelessInputChannel({}, { upstream: 'u1', other: 'o1' });
    expect(channel.round.get('upstream')).toBe('u1');
    channel.round.set('upstream', 'u2');
    channel.round.set('other', undefined);
    channel.round.set('fresh', 'f');
    expect(channel.round.get('upstream')).toBe('u2');
    expect(channel.round.get('other')).toBeUndefined();
    expect(channel.keptValues()).toEqual({ upstream: 'u2', fresh: 'f' });
    expect(new StatelessInputChannel({}).keptValues()).toEqual({});
  });
});
