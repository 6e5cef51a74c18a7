// The statements module: wallet statements for a UTC month or day, exported as immutable,
// content-addressed objects (docs/statements.md). Other modules use only what is exported here.

export {
  generateStatement,
  resolveStatementPeriod,
  statementObjectKey,
  STATEMENT_BATCH_SIZE,
  STATEMENT_CONTENT_TYPES,
  type GenerateStatementDeps,
  type GenerateStatementOptions,
  type GenerateStatementParameters,
  type GenerateStatementReturnType,
} from './generate.ts';
export { openStatementExport } from './download.ts';
export { parseStatementPeriod, type StatementPeriod } from './period.ts';
export {
  accountsWithStatementExports,
  deleteStatementExportsOf,
  listStatementExportKeys,
  type StatementFormat,
} from './store.ts';
export type { StatementSummary } from './content.ts';
export { statementsRoutes } from './routes.ts';
