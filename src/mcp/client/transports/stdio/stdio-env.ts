/**
 * The environment of a stdio server process. A server is third-party code: it gets what it needs
 * to run a program (who, where, which PATH) and what its configuration gives it, never the
 * parent's secrets (database URLs, tokens, cloud credentials).
 */

/** Variables a child inherits from this process, when set. */
const STDIO_INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'] as const;

/**
 * Extra variables inherited on Windows only, where programs cannot start without them. Windows
 * variable names are case-insensitive, hence the lookup by upper-cased name.
 */
const STDIO_INHERITED_ENV_WINDOWS = [
  'APPDATA',
  'HOMEDRIVE',
  'HOMEPATH',
  'LOCALAPPDATA',
  'PATHEXT',
  'PROCESSOR_ARCHITECTURE',
  'SYSTEMDRIVE',
  'SYSTEMROOT',
  'TEMP',
  'USERNAME',
  'USERPROFILE',
  'PROGRAMFILES',
] as const;

function inheritedNames(platform: NodeJS.Platform): readonly string[] {
  return platform === 'win32' ? [...STDIO_INHERITED_ENV, ...STDIO_INHERITED_ENV_WINDOWS] : STDIO_INHERITED_ENV;
}

/**
 * Builds the child's environment: the allowlisted variables of `parent`, then `configured` on
 * top. Values that look like exported shell functions (`() {`) are not inherited.
 */
export function buildStdioEnv(
  configured: Record<string, string>,
  parent: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  const names = inheritedNames(platform);
  if (platform === 'win32') {
    const byUpper = new Map(Object.keys(parent).map((key) => [key.toUpperCase(), key]));
    for (const name of names) {
      const key = byUpper.get(name);
      const value = key === undefined ? undefined : parent[key];
      if (value !== undefined && !value.startsWith('()')) env[name] = value;
    }
  } else {
    for (const name of names) {
      const value = parent[name];
      if (value !== undefined && !value.startsWith('()')) env[name] = value;
    }
  }
  return Object.assign(env, configured);
}
