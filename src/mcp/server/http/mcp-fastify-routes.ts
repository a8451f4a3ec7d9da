/** The part of a Fastify instance the catch-all narrowing uses. */
export interface FastifyRoutesLike {
  addHook(name: 'onRoute', hook: (route: { method: string | string[]; url: string }) => void): unknown;
  hasRoute(route: { method: string; url: string }): boolean;
}

/**
 * Lets the controller's catch-all handler (405 for every method the endpoint does not serve)
 * coexist with its GET, POST and DELETE routes on Fastify. Express tries routes in order, so a
 * catch-all declared last only sees the other methods; Fastify refuses a second route for a
 * method and path. Nest declares the catch-all with every method Fastify knows, so this `onRoute`
 * hook keeps only the methods that no route of that path claims yet (HEAD included, which
 * Fastify adds for GET). It must be installed before Nest registers the routes.
 */
export function narrowFastifyCatchAll(instance: FastifyRoutesLike, isMcpPath: (url: string) => boolean): void {
  instance.addHook('onRoute', (route) => {
    if (!Array.isArray(route.method) || !isMcpPath(route.url)) return;
    route.method = route.method.filter((method) => !instance.hasRoute({ method, url: route.url }));
  });
}
