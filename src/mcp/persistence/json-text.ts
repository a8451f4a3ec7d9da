/**
 * The JSON text of a value that is already serialized (a request body as received, a response
 * as sent), handed to an event sink so it can be stored without serializing it again.
 * PostgreSQL's jsonb refuses the NUL escape, so that one character is stored as U+FFFD.
 */
export class JsonText {
  /** The text to store. */
  readonly text: string;

  constructor(text: string) {
    this.text = text.includes('\\u0000') ? text.replace(/\\u0000/g, '\\ufffd') : text;
  }
}
