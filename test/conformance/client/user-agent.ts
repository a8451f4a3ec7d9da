import { McpOAuthService } from '../../../src/mcp';
import { McpAuthorizationRequiredError } from '../../../src/mcp/errors';
import { TARGET } from './client-app.module';

/** The user every call of the user-delegated OAuth scenarios is made for. */
export const CONFORMANCE_USER = 'conformance-user';

/** Sign-ins one request may need: the first authorization, then a step-up or two. */
const MAX_SIGN_INS = 3;

/**
 * Plays the user's browser: opens the authorization URL the client made, follows the
 * authorization server's redirects (the scenario's server approves at once, as a user who is
 * signed in and consents would), and hands the query it is sent back with to the client, as the
 * client module's callback route would.
 */
export async function signIn(oauth: McpOAuthService, redirectUri: string): Promise<void> {
  let url = await oauth.authorizationUrl(TARGET, CONFORMANCE_USER);
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(redirectUri)) {
      await oauth.completeAuthorization(Object.fromEntries(new URL(url).searchParams));
      return;
    }
    const response = await fetch(url, { redirect: 'manual' });
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location)
      throw new Error(`The authorization server answered ${response.status} without sending the user back`);
    url = new URL(location, url).href;
  }
  throw new Error('Too many redirects while signing in');
}

/**
 * Runs `request`; when the client says the user must authorize (no grant yet, or a server asked
 * for more scope), signs the user in and runs it again, as an app would send its user to sign in.
 */
export function withSignIn(oauth: McpOAuthService, redirectUri: string) {
  return async <T>(request: () => Promise<T>): Promise<T> => {
    for (let signIns = 0; ; signIns++) {
      try {
        return await request();
      } catch (error) {
        if (!McpAuthorizationRequiredError.of(error) || signIns >= MAX_SIGN_INS) throw error;
        await signIn(oauth, redirectUri);
      }
    }
  };
}
