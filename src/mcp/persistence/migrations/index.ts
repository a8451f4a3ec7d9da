import { CreateMcpTables1764489600000 } from './1764489600000-CreateMcpTables';

export { CreateMcpTables1764489600000 };

/** The PostgreSQL migrations of the package, oldest first: add them to the host's DataSource `migrations`. */
export const MCP_MIGRATIONS = [CreateMcpTables1764489600000];
