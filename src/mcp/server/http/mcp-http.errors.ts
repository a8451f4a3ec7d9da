/** A GET that is not a request for a session's event stream (answered 405 before authentication). */
export class McpNotAStreamRequest extends Error {
  constructor() {
    super('GET serves the event stream of a session: send Accept: text/event-stream and Mcp-Session-Id');
    this.name = 'McpNotAStreamRequest';
  }
}
