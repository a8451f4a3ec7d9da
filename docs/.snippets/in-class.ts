// Prelude "in-class": the block is the body of a provider class (methods of a toolset), with the
// services its methods use as stand-ins.
@Injectable()
class SnippetTools {
  constructor(
    private readonly tokens: { find(principal: string): Promise<string | null> },
    private readonly calendar: { events(token: string): Promise<string> },
    private readonly pending: {
      save(elicitationId: string, at: { principal: string; sessionId: string | null }): Promise<void>;
    },
    private readonly elicitations: McpElicitationNotifier,
    private readonly bookings: { book(room: string, who: string, signal: AbortSignal): Promise<string> },
  ) {}
  private async work(step: number, signal: AbortSignal): Promise<void> {}
  // @snippet-body
}
