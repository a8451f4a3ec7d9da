import { RawRecorder } from './raw-recorder';

describe('RawRecorder', () => {
  it('keeps text up to the cap and notes how much it dropped', () => {
    const recorder = new RawRecorder(5);
    recorder.append('abc');
    recorder.append('defg');
    recorder.append('hi');
    expect(recorder.text()).toBe('abcde\n[truncated: 4 more characters]');
  });
});
