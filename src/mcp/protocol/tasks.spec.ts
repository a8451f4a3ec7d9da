import {
  MCP_TASK_SUPPORT_VALUES,
  RELATED_TASK_META_KEY,
  TERMINAL_TASK_STATUSES,
  isTerminalTaskStatus,
  tasksServerCapability,
} from './tasks';

describe('tasks vocabulary', () => {
  it('declares listing, cancelling and task-augmented tools/call in the server capability', () => {
    expect(tasksServerCapability()).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  it('hands out a fresh capability object each time', () => {
    const first = tasksServerCapability();
    (first.requests as Record<string, unknown>).other = {};
    expect(tasksServerCapability()).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  it.each([
    ['working', false],
    ['input_required', false],
    ['completed', true],
    ['failed', true],
    ['cancelled', true],
    ['unknown', false],
  ])('a task in status %s is over: %s', (status, over) => {
    expect(isTerminalTaskStatus(status)).toBe(over);
  });

  it('names the terminal statuses, the task support values and the related-task key', () => {
    expect(TERMINAL_TASK_STATUSES).toEqual(['completed', 'failed', 'cancelled']);
    expect(MCP_TASK_SUPPORT_VALUES).toEqual(['forbidden', 'optional', 'required']);
    expect(RELATED_TASK_META_KEY).toBe('io.modelcontextprotocol/related-task');
  });
});
