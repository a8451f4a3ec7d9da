/**
 * The JSON text of a value that is already serialized (a request body as received, a response
 * as sent), handed to an event sink so it can be stored without serializing it again. What the
 * database would refuse in it (NUL, unpaired surrogates, extreme nesting) is dealt with when the
 * row is built (`newEventRecord`).
 */
export class JsonText {
  /** The text to store. */
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}
