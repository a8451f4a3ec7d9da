/** Settings of the fixture app, from the environment the conformance runner gives it. */
export interface FixtureConfig {
  /** The one bearer token the fixture accepts (the loopback proxy adds it). */
  token: string;
  /** SQLite database file (in the runner's temp dir). */
  databaseFile: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: start the fixture through "npm run conformance"`);
  return value;
}

/** The configuration of this process. */
export const fixtureConfig: FixtureConfig = {
  token: required('CONFORMANCE_TOKEN'),
  databaseFile: required('CONFORMANCE_DB_FILE'),
};
